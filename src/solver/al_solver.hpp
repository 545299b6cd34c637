#pragma once
/// @file al_solver.hpp
/// @brief The barrier-free augmented Lagrangian with a CCD-built active set (AL spec, seed 000), on any
/// number of ranks.
///
/// Per step (spec §2.2, Alg. A): the AL iterate y (the spec's x̂) starts at the integrator's inertial
/// target x̂ with obstacles on their targets and prescribed rows as far towards theirs as keeps a fifth
/// of every element's volume and a thousandth of its rest volume (§2.8 places them at once; see
/// place_boundary); both are eliminated rows.
/// The safe state x follows y along CCD-certified segments x ← x + α (y − x). Each outer iteration
///   1. adds to the constraint set the pairs that collide on the segment x → y (earliest per vertex,
///      Alg. C) and drops those whose γ has faded,
///   2. linearises every constraint at x and runs projected Newton on y (Alg. B, one PCG solve per
///      iteration, backtracking on the AL energy with the slacks held, no CCD, from as far as keeps a
///      fifth of every element's volume) until a full step,
///   3. updates λ and γ once,
///   4. takes α from the inversion bound and CCD along x → y (one global MIN) and moves x.
/// The step ends when B = Π_{k ≥ K_min} (1 − α_k) < ε (cumulative TOI, §1.5; if y's prescribed rows
/// are short of their targets, they go on by the next safe fraction and the outer iterations run again,
/// within the same budget) and, while no constraint is held or with `settle`, once the first Newton
/// direction of an outer iteration passes the Newton-type stopping rule (stopping_rule.hpp) with the
/// multipliers of the last dual update; at the latest after `max_outer_iterations` (logged; the step
/// reports not converged). With no constraint held the step is plain Newton and B says nothing about its
/// balance; a contact that appears while such a step settles starts the paper's loop again (B = 1). A
/// line search that fails while settling does not end it: the next outer iteration moves x towards y and
/// may add constraints (ending it there left a landing sheet 0.009 m/s² unbalanced); a step where nothing
/// moves any more runs to max_outer_iterations and reports not converged. Free motion
/// (no constraint held, no prescribed motion left to stage) takes K_min Newton steps and one more Newton
/// direction, which passes the stopping rule where the motion is linear.
///
/// Where y starts (`start`). The paper resets y to xᵗ (§2.9). With lagged friction that start has zero
/// slips, so the first Newton step sees the friction's sticking stiffness: a sliding block's base holds
/// while its momentum tips it forward, and the first dual update books the tipping as multipliers (on a
/// stiff block, E = 1e8 Pa, h = 5 ms on a 30° slope: the front edge at up to 1.6× the block's weight, the
/// back released). K_min = 6 iterations do not undo it; the block hops every other step and slides at
/// 1.87× Coulomb's acceleration. From the inertial target x̂ (xᵗ + h vᵗ for implicit Euler; the minimiser
/// of the inertia term for every integrator) the slips are those of the sliding block, and the same scene
/// slides at Coulomb's acceleration with the same six Newton steps per step. y may penetrate there (the
/// first segment x → y brings the colliding pairs into the set, as the boundary's motion does) but may
/// not invert: y goes only as far towards x̂ as the step bound's volume rule allows (at an impact x̂
/// extrapolates the compression, and from an inverted y the outer iterations stalled at α ≈ 0). The
/// other side of the trade, measured: where contacts come to rest (the 10 368-tet pile), the inertial
/// start has them sliding, and projected Newton on lagged friction — no curvature along the slip in the
/// sliding regime — overshoots the sticking zone and backtracks, so Alg. B's inner loop runs up to 22
/// damped steps: 340 Newton iterations in 20 steps against 160 from xᵗ; the rollers (a slab drawn
/// through a nip) go the other way, 688 against 1732. Capping the inner loop at one Newton step on every
/// outer iteration won the pile back (120) but stalled the stone arch (α < 1e-4 for hundreds of
/// iterations; the paper's reason for the loop); so the cap applies only where x followed y at least half
/// way on the last segment (two Newton steps; al_solver.cpp): 170 on the pile, the arch unchanged.
///
/// Decisions where the paper is silent (spec §7): update-then-solve (item 1; `literal_order` switches);
/// the new pairs of iteration k + 1 come from the CCD of iteration k's α along x → y, whose tail is the
/// segment Alg. C asks for (item 8, one broad phase per iteration); "colliding" is a conservative TOI
/// below 1, or ending the segment closer than δ (item 7; without the second rule a slow approach enters
/// the set only once it has closed 80% of its gap in one segment, ever deeper as h shrinks, and the
/// contact response would depend on h); μ = mu_scale × the largest diagonal entry of the projected ∇²E at xᵗ
/// over free rows, re-estimated every step, and δ reset each step (item 6); the inner Newton loop stops at
/// the first full step, at p = 0, after solver.max_newton_iterations, or after two Newton steps where
/// the last segment's α was at least 1/2 (item 4; the cap above); friction is lagged at xᵗ
/// from the previous step's λ (normal force λ / h², §6.1 with the sign fixed), and with
/// `contact.friction_iterations` N > 1 lagged again at the step's solution with its own λ, up to N lags:
/// after each new lag the outer iterations run again (K_min of them at least), unless the first Newton
/// direction at y already passes the Newton-type stopping rule (stopping_rule.hpp), which ends the step
/// as `ipc`'s lag loop does (the paper lags once per step; a landing step then brakes nothing, so a block
/// at the friction angle slides on). At the end, the prescribed
/// rows are put on their targets when the rest of their motion is safe (the spec leaves them at β₀ xᵗ + (1 −
/// β₀) target, a lag that would add up step after step).
///
/// Distributed: a constraint is held by every rank owning one of its rows, evaluated from the same
/// gathered rows (so its state is identical on those ranks) and counted by the owner of its smallest
/// global row; the contact ghost plan always carries the rows of held constraints
/// (ContactSurface::require_pairs). α, B, μ, the stall counter and the inner stop are global reductions.

#include "src/contact/al_constraints.hpp"
#include "src/contact/constraint_set.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/solver/contact_terms.hpp"
#include "src/solver/newton_system.hpp"
#include "src/solver/step_bound.hpp"
#include "src/solver/step_solver.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace intact::solver {

class AlSolver final : public StepSolver {
public:
    /// Adds the AL terms (and friction, when the scene has μ > 0) to the parts' potential. Needs contact.
    AlSolver(const StepParts& parts, const NewtonSettings& settings);
    const char* name() const override { return "al"; }
    const char* residual_name() const override { return "B"; } // cumulative-TOI weight
    const char* residual_unit() const override { return ""; }
    StepResult solve(const NodeField& x, const StepProblem& problem) override;
    /// Settles the step from where solve stopped: outer iterations in the settling mode (al_solver.cpp)
    /// until y passes the stopping rule, while the unbalanced force falls fast, at most
    /// `repair_iterations` of them. As `solver.al.repair` says: by default only where no fallback can take
    /// the step; never for a step whose prescribed rows stopped short of their targets. Collective.
    bool
    repair(const NodeField& x, const StepProblem& problem, StepResult& result, bool can_fall_back) override;
    /// The constraint set (pairs with λ, γ, slack and linearisation) by global ids, each constraint from
    /// the rank that counts it; every rank then takes back the constraints it holds. Nothing else
    /// carries over: μ, δ and the pending pairs are recomputed at the step's start (the first segment's
    /// CCD finds the pending pairs again), and friction is lagged there from the set's λ.
    void save(io::CheckpointWriter& out) const override;
    void restore(const io::CheckpointReader& in) override;

    /// Public for CUDA lambdas: μ's scale, the largest diagonal entry of the assembled matrix over free
    /// owned rows and ranks. Collective.
    double largest_free_diagonal() const;
    /// Public for CUDA lambdas: rhs = −∇E.
    void negate_gradient();
    /// Public for CUDA lambdas: zero on prescribed rows. Local.
    void mask_prescribed(const NodeField& field) const;
    /// Public for CUDA lambdas: out = a + s b on every local row.
    static void axpy(const NodeField& a, double s, const NodeField& b, const NodeField& out);

private:
    /// The outer iterations of one step, across its friction lags.
    struct OuterLoop {
        double weight = 1.0;          ///< B of the current lag
        double alpha_sum = 0.0;       ///< Σ α over the step
        int iterations = 0;           ///< over the step
        int stalled = 0;              ///< consecutive iterations with α < the stall threshold
        bool settled = false;         ///< after a new lag, y already passed the stopping rule
        int lag_iterations = 0;       ///< outer iterations of the current lag, over its boundary stages
        int cap = 0;                  ///< lag_iterations at which the outer iterations stop
        bool boundary_placed = false; ///< y's prescribed rows are on their targets
        bool repairing = false;       ///< settling from the first iteration on (repair)
        double mu_growth = 1.0;       ///< μ's factor while settling with constraints held
        std::vector<double> repair_residuals; ///< a repair's settling tests: unbalanced force per mass
        bool repair_watches_progress = false; ///< the repair stops where that force falls slowly
    };
    /// One call of Alg. B: its Newton iterations, and whether it stopped at once because y already passed
    /// the stopping rule (asked after a new friction lag, and past B < ε while settling).
    struct Subproblem {
        int iterations = 0;
        bool settled = false;
        double residual_acceleration = 0.0; ///< at the settling test (m/s²), when one was taken
    };

    /// y's prescribed rows by the largest safe fraction of their remaining motion (the step bound's
    /// volume rule, from y); returns whether they are on their targets. Collective.
    bool place_boundary();
    double advance_segment(const NodeField& x, PhaseSeconds& seconds);
    void insert_pending();
    Subproblem solve_subproblem(const NodeField& x,
                                const StepProblem& problem,
                                StepResult& result,
                                bool stop_if_settled,
                                int max_newton);
    /// Outer iterations until B < ε and, while no constraint is held, with `settle` or repairing, until y
    /// passes the stopping rule (or the cap): sets result.converged. `after_lag`: the first subproblem tests
    /// whether y already passes the stopping rule.
    void run_outer_iterations(
        const NodeField& x, const StepProblem& problem, StepResult& result, OuterLoop& loop, bool after_lag);
    /// The end of a step (solve's steps 4 and 5): the prescribed rows onto their targets when safe, and the
    /// figures the step ends with. Collective.
    void finish(const NodeField& x, const StepProblem& problem, StepResult& result);
    /// Friction lagged at x with the set's λ, slips from the step's start. Collective.
    void lag_friction(const NodeField& x, double h);
    /// Whether any rank holds a constraint. Collective.
    bool holds_constraints() const;
    /// The unbalanced force per mass at the step's end x (m/s², stopping_rule.hpp's a): every force the
    /// step applies, the contact's from the multipliers (the AL terms as the last subproblem left them,
    /// evaluated at x). One assembly, no solve; the constraint set is not changed. Collective.
    double unbalanced_acceleration(const NodeField& x, const StepProblem& problem, PhaseSeconds& seconds);

    StepParts m_parts;
    NewtonSettings m_settings;
    io::AlOptions m_options;
    IncrementalPotential& m_potential;
    BoundaryMotion& m_boundary;
    contact::ContactModel& m_contact;
    StepBound m_bound;
    NewtonSystem m_system;
    contact::ConstraintSet m_set{1.0}; ///< new constraints: λ = 0, γ = 1
    contact::AlPenalty m_penalty;
    double m_mu = 0.0; ///< μ of the paper's loop this step (spec §2.7; the stall safeguard doubles it)
    OuterLoop m_loop;  ///< the last step's, which repair goes on with
    contact::SurfaceField m_safe; ///< surface rows of the safe state x (the linearisation point)
    contact::SurfaceField m_ends; ///< surface rows at the end of the segment x → y
    std::optional<AlConstraintTerm> m_term;
    std::unique_ptr<contact::FrictionPairs> m_friction;
    std::optional<FrictionTerm> m_friction_term;
    NodeField m_y, m_rhs, m_direction, m_trial, m_segment;
    NodeField m_step_start; ///< xᵗ: friction's slips count from it, and δᵢ (start_offsets)
    contact::SurfaceField m_obstacle_start;         ///< obstacle rows at xᵗ
    contact::SurfaceField m_start_rows;             ///< surface rows at xᵗ through the current plan
    Kokkos::View<double*, MemSpace> m_offsets;      ///< δᵢ per constraint (start_offsets)
    Kokkos::View<double*, MemSpace> m_toi, m_entry; ///< per swept pair: CCD time, entry time
    contact::PairList m_pending; ///< pairs found colliding on the last segment, not yet in the set
    contact::NewPairScratch m_scratch;
    Kokkos::View<int*, MemSpace> m_faded;
};

} // namespace intact::solver
