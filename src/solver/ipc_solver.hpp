#pragma once
/// @file ipc_solver.hpp
/// @brief Incremental Potential Contact (IPC spec §7): projected Newton on the step's incremental
/// potential with the log barrier, adaptive κ, CCD-filtered backtracking and lagged friction.
///
/// Prescribed nodes and obstacles arrive gradually: their remaining motion Δ is part of every step, the
/// free part solves H_ff p = −(∇E + H Δ)_f, and d = p + Δ is capped by the step bound (inversion and
/// CCD). While Δ ≠ 0 the capped step is taken as is (prescribed motion does work); afterwards the line
/// search needs E not to rise. The solve ends when the boundary has arrived and the stopping rule
/// (stopping_rule.hpp) holds: ‖p‖∞ / h < ε_d and the residual acceleration < ε_a. With friction the Newton
/// loop runs inside IPC's lag loop (§6.5): lag at xᵗ, solve, lag again at the solution, until the iterate
/// already passes the rule with the updated lagged terms or after `friction_iterations` solves.

#include "src/contact/barrier_stiffness.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/solver/contact_terms.hpp"
#include "src/solver/forcing_term.hpp"
#include "src/solver/newton_system.hpp"
#include "src/solver/step_bound.hpp"
#include "src/solver/step_solver.hpp"

#include <limits>
#include <memory>
#include <optional>

namespace intact::solver {

/// Mean lumped nodal mass over all ranks (owned rows, each node counted once), for the barrier
/// stiffness bounds (BarrierStiffness; IPC's κ, BAL's σ). Collective.
double mean_nodal_mass(MPI_Comm comm, const IncrementalPotential& potential);

/// κ's start for a step (IPC spec §4.2), also BAL's σ₀ (seed 002 §2.7, the squared denominator of spec
/// A3): the value minimising ‖∇E + κ ∇B‖ over free DOFs at x, ∇E the elastic, inertial and gravity
/// gradient, ∇B the unweighted barrier gradient (no Hessians), clamped to the stiffness's bounds. Leaves the
/// contact model updated at x and the potential's gradient at ∇E. `stencils`, `scratch`: the caller's
/// buffers. Collective.
void start_barrier_stiffness(MPI_Comm comm,
                             IncrementalPotential& potential,
                             contact::ContactModel& contact,
                             const BoundaryMotion& boundary,
                             const NodeField& x,
                             const StepProblem& problem,
                             contact::PairStencils& stencils,
                             const NodeField& scratch,
                             contact::BarrierStiffness& stiffness);

/// The same from a ∇E the caller has already (`gradient`: the owned rows are read, the free ones count),
/// for a solver that keeps ∇E without the potential's element gradients and matrix pattern (stencil
/// descent). Leaves the contact model updated at x. Collective.
void start_barrier_stiffness(MPI_Comm comm,
                             const NodeField& gradient,
                             IncrementalPotential& potential,
                             contact::ContactModel& contact,
                             const BoundaryMotion& boundary,
                             const NodeField& x,
                             contact::PairStencils& stencils,
                             const NodeField& scratch,
                             contact::BarrierStiffness& stiffness);

class IpcSolver final : public StepSolver {
public:
    /// Adds the barrier (and friction, when the scene or an obstacle has μ > 0) to the parts' potential.
    /// Collective.
    IpcSolver(const StepParts& parts, const NewtonSettings& settings);
    const char* name() const override { return "ipc"; }
    const char* residual_name() const override { return "|dx|/h"; } // ‖p‖∞ / h of the Newton step
    bool tests_balance() const override { return true; }
    const char* residual_unit() const override { return "m/s"; }
    StepResult solve(const NodeField& x, const StepProblem& problem) override;
    /// Nothing carries over from one IPC step to the next: κ starts afresh from the gradients at xᵗ
    /// (spec §4.2) and its growth memory is reset there, friction is lagged first at xᵗ, and PCG starts
    /// from zero. A restarted step therefore equals the uninterrupted one given x, v and t.
    void save(io::CheckpointWriter&) const override {}
    void restore(const io::CheckpointReader&) override {}

    /// Public for CUDA lambdas: the right-hand side −(∇E + H Δ) of the free rows.
    void compute_rhs();
    /// Public for CUDA lambdas: d = p + Δ.
    void add_boundary_step();
    /// Public for CUDA lambdas: H += `added` M on the owned diagonal blocks (the basin's damping).
    void add_damping(double added);

private:
    void start_kappa(const NodeField& x, const StepProblem& problem);
    bool arrival_is_safe(const NodeField& x, PhaseSeconds& seconds);
    void lag_friction(const NodeField& x, double h);
    /// ∇E and H at x with the boundary's step, and the right-hand side (m_rhs).
    void assemble(const NodeField& x, const StepProblem& problem, PhaseSeconds& seconds);
    /// H p = rhs into m_direction, its iterations counted in `result`; false when PCG met pᵀHp ≤ 0, with
    /// the curvature it met per unit mass in m_met_curvature.
    bool solve_linear(const NodeField& x,
                      const StepProblem& problem,
                      const PcgSettings& linear,
                      StepResult& result);
    /// Exact (unprojected) Hessians of the elastic and barrier terms in Newton's basin, PSD-projected ones
    /// elsewhere.
    void set_basin(bool in_basin);
    /// x ← the line search's trial (m_trial), the boundary and contact model with it; κ observes the new
    /// smallest distance (IPC spec §4.3). Collective.
    void accept_trial(const NodeField& x, PhaseSeconds& seconds);
    /// From the x a whole step just reached, further steps along the same direction m_direction while each
    /// is safe (step bound ≥ 1) and lowers E, at most `max_steps`: the escape from a saddle (solve's step
    /// 5). Collective.
    void extend_step(const NodeField& x, const StepProblem& problem, int max_steps, PhaseSeconds& seconds);

    StepParts m_parts;
    NewtonSettings m_settings;
    IncrementalPotential& m_potential;
    BoundaryMotion& m_boundary;
    contact::ContactModel* m_contact;
    StepBound m_bound;
    NewtonSystem m_system;
    std::optional<contact::BarrierStiffness> m_kappa;
    std::optional<BarrierTerm> m_barrier_term;
    contact::PairStencils m_kappa_stencils; ///< the unweighted barrier gradient of κ's start
    std::unique_ptr<contact::FrictionPairs> m_friction;
    std::optional<FrictionTerm> m_friction_term;
    ForcingTerm m_forcing; ///< PCG's tolerance per Newton iteration (when settings.forcing)
    /// The basin's damping μ: the exact Hessian plus μ M (solve's step 2); 0 outside the basin.
    double m_damping = 0.0;
    /// pᵀAp / pᵀMp of the direction on which the last solve met negative curvature, A the matrix solved
    /// (H + μM when damped); NaN without a breakdown.
    double m_met_curvature = std::numeric_limits<double>::quiet_NaN();
    NodeField m_rhs, m_direction, m_trial, m_product, m_step_start;
    contact::SurfaceField m_obstacle_start; ///< obstacle rows at the step's start (friction slips)
};

} // namespace intact::solver
