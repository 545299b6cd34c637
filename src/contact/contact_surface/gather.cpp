// ContactSurface's gathers along the current ghost plan: the device gather into a SurfaceField, the host
// gather of the legacy path, and host copies of the known primitives.

#include "src/contact/contact_surface.hpp"

#include "src/contact/contact_surface/device_helpers.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <iterator>

namespace intact::contact {

using namespace surface_detail;

namespace {

constexpr int ghost_rows_tag = 7402;

void copy_owned_rows(const IntView& owned_surface,
                     const IntView& owned_local,
                     const NodeField& field,
                     const SurfaceField& out) {
    Kokkos::parallel_for(
        "intact::contact::gather_owned_rows", Kokkos::RangePolicy<ExecSpace>(0, owned_surface.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(owned_surface(k), c) = field(owned_local(k), c);
            }
        });
}

void pack_rows(const Kokkos::View<const int*, MemSpace>& ids,
               int n,
               const NodeField& field,
               const Kokkos::View<double*, MemSpace>& buffer) {
    Kokkos::parallel_for(
        "intact::contact::pack_ghost_rows", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                buffer(3 * k + c) = field(ids(k), c);
            }
        });
}

void unpack_rows(const Kokkos::View<const int*, MemSpace>& ids,
                 int n,
                 const Kokkos::View<double*, MemSpace>& buffer,
                 const SurfaceField& out) {
    Kokkos::parallel_for(
        "intact::contact::unpack_ghost_rows", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(ids(k), c) = buffer(3 * k + c);
            }
        });
}

// Host copy of the first n entries of a device list.
std::vector<int> to_host(const Kokkos::View<const int*, MemSpace>& view) {
    std::vector<int> values(view.extent(0));
    Kokkos::deep_copy(Kokkos::View<int*, HostSpace, Kokkos::MemoryUnmanaged>(values.data(), values.size()),
                      view);
    return values;
}

} // namespace

void ContactSurface::gather(const NodeField& field, const SurfaceField& out) const {
    INTACT_REQUIRE(m_has_plan, "ContactSurface::gather before update_ghosts");
    INTACT_REQUIRE(static_cast<int>(out.extent(0)) == num_vertices(),
                   "ContactSurface::gather: field has " << out.extent(0) << " rows, not " << num_vertices());
    const comm::HaloPlan& plan = *m_ghost_plan;
    copy_owned_rows(m_owned_surface_d, m_owned_local_d, field, out);
    if (!plan.has_neighbours()) {
        return;
    }
    pack_rows(plan.send_ids(), plan.num_send(), field, m_gather_send);
    Kokkos::fence();
    // Only the plan's part of the kept buffers: a transport that stages through the host copies what it
    // is given, every PCG iteration. The unpack needs no fence: later kernels run on the same space.
    const auto send = Kokkos::subview(m_gather_send, std::make_pair(0, 3 * plan.num_send()));
    const auto recv = Kokkos::subview(m_gather_recv, std::make_pair(0, 3 * plan.num_recv()));
    m_transport->exchange(plan, send, recv, 3);
    unpack_rows(plan.recv_ids(), plan.num_recv(), m_gather_recv, out);
}

const std::vector<int>& ContactSurface::known_vertices() const {
    if (!m_known_on_host) {
        const auto other = to_host(m_known_device.other_points);
        m_known_vertices.clear();
        std::merge(m_owned_surface.begin(), m_owned_surface.end(), other.begin(), other.end(),
                   std::back_inserter(m_known_vertices));
        m_known_triangles = to_host(m_known_device.triangles);
        const auto owned_edges = to_host(m_known_device.owned_edges);
        const auto other_edges = to_host(m_known_device.other_edges);
        m_known_edges.clear();
        std::merge(owned_edges.begin(), owned_edges.end(), other_edges.begin(), other_edges.end(),
                   std::back_inserter(m_known_edges));
        m_known_on_host = true;
    }
    return m_known_vertices;
}

const std::vector<int>& ContactSurface::known_triangles() const {
    known_vertices();
    return m_known_triangles;
}

const std::vector<int>& ContactSurface::known_edges() const {
    known_vertices();
    return m_known_edges;
}

void ContactSurface::gather(const NodeField& field,
                            const std::vector<Vec3>& obstacle_rows,
                            std::vector<Vec3>& out) const {
    INTACT_REQUIRE(m_has_plan, "ContactSurface::gather before update_ghosts");
    INTACT_REQUIRE(static_cast<int>(obstacle_rows.size()) == num_obstacle_rows(),
                   "ContactSurface::gather: wrong number of obstacle rows");
    out.resize(static_cast<std::size_t>(num_vertices()));
    const auto rows = m_pack_local;
    const auto pack = m_pack;
    Kokkos::parallel_for(
        "intact::contact::pack_surface_rows", Kokkos::RangePolicy<ExecSpace>(0, rows.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                pack(k, c) = field(rows(k), c);
            }
        });
    Kokkos::deep_copy(m_pack_host, m_pack);
    const std::size_t owned = m_owned_local.size();
    for (std::size_t k = 0; k < owned; ++k) {
        out[static_cast<std::size_t>(m_owned_surface[k])] = {m_pack_host(k, 0), m_pack_host(k, 1),
                                                             m_pack_host(k, 2)};
    }
    const double* send = m_pack_host.data() + 3 * owned; // the sent rows, in plan order
    m_recv_buffer.resize(3 * m_recv_rows.size());
    std::size_t q = 0;
    for (std::size_t k = 0; k < m_recv_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Irecv(m_recv_buffer.data() + 3 * m_recv_offsets[k],
                                   3 * (m_recv_offsets[k + 1] - m_recv_offsets[k]), MPI_DOUBLE,
                                   m_recv_ranks[k], ghost_rows_tag, m_comm, &m_requests[q++]));
    }
    for (std::size_t k = 0; k < m_send_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Isend(send + 3 * m_send_offsets[k],
                                   3 * (m_send_offsets[k + 1] - m_send_offsets[k]), MPI_DOUBLE,
                                   m_send_ranks[k], ghost_rows_tag, m_comm, &m_requests[q++]));
    }
    INTACT_CHECK_MPI(MPI_Waitall(static_cast<int>(q), m_requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t k = 0; k < m_recv_rows.size(); ++k) {
        out[static_cast<std::size_t>(m_recv_rows[k])] = {m_recv_buffer[3 * k], m_recv_buffer[3 * k + 1],
                                                         m_recv_buffer[3 * k + 2]};
    }
    std::copy(obstacle_rows.begin(), obstacle_rows.end(), out.begin() + m_num_body_vertices);
}

} // namespace intact::contact
