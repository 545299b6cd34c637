#pragma once
/// @file integrator.hpp
/// @brief Time integrators written as one minimisation per step (IPC spec §1, A-search spec §2).
///
/// Every implicit integrator here solves
///     y* = argmin_y  ½ (y − x̂)ᵀ M (y − x̂) + c h² P(y) + Σ terms(y),
/// P the conservative potential (elasticity + gravity), for a predictor x̂ and a weight c, then recovers
/// positions and velocities from y*. The integrator owns x̂ and whatever history it needs: `begin_step`
/// fills the step's problem from the state, `end_step` turns the solver's y* into the new state. The
/// solver minimises whatever it is handed, so every solver runs every integrator, contact included.
///
/// Contact and friction terms carry their own scale: IPC's κ balances the barrier against the
/// potential's gradient, whose elastic part is c h² ∇Ψ, so κ B and friction (whose normal forces come
/// from the barrier) are weighted like c h² P without the integrator touching them. A term's energy in
/// joules is therefore weight · energy / (c h²) (EnergyModel).
///
/// History lives in named members (`m_start`, `m_previous_position`, `m_acceleration`, ...), so that a
/// checkpoint can save and restore it.

#include "src/core/types.hpp"
#include "src/io/scene.hpp"
#include "src/solver/step_problem.hpp"

#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace intact::io {
class CheckpointWriter;
class CheckpointReader;
} // namespace intact::io

namespace intact::solver {

/// This rank's shares of the conservative energies at one state (J), not reduced over ranks.
struct LocalEnergies {
    double elastic = 0.0;       ///< Σ V ψ over owned elements
    double gravitational = 0.0; ///< −Σ m g·x over owned nodes (datum: the origin)
    std::vector<double> terms;  ///< per conservative term: weight · energy / (c h²)
    double contact() const {
        double sum = 0.0;
        for (double e : terms) {
            sum += e;
        }
        return sum;
    }
};

/// What integrators evaluate of the potential besides the step's solve: P and ∇P at a state (Newmark's
/// first acceleration, A-search's force difference and energy), the friction work of a step, the mass
/// and the node layout. Simulation provides it over the incremental potential (energy_model.hpp);
/// tests provide closed-form oscillators.
class EnergyModel {
public:
    virtual ~EnergyModel() = default;
    virtual MPI_Comm comm() const = 0;
    virtual int num_owned() const = 0;
    /// Lumped nodal masses (kg), complete for owned rows; 1 free / 0 prescribed per local row.
    virtual Kokkos::View<const double*, MemSpace> lumped_mass() const = 0;
    virtual Kokkos::View<const double*, MemSpace> free_mask() const = 0;
    /// Owner rows → ghost rows of a node field. Collective.
    virtual void gather(const NodeField& field) = 0;
    /// Number of conservative energy terms beyond elasticity and gravity (IPC: the barrier).
    virtual int num_terms() const = 0;
    /// The weight each of those terms has now (the barrier's κ), to rebase energies when it changes.
    virtual std::vector<double> term_weights() const = 0;
    /// Energies at x, whose contact the caller has made current (solvers leave it at their result), and
    /// when `gradient` has rows, ∇(Ψ + gravity) (J/m, owned rows) there, and per term, when
    /// `term_gradients` is not empty, its gradient (same scale as LocalEnergies::terms). `ch2` = c h² of
    /// the step whose terms these are. Device work; collective only through contact gathers.
    virtual LocalEnergies conservative(const NodeField& x,
                                       double ch2,
                                       const NodeField& gradient,
                                       const std::vector<NodeField>& term_gradients) = 0;
    /// This rank's share of the work the dissipative terms (friction) take from the step start → x,
    /// ∇D(x)·(x − start) / (c h²) over owned rows (A-search spec §4, the general-mollifier form), J.
    virtual double dissipated_work(const NodeField& x, const NodeField& start, double ch2) = 0;
};

/// A-search's numbers of the last step, for metrics.
struct EnergyControl {
    std::optional<double> target; ///< Tⁿ⁺¹, J (A-search; none for A-1)
    std::optional<double> alpha;  ///< α of the velocity update (none before the first step)
    double dissipated = 0.0;      ///< Dⁿ⁺¹: friction work of the step, J
    double deferred = 0.0;        ///< A-search's free-flight loss not yet aimed at, J (a_search.hpp)
};

/// The largest fraction t ∈ (0, 1] of a move from → from + direction that inverts no element and closes
/// no contact gap (StepBound::along); collective. Given to integrators whose new positions are not the
/// solver's minimiser (implicit midpoint).
using MoveLimit = std::function<double(const NodeField& from, const NodeField& direction)>;

class Integrator {
public:
    virtual ~Integrator() = default;
    virtual std::string name() const = 0;
    /// What the first step needs from the initial state (Newmark: a₀; A-search: H₀, ∇P(x₀)). The contact
    /// model must be current at x. Collective.
    virtual void start(const NodeField& /*x*/, const NodeField& /*v*/) {}
    /// The step's problem from the state at its start: x̂ (rows: local nodes), c, h and θ; gravity is the
    /// caller's. Device.
    virtual StepProblem begin_step(double h, const NodeField& x, const NodeField& v) = 0;
    /// The new state from the solver's result y* in x (after begin_step): x and v are overwritten (ghost
    /// rows included). The contact model is current at y*. Collective.
    virtual void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) = 0;
    /// A-search's α, target and friction loss of the last step; none for the other integrators.
    virtual std::optional<EnergyControl> control() const { return std::nullopt; }
    /// Integrators that move past the solver's minimiser take at most `limit` of that move; the others
    /// ignore it (their new positions are the minimiser, which the solver keeps feasible).
    virtual void set_move_limit(MoveLimit /*limit*/) {}
    /// Fraction of its own move past the minimiser the last step took (1: all); none for the others.
    virtual std::optional<double> move_fraction() const { return std::nullopt; }
    /// Whether a step changes state of the integrator's own besides x and v (BDF2's xⁿ⁻¹, Newmark's aⁿ,
    /// A-search's energy target): such a step cannot be taken again from its start, or split into
    /// substeps (Simulation::solve_in_substeps).
    virtual bool keeps_history() const { return true; }

    /// Checkpoint: what the next step needs besides x, v and t (which Simulation saves): the history
    /// named in the class comment, under section names of its own. Called between steps. Local.
    virtual void save(io::CheckpointWriter& out) const = 0;
    /// Restart: read back what `save` wrote, after `start` and after Simulation restored x, v and t; on
    /// another rank count node fields come back by global node id. Collective.
    virtual void restore(const io::CheckpointReader& in) = 0;
};

/// Backward (implicit) Euler: x̂ = xⁿ + h vⁿ, c = 1, vⁿ⁺¹ = (xⁿ⁺¹ − xⁿ) / h. First order, dissipative
/// (amplification 1 / √(1 + h²ω²) per step).
class ImplicitEuler : public Integrator {
public:
    /// @param num_local rows of the node fields
    explicit ImplicitEuler(int num_local);
    std::string name() const override { return "implicit_euler"; }
    StepProblem begin_step(double h, const NodeField& x, const NodeField& v) override;
    void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) override;
    bool keeps_history() const override { return false; }
    /// Nothing: x̂ and vⁿ⁺¹ come from xⁿ and vⁿ alone, and begin_step overwrites both of its fields.
    void save(io::CheckpointWriter& /*out*/) const override {}
    void restore(const io::CheckpointReader& /*in*/) override {}

protected:
    NodeField m_x_hat; ///< x̂ of the current step
    NodeField m_start; ///< xⁿ, the step's start
};

/// BDF2 (spec §2.6): x̂ = 4/3 xⁿ − 1/3 xⁿ⁻¹ + 8/9 h vⁿ − 2/9 h vⁿ⁻¹, c = 4/9,
/// vⁿ⁺¹ = (3 xⁿ⁺¹ − 4 xⁿ + xⁿ⁻¹) / (2h). Second order; the first step (no xⁿ⁻¹ yet) is implicit Euler.
class Bdf2 final : public Integrator {
public:
    explicit Bdf2(int num_local);
    std::string name() const override { return "bdf2"; }
    StepProblem begin_step(double h, const NodeField& x, const NodeField& v) override;
    void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) override;
    /// xⁿ⁻¹, vⁿ⁻¹ and the step count (whether the next step is the start-up).
    void save(io::CheckpointWriter& out) const override;
    void restore(const io::CheckpointReader& in) override;

private:
    NodeField m_x_hat;
    NodeField m_start;             ///< xⁿ
    NodeField m_start_velocity;    ///< vⁿ
    NodeField m_previous_position; ///< xⁿ⁻¹
    NodeField m_previous_velocity; ///< vⁿ⁻¹
    int m_steps_taken = 0;         ///< 0: the next step is the implicit-Euler start-up
};

/// Newmark (spec §2.7), implicit: x̂ = xⁿ + h vⁿ + (½ − β) h² aⁿ, c = β,
/// aⁿ⁺¹ = (xⁿ⁺¹ − x̂) / (β h²), vⁿ⁺¹ = vⁿ + h ((1 − γ) aⁿ + γ aⁿ⁺¹). (β, γ) = (¼, ½), the average
/// acceleration rule, is second order and conserves a linear oscillator's energy; γ > ½ damps.
/// a⁰ = −M⁻¹ ∇P(x⁰) on free rows (0 on prescribed rows); later a's include contact and friction.
class Newmark final : public Integrator {
public:
    Newmark(EnergyModel& model, int num_local, double beta, double gamma);
    std::string name() const override { return "newmark"; }
    void start(const NodeField& x, const NodeField& v) override;
    StepProblem begin_step(double h, const NodeField& x, const NodeField& v) override;
    void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) override;
    /// aⁿ (it includes the contact and friction forces of the last step, which xⁿ alone does not give).
    void save(io::CheckpointWriter& out) const override;
    void restore(const io::CheckpointReader& in) override;

private:
    EnergyModel& m_model;
    double m_beta;
    double m_gamma;
    NodeField m_x_hat;
    NodeField m_acceleration; ///< aⁿ (m/s²)
};

/// Implicit midpoint (spec §2.4, θ = ½): the solve finds y = (xⁿ + xⁿ⁺¹)/2 with x̂ = xⁿ + (h/2) vⁿ and
/// c = ¼; then xⁿ⁺¹ = 2y − xⁿ, vⁿ⁺¹ = 4 (y − xⁿ)/h − vⁿ. Symplectic and second order, but P is only ever
/// evaluated at y: 2y − xⁿ itself may be inverted or penetrating (not stiffly accurate).
///
/// Our rule where the spec only warns: the move y → 2y − xⁿ is cut to y + t (y − xⁿ) with t the move
/// limit's safe fraction (1 when nothing is in the way); the velocity stays the rule's 4 (y − xⁿ)/h − vⁿ,
/// the momentum balance at y, where the contact forces acted. A cut step is no longer symplectic, but no
/// state the run writes or starts from is inverted or penetrating. Deriving the velocity from the cut
/// position instead (keeping xⁿ⁺¹ = xⁿ + h (vⁿ + vⁿ⁺¹)/2) made cut impacts nearly inelastic: two blocks
/// colliding kept 0.2 J of 128 J, against 113 J with this rule.
class ImplicitMidpoint final : public Integrator {
public:
    explicit ImplicitMidpoint(int num_local);
    std::string name() const override { return "implicit_midpoint"; }
    StepProblem begin_step(double h, const NodeField& x, const NodeField& v) override;
    void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) override;
    void set_move_limit(MoveLimit limit) override { m_limit = std::move(limit); }
    std::optional<double> move_fraction() const override { return m_fraction; }
    bool keeps_history() const override { return false; }
    /// Nothing: one-step, begin_step overwrites both of its fields.
    void save(io::CheckpointWriter& /*out*/) const override {}
    void restore(const io::CheckpointReader& /*in*/) override {}

private:
    NodeField m_x_hat;
    NodeField m_start; ///< xⁿ
    NodeField m_move;  ///< y − xⁿ
    MoveLimit m_limit;
    double m_fraction = 1.0; ///< t of the last step
};

/// The integrator named by the scene's `integrator.type`, for node fields of `num_local` rows.
std::unique_ptr<Integrator> make_integrator(const io::Scene& scene, EnergyModel& model, int num_local);

} // namespace intact::solver
