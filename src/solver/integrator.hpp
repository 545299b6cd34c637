#pragma once
/// @file integrator.hpp
/// @brief Time integrators written as one minimisation per step (IPC spec §1, A-search spec §2).
///
/// Every implicit integrator here solves
///     x* = argmin_x  ½ (x − x̂)ᵀ M (x − x̂) + c h² P(x),
/// P the conservative potential (elasticity + gravity; contact joins later), for a predictor x̂ and a
/// weight c, then recovers velocities from x*. `predict` gives x̂ and c; `correct` turns x* into the new
/// velocities. BDF2, Newmark, implicit midpoint and A-search implement this same interface later.

#include "src/core/types.hpp"

#include <memory>
#include <string>

namespace intact::solver {

class Integrator {
public:
    virtual ~Integrator() = default;
    virtual std::string name() const = 0;
    /// Weight c of h² P(x) in the incremental potential.
    virtual double potential_weight() const = 0;
    /// x̂ from the state at the start of the step (rows: local nodes). Device.
    virtual void predict(double h, const NodeField& x, const NodeField& v, const NodeField& x_hat) const = 0;
    /// New velocities from the positions before (x_old) and after (x_new) the step. Device.
    virtual void
    correct(double h, const NodeField& x_old, const NodeField& x_new, const NodeField& v) const = 0;
};

/// Backward (implicit) Euler: x̂ = xᵗ + h vᵗ, c = 1, vᵗ⁺¹ = (xᵗ⁺¹ − xᵗ) / h. First order, dissipative.
class ImplicitEuler final : public Integrator {
public:
    std::string name() const override { return "implicit_euler"; }
    double potential_weight() const override { return 1.0; }
    void predict(double h, const NodeField& x, const NodeField& v, const NodeField& x_hat) const override;
    void correct(double h, const NodeField& x_old, const NodeField& x_new, const NodeField& v) const override;
};

/// The integrator named by the scene's `integrator.type`.
std::unique_ptr<Integrator> make_integrator(const std::string& type);

} // namespace intact::solver
