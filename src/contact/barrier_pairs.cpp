#include "src/contact/barrier_pairs.hpp"

#include "src/contact/pair_potential.hpp"

namespace intact::contact {

double barrier_local_energy(const PairList& candidates,
                            const ConstSurfaceField& xs,
                            const SurfaceTopology& topology,
                            double s_hat) {
    double total = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::barrier_energy", Kokkos::RangePolicy<ExecSpace>(0, candidates.count),
        KOKKOS_LAMBDA(const int i, double& sum) {
            int rows[4];
            load_pair_rows(candidates, i, rows);
            const int kind = candidates.kind(i);
            if (!owns_pair(kind, rows, topology)) {
                return;
            }
            if (kind == k_point_plane) {
                const double s = pair_squared_distance(kind, rows, xs, topology);
                sum += s <= 0.0 ? kernels::infinity() : (s < s_hat ? kernels::barrier(s, s_hat) : 0.0);
                return;
            }
            kernels::Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            kernels::Vec12 g;
            kernels::Mat12 H;
            sum +=
                pair_potential(kind, x, BarrierPhi{s_hat}, pair_mollifier_threshold(kind, rows, topology),
                               k_value, HessianProjection::by_case, g, H, pair_offset(kind, rows, topology));
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
                         HessianProjection projection,
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
            load_pair_rows(active, i, rows);
            const int kind = active.kind(i);
            kernels::Vec12 g = kernels::Vec12::Zero();
            kernels::Mat12 H = kernels::Mat12::Zero();
            const int order = hessian ? k_hessian : k_gradient;
            if (kind == k_point_plane) {
                plane_potential(rows, xs, topology, BarrierPhi{s_hat}, order, g, H);
            } else {
                kernels::Vec3 x[4];
                pair_positions(kind, rows, xs, x);
                pair_potential(kind, x, BarrierPhi{s_hat}, pair_mollifier_threshold(kind, rows, topology),
                               order, projection, g, H, pair_offset(kind, rows, topology));
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
                         PairStencils& out,
                         HessianProjection projection) {
    detail::barrier_derivatives(active, xs, topology, s_hat, kappa, hessian, projection, out);
}

void barrier_derivatives_full_projection(const PairList& active,
                                         const ConstSurfaceField& xs,
                                         const SurfaceTopology& topology,
                                         double s_hat,
                                         double kappa,
                                         PairStencils& out) {
    detail::barrier_derivatives(active, xs, topology, s_hat, kappa, true, HessianProjection::full, out);
}

} // namespace intact::contact
