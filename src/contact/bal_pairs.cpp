#include "src/contact/bal_pairs.hpp"

#include "src/contact/pair_potential.hpp"

namespace intact::contact {

namespace {

// φᵢ(s) = μᵢ (ŝ + sᵢ − s) + σ b(s, ŝ + sᵢ) as a Phi (pair_potential.hpp); the linear part acts at any s.
struct AugmentationPhi {
    double mu, slack, s_hat, sigma;
    KOKKOS_INLINE_FUNCTION bool acts(double) const { return true; }
    KOKKOS_INLINE_FUNCTION void operator()(double s, double& value, double& first, double& second) const {
        const double shifted = s_hat + slack;
        value = mu * (shifted - s) + sigma * kernels::barrier(s, shifted);
        first = -mu + sigma * kernels::barrier_first_derivative(s, shifted);
        second = sigma * kernels::barrier_second_derivative(s, shifted);
    }
};

// w φᵢ of pair i at xs with its derivatives per `order` (w: the edge–edge mollifier, 1 otherwise).
KOKKOS_INLINE_FUNCTION double augmentation(const PairList& pairs,
                                           const ConstraintState& state,
                                           int i,
                                           const ConstSurfaceField& xs,
                                           const SurfaceTopology& topology,
                                           const AugmentationPhi& base,
                                           int order,
                                           kernels::Vec12& g,
                                           kernels::Mat12& H) {
    int rows[4];
    load_pair_rows(pairs, i, rows);
    const int kind = pairs.kind(i);
    AugmentationPhi phi = base;
    phi.mu = state.lambda(i);
    phi.slack = state.slack(i);
    if (kind == k_point_plane) {
        return plane_potential(rows, xs, topology, phi, order, g, H);
    }
    kernels::Vec3 x[4];
    pair_positions(kind, rows, xs, x);
    return pair_potential(kind, x, phi, pair_mollifier_threshold(kind, rows, topology), order,
                          HessianProjection::by_case, g, H, pair_offset(kind, rows, topology));
}

} // namespace

void select_closer_than(const PairList& active,
                        const ConstSurfaceField& xs,
                        const SurfaceTopology& topology,
                        double distance,
                        PairList& out) {
    const double s_limit = distance * distance;
    const PairList in = active;
    select_pairs(
        "intact::contact::select_augmented", in,
        KOKKOS_LAMBDA(const int k) {
            int rows[4];
            load_pair_rows(in, k, rows);
            return pair_squared_distance(in.kind(k), rows, xs, topology) < s_limit;
        },
        out);
}

double augmentation_local_energy(const ConstraintSet& set,
                                 const ConstSurfaceField& xs,
                                 const SurfaceTopology& topology,
                                 double s_hat,
                                 double sigma) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const AugmentationPhi base{0.0, 0.0, s_hat, sigma};
    double total = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::augmentation_energy", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i, double& sum) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            if (!owns_pair(pairs.kind(i), rows, topology)) {
                return;
            }
            kernels::Vec12 g;
            kernels::Mat12 H;
            sum += augmentation(pairs, state, i, xs, topology, base, k_value, g, H);
        },
        total);
    return total;
}

void augmentation_derivatives(const ConstraintSet& set,
                              const ConstSurfaceField& xs,
                              const SurfaceTopology& topology,
                              double s_hat,
                              double sigma,
                              bool hessian,
                              PairStencils& out) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const AugmentationPhi base{0.0, 0.0, s_hat, sigma};
    out.resize(pairs.count, hessian);
    const auto out_rows = out.rows;
    const auto out_count = out.count;
    const auto out_gradient = out.gradient;
    const auto out_hessian = out.hessian;
    Kokkos::parallel_for(
        "intact::contact::augmentation_derivatives", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            kernels::Vec12 g = kernels::Vec12::Zero();
            kernels::Mat12 H = kernels::Mat12::Zero();
            augmentation(pairs, state, i, xs, topology, base, hessian ? k_hessian : k_gradient, g, H);
            int rows[4];
            load_pair_rows(pairs, i, rows);
            int stencil[4];
            out_count(i) = pair_stencil_rows(pairs.kind(i), rows, stencil);
            for (int k = 0; k < 4; ++k) {
                out_rows(i, k) = stencil[k];
            }
            for (int j = 0; j < 12; ++j) {
                out_gradient(i, j) = g(j);
            }
            if (hessian) {
                for (int j = 0; j < 12; ++j) {
                    for (int k = 0; k < 12; ++k) {
                        out_hessian(i, j, k) = H(j, k);
                    }
                }
            }
        });
}

void augmentation_normal_forces(const ConstraintSet& set,
                                const ConstSurfaceField& xs,
                                const SurfaceTopology& topology,
                                double s_hat,
                                double sigma,
                                Kokkos::View<double*, MemSpace>& out) {
    grow(out, set.size(), "intact::contact::augmentation_normal_force");
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const auto force = out;
    Kokkos::parallel_for(
        "intact::contact::augmentation_normal_forces", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            const int kind = pairs.kind(i);
            const AugmentationPhi phi{state.lambda(i), state.slack(i), s_hat, sigma};
            double value = 0.0, first = 0.0, second = 0.0;
            if (kind == k_point_plane) {
                const double d = plane_signed_distance(rows, xs, topology);
                phi(d * d, value, first, second);
                force(i) = -2.0 * d * first;
                return;
            }
            kernels::Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            const double s = pair_squared_distance(kind, rows, xs, topology);
            const double weight =
                kind == k_edge_edge
                    ? kernels::edge_edge_mollifier(x[0], x[1], x[2], x[3],
                                                   pair_mollifier_threshold(kind, rows, topology))
                    : 1.0;
            phi(s, value, first, second);
            force(i) = -2.0 * weight * ::sqrt(s) * first;
        });
}

void update_multipliers(const ConstraintSet& set,
                        const ConstSurfaceField& xs,
                        const SurfaceTopology& topology,
                        double s_hat,
                        double sigma) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    Kokkos::parallel_for(
        "intact::contact::update_multipliers", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            const double s = pair_squared_distance(pairs.kind(i), rows, xs, topology);
            const double over = s - s_hat - state.lambda(i) / sigma;
            const double slack = over > 0.0 ? over : 0.0;
            state.slack(i) = slack;
            state.lambda(i) += sigma * kernels::barrier(s, s_hat + slack);
        });
}

} // namespace intact::contact
