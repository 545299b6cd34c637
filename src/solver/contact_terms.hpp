#pragma once
/// @file contact_terms.hpp
/// @brief IPC's contact terms as energy terms of the incremental potential: the barrier κ Σ b (κ from
/// BarrierStiffness) and lagged friction Σ μ N f0 (normal forces supplied when the method lags it).

#include "src/contact/barrier_pairs.hpp"
#include "src/contact/barrier_stiffness.hpp"
#include "src/contact/contact_model.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/solver/energy_term.hpp"

namespace intact::solver {

/// κ Σ_k w_k b(s_k, ŝ) over the pairs within d̂ (IPC spec §2, §5).
class BarrierTerm final : public EnergyTerm {
public:
    BarrierTerm(contact::ContactModel& contact, const contact::BarrierStiffness& kappa)
        : m_contact(contact), m_kappa(kappa) {}
    const char* name() const override { return "barrier"; }
    bool conservative() const override { return true; }
    double weight() const override { return m_kappa.value(); }
    double local_energy(const contact::ConstSurfaceField& xs) override {
        return contact::barrier_local_energy(m_contact.candidates_at(xs), xs, m_contact.topology(),
                                             m_contact.s_hat());
    }
    void derivatives(bool hessian, contact::PairStencils& out) override {
        contact::barrier_derivatives(m_contact.active(), m_contact.positions(), m_contact.topology(),
                                     m_contact.s_hat(), m_kappa.value(), hessian, out);
    }

private:
    contact::ContactModel& m_contact;
    const contact::BarrierStiffness& m_kappa;
};

/// Lagged friction (IPC spec §6); the method lags `friction` with the normal forces it supplies.
class FrictionTerm final : public EnergyTerm {
public:
    FrictionTerm(contact::ContactModel& contact, contact::FrictionPairs& friction)
        : m_contact(contact), m_friction(friction) {}
    const char* name() const override { return "friction"; }
    bool conservative() const override { return false; }
    double local_energy(const contact::ConstSurfaceField& xs) override { return m_friction.local_energy(xs); }
    void derivatives(bool /*hessian*/, contact::PairStencils& out) override {
        m_friction.derivatives(m_contact.positions(), out);
    }

private:
    contact::ContactModel& m_contact;
    contact::FrictionPairs& m_friction;
};

} // namespace intact::solver
