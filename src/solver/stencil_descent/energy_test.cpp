// A sweep's move (K4, K5): the safety filter on the assembled update, the energy test that accepts it
// (damping the Jacobi rows, then halving α), x ← x + α Δx; and the energy change and slopes it tests.

#include "src/solver/stencil_descent.hpp"

#include "src/core/error.hpp"
#include "src/core/phase_timer.hpp"
#include "src/solver/stencil_descent/local_step.hpp"

namespace intact::solver {

using namespace stencil_detail;

namespace {

// Weights of the assembled update's Jacobi rows tried in turn by the acceptance test (take_step).
constexpr double k_jacobi_weights[] = {1.0, 0.5, 0.0};

} // namespace

bool StencilDescent::take_step(const NodeField& x, PhaseSeconds& seconds) {
    // K4: the safety filter on the assembled update m_delta (its ghost rows current), which scales it when
    // an element or a pair would be violated. Every `regular_ccd_every`-th sweep (and every sweep by
    // default): the shared step bound (inversion, and CCD with a broad phase; global MIN), whose swept
    // pairs join B. Between (spec §5.2–§5.3): the inversion bound and the pairs of B alone, no broad
    // phase; the chord from the last certified state is then certified by a regular CCD every
    // `regular_ccd_every` sweeps and before a step ends.
    //
    // Then the acceptance test on the whole potential, which the paper does not have: each stencil's step
    // lowers E with every other vertex held, but the Jacobi means combine steps that each assumed the
    // others fixed, and across a stiff barrier pair (both sides move the whole way apart) or a stiff
    // element they overshoot: on inputs/default.json every second sweep raised E from the lower cube's
    // landing on, ‖g‖ alternated between two levels and every step ran to the sweep cap. The update is
    // accepted when E(x + α Δ) − E(x) ≤ c₁ α gᵀΔ; else the Jacobi rows are damped (ω = ½, then 0: the
    // Gauss–Seidel rows alone, vertex-disjoint stencils whose steps each descend, so gᵀΔ < 0) and then α
    // halves (no new bound needed: a shorter step along a certified segment). Nothing accepted: no move
    // this sweep (the next sweep commits another color). In the warm start, which minimises E without
    // elasticity, an update must also not raise the full E: a 20 m/s bullet stopped by a plate in the warm
    // start was otherwise crushed, its rear moving the whole inertial path while barriers held its front,
    // each update keeping a fifth of the volumes until they were round-off (inputs/thin_plate.json ended
    // its first step with an inverted tet and ‖∇E‖₂ = 3e9).
    const bool regular = !m_contact || m_options.regular_ccd_every <= 1;
    const bool damping = m_options.accept_updates;
    std::array<double, 2> slopes{}; // gᵀΔ over the Gauss–Seidel rows and over the Jacobi rows
    if (damping) {
        Kokkos::deep_copy(m_assembled, m_delta);
        slopes = update_slopes(); // now: a bound's new pairs may rebuild the layout, and g with it
    }
    // With no Gauss–Seidel rows (shells and rods alone, or a warm start with every vertex in a pair) ω = 0
    // would move nothing: α halves at ω = ½ instead.
    const bool all_jacobi = slopes[0] == 0.0;
    double alpha = 0.0;
    for (const double omega : k_jacobi_weights) {
        if (omega < 1.0) {
            if (omega > 0.0 && slopes[1] == 0.0) {
                continue; // no Jacobi rows: straight to the shorter steps
            }
            if (omega == 0.0 && all_jacobi) {
                break;
            }
            damp_jacobi(omega);
        }
        {
            ScopedTimer timer(seconds.step_bound);
            alpha = regular ? m_bound.along(x, m_delta, m_parts.boundary) : filter_bound(x);
        }
        if (m_contact && regular) {
            ScopedTimer timer(seconds.contact);
            if (add_pairs(m_contact->swept())) {
                refresh_pairs(false);
            }
        }
        if (!damping) {
            break;
        }
        ScopedTimer timer(seconds.line_search);
        load_update();
        const double slope = slopes[0] + omega * slopes[1];
        bool accepted = false;
        const bool halves = omega == 0.0 || (all_jacobi && omega < 1.0);
        for (int halving = 0; halving < (halves ? k_backtracks : 1) && !accepted; ++halving) {
            const auto [others, elastic] = update_energy_change(x, alpha);
            accepted = slope < 0.0 && others + m_data.elastic * elastic <= k_armijo * alpha * slope &&
                       (m_data.elastic > 0.0 || others + elastic <= 0.0);
            alpha = accepted ? alpha : 0.5 * alpha;
        }
        if (accepted) {
            break;
        }
        alpha = 0.0;
    }
    // K5: x ← x + α Δx on every row of the solver's fields, then the layout's halo.
    const NodeField delta = m_delta;
    Kokkos::parallel_for(
        "intact::solver::stencil_update", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                x(v, i) += alpha * delta(v, i);
            }
        });
    load_positions(x);
    if (!regular && ++m_since_ccd >= m_options.regular_ccd_every) {
        certify(x, seconds);
    }
    return alpha > 0.0;
}

void StencilDescent::damp_jacobi(double omega) {
    const NodeField full = m_assembled;
    const NodeField delta = m_delta;
    const auto jacobi = m_jacobi;
    Kokkos::parallel_for(
        "intact::solver::stencil_damp_jacobi", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_owned),
        KOKKOS_LAMBDA(const int v) {
            const double weight = jacobi(v) != 0 ? omega : 1.0;
            for (int i = 0; i < 3; ++i) {
                delta(v, i) = weight * full(v, i);
            }
        });
    m_parts.halo.gather(m_delta);
}

std::array<double, 2> StencilDescent::update_slopes() const {
    const StencilData d = m_data;
    const NodeField delta = m_delta;
    const auto jacobi = m_jacobi;
    double sums[2] = {0.0, 0.0};
    Kokkos::parallel_reduce(
        "intact::solver::stencil_update_slopes", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v, double& seidel, double& jacobi_rows) {
            double dot = 0.0;
            for (int i = 0; i < 3; ++i) {
                dot += d.gradient(v, i) * delta(v, i);
            }
            (jacobi(v) != 0 ? jacobi_rows : seidel) += dot;
        },
        sums[0], sums[1]);
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m_parts.comm));
    return {sums[0], sums[1]};
}

void StencilDescent::load_update() {
    // Only the pairs read the update on layout and surface rows; B is the same on every rank, so every rank
    // gathers alike.
    if (m_data.num_pairs > 0) {
        fill_surface(on_layout(m_delta), m_zero_rows, m_surface_step);
    }
}

std::array<double, 2> StencilDescent::update_energy_change(const NodeField& x, double alpha) {
    // The trial point on the solver's rows (ghosts too: owned elements read them), in the step bound's
    // scratch, which is free here; inertia, load and the elasticity of solids, shells and rods from the
    // shared potential.
    const NodeField trial = m_product;
    const NodeField delta = m_delta;
    Kokkos::parallel_for(
        "intact::solver::stencil_update_trial", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                trial(v, i) = x(v, i) + alpha * delta(v, i);
            }
        });
    const double nodal = m_parts.potential.nodal_energy_change(x, trial, *m_problem).first;
    double elastic = m_parts.potential.elastic().energy_change(x, trial).first;
    if (m_data.num_codim > 0) {
        elastic += m_parts.potential.codim().energy_change(x, trial).first; // owned stencils
    }
    double pairs = 0.0;
    if (m_data.num_pairs > 0) {
        const StencilData d = m_data;
        const contact::SurfaceField ps = m_surface_step;
        Kokkos::parallel_reduce(
            "intact::solver::stencil_update_energy_pairs", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
            KOKKOS_LAMBDA(const int p, double& sum) {
                if (d.pair_counted(p) == 0) {
                    return;
                }
                const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                     d.pairs.rows(p, 3)};
                KVec3 before[4], after[4];
                contact::pair_positions(d.pairs.kind(p), rows, d.xs, before);
                contact::pair_positions(d.pairs.kind(p), rows, ps, after);
                for (int j = 0; j < 4; ++j) {
                    after[j] = before[j] + alpha * after[j];
                }
                Vec12 g;
                Mat12 H;
                sum += pair_term(d, p, after, contact::k_value, g, H) -
                       pair_term(d, p, before, contact::k_value, g, H);
            },
            pairs);
    }
    double sums[2] = {nodal + pairs, m_data.h2c * elastic};
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m_parts.comm));
    return {sums[0], sums[1]};
}

std::array<double, 3> StencilDescent::barrier_account(const NodeField& x) {
    // The step Δ = x − xᵗ on every local row (owned elements and pairs read ghosts) and on the surface rows
    // (obstacles held: the certificate checks energy only where they do not move); each counted pair of B
    // evaluated at x and at x − Δ = xᵗ.
    const NodeField delta = m_delta;
    const NodeField start = m_x_start;
    Kokkos::parallel_for(
        "intact::solver::stencil_step_delta", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                delta(v, i) = x(v, i) - start(v, i);
            }
        });
    load_update();
    double sums[3] = {0.0, 0.0, 0.0}; // start, end, slope
    if (m_data.num_pairs > 0) {
        const StencilData d = m_data;
        const contact::SurfaceField ps = m_surface_step;
        Kokkos::parallel_reduce(
            "intact::solver::stencil_barrier_account", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
            KOKKOS_LAMBDA(const int p, double& at_start, double& at_end, double& slope) {
                if (d.pair_counted(p) == 0) {
                    return;
                }
                const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                     d.pairs.rows(p, 3)};
                KVec3 end[4], step[4], begin[4];
                contact::pair_positions(d.pairs.kind(p), rows, d.xs, end);
                contact::pair_positions(d.pairs.kind(p), rows, ps, step);
                for (int j = 0; j < 4; ++j) {
                    begin[j] = end[j] - step[j];
                }
                Vec12 g;
                Mat12 H;
                at_start += pair_barrier(d, p, begin, contact::k_value, g, H);
                at_end += pair_barrier(d, p, end, contact::k_gradient, g, H);
                for (int j = 0; j < 4; ++j) {
                    for (int i = 0; i < 3; ++i) {
                        slope += g(3 * j + i) * step[j](i);
                    }
                }
            },
            sums[0], sums[1], sums[2]);
    }
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, m_parts.comm));
    return {sums[0] / m_data.h2c, sums[1] / m_data.h2c, sums[2] / m_data.h2c};
}

} // namespace intact::solver
