#pragma once
/// @file energy_term.hpp
/// @brief A term of the incremental potential beyond inertia, elasticity and gravity (the barrier,
/// friction, and the augmented-Lagrangian terms of later methods), evaluated on the contact surface.
///
/// A term is weight() · Σ_k e_k over its pairs; each pair is counted on exactly one rank (the owner of
/// its smallest global row), so local energies summed over ranks give the term once. Derivatives are
/// added to the gradient rows and Hessian blocks of this rank's owned rows. The incremental potential
/// sums its terms in the order they were added, so results do not depend on anything else.

#include "src/contact/barrier_potential.hpp"

#include <vector>

namespace intact::solver {

class EnergyTerm {
public:
    virtual ~EnergyTerm() = default;
    /// For logs and metrics, e.g. "barrier".
    virtual const char* name() const = 0;
    /// False for dissipative terms (friction): energy bookkeeping (A-search) leaves them out.
    virtual bool conservative() const = 0;
    /// Factor of local_energy in the potential (the barrier's κ; 1 for most terms).
    virtual double weight() const { return 1.0; }
    /// Σ over the pairs this rank counts of the unweighted term at surface positions xs (+∞ where the
    /// term is not defined, e.g. a barrier pair at zero distance). Local.
    virtual double local_energy(const std::vector<Vec3>& xs) const = 0;
    /// Add the weighted gradient (rows: local nodes, 3 values each; only owned rows are touched) and the
    /// PSD Hessian blocks at xs. Local.
    virtual void add_derivatives(const std::vector<Vec3>& xs,
                                 std::vector<double>& gradient,
                                 std::vector<contact::ContactBlock>& blocks) const = 0;
};

} // namespace intact::solver
