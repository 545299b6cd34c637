#pragma once
/// @file bal_solver.hpp
/// @brief The barrier-augmented Lagrangian with inexact Newton-PCG (BAL spec §2–§3, seed 002), on any
/// number of ranks: the solver for stiff and ill-conditioned scenes.
///
/// Per step (spec §3.2): σ starts at σ₀, the least-squares balance of the barrier against the rest of the
/// gradient at xᵗ (squared denominator, floored at the barrier's κ_min: spec A3; shared with IPC's κ
/// start), A′ and μ start empty, and the iterate at xᵗ. Each outer iteration l is ONE inexact Newton
/// step (spec A1) on
///
///     L_σ(x) = E(x) + σ Σ_A b(s, ŝ) + Σ_{A′} [μᵢ (ŝ + sᵢ − s) + σ b(s, ŝ + sᵢ)] + D(x)
///
/// (squared distances, bal_pairs.hpp), and reads as Alg. 1:
///   1. A at x; d_min (global MIN); A′ ← {} when d_min > augment_distance, else rebuilt from the pairs of
///      A closer than augment_distance when d_min < d_min of the previous iterate or A′ is empty (μ of
///      surviving pairs kept, spec A7);
///   2. friction with normal forces −φ′ (barrier and augmentation) lagged once at xᵗ (`per_solve`, the
///      default, as `ipc`'s single lag), or re-lagged at x (`per_iteration`, the paper's §2.8) until ‖e‖
///      has not reached a new minimum for 3 iterations, then kept for the rest of the step (a moving
///      objective need not converge). per_iteration brakes a landing body in its landing step (IPC's
///      slope at the friction angle sticks: test_accuracy) but took 1.0–2.9× the Newton iterations of
///      per_solve on every scene measured (216 one-cell cubes: ‖e‖ swung 40-fold between lags and each
///      step ended on the lag where the swing stopped; README "Barrier-augmented Lagrangian solver");
///   3. e = ∇L_σ and the projected Hessian; p from PCG to relative `pcg_tolerance`, stopping early once
///      the solve has stalled over `stall_window` iterations (§3.5), optionally from the decade warm start.
///      `stall_test` "energy" (default) watches CG's model ½pᵀHp + eᵀp, "residual" (the paper's words) ‖r‖,
///      which on the stone arch stopped every PCG with ‖r‖ at 0.01–1.5 ‖e‖: Newton then wandered (100
///      iterations without converging in a step at 2 ranks; 12 with the energy test; pcg.hpp);
///   4. the step bound (inversion + CCD) and backtracking on L_σ (σ, μ, s, A′, friction frozen; A
///      re-detected at every trial point); a step below 1e-9 (or a failed search) runs 100 more PCG
///      iterations from p and searches again (§3.6; at most 3 times);
///   5. the paper's stop (line 13, tested on the pre-step gradient, the step still taken): ‖e‖ ≤
///      `tolerance` ‖e₀‖ with at most 1000 ε_a of force per mass unbalanced (our guard, bal_solver.cpp),
///      or the project's stopping rule (stopping_rule.hpp) as the absolute floor of spec note (a), so
///      that scenes at rest stop;
///   6. sᵢ, μᵢ updated at the new iterate (Alg. 1 literally), and σ grown by `sigma_rule` when a pair of A
///      is closer than augment_distance there: "min" (default, spec A4's capped rule) σ ← max(σ,
///      min(growth σ, jump σ₀)); "max" (the paper) σ ← max(growth σ, jump σ₀), which jumped σ a hundredfold
///      in one iteration on the soft pile and took 100 Newton iterations to re-balance (bench_step's
///      20 steps at 2 ranks: 403 Newton, 94 131 PCG iterations, 19 of 20 steps converged; "min" alone:
///      316, 32 050, 20 of 20).
/// Prescribed rows and obstacles arrive gradually as in IPC (ipc_solver.hpp). σ, A′, μ and s are reset
/// every step (spec A4, A7); nothing but the friction's step-start rows is carried between iterations
/// beyond those.
///
/// Distributed: A and A′ pairs are held by every rank owning one of their rows and counted by the owner
/// of their smallest global row; μᵢ and sᵢ live with the pair in a ConstraintSet and are computed from the
/// same gathered rows on every holder; the contact ghost plan carries A′'s rows (require_pairs). σ, d_min,
/// the A′ rule, the PCG scalars, the line search, the friction freeze (from ‖e‖) and the stop are global
/// reductions.

#include "src/contact/barrier_stiffness.hpp"
#include "src/contact/constraint_set.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/solver/contact_terms.hpp"
#include "src/solver/newton_system.hpp"
#include "src/solver/step_bound.hpp"
#include "src/solver/step_solver.hpp"

#include <memory>
#include <optional>

namespace intact::solver {

class BalSolver final : public StepSolver {
public:
    /// Adds the σ-weighted barrier and the augmentation (and friction, when the scene has μ > 0) to the
    /// parts' potential. Collective.
    BalSolver(const StepParts& parts, const NewtonSettings& settings);
    const char* name() const override { return "bal"; }
    const char* residual_name() const override { return "|e|/|e0|"; } // the Lagrangian's relative gradient
    const char* residual_unit() const override { return ""; }
    /// Its relative test ends a step only below ε_a (relative_test_guard), as the stopping rule does.
    bool tests_balance() const override { return true; }
    StepResult solve(const NodeField& x, const StepProblem& problem) override;
    /// Nothing: σ, A′ with its μ and the friction lag start afresh at every step from xᵗ (start_step).
    void save(io::CheckpointWriter&) const override {}
    void restore(const io::CheckpointReader&) override {}

    /// Public for CUDA lambdas: rhs = −(∇L + H Δ) on owned rows.
    void compute_rhs();
    /// Public for CUDA lambdas: d = p + Δ.
    void add_boundary_step();
    /// Public for CUDA lambdas: ‖∇L‖₂ over free owned DOFs and ranks. Collective.
    double gradient_norm() const;

private:
    void start_step(const NodeField& x, const StepProblem& problem, StepResult& result);
    void update_augmented_set(double min_distance);
    void lag_friction(const NodeField& x, double h);
    bool search_step(const NodeField& x,
                     const StepProblem& problem,
                     double remaining,
                     StepResult& result,
                     double& energy_scale);

    StepParts m_parts;
    NewtonSettings m_settings;
    io::BalOptions m_options;
    IncrementalPotential& m_potential;
    BoundaryMotion& m_boundary;
    contact::ContactModel* m_contact;
    StepBound m_bound;
    NewtonSystem m_system;
    PcgSettings m_linear;
    double m_augment_distance = 0.0; ///< m
    double m_previous_min_distance = 0.0;
    std::optional<contact::BarrierStiffness> m_sigma;
    std::optional<BarrierTerm> m_barrier_term;
    contact::ConstraintSet m_augmented; ///< A′ with μᵢ (lambda) and sᵢ (slack)
    std::optional<AugmentationTerm> m_augmentation_term;
    contact::PairList m_close;
    contact::PairStencils m_sigma_stencils;
    std::unique_ptr<contact::FrictionPairs> m_friction, m_augmented_friction;
    std::optional<FrictionTerm> m_friction_term, m_augmented_friction_term;
    Kokkos::View<double*, MemSpace> m_augmented_force;
    NodeField m_rhs, m_direction, m_trial, m_product, m_step_start;
    contact::SurfaceField m_obstacle_start;
};

} // namespace intact::solver
