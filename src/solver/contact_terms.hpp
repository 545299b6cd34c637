#pragma once
/// @file contact_terms.hpp
/// @brief The contact terms of the incremental potential: IPC's barrier κ Σ b (κ from BarrierStiffness),
/// lagged friction Σ μ N f0 (normal forces supplied when the method lags it), the AL method's
/// linearised constraint terms, and BAL's augmentation on A′ (its barrier on A is the BarrierTerm with σ).

#include "src/contact/al_constraints.hpp"
#include "src/contact/bal_pairs.hpp"
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
                                     m_contact.s_hat(), m_kappa.value(), hessian, out, m_projection);
    }
    /// How the next assemblies project the pairs' Hessians (contact/hessian_projection.hpp).
    void set_projection(contact::HessianProjection projection) { m_projection = projection; }
    contact::HessianProjection projection() const { return m_projection; }

private:
    contact::ContactModel& m_contact;
    const contact::BarrierStiffness& m_kappa;
    contact::HessianProjection m_projection = contact::HessianProjection::by_case;
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

/// The AL terms γ_i [μ/2 (c_i − s_i)² − λ_i (c_i − s_i)] of the constraint set, linearised at the safe
/// state's surface rows `safe` and evaluated at the contact model's positions (the iterate y).
class AlConstraintTerm final : public EnergyTerm {
public:
    AlConstraintTerm(contact::ContactModel& contact,
                     const contact::ConstraintSet& set,
                     const contact::SurfaceField& safe,
                     const contact::AlPenalty& penalty)
        : m_contact(contact), m_set(set), m_safe(safe), m_penalty(penalty) {}
    const char* name() const override { return "al_constraints"; }
    bool conservative() const override { return true; }
    bool stores_energy() const override { return false; }
    double local_energy(const contact::ConstSurfaceField& ys) override {
        return contact::al_local_energy(m_set, m_safe, ys, m_contact.topology(), m_penalty);
    }
    void derivatives(bool hessian, contact::PairStencils& out) override {
        contact::al_derivatives(m_set, m_safe, m_contact.positions(), m_penalty, hessian, out);
    }

private:
    contact::ContactModel& m_contact;
    const contact::ConstraintSet& m_set;
    const contact::SurfaceField& m_safe;
    const contact::AlPenalty& m_penalty;
};

/// BAL's augmentation Σ_{A′} μᵢ (ŝ + sᵢ − s) + σ b(s, ŝ + sᵢ) (bal_pairs.hpp), with σ read from `sigma` at
/// every call (held through a line search by the method).
class AugmentationTerm final : public EnergyTerm {
public:
    AugmentationTerm(contact::ContactModel& contact,
                     const contact::ConstraintSet& set,
                     const contact::BarrierStiffness& sigma)
        : m_contact(contact), m_set(set), m_sigma(sigma) {}
    const char* name() const override { return "augmentation"; }
    bool conservative() const override { return true; }
    bool stores_energy() const override { return false; }
    double local_energy(const contact::ConstSurfaceField& xs) override {
        return contact::augmentation_local_energy(m_set, xs, m_contact.topology(), m_contact.s_hat(),
                                                  m_sigma.value());
    }
    void derivatives(bool hessian, contact::PairStencils& out) override {
        contact::augmentation_derivatives(m_set, m_contact.positions(), m_contact.topology(),
                                          m_contact.s_hat(), m_sigma.value(), hessian, out);
    }

private:
    contact::ContactModel& m_contact;
    const contact::ConstraintSet& m_set;
    const contact::BarrierStiffness& m_sigma;
};

} // namespace intact::solver
