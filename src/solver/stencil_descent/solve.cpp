// StencilDescent::solve: one time step as numbered steps (boundary, pair set, warm start, hybrid sweeps
// with friction lags, what the step ends with); and the color-schedule counter a checkpoint keeps.

#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/core/phase_timer.hpp"
#include "src/io/checkpoint.hpp"

#include <algorithm>
#include <cmath>

namespace intact::solver {

namespace {

constexpr double k_warm_start_tolerance = 1e-2; // ε_ws: the warm start ends at this fraction of its ‖∇E_ws‖
// With the prescribed rows short of their targets, they advance again once the sweeps have cut ‖g‖ to
// this fraction of what it was right after their last advance (or met the step's test).
constexpr double k_boundary_settling = 0.1;

} // namespace

void StencilDescent::save(io::CheckpointWriter& out) const {
    out.put_values("stencil_descent/sweep_counter", {static_cast<double>(m_sweep_counter)});
}

void StencilDescent::restore(const io::CheckpointReader& in) {
    m_sweep_counter = static_cast<long long>(in.values("stencil_descent/sweep_counter").at(0));
}

StepResult StencilDescent::solve(const NodeField& x, const StepProblem& problem) {
    StepResult result;
    PhaseSeconds& seconds = result.seconds;
    BoundaryMotion& boundary = m_parts.boundary;

    m_h = problem.h;
    m_x = x;
    m_problem = &problem;
    struct ForgetProblem {
        const StepProblem*& problem;
        ~ForgetProblem() { problem = nullptr; }
    } forget{m_problem}; // also when the step throws
    if (m_contact) {
        // Friction measures slips, and the certificate the barrier's energy, from xᵗ as it is before
        // prescribed rows and obstacles arrive.
        Kokkos::deep_copy(m_x_start, x);
    }
    if (m_friction) {
        Kokkos::deep_copy(m_obstacle_start, boundary.obstacle_positions());
    }

    // 0. Prescribed nodes and obstacles towards their targets (then fixed rows): the whole way when that
    //    is safe, else the safe fraction now and the rest after sweeps have moved the free rows aside.
    bool arrived = advance_boundary(x, seconds, false);

    // 1. The step's state on the stencil layout, and the pair set B with its customized barriers.
    load_state(x, problem);
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        start_pairs(x);
        if (m_friction) {
            lag_friction();
            result.friction_lags = 1;
        }
    }

    if (m_contact) {
        Kokkos::deep_copy(m_x_ck, x); // certified: the step bound placed the boundary, xᵗ was
        m_since_ccd = 0;
    }

    // 2. The absolute floor of the convergence test: the gradient of a uniform residual acceleration ε_a.
    double mass_squared = 0.0;
    {
        const StencilData d = m_data;
        Kokkos::parallel_reduce(
            "intact::solver::stencil_mass_norm", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
            KOKKOS_LAMBDA(const int v, double& sum) { sum += 3.0 * d.free(v) * d.mass(v) * d.mass(v); },
            mass_squared);
    }
    const double floor = m_settings.stop.acceleration * problem.h * problem.h *
                         std::sqrt(comm::allreduce_sum(m_parts.comm, mass_squared));

    // The scale of the relative test: ‖g‖₂ at the step's start xᵗ (prescribed rows moved as far as safe). The
    // spec's r₀ is ‖g(x⁰)‖₂ after the warm start; the test below uses the smaller of the two, because the
    // warm start leaves elasticity out, and on a stiff body the strain it leaves inflates ‖g(x⁰)‖₂ by orders
    // of magnitude, so that the relative test ended steps before their forces had acted (a 1e8 Pa block on a
    // 30° slope slid at 0.45 of Coulomb's acceleration at dt = 0.005 s, and not at all at 0.01 s).
    double start_norm = 0.0;
    {
        ScopedTimer timer(seconds.assembly);
        elastic_derivatives(false); // again: start_pairs may have rebuilt the layout
        if (m_contact) {
            pair_derivatives();
        }
        vertex_derivatives();
        start_norm = std::sqrt(gradient_norm_squared());
    }

    // 3. Warm start (spec §4): Jacobi sweeps on inertia, load and barriers alone.
    if (m_options.warm_start_sweeps > 0) {
        m_data.elastic = 0.0;
        double warm_start_norm = 0.0;
        result.warm_start_sweeps = 0;
        for (int sweep = 0;; ++sweep) {
            {
                ScopedTimer timer(seconds.assembly);
                if (m_contact) {
                    pair_derivatives();
                }
                vertex_derivatives();
            }
            const double norm = std::sqrt(gradient_norm_squared());
            warm_start_norm = sweep == 0 ? norm : warm_start_norm;
            if (norm <= k_warm_start_tolerance * warm_start_norm + floor ||
                sweep >= m_options.warm_start_sweeps) {
                break;
            }
            {
                ScopedTimer timer(seconds.linear_solve);
                warm_start_update(m_delta);
                m_parts.halo.gather(m_delta);
            }
            if (!take_step(x, seconds)) {
                break; // the update would raise the step's potential: the sweeps take over from here
            }
            result.warm_start_sweeps = sweep + 1;
        }
        m_data.elastic = 1.0;
    }

    // 4. Hybrid sweeps until ‖g‖₂ ≤ tolerance r₀ + floor. With friction, IPC's lag loop: lag again at the
    //    solution and sweep on, at most contact.friction_iterations solves, until a new lag leaves the test
    //    met at once; `max_sweeps` bounds the sweeps of all of them together.
    double initial_norm = 0.0;
    int sweeps = 0;
    bool relaxing = !arrived;   // the first test after an advance only records ‖g‖
    double advanced_norm = 0.0; // ‖g‖ right after the boundary's last advance
    int advanced_at = 0;        // `sweeps` at the boundary's last advance
    for (int lag = 1;; ++lag) {
        bool met_at_once = false;
        for (int sweep = 0;; ++sweep) {
            {
                ScopedTimer timer(seconds.assembly);
                elastic_derivatives(true);
                if (m_contact) {
                    pair_derivatives();
                }
                vertex_derivatives();
            }
            const double norm = std::sqrt(gradient_norm_squared());
            initial_norm = sweeps == 0 && lag == 1 ? std::min(norm, start_norm) : initial_norm;
            result.residual = norm;
            result.residual_acceleration = mass_scaled_max_norm(m_parts.comm, m_data.gradient, m_data.mass,
                                                                m_data.free, m_data.num_owned) /
                                           (problem.h * problem.h);
            // The paper's test, and then the step certificate's balance (step_certificate.hpp): the sweeps
            // go on until no free node is left with more than ε_a of unbalanced force per mass. The
            // relative test alone (a 2-norm) ended steps with 2-100 ε_a left on single nodes.
            const bool met = !relaxing && norm <= m_options.tolerance * initial_norm + floor &&
                             result.residual_acceleration < m_settings.stop.acceleration;
            if (relaxing) {
                advanced_norm = norm;
            }
            relaxing = false;
            const bool settled =
                !arrived && sweeps > advanced_at && norm <= k_boundary_settling * advanced_norm;
            if ((met || settled || sweeps >= m_options.max_sweeps) && m_since_ccd > 0) {
                // A step ends, and the boundary advances, only from a state a regular CCD certified.
                certify(x, seconds);
                continue;
            }
            if ((met || settled) && !arrived && sweeps < m_options.max_sweeps) {
                // Converged with the prescribed rows short of their targets: they take the next safe
                // fraction of their motion, and the sweeps go on from there (a continuation: the free rows
                // settle around each position the boundary reaches).
                arrived = advance_boundary(x, seconds, true);
                advanced_at = sweeps;
                relaxing = true; // at least one sweep before the next test
                continue;
            }
            if (met && arrived) {
                result.converged = true;
                met_at_once = sweep == 0;
                break;
            }
            if (sweeps >= m_options.max_sweeps) {
                log::warn() << "stencil_descent: the step ended after solver.stencil_descent.max_sweeps = "
                            << m_options.max_sweeps << " sweeps with ‖g‖ = " << norm << " (start "
                            << initial_norm << ", goal " << m_options.tolerance * initial_norm + floor
                            << ") and " << result.residual_acceleration
                            << " m/s² unbalanced on a free node (goal solver.acceleration_tolerance = "
                            << m_settings.stop.acceleration << ")"
                            << (arrived ? "" : " and the prescribed motion short of its target");
                break;
            }
            // K2: every stencil's local step from the frozen state; K3: Gauss–Seidel for the sweep's
            // color, Jacobi means elsewhere.
            {
                ScopedTimer timer(seconds.linear_solve);
                const int schemes = m_coloring.schemes;
                const int scheme = static_cast<int>(m_sweep_counter % schemes);
                const int color = static_cast<int>((m_sweep_counter / schemes) % m_coloring.colors);
                sweep_update(scheme, color, m_delta);
                m_parts.halo.gather(m_delta);
            }
            ++m_sweep_counter;
            result.iterations = ++sweeps;
            take_step(x, seconds);
        }
        if (!m_friction || !result.converged || met_at_once || lag >= m_settings.friction_iterations) {
            break;
        }
        ScopedTimer timer(seconds.contact);
        lag_friction();
        result.friction_lags = lag + 1;
        result.converged = false;
    }

    // A step cannot end with the boundary short of where the scene puts it: the output, `intact check` and
    // the next step place prescribed rows and obstacles at their targets. (`arrived` comes from global
    // MINs, so every rank stops here alike.)
    INTACT_REQUIRE(arrived,
                   m_parts.scene.file
                       << ": stencil_descent: the prescribed nodes and obstacles did not reach their "
                          "targets within solver.stencil_descent.max_sweeps = "
                       << m_options.max_sweeps
                       << " sweeps (they advance as far as contact gaps and element inversion allow, and "
                          "the sweeps did not make room for the rest); use a smaller time.dt, a larger "
                          "solver.stencil_descent.max_sweeps, or solver.type \"ipc\"");

    // 5. What the step ends with.
    result.sweeps = result.iterations;
    result.barrier_stencils = static_cast<long long>(m_pair_set.size()); // every rank holds all of B
    result.grey_fraction = m_coloring.grey_fraction();
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        m_contact->update(x, boundary.obstacle_positions());
        result.contact_pairs = m_contact->count_active_pairs();
        result.min_distance = std::sqrt(m_contact->min_squared_distance());
        result.kappa = kappa();
        const auto [start, end, slope] = barrier_account(x);
        result.own_barrier_start = start;
        result.own_barrier_end = end;
        result.own_barrier_slope = slope;
    }
    return result;
}

} // namespace intact::solver
