#pragma once
/// @file phase_timer.hpp
/// @brief Wall time of a scope added to a running total, for the per-phase times of a step.

#include <Kokkos_Core.hpp>

namespace intact {

/// Adds the seconds from construction to destruction to `total`. It fences first, so device work is
/// charged to the phase that launched it (the fence is a no-op on host backends). Not collective.
class ScopedTimer {
public:
    explicit ScopedTimer(double& total) : m_total(total) {}
    ~ScopedTimer() {
        Kokkos::fence();
        m_total += m_timer.seconds();
    }
    ScopedTimer(const ScopedTimer&) = delete;
    ScopedTimer& operator=(const ScopedTimer&) = delete;

private:
    double& m_total;
    Kokkos::Timer m_timer;
};

} // namespace intact
