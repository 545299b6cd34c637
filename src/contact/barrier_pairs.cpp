#include "src/contact/barrier_pairs.hpp"

#include "kernels/barrier.hpp"
#include "src/contact/pair_barrier.hpp"
#include "src/contact/pair_geometry.hpp"

namespace intact::contact {

namespace {

using kernels::Mat12;
using kernels::Vec12;
using kernels::Vec3;

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
            Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            if (kind == k_point_plane) {
                // The plane's row is prescribed and never owned: only the point's row is added, with the
                // coupling block through which a moving plane pushes.
                const Vec3 n(topology.plane_normal(rows[1], 0), topology.plane_normal(rows[1], 1),
                             topology.plane_normal(rows[1], 2));
                point_plane_barrier(x[0], x[1], n, s_hat, hessian ? k_hessian : k_gradient, g, H);
            } else {
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
