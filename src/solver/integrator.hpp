#pragma once
/// @file integrator.hpp
/// @brief Time integrators written as one minimisation per step (IPC spec §1, A-search spec §2).
///
/// Every implicit integrator here solves
///     x* = argmin_x  ½ (x − x̂)ᵀ M (x − x̂) + c h² P(x) + Σ terms(x),
/// P the conservative potential (elasticity + gravity), for a predictor x̂ and a weight c, then recovers
/// velocities from x*. The integrator owns x̂ and whatever history it needs (the step's start for
/// implicit Euler; more for BDF2, Newmark, midpoint and A-search): `begin_step` fills x̂ from the state,
/// `end_step` turns the solver's x* into the new velocities.

#include "src/core/types.hpp"

#include <memory>
#include <string>

namespace intact::io {
class CheckpointWriter;
class CheckpointReader;
} // namespace intact::io

namespace intact::solver {

class Integrator {
public:
    virtual ~Integrator() = default;
    virtual std::string name() const = 0;
    /// Weight c of h² P(x) in the incremental potential.
    virtual double potential_weight() const = 0;
    /// Remember what the step needs from the state at its start and compute x̂ (rows: local nodes).
    /// Device.
    virtual void begin_step(double h, const NodeField& x, const NodeField& v) = 0;
    /// The inertial target x̂ of the current step.
    virtual NodeField x_hat() const = 0;
    /// New velocities v from the step's end x (after begin_step). Device.
    virtual void end_step(double h, const NodeField& x, const NodeField& v) = 0;

    /// Checkpoint: what the next step needs besides x, v and t (which Simulation saves), e.g. x and v of
    /// earlier steps for a multistep method, under section names of its own. Called between steps.
    /// Local.
    virtual void save(io::CheckpointWriter& out) const = 0;
    /// Restart: read back what `save` wrote (after Simulation restored x, v and t); on another rank
    /// count node fields come back by global node id. Collective.
    virtual void restore(const io::CheckpointReader& in) = 0;
};

/// Backward (implicit) Euler: x̂ = xᵗ + h vᵗ, c = 1, vᵗ⁺¹ = (xᵗ⁺¹ − xᵗ) / h. First order, dissipative.
class ImplicitEuler final : public Integrator {
public:
    /// @param num_local rows of the node fields
    explicit ImplicitEuler(int num_local);
    std::string name() const override { return "implicit_euler"; }
    double potential_weight() const override { return 1.0; }
    void begin_step(double h, const NodeField& x, const NodeField& v) override;
    NodeField x_hat() const override { return m_x_hat; }
    void end_step(double h, const NodeField& x, const NodeField& v) override;
    /// Nothing: x̂ and vᵗ⁺¹ come from xᵗ and vᵗ alone, and begin_step overwrites both of its fields.
    void save(io::CheckpointWriter&) const override {}
    void restore(const io::CheckpointReader&) override {}

private:
    NodeField m_x_hat; ///< x̂ of the current step
    NodeField m_start; ///< xᵗ
};

/// The integrator named by the scene's `integrator.type`, for node fields of `num_local` rows.
std::unique_ptr<Integrator> make_integrator(const std::string& type, int num_local);

} // namespace intact::solver
