#include "src/solver/al_solver.hpp"

#include "comm/collectives.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/constraint_records.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/core/phase_timer.hpp"
#include "src/io/checkpoint.hpp"
#include "src/solver/line_search.hpp"
#include "src/solver/stopping_rule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace intact::solver {

namespace {

// α of the spec's safeguard (§2.7): this many iterations in a row below `stalled_step` double μ and halve δ.
constexpr double stalled_step = 1e-4;
constexpr int stall_limit = 50;
// The fraction of its rest volume below which y's boundary placement takes no element (place_boundary).
constexpr double smallest_rest_volume = 1e-3;
// Alg. B's inner loop runs to its first full step (the paper), except that it takes at most
// `capped_inner_iterations` Newton steps when the last segment's α was at least `followed`. With the
// inertial start, projected Newton on lagged friction (no curvature along the slip while sliding)
// overshoots the sticking zone and backtracks: on the 10 368-tet pile the loop ran up to 22 damped steps,
// 340 Newton iterations in 20 steps, 170 with the cap, ending with the same total energy to 4e-5. Where x
// cannot follow y (α < 1/2: a jammed contact, as in the stone arch), the loop runs uncapped: a cap of one
// step on every iteration stalled the arch (α < 1e-4 for hundreds of iterations), the paper's reason for
// the loop. A cap of one where x followed lost rebound energy on the bouncing ball with A-search (0.94 of
// the drop at the second rebound instead of 0.96); two keeps it.
constexpr int capped_inner_iterations = 2;
constexpr double followed = 0.5;
// Settling (past B < ε, until y passes the stopping rule: with `settle`, in a repair, or with no constraint
// held), an inactive constraint whose slack exceeds `settle_release` δ (in a repair, 0) is released (its
// slack minimised out), and μ grows by `settle_mu_growth` per outer iteration with constraints held, up to
// `settle_mu_largest` times the step's μ.
// - The multipliers' error shrinks by about K/(K + μ) per dual update (K the stiffness along the
//   constraint): at the paper's μ (a tenth of the largest Hessian diagonal) by 0.9-0.96 on stiff contact.
//   Faster or larger growth (×4 up to 1e4) diverged on sliding frictional blocks (two or three Newton steps
//   per dual update do not solve a subproblem that stiff: 6e6 m/s² left); ×2 up to 1e2 repaired 11 of
//   their 12 steps.
// - The slack held fixed in the Newton iterations, as Alg. B holds it, is a spring of stiffness γμ on every
//   constraint near contact. An inactive one (λ = 0, slack > 0) resists the node's free motion with it while
//   γ fades (0.9 per dual update): a node 35 m/s² out of balance beside a plane on
//   `inputs/ball_squeeze.json` crept on for 40 outer iterations. Released, it moves at once. Releasing every
//   inactive constraint let a landing sheet's constraints flicker (the spring's purpose): 300 outer
//   iterations without settling (CodimContact.AlKeepsTheContactOffsets); from 0.1 δ they do not. A repair
//   releases every one: from 0.1 δ the steel bar landing of StepCertificate's tests was left 2249 m/s²
//   unbalanced at its budget, released it is certified.
// Measured on ball_squeeze with `settle`, 40 steps, 1 rank: 1667 Newton iterations with μ's growth alone,
// 1382 releasing from 0.1 δ, 1588 from 0.3 δ.
constexpr double settle_release = 0.1;
constexpr double settle_mu_growth = 2.0;
constexpr double settle_mu_largest = 1e2;
// Outer iterations a repair may take (AlSolver::repair) before the step falls back, and the factor by
// which its unbalanced force must fall over every `repair_window` of them for it to go on (it may rise at
// first, while μ grows). Measured at 2 ranks over the first 0.2 s of `inputs/` scenes (Newton
// iterations; every step certified in each column; "fallback" solves every failed step again with `ipc`):
//   scene              fallback   repair (then fallback)   repair, budget 50, no progress rule, no re-lag
//   ball_squeeze         515        574 (10 repaired)        433 (19 repaired)
//   stack                129        276 (2)                  840 (10)
//   two_blocks_impact    171        219 (9)                  569 (9)
//   default              552        846 (1)
// A repair settles in about ten outer iterations or creeps with the force near ε_a; where `ipc` can
// take the step it is the cheaper repair, so `repair` defaults to the steps no fallback can take.
constexpr int repair_iterations = 15;
// A repair no fallback stands behind (A-search, solver.fallback "none") goes on to this cap whatever its
// progress: the steel bar landing of test_step_certificate (step 3) needs more than 15.
constexpr int lone_repair_iterations = 50;
constexpr double repair_progress = 0.5;
constexpr std::size_t repair_window = 4;
// Young's modulus (Pa) from which `al` warns at the start without `settle` or `repair`: on impacts of bodies
// this stiff a step ended (B < ε after K_min) with the multipliers far from the contact forces, every step
// reported converged. Implicit Euler, h = 0.01 s: a 2 kg block landing at 2 m/s went from 6.21 J to 8.56 J
// at 3e7 Pa, and lost energy as `ipc`'s did at 1e7 Pa (README "Augmented-Lagrangian solver").
constexpr double impact_stiffness = 3e7;

} // namespace

AlSolver::AlSolver(const StepParts& parts, const NewtonSettings& settings)
    : m_parts(parts), m_settings(settings), m_options(parts.scene.al), m_potential(parts.potential),
      m_boundary(parts.boundary), m_contact(*parts.contact),
      m_bound(parts.comm, parts.potential.elastic(), parts.contact),
      m_system(parts.potential,
               parts.halo,
               settings.preconditioner,
               parts.mesh ? &parts.mesh->node_body : nullptr),
      m_safe(parts.contact->surface().make_field("intact::solver::al_safe_rows")),
      m_ends(parts.contact->surface().make_field("intact::solver::al_segment_ends")),
      m_y("intact::solver::al_iterate", parts.potential.matrix().num_cols()),
      m_rhs("intact::solver::al_rhs", parts.potential.matrix().num_cols()),
      m_direction("intact::solver::al_direction", parts.potential.matrix().num_cols()),
      m_trial("intact::solver::al_trial", parts.potential.matrix().num_cols()),
      m_segment("intact::solver::al_segment", parts.potential.matrix().num_cols()) {
    m_scratch.node_earliest =
        NodeField("intact::solver::al_earliest_toi", parts.potential.matrix().num_cols());
    m_contact.surface().require_pairs(&m_set.pairs());
    m_term.emplace(m_contact, m_set, m_safe, m_penalty);
    m_potential.set_contact(m_contact);
    m_potential.add_term(*m_term);
    if (parts.scene.has_friction()) {
        m_friction =
            std::make_unique<contact::FrictionPairs>(parts.scene.contact.friction, parts.scene.contact.epsv);
        m_friction_term.emplace(m_contact, *m_friction);
        m_potential.add_term(*m_friction_term);
        m_step_start = NodeField("intact::solver::al_step_start", parts.potential.matrix().num_cols());
        m_obstacle_start = m_contact.surface().make_field("intact::solver::al_obstacle_start");
    }
    if (!m_options.k_min) {
        m_options.k_min = m_friction ? 6 : 2; // the paper's values (spec §2.1, §7 item 18)
    }
    for (std::size_t b = 0; b < parts.scene.bodies.size(); ++b) {
        const io::Body& body = parts.scene.bodies[b];
        if (body.material.youngs_modulus >= impact_stiffness && !m_options.settle &&
            m_options.repair == "never") {
            log::warn() << "al: " << io::body_label(body, b) << " has E = " << body.material.youngs_modulus
                        << " Pa; from " << impact_stiffness
                        << " Pa the paper's loop was measured to end impacts with their multipliers far from "
                           "the contact forces (energy gained), and solver.al.repair is \"never\": such "
                           "steps fall back to solver.fallback or stay uncertified; set solver.al.repair, or "
                           "solver.al.settle to true, or use solver.type \"ipc\" (the default) or \"bal\"";
            break;
        }
    }
}

double AlSolver::largest_free_diagonal() const {
    const auto values = m_potential.matrix().values();
    const auto diagonal = m_potential.matrix().diagonal();
    const auto free = m_potential.free_mask();
    double largest = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::al_largest_diagonal", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int r, double& value) {
            if (free(r) == 0.0) {
                return;
            }
            for (int c = 0; c < 3; ++c) {
                const double entry = values(diagonal(r), c, c);
                value = entry > value ? entry : value;
            }
        },
        Kokkos::Max<double>(largest));
    return comm::allreduce_max(m_parts.comm, largest);
}

void AlSolver::negate_gradient() {
    const auto rhs = m_rhs;
    const auto gradient = m_potential.gradient();
    Kokkos::parallel_for(
        "intact::solver::al_rhs", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                rhs(i, c) = -gradient(i, c);
            }
        });
}

void AlSolver::axpy(const NodeField& a, double s, const NodeField& b, const NodeField& out) {
    Kokkos::parallel_for(
        "intact::solver::al_axpy", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                out(i, c) = a(i, c) + s * b(i, c);
            }
        });
}

void AlSolver::mask_prescribed(const NodeField& field) const {
    const auto free = m_boundary.free_mask();
    Kokkos::parallel_for(
        "intact::solver::al_mask_prescribed", Kokkos::RangePolicy<ExecSpace>(0, field.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                field(i, c) *= free(i);
            }
        });
}

bool AlSolver::place_boundary() {
    // y's prescribed rows go towards their targets as far as keeps a fifth of every element's volume (the
    // step bound's rule; one global MIN). Placing them at once, as the spec's §2.8 does, flattens what
    // they drive into: from a y with collapsed elements the inner Newton cannot recover (the energy is
    // infinite there, so every backtracking trial fails), and x, which follows y a fifth of a volume at a
    // time, ends the step flat (a face pushed 0.1 m per step into a 0.4 m block).
    //
    // Each placement also keeps every element above a thousandth of its rest volume: where the prescribed
    // motion crushes the body (a face driven onto a fixed one), the fifths would otherwise add up, stage
    // after stage and step after step, to flat elements; there the boundary stops short, and the step
    // ends not converged at the outer-iteration cap with every element intact, as `ipc`'s do.
    if (m_boundary.remaining(m_y) == 0.0) {
        return true;
    }
    const double fraction = comm::allreduce_min(
        m_parts.comm, m_potential.elastic().max_step(m_y, m_boundary.step(), smallest_rest_volume));
    const double alpha = std::min(fraction, 1.0); // 1: exactly on the targets
    m_boundary.trial_point(m_y, m_boundary.step(), alpha, m_trial);
    Kokkos::deep_copy(m_y, m_trial);
    return alpha == 1.0;
}

double AlSolver::advance_segment(const NodeField& x, PhaseSeconds& seconds) {
    // The segment x → y: the step bound (inversion and CCD, one global MIN) with each swept pair's own
    // time, from which the new pairs that collide on it are chosen.
    ScopedTimer timer(seconds.step_bound);
    axpy(m_y, -1.0, x, m_segment);
    m_boundary.remaining(x); // obstacle_step = target − now
    const double alpha = m_bound.along(x, m_segment, m_boundary, m_toi);
    contact::segment_entry_times(m_contact.swept(), m_toi, m_contact.positions(), m_contact.step(),
                                 m_contact.topology(), m_penalty.delta, m_ends, m_entry);
    contact::select_new_pairs(m_contact.swept(), m_entry, m_set, m_contact.surface(), m_scratch, m_pending);
    return alpha;
}

void AlSolver::insert_pending() {
    // Alg. C: the new colliding pairs join at λ = 0, γ = 1; then the faded ones leave.
    m_set.insert(m_pending);
    m_pending.count = 0;
    contact::flag_faded(m_set, m_options.removal_threshold, m_faded);
    m_set.remove(m_faded);
}

void AlSolver::lag_friction(const NodeField& x, double h) {
    // At xᵗ (spec §6.1) the constraints of the previous step with their last λ as normal forces, later at
    // the step's solution with this step's (λ is in the incremental potential's units, as the barrier's
    // κ|b′|; the physical force is λ / h²). Slips count from the step's start, gathered through the plan
    // at x, which covers xᵗ.
    m_contact.surface().add_anchor(x);
    m_contact.update(x, m_boundary.obstacle_positions());
    m_contact.gather_trial(m_step_start, m_obstacle_start);
    m_friction->lag(m_set.pairs(), m_contact.trial(), m_contact.positions(), m_contact.topology(),
                    m_set.state().lambda, h);
}

AlSolver::Subproblem AlSolver::solve_subproblem(const NodeField& x,
                                                const StepProblem& problem,
                                                StepResult& result,
                                                bool stop_if_settled,
                                                int max_newton) {
    // Alg. B. The linearisation point x is fixed for the call; y moves.
    PhaseSeconds& seconds = result.seconds;
    {
        ScopedTimer timer(seconds.contact);
        m_contact.fill(x, m_boundary.obstacle_positions(), m_safe);
        contact::linearize_constraints(m_set, m_safe, m_contact.topology());
    }
    Subproblem done;
    for (int it = 0; it < max_newton; ++it) {
        // 1. Slacks at y (held through this iteration), then ∇E and the projected Hessian at y.
        {
            ScopedTimer timer(seconds.contact);
            m_contact.gather_positions(m_y, m_boundary.obstacle_target());
            contact::update_slacks(m_set, m_safe, m_contact.positions(), m_penalty);
        }
        {
            ScopedTimer timer(seconds.assembly);
            m_potential.assemble(m_y, problem);
            negate_gradient();
        }
        {
            ScopedTimer timer(seconds.linear_solve);
            const LinearSolveResult linear = m_system.solve(m_y, m_rhs, m_direction, m_settings.linear,
                                                            problem.weight * problem.h * problem.h);
            result.linear_iterations += linear.pcg.iterations;
            result.warm_start_iterations += linear.warm_start_iterations;
        }
        ++done.iterations;
        if (stop_if_settled && it == 0) {
            // After a new friction lag, or settling after the last dual update: y already passes the
            // Newton-type stopping rule with the new lag or multipliers, so they have converged (as `ipc`'s
            // lag loop decides) and y stays; no dual update.
            const NewtonMeasures measures =
                measure_newton(m_parts.comm, m_direction, m_rhs, m_potential.lumped_mass(),
                               m_potential.free_mask(), m_potential.num_owned(), problem.h);
            done.residual_acceleration = measures.residual_acceleration;
            if (measures.converged(m_settings.stop)) {
                result.residual_acceleration = measures.residual_acceleration; // at the y the step keeps
                done.settled = true;
                return done;
            }
        }
        // 2. Backtracking on the AL energy, no CCD (y may penetrate; x stays safe), from r = 1 or as far
        //    as keeps a fifth of every element's volume. y may not invert, whatever the material: x
        //    follows y a fifth of a volume at a time, so an inverted y would flatten x (a stable
        //    neo-Hookean or StVK block crushed by its prescribed face did, where neo-Hookean's infinite
        //    energy stopped y).
        const double largest = std::min(
            1.0, comm::allreduce_min(m_parts.comm, m_potential.elastic().max_step(m_y, m_direction)));
        if (max_norm(m_parts.comm, m_direction, m_potential.num_owned()) <=
            1e-3 * m_settings.stop.velocity * problem.h) {
            // Far below the solve's resolution: E's change would be round-off, which a strict decrease
            // test may reject (spec §2.6). Take it whole (within the volume rule); that is a full step.
            axpy(m_y, largest, m_direction, m_y);
            break;
        }
        LineSearchResult search;
        {
            ScopedTimer timer(seconds.line_search);
            const std::vector<double> terms_at_y = m_potential.term_energies(m_contact.positions());
            search = backtrack(largest, false, [&](double r) {
                axpy(m_y, r, m_direction, m_trial);
                m_contact.gather_trial(m_trial, m_boundary.obstacle_target()); // collective
                return m_potential.energy_change(m_y, m_trial, problem, terms_at_y);
            });
        }
        if (!search.accepted) {
            result.line_search_failed = true;
            break; // r = 0: keep y (spec §2.6)
        }
        Kokkos::deep_copy(m_y, m_trial);
        if (search.alpha == 1.0) {
            break; // the first full step ends the inner loop
        }
    }

    // 3. One dual update at y (λ held at 0 for the pure-penalty ablation).
    {
        ScopedTimer timer(seconds.contact);
        m_contact.gather_positions(m_y, m_boundary.obstacle_target());
        if (m_options.pure_penalty) {
            contact::update_slacks(m_set, m_safe, m_contact.positions(), m_penalty);
        } else {
            contact::dual_update(m_set, m_safe, m_contact.positions(), m_penalty, m_options.decay);
        }
    }
    return done;
}

StepResult AlSolver::solve(const NodeField& x, const StepProblem& problem) {
    StepResult result;
    // Measured at the state the step returns (step 5): the inner loop ends at its first full Newton step,
    // and the last force balance it computed, before that step, measures the step rather than what it
    // leaves; a settled step's test was taken at y, which x may not have reached.
    result.residual_acceleration = std::numeric_limits<double>::quiet_NaN();
    PhaseSeconds& seconds = result.seconds;

    // 0. μ from the projected Hessian diagonal at xᵗ (spec §2.7) and δ, both for this step; friction
    //    lagged at xᵗ from the constraints carried over.
    {
        ScopedTimer timer(seconds.assembly);
        m_potential.assemble_elastic(x, problem);
    }
    m_mu = m_options.mu_scale * largest_free_diagonal();
    m_penalty.mu = m_mu;
    m_penalty.delta = m_options.offset ? *m_options.offset : m_contact.dhat();
    m_penalty.release = m_penalty.delta;
    {
        ScopedTimer timer(seconds.contact);
        m_contact.surface().begin_step(x);
        if (m_friction) {
            Kokkos::deep_copy(m_step_start, x);
            Kokkos::deep_copy(m_obstacle_start, m_boundary.obstacle_positions());
            lag_friction(x, problem.h);
            result.friction_lags = 1;
        }
    }

    // 1. y starts at the inertial target x̂ (`start: inertial`; as far towards it as inverts no element,
    //    the step bound's 80% volume rule) or at xᵗ (`positions`), with obstacles on their targets and
    //    prescribed rows as far towards theirs as place_boundary allows; the first set update sees the
    //    collisions of that motion.
    if (m_options.start == "inertial") {
        axpy(problem.x_hat, -1.0, x, m_direction);
        mask_prescribed(m_direction);
        const double fraction =
            comm::allreduce_min(m_parts.comm, m_potential.elastic().max_step(x, m_direction));
        if (fraction < 1.0) {
            axpy(m_direction, fraction - 1.0, m_direction, m_direction); // direction × fraction
        }
    } else {
        Kokkos::deep_copy(m_direction, 0.0);
    }
    axpy(x, 1.0, m_direction, m_y);
    m_loop = OuterLoop{};
    OuterLoop& loop = m_loop;
    loop.boundary_placed = place_boundary();
    advance_segment(x, seconds);

    for (int lag = 1;; ++lag) {
        // 2. Outer iterations until the weight B of the first K_min iterates of this lag is below ε and,
        //    while no constraint is held or with `settle`, y passes the stopping rule; while
        //    y's prescribed rows are short of their targets, each time that holds they go on by the next
        //    safe fraction and the outer iterations run again (one budget of max_outer_iterations).
        loop.lag_iterations = 0;
        loop.cap = m_options.max_outer_iterations;
        run_outer_iterations(x, problem, result, loop, lag > 1);
        while (lag == 1 && result.converged && !loop.boundary_placed) {
            loop.boundary_placed = place_boundary();
            advance_segment(x, seconds);
            run_outer_iterations(x, problem, result, loop, false);
        }
        if (!m_friction || !result.converged || loop.settled || lag >= m_settings.friction_iterations) {
            break;
        }
        // 3. Lag friction again at the solution with this step's multipliers (contact.friction_iterations,
        //    as `ipc` does); the next outer iterations start by testing whether y already passes with it.
        ScopedTimer timer(seconds.contact);
        lag_friction(x, problem.h);
        result.friction_lags = lag + 1;
    }
    result.residual = loop.weight;
    finish(x, problem, result);
    return result;
}

bool AlSolver::repair(const NodeField& x,
                      const StepProblem& problem,
                      StepResult& result,
                      bool can_fall_back) {
    // By default only where no fallback can take the step: where one can, solving the step again costs less
    // on most scenes (the constants above). Not where y's prescribed rows stopped short of their targets:
    // that is no balance the multipliers can settle.
    const bool wanted =
        m_options.repair == "always" || (m_options.repair == "without_fallback" && !can_fall_back);
    if (!wanted || !m_loop.boundary_placed) {
        return false;
    }
    m_loop.repairing = true;
    m_loop.repair_watches_progress = can_fall_back;
    // One settling run, with its own budget: with a fallback behind it a repair stops early where it
    // creeps; without one it has the longer budget, since nothing else would certify the step.
    const auto settle_on = [&](bool after_lag) {
        m_loop.cap = m_loop.lag_iterations + (can_fall_back ? repair_iterations : lone_repair_iterations);
        m_loop.repair_residuals.clear();
        run_outer_iterations(x, problem, result, m_loop, after_lag);
    };
    settle_on(false);
    // Friction lagged again at the settled state with its multipliers, and settled on, until a lag changes
    // nothing (at least one more lag, as the fallback's, and up to contact.friction_iterations): balanced
    // against the friction lagged at the step's start alone, a repaired block on a slope slid at 0.61 of
    // Coulomb's acceleration (Accuracy.SlopeWithTheAugmentedLagrangian's paper start).
    const int lags = std::max(m_settings.friction_iterations, 2);
    for (int lag = 1; m_friction && result.converged && lag < lags; ++lag) {
        {
            ScopedTimer timer(result.seconds.contact);
            lag_friction(x, problem.h);
        }
        result.friction_lags += 1;
        const int before = m_loop.iterations;
        settle_on(true);
        if (m_loop.iterations == before) {
            break; // the new lag already passed the stopping rule
        }
    }
    m_loop.repairing = false;
    result.residual = m_loop.weight;
    finish(x, problem, result);
    return true;
}

void AlSolver::finish(const NodeField& x, const StepProblem& problem, StepResult& result) {
    PhaseSeconds& seconds = result.seconds;
    // 4. The prescribed rows onto their targets when the rest of their motion is safe.
    //    Not when y's rows stopped short (a crushing step): the 20% rule alone could take them the rest of
    //    the way past the rest-volume floor that stopped them.
    if (m_loop.boundary_placed && m_boundary.remaining(x) > 0.0 &&
        m_bound.along(x, m_boundary.step(), m_boundary) >= 1.0) {
        m_boundary.arrive(x);
    }

    // 5. What the step ends with: its force balance, the set's size, the pairs pushing (λ > 0), the
    //    smallest constraint gap.
    result.residual_acceleration = unbalanced_acceleration(x, problem, seconds);
    {
        ScopedTimer timer(seconds.contact);
        m_contact.update(x, m_boundary.obstacle_positions());
        const contact::ConstraintTotals totals =
            contact::count_constraints(m_parts.comm, m_set, m_contact.topology());
        result.contact_pairs = totals.pushing;
        result.active_set_size = totals.size;
        result.normal_force = totals.lambda / (problem.h * problem.h);
        const double local =
            contact::min_squared_distance(m_set.pairs(), m_contact.positions(), m_contact.topology());
        const double smallest =
            comm::allreduce_min(m_parts.comm, std::min(local, m_contact.min_squared_distance()));
        result.min_distance = std::sqrt(smallest);
    }
    result.outer_iterations = m_loop.iterations;
    result.mean_toi = m_loop.iterations > 0 ? m_loop.alpha_sum / m_loop.iterations : 1.0;
}

void AlSolver::run_outer_iterations(
    const NodeField& x, const StepProblem& problem, StepResult& result, OuterLoop& loop, bool after_lag) {
    PhaseSeconds& seconds = result.seconds;
    loop.weight = loop.repairing ? 0.0 : 1.0; // B
    loop.settled = false;
    int k = 0;               // outer iterations of this call (one boundary stage of a lag)
    double last_alpha = 0.0; // α of the last segment
    bool settling = false;   // past B < ε, iterating until y passes the stopping rule
    bool unheld = false;     // settling because no constraint is held (not for `settle`)
    for (;;) {
        if (loop.weight <= m_options.epsilon) {
            // B < ε ends the step (the paper) only while constraints are held and `settle` is off. With no
            // constraint held the step is plain Newton on the incremental potential, and B says nothing
            // about its balance: K_min = 2 steps left a buckling sheet 1.3 m/s² short of it (median over
            // the twisting cloth's steps), and a body in free flight after an impact by far more; it
            // iterates until the stopping rule passes, one Newton direction more where it already does.
            const bool held = holds_constraints();
            if (unheld && held && !m_options.settle) {
                // Contact appeared while the step settled free: the paper's loop again for it, from B = 1
                // with K_min iterations, rather than one dual update and out.
                loop.weight = 1.0;
                k = 0;
                unheld = false;
                settling = false;
            } else {
                settling = loop.boundary_placed && (m_options.settle || loop.repairing || !held);
                unheld = settling && !held;
                if (!settling) {
                    break;
                }
            }
        }
        if (loop.lag_iterations >= loop.cap) {
            result.converged = false;
            if (loop.repairing) {
                return; // the step falls back, and says why
            }
            const char* advice =
                "; the step ends at the last safe state (raise solver.al.max_outer_iterations, "
                "or lower time.dt)";
            const int n = loop.lag_iterations;
            if (settling) {
                log::warn() << "al: " << n
                            << (unheld ? " outer iterations without passing the stopping rule"
                                       : " outer iterations without the multipliers settling")
                            << advice;
            } else if (!loop.boundary_placed) {
                log::warn() << "al: " << n
                            << " outer iterations without the prescribed nodes reaching their targets"
                            << advice;
            } else {
                log::warn() << "al: " << n
                            << " outer iterations without reaching epsilon = " << m_options.epsilon
                            << " (B = " << loop.weight << ")" << advice;
            }
            result.converged = false;
            return;
        }
        if (!m_options.literal_order) {
            insert_pending();
        }
        // Settling, an inactive constraint clear of contact is released: its slack minimised out, no spring
        // (the constants above).
        m_penalty.release = !settling        ? m_penalty.delta
                            : loop.repairing ? 0.0
                                             : settle_release * m_penalty.delta;
        m_penalty.mu = settling ? m_mu * loop.mu_growth : m_mu;
        // Alg. B's loop, capped where x followed y at least half way on the last segment (see the
        // constants above).
        const int max_newton =
            k > 0 && last_alpha >= followed ? capped_inner_iterations : m_settings.max_iterations;
        const Subproblem subproblem =
            solve_subproblem(x, problem, result, (after_lag && k == 0) || settling, max_newton);
        result.iterations += subproblem.iterations;
        if (loop.repairing && loop.repair_watches_progress && !subproblem.settled) {
            // A repair goes on only while the unbalanced force falls fast: by half at least over every
            // `repair_window` outer iterations (the constants above). Where it does not, the multipliers
            // converge slowly and solving the step again with the fallback costs less.
            std::vector<double>& seen = loop.repair_residuals;
            seen.push_back(subproblem.residual_acceleration);
            if (seen.size() > repair_window &&
                seen.back() > repair_progress * seen[seen.size() - 1 - repair_window]) {
                result.converged = false;
                return;
            }
        }
        if (subproblem.settled) {
            loop.settled = !settling; // a new lag that changed nothing ends the lag loop too
            loop.weight = 0.0;
            break;
        }
        if (m_options.literal_order) {
            insert_pending();
        }
        if (settling && !unheld) {
            loop.mu_growth = std::min(loop.mu_growth * settle_mu_growth, settle_mu_largest);
        }

        // α along x → y (inversion bound and CCD, global MIN), the pairs colliding on the rest of the
        // segment for the next update, then x moves.
        const double alpha = advance_segment(x, seconds);
        m_boundary.trial_point(x, m_segment, alpha, m_trial, loop.boundary_placed);
        Kokkos::deep_copy(x, m_trial);
        m_boundary.accept_trial();
        ++k;
        ++loop.iterations;
        ++loop.lag_iterations;
        loop.alpha_sum += alpha;
        last_alpha = alpha;
        if (k >= *m_options.k_min) {
            loop.weight *= 1.0 - alpha;
        }

        // Safeguard (spec §2.7): a long stall doubles μ and halves δ for the rest of the step.
        loop.stalled = alpha < stalled_step ? loop.stalled + 1 : 0;
        if (loop.stalled == stall_limit) {
            m_mu *= 2.0;
            m_penalty.delta *= 0.5;
            loop.stalled = 0;
            log::info() << "al: " << stall_limit << " outer iterations with α < " << stalled_step
                        << "; μ doubled to " << m_mu << ", δ halved to " << m_penalty.delta << " m";
        }
    }
    result.converged = loop.weight <= m_options.epsilon;
}

double
AlSolver::unbalanced_acceleration(const NodeField& x, const StepProblem& problem, PhaseSeconds& seconds) {
    // The AL terms as the last subproblem left them (linearised at the last safe state, slacks from y),
    // evaluated at x: the set's state is not touched, so what A-search's end_step evaluates and what a
    // checkpoint saves are as before (step 5 then gathers the contact model at x).
    {
        ScopedTimer timer(seconds.contact);
        m_contact.gather_positions(x, m_boundary.obstacle_positions());
    }
    ScopedTimer timer(seconds.assembly);
    m_potential.assemble(x, problem);
    return mass_scaled_max_norm(m_parts.comm, m_potential.gradient(), m_potential.lumped_mass(),
                                m_potential.free_mask(), m_potential.num_owned()) /
           (problem.h * problem.h);
}

bool AlSolver::holds_constraints() const {
    return comm::allreduce_max(m_parts.comm, static_cast<std::int64_t>(m_set.size())) > 0;
}

void AlSolver::save(io::CheckpointWriter& out) const {
    out.put_bytes("al/constraints", contact::encode_constraints(m_set, m_contact.surface()));
}

void AlSolver::restore(const io::CheckpointReader& in) {
    // The ghost plan carries the rows of the restored constraints from the step's first update on
    // (require_pairs points at the set's pairs).
    contact::decode_constraints(in.bytes_of_every_rank("al/constraints"), m_contact.surface(), m_set);
}

} // namespace intact::solver
