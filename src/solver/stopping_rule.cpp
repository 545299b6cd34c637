#include "src/solver/stopping_rule.hpp"

#include "comm/collectives.hpp"
#include "src/solver/line_search.hpp"

#include <cmath>

namespace intact::solver {

StoppingTolerances stopping_tolerances(const io::Scene& scene, double length) {
    StoppingTolerances tolerances;
    // IPC spec §3: ε_d = 1e-2 l per second.
    tolerances.velocity = scene.newton_tolerance ? *scene.newton_tolerance : 1e-2 * length;
    // 1e-4 of gravity; a scene without gravity gets the same fraction of l per second squared.
    const Vec3& g = scene.gravity;
    const double g_norm = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    const double scale = g_norm > 0.0 ? g_norm : length;
    tolerances.acceleration = scene.acceleration_tolerance ? *scene.acceleration_tolerance : 1e-4 * scale;
    // About 500 ulps of coordinates of the scene's size: a step this short changes nothing E can see.
    tolerances.resolution = 1e-13 * length;
    return tolerances;
}

double max_norm(MPI_Comm comm, const NodeField& p, int num_owned) {
    double largest = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::max_norm", Kokkos::RangePolicy<ExecSpace>(0, num_owned),
        KOKKOS_LAMBDA(const int i, double& value) {
            for (int c = 0; c < 3; ++c) {
                const double v = p(i, c) < 0 ? -p(i, c) : p(i, c);
                value = v > value ? v : value;
            }
        },
        Kokkos::Max<double>(largest));
    return comm::allreduce_max(comm, largest);
}

double mass_scaled_max_norm(MPI_Comm comm,
                            const NodeField& r,
                            Kokkos::View<const double*, MemSpace> mass,
                            Kokkos::View<const double*, MemSpace> free_mask,
                            int num_owned) {
    double largest = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::mass_scaled_max_norm", Kokkos::RangePolicy<ExecSpace>(0, num_owned),
        KOKKOS_LAMBDA(const int i, double& value) {
            if (free_mask(i) == 0.0) {
                return;
            }
            for (int c = 0; c < 3; ++c) {
                const double v = (r(i, c) < 0 ? -r(i, c) : r(i, c)) / mass(i);
                value = v > value ? v : value;
            }
        },
        Kokkos::Max<double>(largest));
    return comm::allreduce_max(comm, largest);
}

NewtonMeasures measure_newton(MPI_Comm comm,
                              const NodeField& direction,
                              const NodeField& residual,
                              Kokkos::View<const double*, MemSpace> mass,
                              Kokkos::View<const double*, MemSpace> free_mask,
                              int num_owned,
                              double h) {
    NewtonMeasures measures;
    measures.step_length = max_norm(comm, direction, num_owned);
    measures.step_velocity = measures.step_length / h;
    measures.residual_acceleration =
        mass_scaled_max_norm(comm, residual, mass, free_mask, num_owned) / (h * h);
    return measures;
}

double free_dot(MPI_Comm comm,
                const NodeField& r,
                const NodeField& p,
                Kokkos::View<const double*, MemSpace> free_mask,
                int num_owned) {
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::free_dot", Kokkos::RangePolicy<ExecSpace>(0, num_owned),
        KOKKOS_LAMBDA(const int i, double& local) {
            local += free_mask(i) * (r(i, 0) * p(i, 0) + r(i, 1) * p(i, 1) + r(i, 2) * p(i, 2));
        },
        sum);
    return comm::allreduce_sum(comm, sum);
}

bool below_round_off(MPI_Comm comm,
                     const NodeField& rhs,
                     const NodeField& direction,
                     Kokkos::View<const double*, MemSpace> free_mask,
                     int num_owned,
                     double energy_scale) {
    return free_dot(comm, rhs, direction, free_mask, num_owned) <=
           LineSearchSettings{}.round_off * energy_scale;
}

} // namespace intact::solver
