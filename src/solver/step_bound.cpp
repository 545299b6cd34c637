#include "src/solver/step_bound.hpp"

#include "comm/collectives.hpp"

#include <algorithm>

namespace intact::solver {

double StepBound::along(const NodeField& x, const NodeField& d, const BoundaryMotion& boundary) {
    return bound(x, d, boundary, nullptr);
}

double StepBound::along(const NodeField& x,
                        const NodeField& d,
                        const BoundaryMotion& boundary,
                        Kokkos::View<double*, MemSpace>& toi) {
    return bound(x, d, boundary, &toi);
}

double StepBound::bound(const NodeField& x,
                        const NodeField& d,
                        const BoundaryMotion& boundary,
                        Kokkos::View<double*, MemSpace>* toi) {
    double alpha = m_elastic.max_step(x, d);
    if (m_contact) {
        // The ghost plan covers the whole segment x → x + d (and xᵗ and the lagging points).
        m_contact->update_segment(x, boundary.obstacle_positions(), d, boundary.obstacle_step());
        alpha = std::min(alpha, toi ? m_contact->local_max_step(*toi) : m_contact->local_max_step());
    }
    return comm::allreduce_min(m_comm, alpha);
}

} // namespace intact::solver
