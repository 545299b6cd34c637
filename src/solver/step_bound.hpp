#pragma once
/// @file step_bound.hpp
/// @brief The largest safe fraction of a step: no element, of any material, loses more than 80% of its
/// volume (IPC spec §7.4 for neo-Hookean; ElasticTerm::max_step) and no contact pair closes more than 80% of
/// its gap (conservative CCD, §8), reduced over ranks with one MIN so every rank takes the same α.

#include "src/contact/contact_model.hpp"
#include "src/solver/boundary_motion.hpp"
#include "src/solver/elastic_term.hpp"

namespace intact::solver {

class StepBound {
public:
    /// `contact` may be null (no contact).
    StepBound(MPI_Comm comm, const ElasticTerm& elastic, contact::ContactModel* contact)
        : m_comm(comm), m_elastic(elastic), m_contact(contact) {}

    /// Largest α in (0, 1] for the step x → x + α d (obstacles moving by the boundary's obstacle_step()).
    /// With contact it first refreshes the ghost plan for the segment and gathers both ends
    /// (ContactModel::update_segment), which the caller's energies then reuse. Collective.
    double along(const NodeField& x, const NodeField& d, const BoundaryMotion& boundary);
    /// `along`, also leaving each swept contact pair's own bound in `toi` (ContactModel::local_max_step),
    /// for methods that use them (the AL set update). Collective.
    double along(const NodeField& x,
                 const NodeField& d,
                 const BoundaryMotion& boundary,
                 Kokkos::View<double*, MemSpace>& toi);

private:
    double bound(const NodeField& x,
                 const NodeField& d,
                 const BoundaryMotion& boundary,
                 Kokkos::View<double*, MemSpace>* toi);

    MPI_Comm m_comm;
    const ElasticTerm& m_elastic;
    contact::ContactModel* m_contact;
};

} // namespace intact::solver
