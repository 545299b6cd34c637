#pragma once
/// @file energy_term.hpp
/// @brief A term of the incremental potential beyond inertia, elasticity and gravity (the barrier,
/// friction, and the augmented-Lagrangian terms of later methods), evaluated on the contact surface.
///
/// A term is weight() · Σ_k e_k over its pairs; each pair is counted on exactly one rank (the owner of
/// its smallest global row), so local energies summed over ranks give the term once. Derivatives are
/// written per pair into device stencils (PairStencils), which the incremental potential's ContactMatrix
/// sums per owned row in a fixed order. Terms are summed in the order they were added.

#include "src/contact/pair_list.hpp"
#include "src/contact/pair_stencils.hpp"

namespace intact::solver {

class EnergyTerm {
public:
    virtual ~EnergyTerm() = default;
    /// For logs and metrics, e.g. "barrier".
    virtual const char* name() const = 0;
    /// False for dissipative terms (friction): energy bookkeeping (A-search) leaves them out of P and
    /// books their work as a loss instead. A conservative term's weight · energy / (c h²) is stored
    /// energy in J and its gradient, so scaled, a force (integrator.hpp).
    virtual bool conservative() const = 0;
    /// Whether a conservative term's energy is energy the system stores (the barrier, a stiff spring on
    /// each pair) and so counts in the step certificate's energy balance. Multiplier terms (`al`, `bal`)
    /// enforce constraints: their value is not stored energy (an `al` term is −λ²/2μ on an open gap) and
    /// they are left out (step_certificate.hpp).
    virtual bool stores_energy() const { return conservative(); }
    /// Factor of local_energy in the potential (the barrier's κ; 1 for most terms). A method may change
    /// it between steps (IPC's κ); A-search then rescales its cached energy and gradient of the term
    /// and rebases its energy target (a_search.hpp).
    virtual double weight() const { return 1.0; }
    /// Σ over the pairs this rank counts of the unweighted term at surface positions xs (+∞ where the
    /// term is not defined, e.g. a barrier pair at zero distance). Device work, host result. Local.
    virtual double local_energy(const contact::ConstSurfaceField& xs) = 0;
    /// The weighted gradient and, when `hessian`, PSD Hessian of every pair at the contact model's
    /// current positions, into `out`. Device work. Local.
    virtual void derivatives(bool hessian, contact::PairStencils& out) = 0;
};

} // namespace intact::solver
