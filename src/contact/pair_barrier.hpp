#pragma once
/// @file pair_barrier.hpp
/// @brief The IPC barrier b (w b for mollified edge pairs) of one point–triangle or edge–edge pair from its
/// four positions, with its gradient and PSD Hessian over the 12 stencil coordinates (IPC spec §2, §5;
/// the projection choices are explained in barrier_pairs.hpp). Device-callable; used by the barrier
/// kernels of barrier_pairs.cpp and by stencil descent, which evaluates pairs at its own trial positions
/// and with per-pair activation distances.

#include "kernels/barrier.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/pair_projection.hpp"
#include "src/contact/pair_list.hpp"

namespace intact::contact {

// What pair_barrier computes beyond the energy, and how it projects the Hessian.
enum BarrierOrder : int { k_energy = 0, k_gradient = 1, k_hessian = 2 };

// Project the unprojected barrier Hessian H of a point–triangle or edge–edge pair in closest-feature case
// `which`: the closed form for point–point cases, the translation-free 6×6 block of the three vertices
// for point–edge cases, the translation-free 9×9 block otherwise (kernels/pair_projection.hpp). The
// point–point and point–edge forms only for unmollified pairs (the mollifier moves all four vertices).
template <class Case>
KOKKOS_INLINE_FUNCTION void project_by_case(
    kernels::Mat12& H, const kernels::Vec3 (&x)[4], Case which, bool interior, double db, double ddb) {
    if (interior) {
        kernels::project_psd_translation_free<4>(H);
        return;
    }
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    kernels::detail::sub_case_slots(which, pp, pe);
    if (kernels::detail::is_point_point(which)) {
        H = kernels::point_point_barrier_hessian_psd(x[pp[0]] - x[pp[1]], pp[0], pp[1], db, ddb);
    } else {
        kernels::project_psd_on_slots<3>(H, pe);
    }
}

// b (w b for edge pairs) of a point–triangle or edge–edge pair with its gradient and PSD Hessian over the
// 12 stencil coordinates; the formulas of BarrierPotential's evaluate_pair. Returns +∞ for s ≤ 0.
KOKKOS_INLINE_FUNCTION double pair_barrier(int kind,
                                           const kernels::Vec3 (&x)[4],
                                           double s_hat,
                                           double eps_x,
                                           int order,
                                           bool full_projection,
                                           kernels::Vec12& gradient,
                                           kernels::Mat12& hessian) {
    const bool derivatives = order != k_energy;
    const bool with_hessian = order == k_hessian;
    double s = 0.0;
    kernels::Vec12 gs = kernels::Vec12::Zero();
    kernels::Mat12 hs = kernels::Mat12::Zero();
    kernels::PointTriangleCase pt_case = kernels::PointTriangleCase::interior;
    kernels::EdgeEdgeCase ee_case = kernels::EdgeEdgeCase::interior;
    if (kind == k_point_triangle) {
        pt_case = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
        s = kernels::point_triangle_distance(x[0], x[1], x[2], x[3], pt_case);
        if (derivatives && s > 0.0 && s < s_hat) {
            gs = kernels::point_triangle_distance_gradient(x[0], x[1], x[2], x[3], pt_case);
            if (with_hessian) {
                hs = kernels::point_triangle_distance_hessian(x[0], x[1], x[2], x[3], pt_case);
            }
        }
    } else {
        ee_case = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
        s = kernels::edge_edge_distance(x[0], x[1], x[2], x[3], ee_case);
        if (derivatives && s > 0.0 && s < s_hat) {
            gs = kernels::edge_edge_distance_gradient(x[0], x[1], x[2], x[3], ee_case);
            if (with_hessian) {
                hs = kernels::edge_edge_distance_hessian(x[0], x[1], x[2], x[3], ee_case);
            }
        }
    }
    gradient.setZero();
    if (with_hessian) {
        hessian.setZero();
    }
    if (!(s > 0.0)) {
        return kernels::infinity();
    }
    if (s >= s_hat) {
        return 0.0;
    }
    const double b = kernels::barrier(s, s_hat);
    const double db = kernels::barrier_first_derivative(s, s_hat);
    const double ddb = kernels::barrier_second_derivative(s, s_hat);
    double e = 1.0;
    kernels::Vec12 ge = kernels::Vec12::Zero();
    kernels::Mat12 he = kernels::Mat12::Zero();
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
        if (full_projection) {
            kernels::project_psd<12>(hessian);
        } else if (mollified) {
            kernels::project_psd_translation_free<4>(hessian);
        } else if (kind == k_point_triangle) {
            project_by_case(hessian, x, pt_case, pt_case == kernels::PointTriangleCase::interior, db, ddb);
        } else {
            project_by_case(hessian, x, ee_case, ee_case == kernels::EdgeEdgeCase::interior, db, ddb);
        }
    }
    return e * b;
}

/// b of a point–plane pair from the point x0 and a point x1 of the plane with unit normal n (to the free
/// side), on s = d², d = n·(x0 − x1): +∞ for d ≤ 0; with `order` ≥ k_gradient the gradient over {x0, x1}
/// (slots 0 and 1 of 12, (g, −g), g = b′(s) 2 d n) and with k_hessian the PSD Hessian
/// [[K, −K], [−K, K]], K = max(0, 4 s b″ + 2 b′) n nᵀ (the clamp keeps it PSD).
KOKKOS_INLINE_FUNCTION double point_plane_barrier(const kernels::Vec3& x0,
                                                  const kernels::Vec3& x1,
                                                  const kernels::Vec3& n,
                                                  double s_hat,
                                                  int order,
                                                  kernels::Vec12& g,
                                                  kernels::Mat12& H) {
    g.setZero();
    if (order == k_hessian) {
        H.setZero();
    }
    const double d = n.dot(x0 - x1);
    if (!(d > 0.0)) {
        return kernels::infinity();
    }
    const double s = d * d;
    if (s >= s_hat) {
        return 0.0;
    }
    if (order != k_energy) {
        const double db = kernels::barrier_first_derivative(s, s_hat);
        for (int c = 0; c < 3; ++c) {
            g(c) = db * 2.0 * d * n(c);
            g(3 + c) = -g(c);
        }
        if (order == k_hessian) {
            const double raw = 4.0 * s * kernels::barrier_second_derivative(s, s_hat) + 2.0 * db;
            const double curvature = 0.0 < raw ? raw : 0.0;
            for (int c = 0; c < 3; ++c) {
                for (int e = 0; e < 3; ++e) {
                    const double k = curvature * n(c) * n(e);
                    H(c, e) = k;
                    H(3 + c, 3 + e) = k;
                    H(c, 3 + e) = -k;
                    H(3 + c, e) = -k;
                }
            }
        }
    }
    return kernels::barrier(s, s_hat);
}

} // namespace intact::contact
