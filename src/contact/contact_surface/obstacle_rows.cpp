// ContactSurface's rows in prescribed rigid motion: obstacle rows at a time (host and device), combinations
// and norms over the obstacle rows, and moving boxes released to free rows.

#include "src/contact/contact_surface.hpp"

#include "kernels/rigid_motion.hpp"
#include "src/contact/contact_surface/device_helpers.hpp"
#include "src/core/error.hpp"

namespace intact::contact {

using namespace surface_detail;

std::vector<Vec3> ContactSurface::obstacle_positions(double time) const {
    std::vector<Vec3> rows(static_cast<std::size_t>(num_obstacle_rows()));
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Vec3& x = m_rest[static_cast<std::size_t>(m_num_body_vertices) + k];
        const io::RigidMotion& m = m_obstacle_motion[k];
        const kernels::Vec3 y = kernels::rigid_motion_position(
            kernels::from_array(x), kernels::from_array(m.velocity), kernels::from_array(m.angular_velocity),
            kernels::from_array(m.center), time);
        rows[k] = {y(0), y(1), y(2)};
    }
    return rows;
}

void ContactSurface::obstacle_positions(double time, const SurfaceField& xs) const {
    INTACT_REQUIRE(static_cast<int>(xs.extent(0)) == num_vertices(),
                   "ContactSurface::obstacle_positions: field has " << xs.extent(0) << " rows, not "
                                                                    << num_vertices());
    const int first = m_num_body_vertices;
    const auto rest = m_topology.rest;
    const auto motion = m_obstacle_motion_d;
    Kokkos::parallel_for(
        "intact::contact::obstacle_positions", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k) {
            const kernels::Vec3 x0(rest(first + k, 0), rest(first + k, 1), rest(first + k, 2));
            const kernels::Vec3 v(motion(k, 0), motion(k, 1), motion(k, 2));
            const kernels::Vec3 w(motion(k, 3), motion(k, 4), motion(k, 5));
            const kernels::Vec3 c(motion(k, 6), motion(k, 7), motion(k, 8));
            const kernels::Vec3 y = kernels::rigid_motion_position(x0, v, w, c, time);
            for (int d = 0; d < 3; ++d) {
                xs(first + k, d) = y(d);
            }
        });
}

void ContactSurface::release_motion(int motion) {
    for (int s = 0; s < m_num_body_vertices; ++s) {
        if (m_vertex_motion[static_cast<std::size_t>(s)] == motion) {
            m_vertex_constrained[static_cast<std::size_t>(s)] = 0;
        }
    }
    Kokkos::deep_copy(m_topology.constrained,
                      Kokkos::View<const char*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          m_vertex_constrained.data(), m_vertex_constrained.size()));
}

void ContactSurface::combine_obstacle_rows(double a,
                                           const ConstSurfaceField& x,
                                           double b,
                                           const ConstSurfaceField& y,
                                           const SurfaceField& out) const {
    const int first = m_num_body_vertices;
    const bool zero = a == 0.0 && b == 0.0;
    Kokkos::parallel_for(
        "intact::contact::combine_obstacle_rows", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(first + k, c) = zero ? 0.0 : a * x(first + k, c) + b * y(first + k, c);
            }
        });
}

double ContactSurface::obstacle_max_abs(const ConstSurfaceField& field) const {
    const int first = m_num_body_vertices;
    double largest = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::obstacle_max_abs", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k, double& m) {
            for (int c = 0; c < 3; ++c) {
                const double v = field(first + k, c) < 0.0 ? -field(first + k, c) : field(first + k, c);
                m = max2(m, v);
            }
        },
        Kokkos::Max<double>(largest));
    return num_obstacle_rows() == 0 ? 0.0 : largest;
}

} // namespace intact::contact
