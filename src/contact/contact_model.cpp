#include "src/contact/contact_model.hpp"

#include "comm/collectives.hpp"

namespace intact::contact {

ContactModel::ContactModel(MPI_Comm comm, ContactSurface& surface, const BarrierPotential& barrier)
    : m_comm(comm), m_surface(surface), m_barrier(barrier),
      m_obstacle_zero(static_cast<std::size_t>(surface.num_obstacle_rows()), Vec3{}) {}

void ContactModel::update(const NodeField& x, const std::vector<Vec3>& obstacles) {
    m_surface.update_ghosts(x, nullptr, m_barrier.dhat());
    m_surface.gather(x, obstacles, m_xs);
}

void ContactModel::update_segment(const NodeField& x,
                                  const std::vector<Vec3>& obstacles,
                                  const NodeField& d,
                                  const std::vector<Vec3>& obstacle_step) {
    m_surface.update_ghosts(x, &d, m_barrier.dhat());
    m_surface.gather(x, obstacles, m_xs);
    m_surface.gather(d, obstacle_step, m_ps);
}

void ContactModel::gather(const NodeField& x, const std::vector<Vec3>& obstacles) {
    m_surface.gather(x, obstacles, m_xs);
}

void ContactModel::gather_trial(const NodeField& trial, const std::vector<Vec3>& obstacles) {
    m_surface.gather(trial, obstacles, m_ts);
}

void ContactModel::gather_direction(const NodeField& p) {
    m_surface.gather(p, m_obstacle_zero, m_ds);
}

double ContactModel::local_max_step() const {
    return m_barrier.local_max_step(m_xs, m_ps);
}

double ContactModel::min_squared_distance() const {
    return m_barrier.min_squared_distance(m_xs);
}

long long ContactModel::count_active_pairs() const {
    std::int64_t count = 0;
    for (const auto& pair : m_barrier.active_pairs(m_xs)) {
        count += m_barrier.owns(pair) ? 1 : 0;
    }
    return comm::allreduce_sum(m_comm, count);
}

} // namespace intact::contact
