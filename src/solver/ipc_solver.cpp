#include "src/solver/ipc_solver.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/phase_timer.hpp"
#include "src/solver/line_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace intact::solver {

namespace {

/// ‖mask ⊙ r‖₂ over the owned rows of every rank (the norm PCG's relative tolerance refers to).
double
free_norm(MPI_Comm comm, const NodeField& r, Kokkos::View<const double*, MemSpace> mask, int num_owned) {
    return std::sqrt(free_dot(comm, r, r, mask, num_owned));
}

/// Steps along one direction at most per Newton iteration when escaping a saddle (IpcSolver::extend_step).
constexpr int k_saddle_steps = 8;

/// The basin's damping (IpcSolver::solve, step 2): negative curvature met by PCG counts as weak down to
/// this many times the mass term (pᵀHp ≥ −k_weak_curvature pᵀMp); the damping μ of H + μM starts at
/// least at k_min_damping (the inertia doubled) and stays at most k_max_damping; stronger curvature is
/// projected away, as outside the basin.
constexpr double k_weak_curvature = 4.0;
constexpr double k_min_damping = 1.0;
constexpr double k_max_damping = 16.0;

} // namespace

double mean_nodal_mass(MPI_Comm comm, const IncrementalPotential& potential) {
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), potential.lumped_mass());
    double total = 0.0;
    for (int i = 0; i < potential.num_owned(); ++i) {
        total += mass(i);
    }
    const double nodes = static_cast<double>(comm::allreduce_sum(comm, std::int64_t{potential.num_owned()}));
    return comm::allreduce_sum(comm, total) / nodes;
}

void start_barrier_stiffness(MPI_Comm comm,
                             IncrementalPotential& potential,
                             contact::ContactModel& contact,
                             const BoundaryMotion& boundary,
                             const NodeField& x,
                             const StepProblem& problem,
                             contact::PairStencils& stencils,
                             const NodeField& scratch,
                             contact::BarrierStiffness& stiffness) {
    // ∇E is the elastic and inertial part only (friction is not lagged yet); neither it nor ∇B needs a
    // Hessian (the solver assembles its own when it needs one).
    potential.assemble_elastic(x, problem, false);
    start_barrier_stiffness(comm, potential.gradient(), potential, contact, boundary, x, stencils, scratch,
                            stiffness);
}

void start_barrier_stiffness(MPI_Comm comm,
                             const NodeField& gradient,
                             IncrementalPotential& potential,
                             contact::ContactModel& contact,
                             const BoundaryMotion& boundary,
                             const NodeField& x,
                             contact::PairStencils& stencils,
                             const NodeField& scratch,
                             contact::BarrierStiffness& stiffness) {
    contact.update(x, boundary.obstacle_positions());
    contact::barrier_derivatives(contact.active(), contact.positions(), contact.topology(), contact.s_hat(),
                                 1.0, false, stencils);
    potential.gradient_of(stencils, scratch);
    const auto barrier = scratch;
    const auto mask = potential.free_mask();
    double dots[2] = {0.0, 0.0};
    Kokkos::parallel_reduce(
        "intact::solver::kappa_dots", Kokkos::RangePolicy<ExecSpace>(0, potential.num_owned()),
        KOKKOS_LAMBDA(const int i, double& gb, double& bb) {
            for (int c = 0; c < 3; ++c) {
                const double b = mask(i) * barrier(i, c);
                gb += b * gradient(i, c);
                bb += b * b;
            }
        },
        dots[0], dots[1]);
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, dots, 2, MPI_DOUBLE, MPI_SUM, comm));
    stiffness.start(dots[0], dots[1]);
}

IpcSolver::IpcSolver(const StepParts& parts, const NewtonSettings& settings)
    : m_parts(parts), m_settings(settings), m_potential(parts.potential), m_boundary(parts.boundary),
      m_contact(parts.contact), m_bound(parts.comm, parts.potential.elastic(), parts.contact),
      m_system(parts.potential,
               parts.halo,
               settings.preconditioner,
               parts.mesh ? &parts.mesh->node_body : nullptr),
      m_forcing(settings.linear.tolerance), m_rhs("intact::solver::rhs", parts.potential.matrix().num_cols()),
      m_direction("intact::solver::direction", parts.potential.matrix().num_cols()),
      m_trial("intact::solver::trial", parts.potential.matrix().num_cols()),
      m_product("intact::solver::product", parts.potential.matrix().num_cols()),
      m_step_start("intact::solver::step_start", parts.potential.matrix().num_cols()) {
    if (!m_contact) {
        return;
    }
    m_kappa.emplace(mean_nodal_mass(parts.comm, m_potential), m_contact->dhat(), parts.length);
    m_barrier_term.emplace(*m_contact, *m_kappa);
    m_potential.set_contact(*m_contact);
    m_potential.add_term(*m_barrier_term);
    if (parts.scene.has_friction()) {
        m_friction =
            std::make_unique<contact::FrictionPairs>(parts.scene.contact.friction, parts.scene.contact.epsv);
        m_friction_term.emplace(*m_contact, *m_friction);
        m_potential.add_term(*m_friction_term);
        m_obstacle_start = m_contact->surface().make_field("intact::solver::obstacle_start");
    }
}

void IpcSolver::start_kappa(const NodeField& x, const StepProblem& problem) {
    start_barrier_stiffness(m_parts.comm, m_potential, *m_contact, m_boundary, x, problem, m_kappa_stencils,
                            m_product, *m_kappa);
}

bool IpcSolver::arrival_is_safe(const NodeField& x, PhaseSeconds& seconds) {
    ScopedTimer timer(seconds.step_bound);
    // The remaining boundary motion may be taken whole only if it inverts no element and closes no
    // contact gap by more than 80%.
    return m_bound.along(x, m_boundary.step(), m_boundary) >= 1.0;
}

void IpcSolver::lag_friction(const NodeField& x, double h) {
    // Pairs, normal forces and bases at x; slips measured from the step's start (gathered through the
    // plan at x, which covers xᵗ).
    m_contact->surface().add_anchor(x);
    m_contact->update(x, m_boundary.obstacle_positions());
    m_contact->gather_trial(m_step_start, m_obstacle_start);
    m_friction->lag(m_contact->active(), m_contact->trial(), m_contact->positions(), m_contact->topology(),
                    m_contact->s_hat(), m_kappa->value(), h);
}

void IpcSolver::assemble(const NodeField& x, const StepProblem& problem, PhaseSeconds& seconds) {
    ScopedTimer timer(seconds.assembly);
    m_potential.assemble(x, problem);
    m_potential.apply_boundary(m_boundary.step(), m_boundary.obstacle_step(), m_product);
    compute_rhs();
}

bool IpcSolver::solve_linear(const NodeField& x,
                             const StepProblem& problem,
                             const PcgSettings& linear,
                             StepResult& result) {
    ScopedTimer timer(result.seconds.linear_solve);
    const LinearSolveResult solved =
        m_system.solve(x, m_rhs, m_direction, linear, problem.weight * problem.h * problem.h);
    result.linear_iterations += solved.pcg.iterations;
    result.warm_start_iterations += solved.warm_start_iterations;
    m_met_curvature = solved.pcg.breakdown_curvature;
    return !solved.pcg.breakdown;
}

void IpcSolver::set_basin(bool in_basin) {
    m_potential.set_elastic_projection(!in_basin);
    if (m_barrier_term) {
        m_barrier_term->set_projection(in_basin ? contact::HessianProjection::none
                                                : contact::HessianProjection::by_case);
    }
}

void IpcSolver::add_damping(double added) {
    const auto values = m_potential.matrix().values();
    const auto diagonal = m_potential.matrix().diagonal();
    const auto mass = m_potential.lumped_mass();
    Kokkos::parallel_for(
        "intact::solver::add_damping", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int r) {
            for (int c = 0; c < 3; ++c) {
                values(diagonal(r), c, c) += added * mass(r);
            }
        });
}

void IpcSolver::compute_rhs() {
    const auto rhs = m_rhs;
    const auto gradient = m_potential.gradient();
    const auto product = m_product;
    Kokkos::parallel_for(
        "intact::solver::newton_rhs", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                rhs(i, c) = -gradient(i, c) - product(i, c);
            }
        });
}

void IpcSolver::add_boundary_step() {
    const auto p = m_direction;
    const auto delta = m_boundary.step();
    Kokkos::parallel_for(
        "intact::solver::full_step", Kokkos::RangePolicy<ExecSpace>(0, p.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                p(i, c) += delta(i, c);
            }
        });
}

void IpcSolver::extend_step(const NodeField& x,
                            const StepProblem& problem,
                            int max_steps,
                            PhaseSeconds& seconds) {
    for (int taken = 0; taken < max_steps; ++taken) {
        double alpha = 0.0;
        {
            ScopedTimer timer(seconds.step_bound);
            alpha = m_bound.along(x, m_direction, m_boundary);
        }
        if (alpha < 1.0) {
            break;
        }
        bool lower = false;
        {
            ScopedTimer timer(seconds.line_search);
            const std::vector<double> terms_at_x =
                m_contact ? m_potential.term_energies(m_contact->positions()) : std::vector<double>{};
            m_boundary.trial_point(x, m_direction, 1.0, m_trial);
            if (m_contact) {
                m_contact->gather_segment_trial(m_trial, m_boundary.obstacle_trial()); // collective
            }
            const auto [change, scale] = m_potential.energy_change(x, m_trial, problem, terms_at_x);
            const LineSearchSettings settings;
            lower = change < -settings.round_off * scale; // strictly lower: no drift on round-off
        }
        if (!lower) {
            break;
        }
        accept_trial(x, seconds);
    }
}

void IpcSolver::accept_trial(const NodeField& x, PhaseSeconds& seconds) {
    Kokkos::deep_copy(x, m_trial);
    m_boundary.accept_trial();
    if (m_contact) {
        // The accepted trial's surface and candidates are those at the new x; the ghost plan of the
        // segment covers x, so the next assembly needs no refresh.
        ScopedTimer timer(seconds.contact);
        m_contact->accept_trial();
        m_kappa->observe(m_contact->min_squared_distance());
    }
}

StepResult IpcSolver::solve(const NodeField& x, const StepProblem& problem) {
    StepResult result;

    // 0. Contact at xᵗ: the ghost boxes start from it, κ starts from the gradients there, and friction is
    //    lagged there first.
    PhaseSeconds& seconds = result.seconds;
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        m_contact->surface().begin_step(x);
        start_kappa(x, problem);
        m_kappa->reset_distance(m_contact->min_squared_distance());
        if (m_friction) {
            Kokkos::deep_copy(m_step_start, x);
            Kokkos::deep_copy(m_obstacle_start, m_boundary.obstacle_positions());
            m_friction->lag(m_contact->active(), m_contact->positions(), m_contact->positions(),
                            m_contact->topology(), m_contact->s_hat(), m_kappa->value(), problem.h);
            result.friction_lags = 1;
        }
    }

    // The friction lag loop (IPC spec §6.5) around the Newton loop; without friction it runs once.
    // `contact_at_x`: the contact model's surface, pairs and ghost plan are current at x (after κ's start,
    // an accepted trial or a lag; not after the boundary arrives).
    bool contact_at_x = m_contact != nullptr;
    m_forcing.restart();
    for (int lag = 1;; ++lag) {
        bool lag_converged = false;
        const int first = result.iterations;
        // In Newton's basin (the last step was taken whole: no step bound, no backtracking) the elastic and
        // barrier Hessians are left unprojected: the PSD projection drops the negative curvature of
        // compressed and twisted elements and across each contact pair, and with it Newton's quadratic
        // convergence. Measured: the last iterations of a step each cut the residual by only 0.5 (the
        // 10 k-tet pile, barrier projection: 20-40 such iterations a step) or 0.85 (a hanging chain of five
        // rings, elastic projection: 60 a step, against 9-12 without it). Where the exact Hessian gives no
        // descent (PCG meets negative curvature, p does not descend, or the line search rejects it), the
        // iteration is solved again projected, which holds until the next whole step. Without contact the
        // basin is not used: contact-free steps converge in a few iterations either way, and the free-fall
        // accuracy test (test_accuracy) stopped 40% further from its closed form inside the same
        // tolerance.
        //
        // In the basin, negative curvature that PCG meets may be weak: a thin sheet draped and compressed
        // has buckling modes at the edge of stability. Measured on ten sheets piling on a sphere: the exact
        // Hessian met pᵀHp between −1e-6 and −0.5 times pᵀMp (the inertia term) after 100-250 PCG
        // iterations, and each projected step then cut the unbalanced force by only 8% (100 iterations a
        // step, not certified). A hanging chain of rings meets strong curvature (median −5 pᵀMp, up to
        // −6000) within a few PCG iterations, from the barriers of its contact pairs, which the projection
        // removes well. So weak curvature is damped instead, Levenberg–Marquardt in the mass metric: PCG
        // solves (H + μM) p = −∇E with μ = 4|pᵀHp / pᵀMp| but at least 1, doubled until PCG succeeds; μ
        // grows 4× when the line search shortens a damped step and shrinks 4× after a whole one, and the
        // basin is left (the projection used) once μ would pass k_max_damping. The floor of 1 applies where
        // damping starts or grows (after whole steps μ may shrink below it): a μ as small as the curvature
        // met (1e-5 on the sheets) lets the near-singular mode's step run long, and the step bound's CCD
        // then sweeps long paths (on the 10 k-tet pile its phase took 25% longer for the same Newton count).
        // A damped p is shorter than Newton's, so a damped iteration may end the solve only on the force
        // balance with the step test, never on the step's length alone.
        bool in_basin = false;
        m_damping = 0.0;
        double previous_acceleration = std::numeric_limits<double>::infinity();
        for (int it = 0; it < m_settings.max_iterations; ++it) {
            // 1. The boundary's remaining motion Δ; once it is far below the solve's own resolution (1e-3
            //    of the tolerance), a capped step's geometric remainder would never reach zero: put the
            //    boundary on its target.
            double remaining = m_boundary.remaining(x);
            if (remaining > 0.0 && remaining <= 1e-3 * m_settings.stop.velocity * problem.h &&
                arrival_is_safe(x, seconds)) {
                m_boundary.arrive(x);
                remaining = 0.0;
                contact_at_x = false;
            }

            // 2. Free part of the step: H_ff p = −(∇E + H Δ)_f; moving obstacles push through the contact
            //    blocks too.
            if (m_contact && !contact_at_x) {
                ScopedTimer timer(seconds.contact);
                m_contact->update(x, m_boundary.obstacle_positions());
                contact_at_x = true;
            }
            set_basin(in_basin);
            assemble(x, problem, seconds);
            if (in_basin && m_damping > 0.0) {
                add_damping(m_damping);
            }
            PcgSettings linear = m_settings.linear;
            linear.report_curvature = true;
            linear.curvature_metric = m_potential.lumped_mass();
            // While the boundary is still on its way, PCG solves to the floor: p must carry the body
            // out of a moving obstacle's path, and a loose p leaves the step bound cutting α to
            // slivers (the paddle scene stalled at the iteration cap with 0.1).
            if (m_settings.forcing && remaining == 0.0) {
                linear.tolerance = m_forcing.next(
                    free_norm(m_parts.comm, m_rhs, m_potential.free_mask(), m_potential.num_owned()));
            }
            bool solved = solve_linear(x, problem, linear, result);
            // The curvature met is that of H + μM: H's own is μ less.
            while (in_basin && !solved && m_met_curvature - m_damping >= -k_weak_curvature) {
                // Weak negative curvature: damp it, and solve again.
                const double damping = std::max({2.0 * m_damping, -4.0 * m_met_curvature, k_min_damping});
                if (!(damping > m_damping && damping <= k_max_damping)) {
                    break;
                }
                add_damping(damping - m_damping);
                m_damping = damping;
                solved = solve_linear(x, problem, linear, result);
            }
            if (in_basin && (!solved || free_dot(m_parts.comm, m_rhs, m_direction, m_potential.free_mask(),
                                                 m_potential.num_owned()) <= 0.0)) {
                // Strong negative curvature (or damping past its cap, or no descent) without the projection:
                // project, and solve again.
                in_basin = false;
                m_damping = 0.0;
                set_basin(false);
                assemble(x, problem, seconds);
                solve_linear(x, problem, linear, result);
            }

            // 3. Stop when the boundary has arrived and both ‖p‖∞ / h and the residual acceleration are
            //    below their tolerances (stopping_rule.hpp: the step's forces have acted). At least one
            //    step is taken (IPC spec §7.1). A later lag stops without a step when the iterate already
            //    passes with the updated lagged friction: the lagging has converged.
            const NewtonMeasures measures =
                measure_newton(m_parts.comm, m_direction, m_rhs, m_potential.lumped_mass(),
                               m_potential.free_mask(), m_potential.num_owned(), problem.h);
            result.residual = measures.step_velocity;
            result.residual_acceleration = measures.residual_acceleration;
            const bool stop =
                m_damping > 0.0 ? measures.balanced(m_settings.stop) : measures.converged(m_settings.stop);
            if (it >= (lag == 1 ? 1 : 0) && remaining == 0.0 && stop) {
                result.converged = true;
                lag_converged = it == 0;
                break;
            }

            // 4. The full step d = p + Δ, capped by the step bound, then backtracking on E.
            add_boundary_step();
            double alpha = 0.0;
            {
                ScopedTimer timer(seconds.step_bound);
                alpha = m_bound.along(x, m_direction, m_boundary);
            }
            LineSearchResult search;
            double energy_scale = 0.0;
            {
                ScopedTimer timer(seconds.line_search);
                const std::vector<double> terms_at_x =
                    m_contact ? m_potential.term_energies(m_contact->positions()) : std::vector<double>{};
                search = backtrack(alpha, remaining > 0.0, [&](double a) {
                    m_boundary.trial_point(x, m_direction, a, m_trial);
                    if (m_contact) {
                        m_contact->gather_segment_trial(m_trial, m_boundary.obstacle_trial()); // collective
                    }
                    const auto change = m_potential.energy_change(x, m_trial, problem, terms_at_x);
                    energy_scale = change.second;
                    return change;
                });
            }
            result.iterations = first + it + 1;
            if (!search.accepted && in_basin) {
                // The exact Hessian's direction does not descend far enough to be taken: this iteration
                // again, projected.
                in_basin = false;
                m_damping = 0.0;
                continue;
            }
            if (!search.accepted) {
                // A direction whose whole predicted decrease is below E's round-off cannot be taken: the
                // iterate is as converged as E can tell (stopping_rule.hpp). So is one that already passes
                // the stopping test before its first step (a body at rest: the step that was still due,
                // 1e-11 m, changed E by less than its round-off at three ranks).
                result.converged =
                    remaining == 0.0 &&
                    (measures.converged(m_settings.stop) ||
                     measures.step_velocity < k_round_off_velocity * m_settings.stop.velocity ||
                     below_round_off(m_parts.comm, m_rhs, m_direction, m_potential.free_mask(),
                                     m_potential.num_owned(), energy_scale));
                lag_converged = result.converged && it == 0;
                result.line_search_failed = !result.converged;
                break;
            }

            // 5. Accept; κ doubles when a pair is already tiny and still closing (IPC spec §4.3).
            const bool whole = remaining == 0.0 && alpha >= 1.0 && search.alpha >= 1.0;
            const bool projected = !in_basin;
            if (in_basin && m_damping > 0.0 && !whole && search.alpha < alpha) {
                // A damped step the line search shortened: damp more and stay in the basin; past the cap
                // the next iteration is projected (and so are the ones after it, until a whole step).
                m_damping *= 4.0;
                in_basin = m_damping <= k_max_damping;
            } else {
                in_basin = m_barrier_term && whole;
                m_damping *= 0.25;
            }
            if (!in_basin) {
                m_damping = 0.0;
            }
            accept_trial(x, seconds);
            // A saddle: the last step grew the unbalanced force and this one is whole and projected. The
            // projection clamps the potential's negative curvature λ to zero, so along it each step moves
            // only as far as inertia allows and leaves the force multiplied by h²|λ|/m: a buckling sheet of
            // the twisting cloth took 90 whole steps to the iteration cap while its residual grew from 0.12
            // to 54 m/s² (×1.07 an iteration), its energy falling all the while. There the same direction
            // goes on while E falls (extension steps are not counted as Newton iterations).
            if (whole && projected && it > 0 && measures.residual_acceleration > previous_acceleration) {
                extend_step(x, problem, k_saddle_steps, seconds);
            }
            previous_acceleration = measures.residual_acceleration;
        }
        if (!m_friction || !result.converged || lag_converged || lag >= m_settings.friction_iterations) {
            break;
        }
        // 6. Lag again at the solution.
        ScopedTimer timer(seconds.contact);
        lag_friction(x, problem.h);
        result.friction_lags = lag + 1;
        result.converged = false;
    }

    // 7. What the step ends with.
    set_basin(false);
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        if (!contact_at_x) {
            m_contact->gather(x, m_boundary.obstacle_positions());
        }
        result.contact_pairs = m_contact->count_active_pairs();
        result.min_distance = std::sqrt(m_contact->min_squared_distance());
        result.kappa = m_kappa->value();
    }
    return result;
}

} // namespace intact::solver
