#include "src/contact/barrier_pairs.hpp"

#include "kernels/barrier.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/pair_projection.hpp"
#include "src/contact/pair_geometry.hpp"

namespace intact::contact {

namespace {

using kernels::Mat12;
using kernels::Vec12;
using kernels::Vec3;

// What pair_barrier computes beyond the energy, and how it projects the Hessian.
enum Order : int { k_energy = 0, k_gradient = 1, k_hessian = 2 };

// Project the unprojected barrier Hessian H of a point–triangle or edge–edge pair in closest-feature case
// `which`: the closed form for point–point cases, the translation-free 6×6 block of the three vertices
// for point–edge cases, the translation-free 9×9 block otherwise (kernels/pair_projection.hpp). The
// point–point and point–edge forms only for unmollified pairs (the mollifier moves all four vertices).
template <class Case>
KOKKOS_INLINE_FUNCTION void
project_by_case(Mat12& H, const Vec3 (&x)[4], Case which, bool interior, double db, double ddb) {
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
                                           const Vec3 (&x)[4],
                                           double s_hat,
                                           double eps_x,
                                           int order,
                                           bool full_projection,
                                           Vec12& gradient,
                                           Mat12& hessian) {
    const bool derivatives = order != k_energy;
    const bool with_hessian = order == k_hessian;
    double s = 0.0;
    Vec12 gs = Vec12::Zero();
    Mat12 hs = Mat12::Zero();
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

KOKKOS_INLINE_FUNCTION void load_rows(const PairList& pairs, int i, int (&rows)[4]) {
    for (int k = 0; k < 4; ++k) {
        rows[k] = pairs.rows(i, k);
    }
}

} // namespace

double barrier_local_energy(const PairList& candidates,
                            const ConstSurfaceField& xs,
                            const SurfaceTopology& topology,
                            double s_hat) {
    double total = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::barrier_energy", Kokkos::RangePolicy<ExecSpace>(0, candidates.count),
        KOKKOS_LAMBDA(const int i, double& sum) {
            int rows[4];
            load_rows(candidates, i, rows);
            const int kind = candidates.kind(i);
            if (!owns_pair(kind, rows, topology)) {
                return;
            }
            if (kind == k_point_plane) {
                const double s = pair_squared_distance(kind, rows, xs, topology);
                sum += s <= 0.0 ? kernels::infinity() : (s < s_hat ? kernels::barrier(s, s_hat) : 0.0);
                return;
            }
            Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            Vec12 g;
            Mat12 H;
            sum += pair_barrier(kind, x, s_hat, pair_mollifier_threshold(kind, rows, topology), k_energy,
                                false, g, H);
        },
        total);
    return total;
}

namespace detail {

// Both projections; a named namespace because CUDA lambdas need an enclosing function with linkage.
void barrier_derivatives(const PairList& active,
                         const ConstSurfaceField& xs,
                         const SurfaceTopology& topology,
                         double s_hat,
                         double kappa,
                         bool hessian,
                         bool full_projection,
                         PairStencils& out) {
    out.resize(active.count, hessian);
    const auto out_rows = out.rows;
    const auto out_count = out.count;
    const auto out_gradient = out.gradient;
    const auto out_hessian = out.hessian;
    Kokkos::parallel_for(
        "intact::contact::barrier_derivatives", Kokkos::RangePolicy<ExecSpace>(0, active.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            load_rows(active, i, rows);
            const int kind = active.kind(i);
            Vec12 g = Vec12::Zero();
            Mat12 H = Mat12::Zero();
            if (kind == k_point_plane) {
                // ∇s = 2 d n for the point (the plane's row with the opposite sign), ∇²s = 2 n nᵀ: the
                // Hessian is (4 d² b″ + 2 b′) n nᵀ, clamped at zero (PSD), as in BarrierPotential.
                const double d = plane_signed_distance(rows, xs, topology);
                const double s = d * d;
                const double db = kernels::barrier_first_derivative(s, s_hat);
                const double ddb = kernels::barrier_second_derivative(s, s_hat);
                const double raw = 4.0 * s * ddb + 2.0 * db;
                const double curvature = 0.0 < raw ? raw : 0.0; // std::max(0.0, raw), NaN included
                for (int c = 0; c < 3; ++c) {
                    const double n_c = topology.plane_normal(rows[1], c);
                    g(c) = db * 2.0 * d * n_c;
                    g(3 + c) = -g(c);
                    for (int e = 0; e < 3; ++e) {
                        const double k = curvature * n_c * topology.plane_normal(rows[1], e);
                        H(c, e) = k;
                        H(3 + c, 3 + e) = k;
                        H(c, 3 + e) = -k;
                        H(3 + c, e) = -k;
                    }
                }
            } else {
                Vec3 x[4];
                pair_positions(kind, rows, xs, x);
                pair_barrier(kind, x, s_hat, pair_mollifier_threshold(kind, rows, topology),
                             hessian ? k_hessian : k_gradient, full_projection, g, H);
            }
            int stencil[4];
            out_count(i) = pair_stencil_rows(kind, rows, stencil);
            for (int k = 0; k < 4; ++k) {
                out_rows(i, k) = stencil[k];
            }
            for (int j = 0; j < 12; ++j) {
                out_gradient(i, j) = kappa * g(j);
            }
            if (hessian) {
                for (int j = 0; j < 12; ++j) {
                    for (int k = 0; k < 12; ++k) {
                        out_hessian(i, j, k) = kappa * H(j, k);
                    }
                }
            }
        });
}

} // namespace detail

void barrier_derivatives(const PairList& active,
                         const ConstSurfaceField& xs,
                         const SurfaceTopology& topology,
                         double s_hat,
                         double kappa,
                         bool hessian,
                         PairStencils& out) {
    detail::barrier_derivatives(active, xs, topology, s_hat, kappa, hessian, false, out);
}

void barrier_derivatives_full_projection(const PairList& active,
                                         const ConstSurfaceField& xs,
                                         const SurfaceTopology& topology,
                                         double s_hat,
                                         double kappa,
                                         PairStencils& out) {
    detail::barrier_derivatives(active, xs, topology, s_hat, kappa, true, true, out);
}

} // namespace intact::contact
