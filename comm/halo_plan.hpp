#pragma once
/// @file halo_plan.hpp
/// @brief Who sends which owned entries to whom so that every ghost copy receives its owner's value.
///
/// Local arrays hold owned entries first (indices [0, num_owned)), then ghosts ([num_owned, num_local)).
/// The plan is built once per mesh (collective) and reused by every exchange. Messages to and from one
/// neighbour are contiguous in the send / receive buffers, in neighbour order; within a neighbour's
/// block, entries follow the order of the receiver's ghosts (ascending global id).
///
/// A plan can also be given explicitly (second constructor): the caller names the neighbours, the blocks
/// and the device ids, e.g. the contact ghosts of a step (src/contact/contact_surface.hpp), whose send ids
/// index one array (local nodes) and receive ids another (surface rows). Any HaloTransport moves either.

#include "src/core/types.hpp"

#include <mpi.h>

#include <vector>

namespace intact::comm {

class HaloPlan {
public:
    /// Collective over `comm`.
    /// @param num_owned number of owned entries on this rank (they come first in local arrays)
    /// @param local_global_ids global id of every local entry (owned, then ghosts); size num_local
    /// @param ghost_owners owner rank of every ghost; size num_local - num_owned
    HaloPlan(MPI_Comm comm,
             int num_owned,
             const std::vector<GlobalId>& local_global_ids,
             const std::vector<int>& ghost_owners);

    /// Explicit plan; no communication. Entry k of the send buffer is taken from index send_ids(k) of the
    /// sender's array; entry k of the receive buffer goes to index recv_ids(k) of the receiver's array.
    /// The ids Views (device) may be longer than the last offset (capacity); they are shared, not copied.
    /// num_owned() and num_local() are 0: the ids index the caller's arrays, not an owned/ghost layout.
    /// @param send_ranks neighbours to send to, ascending; send_offsets their blocks (size send_ranks + 1)
    /// @param recv_ranks neighbours to receive from, ascending; recv_offsets their blocks
    HaloPlan(MPI_Comm comm,
             std::vector<int> send_ranks,
             std::vector<int> send_offsets,
             Kokkos::View<const int*, MemSpace> send_ids,
             std::vector<int> recv_ranks,
             std::vector<int> recv_offsets,
             Kokkos::View<const int*, MemSpace> recv_ids);

    MPI_Comm comm() const { return m_comm; }
    int num_owned() const { return m_num_owned; }
    int num_local() const { return m_num_local; }
    int num_ghost() const { return m_num_local - m_num_owned; }

    /// Ranks this rank sends owned values to, and the [offset, offset + count) block of each in the
    /// send buffer (entries, not bytes).
    const std::vector<int>& send_ranks() const { return m_send_ranks; }
    const std::vector<int>& send_offsets() const { return m_send_offsets; } ///< size send_ranks + 1
    /// Ranks this rank receives ghost values from, and their blocks in the receive buffer.
    const std::vector<int>& recv_ranks() const { return m_recv_ranks; }
    const std::vector<int>& recv_offsets() const { return m_recv_offsets; } ///< size recv_ranks + 1

    /// Local (owned) index of each send-buffer entry, on the device.
    Kokkos::View<const int*, MemSpace> send_ids() const { return m_send_ids; }
    /// Local (ghost) index of each receive-buffer entry, on the device.
    Kokkos::View<const int*, MemSpace> recv_ids() const { return m_recv_ids; }

    int num_send() const { return m_send_offsets.back(); }
    int num_recv() const { return m_recv_offsets.back(); }
    /// No rank to send to or receive from (one rank, or a part without interface): an exchange moves
    /// nothing and its pack and unpack kernels can be skipped (a neighbour with zero entries still counts,
    /// as its message must be matched).
    bool has_neighbours() const { return !m_send_ranks.empty() || !m_recv_ranks.empty(); }

private:
    MPI_Comm m_comm;
    int m_num_owned = 0;
    int m_num_local = 0;
    std::vector<int> m_send_ranks, m_send_offsets{0};
    std::vector<int> m_recv_ranks, m_recv_offsets{0};
    Kokkos::View<const int*, MemSpace> m_send_ids;
    Kokkos::View<const int*, MemSpace> m_recv_ids;
};

} // namespace intact::comm
