#include "src/contact/al_constraints.hpp"

#include "src/contact/pair_geometry.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <cmath>
#include <string>

namespace intact::contact {

namespace {

// c_i(ys) = d_i(x) + ∇d_i(x)ᵀ (ys − xs) − δ.
KOKKOS_INLINE_FUNCTION double constraint_value(const PairList& pairs,
                                               const ConstraintState& state,
                                               int i,
                                               const ConstSurfaceField& xs,
                                               const ConstSurfaceField& ys,
                                               double delta) {
    int rows[4], stencil[4];
    load_pair_rows(pairs, i, rows);
    const int count = pair_stencil_rows(pairs.kind(i), rows, stencil);
    double c = state.distance(i) - delta;
    for (int a = 0; a < count; ++a) {
        for (int k = 0; k < 3; ++k) {
            c += state.gradient(i, 3 * a + k) * (ys(stencil[a], k) - xs(stencil[a], k));
        }
    }
    return c;
}

// The constraint's term at c (AL spec §1.4). Near contact (slack at most the penalty's `release` when
// assembled: δ in the paper's loop) the slack is held, as Alg. B does: γ (μ/2 (c − s)² − λ (c − s)), a
// spring about the iterate that keeps constraints from flickering. A constraint whose slack exceeds it is
// clearly apart (while a step settles, every inactive one: AlSolver); for it the slack is minimised out
// instead, ψ(c) = γ (μ c²/2 − λ c) for c ≤ λ/μ and −γ λ²/(2μ) beyond: flat, no spring. Held slacks on such
// constraints hold separating bodies back until γ fades (two_blocks_impact kept 3.3 J of 128 J after
// separation, against 21.6 J with ipc).
KOKKOS_INLINE_FUNCTION bool released(double slack, double release) {
    return slack > release;
}

KOKKOS_INLINE_FUNCTION double
term_energy(double c, double slack, double lambda, double gamma, double mu, double release) {
    if (released(slack, release)) {
        return c <= lambda / mu ? gamma * (0.5 * mu * c * c - lambda * c)
                                : -gamma * lambda * lambda / (2.0 * mu);
    }
    const double r = c - slack;
    return gamma * (0.5 * mu * r * r - lambda * r);
}

// c_i(ys), storing the closed-form slack s_i = max(0, c_i − λ_i/μ) (AL spec eq. P14) on the way.
KOKKOS_INLINE_FUNCTION double constraint_value_and_slack(const PairList& pairs,
                                                         const ConstraintState& state,
                                                         int i,
                                                         const ConstSurfaceField& xs,
                                                         const ConstSurfaceField& ys,
                                                         double mu,
                                                         double delta) {
    const double c = constraint_value(pairs, state, i, xs, ys, delta);
    const double s = c - state.lambda(i) / mu;
    state.slack(i) = s > 0.0 ? s : 0.0;
    return c;
}

} // namespace

void linearize_constraints(const ConstraintSet& set,
                           const ConstSurfaceField& xs,
                           const SurfaceTopology& topology) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    Kokkos::parallel_for(
        "intact::contact::linearize_constraints", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            const int kind = pairs.kind(i);
            for (int k = 0; k < 12; ++k) {
                state.gradient(i, k) = 0.0;
            }
            if (kind == k_point_plane) {
                // d = n·(p − p_plane) − ξ: ∇d = n on the point and −n on the plane's row.
                state.distance(i) = plane_signed_distance(rows, xs, topology);
                for (int k = 0; k < 3; ++k) {
                    state.gradient(i, k) = topology.plane_normal(rows[1], k);
                    state.gradient(i, 3 + k) = -topology.plane_normal(rows[1], k);
                }
                return;
            }
            // d = √s with s the squared distance of the closest-feature case, so ∇d = ∇s / (2 d) (the
            // envelope-theorem gradient of AL spec §3.3, covering the point–point and point–edge cases).
            kernels::Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            double s = 0.0;
            kernels::Vec12 g;
            if (kind == k_point_triangle) {
                const auto c = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
                s = kernels::point_triangle_distance(x[0], x[1], x[2], x[3], c);
                g = kernels::point_triangle_distance_gradient(x[0], x[1], x[2], x[3], c);
            } else {
                const auto c = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
                s = kernels::edge_edge_distance(x[0], x[1], x[2], x[3], c);
                g = kernels::edge_edge_distance_gradient(x[0], x[1], x[2], x[3], c);
            }
            const double d = ::sqrt(s);
            // The constraint keeps the offset surfaces δ apart: its distance is the gap d − ξ (ξ the
            // pair's contact offset, 0 for solids), with the same gradient ∇d.
            state.distance(i) = d - pair_offset(kind, rows, topology);
            if (d > 0.0) { // CCD keeps safe states apart; a touching pair has no direction to give
                for (int k = 0; k < 12; ++k) {
                    state.gradient(i, k) = g(k) / (2.0 * d);
                }
            }
        });
}

void update_slacks(const ConstraintSet& set,
                   const ConstSurfaceField& xs,
                   const ConstSurfaceField& ys,
                   const AlPenalty& penalty) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const double mu = penalty.mu;
    const double delta = penalty.delta;
    Kokkos::parallel_for(
        "intact::contact::update_slacks", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) { constraint_value_and_slack(pairs, state, i, xs, ys, mu, delta); });
}

double al_local_energy(const ConstraintSet& set,
                       const ConstSurfaceField& xs,
                       const ConstSurfaceField& ys,
                       const SurfaceTopology& topology,
                       const AlPenalty& penalty) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const double mu = penalty.mu;
    const double delta = penalty.delta;
    const double release = penalty.release;
    double total = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::al_energy", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i, double& sum) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            if (!owns_pair(pairs.kind(i), rows, topology)) {
                return;
            }
            sum += term_energy(constraint_value(pairs, state, i, xs, ys, delta), state.slack(i),
                               state.lambda(i), state.gamma(i), mu, release);
        },
        total);
    return total;
}

void al_derivatives(const ConstraintSet& set,
                    const ConstSurfaceField& xs,
                    const ConstSurfaceField& ys,
                    const AlPenalty& penalty,
                    bool hessian,
                    PairStencils& out) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    out.resize(pairs.count, hessian);
    const auto out_rows = out.rows;
    const auto out_count = out.count;
    const auto out_gradient = out.gradient;
    const auto out_hessian = out.hessian;
    const double mu = penalty.mu;
    const double delta = penalty.delta;
    const double release = penalty.release;
    Kokkos::parallel_for(
        "intact::contact::al_derivatives", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4], stencil[4];
            load_pair_rows(pairs, i, rows);
            const int count = pair_stencil_rows(pairs.kind(i), rows, stencil);
            out_count(i) = count;
            for (int a = 0; a < 4; ++a) {
                out_rows(i, a) = stencil[a];
            }
            const double c = constraint_value(pairs, state, i, xs, ys, delta);
            // A released constraint (term_energy) has neither force nor stiffness at the iterate.
            const bool held = !released(state.slack(i), release);
            const double force =
                held ? mu * state.gamma(i) * (c - state.lambda(i) / mu - state.slack(i)) : 0.0;
            for (int k = 0; k < 12; ++k) {
                out_gradient(i, k) = force * state.gradient(i, k);
            }
            if (hessian) {
                const double stiffness = held ? mu * state.gamma(i) : 0.0;
                for (int k = 0; k < 12; ++k) {
                    for (int l = 0; l < 12; ++l) {
                        out_hessian(i, k, l) = stiffness * state.gradient(i, k) * state.gradient(i, l);
                    }
                }
            }
        });
}

void dual_update(const ConstraintSet& set,
                 const ConstSurfaceField& xs,
                 const ConstSurfaceField& ys,
                 const AlPenalty& penalty,
                 double decay) {
    const PairList pairs = set.pairs();
    const ConstraintState state = set.state();
    const double mu = penalty.mu;
    const double delta = penalty.delta;
    Kokkos::parallel_for(
        "intact::contact::dual_update", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i) {
            const double c = constraint_value_and_slack(pairs, state, i, xs, ys, mu, delta);
            if (state.slack(i) == 0.0) { // active: λ − μ c ≥ 0 here
                state.lambda(i) = state.lambda(i) - mu * c;
                state.gamma(i) = 1.0;
            } else {
                state.lambda(i) = 0.0;
                state.gamma(i) *= decay;
            }
        });
}

void flag_faded(const ConstraintSet& set, double threshold, Kokkos::View<int*, MemSpace>& flags) {
    grow(flags, set.size(), "intact::contact::faded_constraints");
    const auto gamma = set.state().gamma;
    const auto out = flags;
    Kokkos::parallel_for(
        "intact::contact::flag_faded", Kokkos::RangePolicy<ExecSpace>(0, set.size()),
        KOKKOS_LAMBDA(const int i) { out(i) = gamma(i) < threshold ? 1 : 0; });
}

ConstraintTotals count_constraints(MPI_Comm comm, const ConstraintSet& set, const SurfaceTopology& topology) {
    const PairList pairs = set.pairs();
    const auto lambda = set.state().lambda;
    // Counts travel as doubles (exact below 2^53) so the three sums take one allreduce.
    double sums[3] = {0.0, 0.0, 0.0};
    Kokkos::parallel_reduce(
        "intact::contact::count_constraints", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int i, double& all, double& pushing, double& total) {
            int rows[4];
            load_pair_rows(pairs, i, rows);
            if (owns_pair(pairs.kind(i), rows, topology)) {
                all += 1.0;
                pushing += lambda(i) > 0.0 ? 1.0 : 0.0;
                total += lambda(i);
            }
        },
        sums[0], sums[1], sums[2]);
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, comm));
    ConstraintTotals totals;
    totals.size = static_cast<long long>(sums[0]);
    totals.pushing = static_cast<long long>(sums[1]);
    totals.lambda = sums[2];
    return totals;
}

void segment_entry_times(const PairList& swept,
                         const Kokkos::View<const double*, MemSpace>& toi,
                         const ConstSurfaceField& xs,
                         const ConstSurfaceField& ps,
                         const SurfaceTopology& topology,
                         double delta,
                         const SurfaceField& ends,
                         Kokkos::View<double*, MemSpace>& entry) {
    grow(entry, swept.count, "intact::contact::segment_entry_times");
    Kokkos::parallel_for(
        "intact::contact::segment_ends", Kokkos::RangePolicy<ExecSpace>(0, ends.extent(0)),
        KOKKOS_LAMBDA(const int r) {
            for (int c = 0; c < 3; ++c) {
                ends(r, c) = xs(r, c) + ps(r, c);
            }
        });
    const double delta_squared = delta * delta;
    Kokkos::parallel_for(
        "intact::contact::segment_entry_times", Kokkos::RangePolicy<ExecSpace>(0, swept.count),
        KOKKOS_LAMBDA(const int j) {
            int rows[4];
            load_pair_rows(swept, j, rows);
            if (toi(j) < 1.0) {
                entry(j) = toi(j);
            } else {
                entry(j) =
                    pair_squared_distance(swept.kind(j), rows, ends, topology) < delta_squared ? 1.0 : 2.0;
            }
        });
}

void select_new_pairs(const PairList& swept,
                      const Kokkos::View<const double*, MemSpace>& entry,
                      const ConstraintSet& set,
                      const ContactSurface& surface,
                      NewPairScratch& scratch,
                      PairList& out) {
    const SurfaceTopology& topology = surface.topology();
    const int rows_total = surface.num_vertices();
    const int num_body = topology.num_body_vertices;
    grow(scratch.in_set, swept.count, "intact::contact::swept_in_set");
    grow(scratch.earliest, rows_total, "intact::contact::earliest_toi");
    if (static_cast<int>(scratch.gathered.extent(0)) != rows_total) {
        scratch.gathered = surface.make_field("intact::contact::earliest_toi_rows");
    }
    set.contains(swept, scratch.in_set);

    // 1. Per body row, the earliest time of the new colliding pairs this rank holds.
    const auto in_set = scratch.in_set;
    const auto earliest = scratch.earliest;
    Kokkos::deep_copy(Kokkos::subview(earliest, std::make_pair(0, rows_total)), 2.0);
    Kokkos::parallel_for(
        "intact::contact::earliest_toi", Kokkos::RangePolicy<ExecSpace>(0, swept.count),
        KOKKOS_LAMBDA(const int j) {
            if (in_set(j) != 0 || !(entry(j) <= 1.0)) {
                return;
            }
            const int used = swept.kind(j) == k_point_plane ? 1 : 4;
            for (int a = 0; a < used; ++a) {
                const int r = swept.rows(j, a);
                if (r < num_body) {
                    Kokkos::atomic_fetch_min(&earliest(r), entry(j));
                }
            }
        });

    // 2. The owner's value of every known body row (the owner holds every pair touching the row).
    const auto node_earliest = scratch.node_earliest;
    const auto local_of_surface = topology.local_of_surface;
    const auto owned = topology.owned;
    Kokkos::parallel_for(
        "intact::contact::owned_earliest_toi", Kokkos::RangePolicy<ExecSpace>(0, num_body),
        KOKKOS_LAMBDA(const int r) {
            if (owned(r) != 0) {
                node_earliest(local_of_surface(r), 0) = earliest(r);
            }
        });
    surface.gather(node_earliest, scratch.gathered);

    // 3. Keep the new colliding pairs that are the earliest for one of their body rows (ties kept).
    const auto gathered = scratch.gathered;
    select_pairs(
        "intact::contact::select_new_pairs", swept,
        KOKKOS_LAMBDA(const int j) {
            if (in_set(j) != 0 || !(entry(j) <= 1.0)) {
                return false;
            }
            const int used = swept.kind(j) == k_point_plane ? 1 : 4;
            for (int a = 0; a < used; ++a) {
                const int r = swept.rows(j, a);
                if (r < num_body && gathered(r, 0) == entry(j)) {
                    return true;
                }
            }
            return false;
        },
        out);
}

} // namespace intact::contact
