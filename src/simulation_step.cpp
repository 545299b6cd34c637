/// @file simulation_step.cpp
/// @brief One time step of the Simulation: the method's solve, the step certificate's verdict, and the
/// fallback that solves a rejected step again from its start with the reference method (`ipc`).
///
/// The order of one step:
///  1. the integrator's x̂ and the boundary's targets from the step's start; the method solves;
///  2. the certificate's first part (the method's stopping test and the balance of forces) from the
///     solve's result; a rejected step is solved again from its start by the fallback (solver.fallback);
///  3. the integrator's end state; under implicit Euler, the certificate's energy check; a step rejected
///     there is solved again too (implicit Euler's end step keeps no state: it is simply repeated).
/// A fallback step is judged with the fallback's own energy terms at both ends (its barrier's energy at
/// the step's start is counted at the end's κ), and the run's method's terms are put back after it.

#include "src/simulation.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/solver/ipc_solver.hpp"

#include <algorithm>
#include <cmath>

namespace intact {

namespace {

/// The work of a solve added to another's: iterations and seconds.
void add_cost(solver::StepResult& to, const solver::StepResult& from) {
    to.iterations += from.iterations;
    to.linear_iterations += from.linear_iterations;
    to.warm_start_iterations += from.warm_start_iterations;
    to.seconds.contact += from.seconds.contact;
    to.seconds.assembly += from.seconds.assembly;
    to.seconds.linear_solve += from.seconds.linear_solve;
    to.seconds.step_bound += from.seconds.step_bound;
    to.seconds.line_search += from.seconds.line_search;
}

/// A fallback step's result: the fallback's solve (its state, residuals, pairs, κ) with the work of both
/// solves added up (a fallback step costs both), and the run's method's own figures (outer iterations,
/// active set, sweeps, ...), which describe its solve of the step.
void add_work(solver::StepResult& to, const solver::StepResult& from) {
    add_cost(to, from);
    to.outer_iterations = from.outer_iterations;
    to.mean_toi = from.mean_toi;
    to.active_set_size = from.active_set_size;
    to.normal_force = from.normal_force;
    to.augmented_pairs = from.augmented_pairs;
    to.sigma = from.sigma;
    to.sweeps = from.sweeps;
    to.warm_start_sweeps = from.warm_start_sweeps;
    to.barrier_stencils = from.barrier_stencils;
    to.grey_fraction = from.grey_fraction;
}

/// `account` as the certificate judges a step of a method that keeps its barrier in its own stencils
/// (stencil descent): that barrier joins as one more stored term, of weight 1, with its slope along the step
/// at the end. Unchanged for every other method and for a fallback's step (StepResult::own_barrier_*).
solver::EnergyAccount
with_own_barrier(const solver::StepResult& result, solver::EnergyAccount account, bool at_end) {
    if (!std::isfinite(result.own_barrier_end)) {
        return account;
    }
    if (at_end && account.slopes.size() == account.stored.size()) {
        account.slopes.push_back(result.own_barrier_slope);
    }
    account.stored.push_back(at_end ? result.own_barrier_end : result.own_barrier_start);
    account.weights.push_back(1.0);
    return account;
}

} // namespace

bool Simulation::can_fall_back() const {
    // Not under A-search: its energy target counts the contact energy of the run's method's terms, and a
    // step of ipc's would leave energy in a barrier that target does not see (measured: a bouncing ball
    // with `al` rebounds to 0.87 and 0.69 of its drop instead of 1).
    return m_scene.fallback == "ipc" && m_scene.solver != "ipc" && m_scene.integrator != "a_search";
}

solver::StepResult Simulation::step() {
    const double h = m_scene.dt;
    const double start_time = m_time;
    const double end_time = (m_step + 1) * h;
    m_substeps = 1;
    solver::StepResult result = solve_part(h, start_time, end_time);
    if (!m_verdict.certified() && can_substep()) {
        result = solve_in_substeps(result, start_time, end_time);
    }
    ++m_step;
    m_time = end_time;
    return result;
}

bool Simulation::can_substep() const {
    // solver.fallback "none" keeps the method's own steps as they end: no part of them is solved again.
    return m_scene.max_substeps > 1 && m_scene.fallback != "none" && !m_integrator->keeps_history();
}

solver::StepResult
Simulation::solve_in_substeps(const solver::StepResult& whole, double start_time, double end_time) {
    // The step in units of its smallest substep. Parts are solved in order from the step's start, first half
    // a step long; a rejected part is solved again from its start at half its length, down to one unit, and
    // the parts after it keep the shortest length reached. A unit that still fails is kept (reported NOT
    // CERTIFIED) and the rest of the step is one last part, kept as it ends. So a step costs at most
    // max_substeps + log₂(max_substeps) − 1 part solves more than the whole one (every part a unit).
    const int units = m_scene.max_substeps;
    const double unit = (end_time - start_time) / units;
    const std::string whole_failure = m_verdict.explain(m_certificate->acceleration_tolerance());
    solver::StepResult cost = whole;
    solver::StepResult result;
    std::optional<solver::StepVerdict> failed;
    const auto time_at = [&](int units_done) {
        return units_done == units ? end_time : start_time + units_done * unit;
    };
    int done = 0;
    int size = units / 2;
    int shortest = size;
    m_substeps = 0;
    restore_part_start();
    while (done < units) {
        if (failed) {
            size = units - done;
        }
        result = solve_part(size * unit, time_at(done), time_at(done + size));
        add_cost(cost, result);
        while (!m_verdict.certified() && !failed && size > 1) {
            restore_part_start();
            size /= 2;
            result = solve_part(size * unit, time_at(done), time_at(done + size));
            add_cost(cost, result);
        }
        if (!m_verdict.certified() && !failed) {
            failed = m_verdict;
        }
        shortest = std::min(shortest, size);
        done += size;
        ++m_substeps;
    }
    if (m_rank == 0) {
        log::warn() << "step " << m_step + 1 << ": not certified as one step (" << whole_failure
                    << "); solved again from its start in " << m_substeps << " parts, the shortest 1/"
                    << units / shortest << " of the step: "
                    << (failed ? "NOT CERTIFIED: " + failed->explain(m_certificate->acceleration_tolerance())
                               : std::string("certified"));
    }
    // The last part's state and figures, with the work of every solve the step took.
    result.iterations = cost.iterations;
    result.linear_iterations = cost.linear_iterations;
    result.warm_start_iterations = cost.warm_start_iterations;
    result.seconds = cost.seconds;
    if (failed) {
        m_verdict = *failed;
    }
    result.converged = m_verdict.certified();
    // The step's end counted with the whole step's c h², as a step solved whole (and a restart) counts it:
    // the stored contact energies are w B / (c h²).
    m_problem.h = m_scene.dt;
    m_account = energy_account();
    return result;
}

void Simulation::restore_part_start() {
    Kokkos::deep_copy(m_x, m_step_start);
    Kokkos::deep_copy(m_v, m_velocity_start);
    if (m_contact) {
        Kokkos::deep_copy(m_boundary->obstacle_positions(), m_obstacle_start);
        m_surface->begin_step(m_x);
        m_contact->update(m_x, m_obstacle_start);
    }
    m_account = m_part_account;
    m_account_current = true;
    m_problem = m_part_problem;
}

solver::StepResult Simulation::solve_part(double h, double start_time, double end_time) {
    m_part_h = h;
    m_part_time = start_time;
    m_part_end = end_time;
    // The integrator's x̂ from the state at the part's start; the start's energies counted with this part's
    // c h², as its end will be (the stored contact energies are w B / (c h²)): again where the last part or
    // step was of another length.
    solver::StepProblem problem = m_integrator->begin_step(h, m_x, m_v);
    if (!m_account_current || problem.weight * h * h != m_problem.weight * m_problem.h * m_problem.h) {
        m_problem.h = h;
        m_problem.weight = problem.weight;
        m_account = energy_account();
    }
    // The part's start, for the applied forces' work, a fallback's solve and substeps from the start.
    m_part_account = m_account;
    m_part_problem = m_problem;
    if (m_step_start.extent(0) != m_x.extent(0)) {
        m_step_start = NodeField("intact::step_start", m_x.extent(0));
        m_velocity_start = NodeField("intact::velocity_start", m_v.extent(0));
    }
    Kokkos::deep_copy(m_step_start, m_x);
    Kokkos::deep_copy(m_velocity_start, m_v);
    if (m_contact) {
        if (m_obstacle_start.extent(0) != m_boundary->obstacle_positions().extent(0)) {
            m_obstacle_start = m_surface->make_field("intact::obstacle_start");
        }
        Kokkos::deep_copy(m_obstacle_start, m_boundary->obstacle_positions());
    }

    // 1. The boundary's targets from the state at the part's start (x̂ above); the method
    //    minimises. The solve's positions are the state at t + θh (θ = ½ for implicit midpoint):
    //    prescribed nodes go there; obstacles go to the part's end, where the integrator's end state must
    //    clear them.
    problem.gravity = m_scene.gravity;
    m_boundary->begin_step(m_x, problem.theta * h, start_time, end_time);
    m_forces->evaluate(start_time, h);
    problem.force = m_forces->field();
    solver::StepResult result = m_solver->solve(m_x, problem);

    // 2. The method's test and the balance of forces; a rejected step is repaired by its method, going on
    //    from where it stopped, where the method can (StepSolver::repair), else solved again.
    m_verdict = m_certificate->judge_balance(result, m_solver->tests_balance());
    m_first_end.reset();
    if (!m_verdict.certified()) {
        m_first_end = first_end(result);
        if (m_solver->repair(m_x, problem, result, can_fall_back())) {
            m_verdict = m_certificate->judge_balance(result, m_solver->tests_balance());
            if (m_verdict.certified()) {
                record_repair(m_solver->name(), true);
            }
        }
    }
    if (!m_verdict.certified() && can_fall_back()) {
        result = fall_back(problem, result);
    }

    // 3. The integrator's end state; the energy check.
    finish_step(problem);
    double work = applied_work();
    solver::EnergyAccount start = m_account;
    solver::EnergyAccount end = step_end_account();
    m_certificate->judge_energy(
        m_verdict, m_verdict.fell_back() ? reference_start_account() : with_own_barrier(result, start, false),
        with_own_barrier(result, end, true), work, h);
    if (!m_verdict.certified() && can_fall_back() && !m_verdict.fell_back()) {
        // Only implicit Euler's steps are checked for energy (step_certificate.hpp), and its end step
        // keeps no state of its own: v = (xⁿ⁺¹ − xⁿ)/h from the start it kept in begin_step.
        INTACT_REQUIRE(m_scene.integrator == "implicit_euler",
                       "the step certificate checks energy under implicit Euler only");
        result = fall_back(problem, result);
        finish_step(problem);
        work = applied_work();
        end = step_end_account();
        m_certificate->judge_energy(m_verdict, reference_start_account(), end, work, h);
    }
    if (m_verdict.fell_back()) {
        // The run goes on with its own method and its terms; the state's account is counted with them.
        m_potential->use_terms(m_method_terms);
        end = energy_account();
        if (m_rank == 0) {
            log::warn() << "step " << m_step + 1 << ": " << m_solver->name()
                        << " failed the step certificate (" << m_fallback_reason
                        << "); solved again from its start with " << m_reference->name() << ": "
                        << (m_verdict.certified()
                                ? std::string("certified")
                                : "NOT CERTIFIED: " +
                                      m_verdict.explain(m_certificate->acceleration_tolerance()));
        }
    }
    m_account = end;
    m_account_current = true;
    // `converged` means certified (step_certificate.hpp); the verdict says what was checked.
    result.converged = m_verdict.certified();
    return result;
}

void Simulation::finish_step(const solver::StepProblem& problem) {
    m_integrator->end_step(problem, m_x, m_v);
    if (const auto fraction = m_integrator->move_fraction(); fraction && *fraction < 1.0 && m_rank == 0) {
        log::warn() << "step " << m_step + 1 << ": " << m_integrator->name() << " took " << *fraction
                    << " of its move past the solve (the full move would invert an element or close a "
                       "contact gap; README \"Time integrators\")";
    }
    if (m_contact && problem.theta != 1.0) {
        // The integrator moved x past the solve's y: contact (energy, next κ) must see where it went.
        m_surface->begin_step(m_x);
        m_contact->update(m_x, m_boundary->obstacle_positions());
    }
    m_problem = problem;
}

solver::StepResult Simulation::fall_back(const solver::StepProblem& problem,
                                         const solver::StepResult& rejected) {
    m_fallback_reason = m_verdict.explain(m_certificate->acceleration_tolerance());
    if (!m_first_end) {
        m_first_end = first_end(rejected); // the energy check's rejection: no repair was tried
    }
    // 1. Back to the step's start: positions, velocities, obstacles; the boundary's targets again.
    Kokkos::deep_copy(m_x, m_step_start);
    Kokkos::deep_copy(m_v, m_velocity_start);
    if (m_contact) {
        Kokkos::deep_copy(m_boundary->obstacle_positions(), m_obstacle_start);
    }
    m_boundary->begin_step(m_x, problem.theta * m_part_h, m_part_time, m_part_end);

    // 2. The reference method, made at the first fallback with its own terms (it keeps no state from
    //    step to step: κ starts from each step's start, IpcSolver).
    if (!m_reference) {
        // Friction is lagged again at the fallback's solution at least once: its first lag, at the start
        // the run's method left, may see none of the normal force (`al` rests its contacts at δ, where
        // the barrier is zero), and a step with no friction would still balance.
        solver::NewtonSettings settings = m_newton_settings;
        settings.friction_iterations = std::max(settings.friction_iterations, 2);
        m_potential->use_terms({});
        m_reference = std::make_unique<solver::IpcSolver>(
            solver::StepParts{m_comm, m_scene, *m_halo, *m_potential, *m_boundary, m_contact.get(), m_length,
                              &m_local},
            settings);
        m_reference_terms = m_potential->terms();
    }
    m_potential->use_terms(m_reference_terms);
    solver::StepResult result = m_reference->solve(m_x, problem);
    add_work(result, rejected);

    // 3. The reference's verdict, with the run's method's figures as it first ended the step kept beside it.
    m_verdict = m_certificate->judge_balance(result, m_reference->tests_balance());
    record_repair(m_reference->name(), false);
    return result;
}

Simulation::FirstEnd Simulation::first_end(const solver::StepResult& result) const {
    return FirstEnd{m_verdict.failed(), result.sweeps >= 0 ? result.sweeps : result.iterations,
                    result.residual_acceleration};
}

void Simulation::record_repair(const std::string& by, bool itself) {
    m_verdict.repaired_checks = m_first_end->failed;
    m_verdict.repaired_by = by;
    m_verdict.repaired_itself = itself;
    m_verdict.method_iterations = m_first_end->iterations;
    m_verdict.method_residual_acceleration = m_first_end->residual_acceleration;
}

double Simulation::applied_work() const {
    if (!m_certificate->checks_energy() || m_forces->empty()) {
        return 0.0;
    }
    // A scene-wide test: every rank reduces.
    return comm::allreduce_sum(
        m_comm, solver::work_rows(m_forces->field(), m_x, m_step_start, m_local.num_owned_nodes));
}

solver::EnergyAccount Simulation::reference_start_account() {
    // The fallback's terms at the step's start (their weights are the end's), then the contact model back
    // at the end state.
    const auto obstacles = m_boundary->obstacle_positions();
    if (m_contact) {
        m_surface->begin_step(m_step_start);
        m_contact->update(m_step_start, m_obstacle_start);
    }
    const solver::EnergyAccount start = energy_account_of(m_step_start, m_velocity_start);
    if (m_contact) {
        m_surface->begin_step(m_x);
        m_contact->update(m_x, obstacles);
    }
    return start;
}

solver::EnergyAccount Simulation::step_end_account() {
    solver::EnergyAccount end = energy_account();
    if (!m_certificate->checks_energy()) {
        return end;
    }
    // The contact model is at the end state (energy_account's positions): the stored terms' gradients there,
    // then the elastic gradient (gravity, linear, has no defect); one reduction for all.
    std::vector<double> slopes;
    if (!end.stored.empty()) {
        slopes =
            m_energy_model->stored_slopes(m_x, m_step_start, m_problem.weight * m_problem.h * m_problem.h);
    }
    if (m_elastic_gradient.extent(0) != m_x.extent(0)) {
        m_elastic_gradient = NodeField("intact::elastic_gradient", m_x.extent(0));
    }
    m_potential->potential_gradient(m_x, Vec3{0.0, 0.0, 0.0}, m_elastic_gradient);
    slopes.push_back(solver::work_rows(m_elastic_gradient, m_x, m_step_start, m_local.num_owned_nodes));
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, slopes.data(), static_cast<int>(slopes.size()), MPI_DOUBLE,
                                   MPI_SUM, m_comm));
    end.elastic_slope = slopes.back();
    slopes.pop_back();
    end.slopes = std::move(slopes);
    return end;
}

solver::EnergyAccount Simulation::energy_account() const {
    return energy_account_of(m_x, m_v);
}

solver::EnergyAccount Simulation::energy_account_of(const NodeField& x, const NodeField& v) const {
    const auto mass = m_potential->lumped_mass();
    double kinetic = 0.0;
    double momentum = 0.0;
    Kokkos::parallel_reduce(
        "intact::kinetic_energy", Kokkos::RangePolicy<ExecSpace>(0, m_local.num_owned_nodes),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum += 0.5 * mass(i) * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
        },
        kinetic);
    Kokkos::parallel_reduce(
        "intact::momentum_magnitude", Kokkos::RangePolicy<ExecSpace>(0, m_local.num_owned_nodes),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum += mass(i) * ::sqrt(v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
        },
        momentum);
    // The contact model is at x (the solver leaves it there; step() refreshes it after a midpoint step).
    const solver::LocalEnergies local =
        m_energy_model->conservative(x, m_problem.weight * m_problem.h * m_problem.h, NodeField(), {});
    const std::vector<bool> stored = m_energy_model->stored_terms();
    // One reduction: kinetic, momentum, elastic, gravitational, stored terms, the other terms' sum.
    std::vector<double> sums{kinetic, momentum, local.elastic, local.gravitational};
    double unstored = 0.0;
    for (std::size_t k = 0; k < local.terms.size(); ++k) {
        if (stored[k]) {
            sums.push_back(local.terms[k]);
        } else {
            unstored += local.terms[k];
        }
    }
    sums.push_back(unstored);
    INTACT_CHECK_MPI(
        MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, m_comm));
    solver::EnergyAccount account;
    account.kinetic = sums[0];
    account.momentum = sums[1];
    account.elastic = sums[2];
    account.gravitational = sums[3];
    const std::vector<double> weights = m_energy_model->term_weights();
    for (std::size_t k = 0, s = 4; k < stored.size(); ++k) {
        if (stored[k]) {
            account.stored.push_back(sums[s++]);
            account.weights.push_back(weights[k]);
        }
    }
    account.unstored = sums.back();
    return account;
}

} // namespace intact
