#pragma once
/// @file mpi_transport.hpp
/// @brief Halo transport over MPI point-to-point messages.

#include "comm/halo_transport.hpp"
#include "src/core/error.hpp"

#include <mpi.h>

#include <vector>

namespace intact::comm {

/// Moves packed halo buffers between neighbours with MPI_Irecv / MPI_Isend on a private duplicate of
/// the plan's communicator (so its tags never meet the user's). Device buffers are staged through host
/// mirrors unless the memory space is host-accessible, so any MPI works; buffers are grown, never
/// allocated per exchange.
class MpiTransport final : public HaloTransport {
public:
    explicit MpiTransport(MPI_Comm comm) { INTACT_CHECK_MPI(MPI_Comm_dup(comm, &m_comm)); }
    ~MpiTransport() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) {
            MPI_Comm_free(&m_comm);
        }
    }
    MpiTransport(const MpiTransport&) = delete;
    MpiTransport& operator=(const MpiTransport&) = delete;

    const char* name() const override { return "mpi"; }

    /// Send `send` blocks to the plan's send ranks and fill `recv` blocks from its receive ranks.
    /// `width` values per entry. Blocks until the data has arrived in `recv`. Collective among neighbours.
    void exchange(const HaloPlan& plan,
                  const Kokkos::View<double*, MemSpace>& send,
                  const Kokkos::View<double*, MemSpace>& recv,
                  int width) {
        const auto send_host = stage(m_send_host, send);
        const auto recv_host = stage(m_recv_host, recv);
        if (send_host.data() != send.data()) {
            Kokkos::deep_copy(send_host, send);
        }
        constexpr int tag = 7101;
        m_requests.clear();
        const auto& rr = plan.recv_ranks();
        const auto& ro = plan.recv_offsets();
        for (std::size_t k = 0; k < rr.size(); ++k) {
            m_requests.emplace_back();
            INTACT_CHECK_MPI(MPI_Irecv(recv_host.data() + static_cast<std::size_t>(ro[k]) * width,
                                       (ro[k + 1] - ro[k]) * width, MPI_DOUBLE, rr[k], tag, m_comm,
                                       &m_requests.back()));
        }
        const auto& sr = plan.send_ranks();
        const auto& so = plan.send_offsets();
        for (std::size_t k = 0; k < sr.size(); ++k) {
            m_requests.emplace_back();
            INTACT_CHECK_MPI(MPI_Isend(send_host.data() + static_cast<std::size_t>(so[k]) * width,
                                       (so[k + 1] - so[k]) * width, MPI_DOUBLE, sr[k], tag, m_comm,
                                       &m_requests.back()));
        }
        INTACT_CHECK_MPI(
            MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE));
        if (recv_host.data() != recv.data()) {
            Kokkos::deep_copy(recv, recv_host);
        }
    }

private:
    using HostBuffer = Kokkos::View<double*, HostSpace>;

    // The host view to hand to MPI: the device buffer itself when the host can read it, else a mirror
    // that is grown (never shrunk) to the buffer's size.
    using HostAlias = Kokkos::View<double*, HostSpace, Kokkos::MemoryUnmanaged>;
    static HostAlias stage(HostBuffer& mirror, const Kokkos::View<double*, MemSpace>& buffer) {
        if (Kokkos::SpaceAccessibility<HostSpace, MemSpace>::accessible) {
            return HostAlias(buffer.data(), buffer.extent(0));
        }
        if (mirror.extent(0) < buffer.extent(0)) {
            mirror = HostBuffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "intact::comm::mpi_staging"),
                                buffer.extent(0));
        }
        return HostAlias(mirror.data(), buffer.extent(0));
    }

    MPI_Comm m_comm = MPI_COMM_NULL;
    HostBuffer m_send_host, m_recv_host;
    std::vector<MPI_Request> m_requests;
};

} // namespace intact::comm
