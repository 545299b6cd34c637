#pragma once
/// @file barrier_stiffness.hpp
/// @brief The barrier stiffness κ of IPC (spec §4): its bounds, its start value each step and its growth.
///
/// Bounds (§4.1): κ_min makes the barrier's normal stiffness at d = 1e-8 l equal 1e11 × the mean nodal
/// mass (l the scene's bounding-box diagonal); κ_max = 100 κ_min. Start (§4.2): the κ minimising
/// ‖∇E + κ ∇B‖ over free DOFs, clamped to the bounds. Growth (§4.3, global-minimum form): κ doubles (up to
/// κ_max) when the smallest pair distance is already below 1e-9 l and still shrinking. BAL's σ and
/// stencil descent's per-pair κ_i start from the same bounds.

#include <mpi.h>

namespace intact::contact {

class BarrierStiffness {
public:
    /// @param mean_mass mean nodal mass over all ranks (kg); @param dhat d̂ (m); @param length l (m)
    BarrierStiffness(double mean_mass, double dhat, double length);

    double value() const { return m_kappa; }
    double min() const { return m_min; }
    double max() const { return m_max; }
    double length() const { return m_length; }

    /// κ = clamp(−(g·b) / (b·b)) from the global dot products g·b and b·b of the free DOFs' gradient of
    /// the rest of the potential (g) and of the unweighted barrier (b); κ_min when b = 0. Host.
    void start(double gradient_dot_barrier, double barrier_dot_barrier);
    /// Record the smallest squared pair distance after an accepted step; doubles κ when it is below
    /// (1e-9 l)² and shrank since the previous call. Host (give it a value reduced over ranks).
    void observe(double min_squared_distance);
    /// BAL's σ schedule (seed 002 §2.7, spec A4) after an iteration that left a pair closer than
    /// 1e-2 d̂, from σ₀ = the last `start` value: `literal`: σ ← max(growth σ, jump σ₀), the paper's rule
    /// (no upper bound); otherwise σ ← max(σ, min(growth σ, jump σ₀)), growth capped at jump σ₀. Host.
    void grow_augmented(double growth, double jump, bool literal);
    /// Forget the previous distance (a new step begins with `min_squared_distance` at xᵗ).
    void reset_distance(double min_squared_distance) { m_smallest = min_squared_distance; }

private:
    double m_min = 0.0;
    double m_max = 0.0;
    double m_kappa = 0.0;
    double m_start = 0.0; ///< the last start value (BAL's σ₀)
    double m_length = 1.0;
    double m_smallest = 0.0;
};

} // namespace intact::contact
