#include "src/contact/barrier_stiffness.hpp"

#include "kernels/barrier.hpp"

#include <algorithm>

namespace intact::contact {

BarrierStiffness::BarrierStiffness(double mean_mass, double dhat, double length) : m_length(length) {
    const double s_hat = dhat * dhat;
    double s_ref = (1e-8 * length) * (1e-8 * length);
    if (s_ref >= s_hat) {
        s_ref = 0.5 * s_hat;
    }
    m_min = 1e11 * mean_mass / (4.0 * s_ref * kernels::barrier_second_derivative(s_ref, s_hat));
    m_max = 100.0 * m_min;
    m_kappa = m_min;
    m_start = m_min;
}

void BarrierStiffness::start(double gradient_dot_barrier, double barrier_dot_barrier) {
    const double raw = barrier_dot_barrier > 0.0 ? -gradient_dot_barrier / barrier_dot_barrier : 0.0;
    m_kappa = std::min(m_max, std::max(m_min, raw));
    m_start = m_kappa;
}

void BarrierStiffness::grow_augmented(double growth, double jump, bool literal) {
    const double grown = growth * m_kappa;
    const double cap = jump * m_start;
    m_kappa = literal ? std::max(grown, cap) : std::max(m_kappa, std::min(grown, cap));
}

void BarrierStiffness::observe(double min_squared_distance) {
    const double tiny = (1e-9 * m_length) * (1e-9 * m_length);
    if (m_smallest < tiny && min_squared_distance < tiny && min_squared_distance < m_smallest) {
        m_kappa = std::min(2.0 * m_kappa, m_max);
    }
    m_smallest = min_squared_distance;
}

} // namespace intact::contact
