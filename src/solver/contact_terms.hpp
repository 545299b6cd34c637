#pragma once
/// @file contact_terms.hpp
/// @brief IPC's contact terms as energy terms of the incremental potential: the barrier κ Σ b (with κ
/// from BarrierStiffness) and lagged friction Σ μ N f0 (normal forces supplied when it is lagged).

#include "src/contact/barrier_potential.hpp"
#include "src/contact/barrier_stiffness.hpp"
#include "src/contact/friction_potential.hpp"
#include "src/solver/energy_term.hpp"

namespace intact::solver {

/// κ Σ_k w_k b(s_k, ŝ) over the active pairs (IPC spec §2, §5).
class BarrierTerm final : public EnergyTerm {
public:
    BarrierTerm(const contact::BarrierPotential& barrier, const contact::BarrierStiffness& kappa)
        : m_barrier(barrier), m_kappa(kappa) {}
    const char* name() const override { return "barrier"; }
    bool conservative() const override { return true; }
    double weight() const override { return m_kappa.value(); }
    double local_energy(const std::vector<Vec3>& xs) const override { return m_barrier.local_energy(xs); }
    void add_derivatives(const std::vector<Vec3>& xs,
                         std::vector<double>& gradient,
                         std::vector<contact::ContactBlock>& blocks) const override {
        m_barrier.derivatives(xs, m_kappa.value(), gradient, &blocks);
    }

private:
    const contact::BarrierPotential& m_barrier;
    const contact::BarrierStiffness& m_kappa;
};

/// Lagged friction (IPC spec §6); the solver lags it (FrictionPotential::lag) with its normal forces.
class FrictionTerm final : public EnergyTerm {
public:
    explicit FrictionTerm(const contact::FrictionPotential& friction) : m_friction(friction) {}
    const char* name() const override { return "friction"; }
    bool conservative() const override { return false; }
    double local_energy(const std::vector<Vec3>& xs) const override { return m_friction.local_energy(xs); }
    void add_derivatives(const std::vector<Vec3>& xs,
                         std::vector<double>& gradient,
                         std::vector<contact::ContactBlock>& blocks) const override {
        m_friction.derivatives(xs, gradient, blocks);
    }

private:
    const contact::FrictionPotential& m_friction;
};

} // namespace intact::solver
