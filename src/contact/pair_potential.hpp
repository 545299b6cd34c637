#pragma once
/// @file pair_potential.hpp
/// @brief A scalar potential φ(s) of a pair's squared distance s, with its gradient and PSD-projected
/// Hessian over the stencil coordinates: the one place where the chain rule and the projection of a
/// contact pair are written. IPC's barrier (φ = b(s, ŝ), barrier_pairs.cpp) and BAL's augmentation
/// (φ = μᵢ (ŝ + sᵢ − s) + σ b(s, ŝ + sᵢ), bal_pairs.cpp) both go through it. Device-callable.
///
/// Point–triangle and edge–edge pairs (stencil of 4 vertices, 12 coordinates):
///     ∇(wφ) = w φ′ ∇s + φ ∇w,
///     ∇²(wφ) = w (φ″ ∇s ∇sᵀ + φ′ ∇²s) + φ′ (∇w ∇sᵀ + ∇s ∇wᵀ) + φ ∇²w,
/// w the edge–edge mollifier (1 otherwise). Point–plane pairs (stencil {point, plane row}):
/// s = d², ∇s = 2 d n, Hessian max(0, 4 s φ″ + 2 φ′) n nᵀ on the point (and the plane row's coupling).
/// The projection is exact and case-reduced (kernels/pair_projection.hpp; barrier_pairs.hpp says why);
/// the point–point closed form needs φ′ ≤ 0, which holds for every repulsive φ above.
///
/// Contact offset ξ > 0 (pair_offset): φ acts on the squared gap g = (d − ξ)², d = √s, the squared
/// distance of the offset surfaces, so the IPC barrier is b((d − ξ)², d̂²), active where d − ξ < d̂ and
/// +∞ where d ≤ ξ. As a function of s, φ̃(s) = φ(g(s)) with g′ = (d − ξ)/d and g″ = ξ/(2 d³), so
///     φ̃′ = φ′ g′,   φ̃″ = φ″ g′² + φ′ g″,
/// and the formulas above hold with φ̃ for φ (the point–point closed form too: φ̃′ ≤ 0 where φ′ ≤ 0).
/// For a point–plane pair d is the signed distance less the point's offset. ξ = 0 is exactly the
/// unoffset pair (no extra operation is made).
///
/// `Phi` is a device functor with `bool acts(double s)` (whether φ can be nonzero at s; outside it the
/// pair adds nothing) and `void operator()(double s, double& value, double& first, double& second)`.

#include "kernels/barrier.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/pair_projection.hpp"
#include "src/contact/hessian_projection.hpp"
#include "src/contact/pair_geometry.hpp"

namespace intact::contact {

/// What pair_potential computes beyond the value.
enum PairOrder : int { k_value = 0, k_gradient = 1, k_hessian = 2 };

/// The IPC barrier b(s, ŝ) as a Phi.
struct BarrierPhi {
    double s_hat;
    KOKKOS_INLINE_FUNCTION bool acts(double s) const { return s < s_hat; }
    KOKKOS_INLINE_FUNCTION void operator()(double s, double& value, double& first, double& second) const {
        value = kernels::barrier(s, s_hat);
        first = kernels::barrier_first_derivative(s, s_hat);
        second = kernels::barrier_second_derivative(s, s_hat);
    }
};

namespace detail {

// Project the unprojected Hessian H of a point–triangle or edge–edge pair in closest-feature case `which`:
// the closed form for point–point cases, the translation-free 6×6 block of the three vertices for
// point–edge cases, the translation-free 9×9 block otherwise. The point–point and point–edge forms only
// for unmollified pairs (the mollifier moves all four vertices).
template <class Case>
KOKKOS_INLINE_FUNCTION void project_by_case(
    kernels::Mat12& H, const kernels::Vec3 (&x)[4], Case which, bool interior, double first, double second) {
    if (interior) {
        kernels::project_psd_translation_free<4>(H);
        return;
    }
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    kernels::detail::sub_case_slots(which, pp, pe);
    if (kernels::detail::is_point_point(which)) {
        H = kernels::point_point_barrier_hessian_psd(x[pp[0]] - x[pp[1]], pp[0], pp[1], first, second);
    } else {
        kernels::project_psd_on_slots<3>(H, pe);
    }
}

} // namespace detail

/// The squared gap g of a squared distance s > 0 for offset ξ > 0 (offset_squared_gap), with
/// dg/ds and d²g/ds²; false (g = 0) where √s ≤ ξ.
KOKKOS_INLINE_FUNCTION bool
offset_gap_chain(double s, double offset, double& g, double& first, double& second) {
    const double d = ::sqrt(s);
    const double gap = d - offset;
    if (!(gap > 0.0)) {
        g = 0.0;
        return false;
    }
    g = gap * gap;
    first = gap / d;
    second = offset / (2.0 * d * s);
    return true;
}

/// w φ(s) of a point–triangle or edge–edge pair at stencil positions x, with (per `order`) its gradient
/// and PSD Hessian over the 12 stencil coordinates; `full_projection` projects with project_psd<12>
/// instead of the case-reduced forms. With offset ξ (m, the pair's pair_offset) φ acts on the squared gap
/// (file comment). +∞ for s ≤ 0 or d ≤ ξ; 0 (and zero derivatives) where !phi.acts(gap).
template <class Phi>
KOKKOS_INLINE_FUNCTION double pair_potential(int kind,
                                             const kernels::Vec3 (&x)[4],
                                             const Phi& phi,
                                             double eps_x,
                                             int order,
                                             HessianProjection projection,
                                             kernels::Vec12& gradient,
                                             kernels::Mat12& hessian,
                                             double offset = 0.0) {
    using kernels::Mat12;
    using kernels::Vec12;
    const bool derivatives = order != k_value;
    const bool with_hessian = order == k_hessian;
    double s = 0.0;
    Vec12 gs = Vec12::Zero();
    Mat12 hs = Mat12::Zero();
    kernels::PointTriangleCase pt_case = kernels::PointTriangleCase::interior;
    kernels::EdgeEdgeCase ee_case = kernels::EdgeEdgeCase::interior;
    if (kind == k_point_triangle) {
        pt_case = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
        s = kernels::point_triangle_distance(x[0], x[1], x[2], x[3], pt_case);
    } else {
        ee_case = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
        s = kernels::edge_edge_distance(x[0], x[1], x[2], x[3], ee_case);
    }
    // The argument of φ: s itself, or the squared gap with its chain-rule factors.
    double g = s, g1 = 1.0, g2 = 0.0;
    const bool admissible = s > 0.0 && (offset == 0.0 || offset_gap_chain(s, offset, g, g1, g2));
    gradient.setZero();
    if (with_hessian) {
        hessian.setZero();
    }
    if (!admissible) {
        return kernels::infinity();
    }
    if (!phi.acts(g)) {
        return 0.0;
    }
    if (derivatives) {
        if (kind == k_point_triangle) {
            gs = kernels::point_triangle_distance_gradient(x[0], x[1], x[2], x[3], pt_case);
            if (with_hessian) {
                hs = kernels::point_triangle_distance_hessian(x[0], x[1], x[2], x[3], pt_case);
            }
        } else {
            gs = kernels::edge_edge_distance_gradient(x[0], x[1], x[2], x[3], ee_case);
            if (with_hessian) {
                hs = kernels::edge_edge_distance_hessian(x[0], x[1], x[2], x[3], ee_case);
            }
        }
    }
    double b = 0.0, db = 0.0, ddb = 0.0;
    phi(g, b, db, ddb);
    if (offset != 0.0) {
        // φ̃′ = φ′ g′, φ̃″ = φ″ g′² + φ′ g″ (derivatives in s, as gs and hs are).
        ddb = ddb * g1 * g1 + db * g2;
        db = db * g1;
    }
    double e = 1.0;
    Vec12 ge = Vec12::Zero();
    Mat12 he = Mat12::Zero();
    bool mollified = false;
    if (kind == k_edge_edge) {
        e = kernels::edge_edge_mollifier(x[0], x[1], x[2], x[3], eps_x);
        if (derivatives && e < 1.0) {
            mollified = true;
            ge = kernels::edge_edge_mollifier_gradient(x[0], x[1], x[2], x[3], eps_x);
            if (with_hessian) {
                he = kernels::edge_edge_mollifier_hessian(x[0], x[1], x[2], x[3], eps_x);
            }
        }
    }
    if (derivatives) {
        gradient = e * db * gs + b * ge;
    }
    if (with_hessian) {
        hessian = e * (ddb * gs * gs.transpose() + db * hs) +
                  db * (ge * gs.transpose() + gs * ge.transpose()) + b * he;
        if (projection == HessianProjection::none) {
            // The barrier's own curvature, indefinite across the pair's normal: the caller knows the
            // assembled matrix is positive definite there (IpcSolver's Newton basin, pcg.hpp breakdown).
        } else if (projection == HessianProjection::full) {
            kernels::project_psd<12>(hessian);
        } else if (mollified) {
            kernels::project_psd_translation_free<4>(hessian);
        } else if (kind == k_point_triangle) {
            detail::project_by_case(hessian, x, pt_case, pt_case == kernels::PointTriangleCase::interior, db,
                                    ddb);
        } else {
            detail::project_by_case(hessian, x, ee_case, ee_case == kernels::EdgeEdgeCase::interior, db, ddb);
        }
    }
    return e * b;
}

/// φ(d²) of a point–plane pair from its point x0, a point x1 of the plane and the plane's unit normal n
/// (to the free side), d = n·(x0 − x1): +∞ for d ≤ 0, 0 (zero derivatives) where !phi.acts(d²). With
/// `order` ≥ k_gradient the gradient over {x0, x1} (slots 0 and 1 of 12) = (g, −g), g = φ′ 2 d n; with
/// k_hessian the PSD Hessian [[K, −K], [−K, K]], K = max(0, 4 s φ″ + 2 φ′) n nᵀ (the clamp keeps it PSD).
/// The plane's row is prescribed and never owned: the coupling block is how a moving plane pushes.
/// With offset ξ (the point's, m) d is n·(x0 − x1) − ξ: the gap of the offset point.
template <class Phi>
KOKKOS_INLINE_FUNCTION double plane_potential(const kernels::Vec3& x0,
                                              const kernels::Vec3& x1,
                                              const kernels::Vec3& n,
                                              const Phi& phi,
                                              int order,
                                              kernels::Vec12& gradient,
                                              kernels::Mat12& hessian,
                                              double offset = 0.0) {
    gradient.setZero();
    if (order == k_hessian) {
        hessian.setZero();
    }
    const double d = n.dot(x0 - x1) - offset;
    const double s = d * d;
    if (!(d > 0.0)) {
        return kernels::infinity();
    }
    if (!phi.acts(s)) {
        return 0.0;
    }
    double b = 0.0, db = 0.0, ddb = 0.0;
    phi(s, b, db, ddb);
    if (order == k_value) {
        return b;
    }
    for (int c = 0; c < 3; ++c) {
        gradient(c) = db * 2.0 * d * n(c);
        gradient(3 + c) = -gradient(c);
    }
    if (order == k_hessian) {
        const double raw = 4.0 * s * ddb + 2.0 * db;
        const double curvature = 0.0 < raw ? raw : 0.0; // std::max(0.0, raw), NaN included
        for (int c = 0; c < 3; ++c) {
            for (int e = 0; e < 3; ++e) {
                const double k = curvature * n(c) * n(e);
                hessian(c, e) = k;
                hessian(3 + c, 3 + e) = k;
                hessian(c, 3 + e) = -k;
                hessian(3 + c, e) = -k;
            }
        }
    }
    return b;
}

/// plane_potential of point–plane pair `rows` at the surface positions xs, with the point's offset.
template <class Phi>
KOKKOS_INLINE_FUNCTION double plane_potential(const int rows[4],
                                              const ConstSurfaceField& xs,
                                              const SurfaceTopology& topology,
                                              const Phi& phi,
                                              int order,
                                              kernels::Vec12& gradient,
                                              kernels::Mat12& hessian) {
    kernels::Vec3 x[4];
    pair_positions(k_point_plane, rows, xs, x);
    const kernels::Vec3 n(topology.plane_normal(rows[1], 0), topology.plane_normal(rows[1], 1),
                          topology.plane_normal(rows[1], 2));
    return plane_potential(x[0], x[1], n, phi, order, gradient, hessian,
                           pair_offset(k_point_plane, rows, topology));
}

} // namespace intact::contact
