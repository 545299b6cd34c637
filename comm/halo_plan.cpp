#include "comm/halo_plan.hpp"

#include "src/core/error.hpp"

#include <algorithm>
#include <unordered_map>

namespace intact::comm {

namespace {

// Copy a host vector into a new device View.
Kokkos::View<int*, MemSpace> to_device(const std::string& label, const std::vector<int>& values) {
    Kokkos::View<int*, MemSpace> view(label, values.size());
    auto host = Kokkos::create_mirror_view(view);
    for (std::size_t i = 0; i < values.size(); ++i) {
        host(i) = values[i];
    }
    Kokkos::deep_copy(view, host);
    return view;
}

} // namespace

HaloPlan::HaloPlan(MPI_Comm comm,
                   int num_owned,
                   const std::vector<GlobalId>& local_global_ids,
                   const std::vector<int>& ghost_owners)
    : m_comm(comm), m_num_owned(num_owned), m_num_local(static_cast<int>(local_global_ids.size())) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    INTACT_REQUIRE(static_cast<int>(ghost_owners.size()) == num_ghost(),
                   "ghost_owners has " << ghost_owners.size() << " entries for " << num_ghost() << " ghosts");

    // 1. Group ghosts by owner: what this rank receives, in ghost order within each owner.
    std::vector<std::vector<int>> ghosts_of(static_cast<std::size_t>(size));
    for (int g = 0; g < num_ghost(); ++g) {
        const int owner = ghost_owners[static_cast<std::size_t>(g)];
        INTACT_REQUIRE(owner >= 0 && owner < size && owner != rank, "ghost " << g << " has owner " << owner);
        ghosts_of[static_cast<std::size_t>(owner)].push_back(num_owned + g);
    }
    std::vector<int> recv_ids;
    std::vector<GlobalId> request_ids;
    std::vector<int> request_counts(static_cast<std::size_t>(size), 0);
    for (int r = 0; r < size; ++r) {
        const auto& list = ghosts_of[static_cast<std::size_t>(r)];
        if (list.empty()) {
            continue;
        }
        m_recv_ranks.push_back(r);
        for (int local : list) {
            recv_ids.push_back(local);
            request_ids.push_back(local_global_ids[static_cast<std::size_t>(local)]);
        }
        m_recv_offsets.push_back(static_cast<int>(recv_ids.size()));
        request_counts[static_cast<std::size_t>(r)] = static_cast<int>(list.size());
    }

    // 2. Tell every owner which of its entries we need (counts, then global ids).
    std::vector<int> send_counts(static_cast<std::size_t>(size), 0);
    INTACT_CHECK_MPI(MPI_Alltoall(request_counts.data(), 1, MPI_INT, send_counts.data(), 1, MPI_INT, comm));
    std::vector<int> request_displs(static_cast<std::size_t>(size), 0);
    std::vector<int> send_displs(static_cast<std::size_t>(size), 0);
    for (int r = 1; r < size; ++r) {
        request_displs[static_cast<std::size_t>(r)] =
            request_displs[static_cast<std::size_t>(r - 1)] + request_counts[static_cast<std::size_t>(r - 1)];
        send_displs[static_cast<std::size_t>(r)] =
            send_displs[static_cast<std::size_t>(r - 1)] + send_counts[static_cast<std::size_t>(r - 1)];
    }
    const int total_send = send_displs.back() + send_counts.back();
    std::vector<GlobalId> wanted(static_cast<std::size_t>(total_send));
    INTACT_CHECK_MPI(MPI_Alltoallv(request_ids.data(), request_counts.data(), request_displs.data(),
                                   MPI_INT64_T, wanted.data(), send_counts.data(), send_displs.data(),
                                   MPI_INT64_T, comm));

    // 3. Translate requested global ids into our owned local indices.
    std::unordered_map<GlobalId, int> owned_index;
    owned_index.reserve(static_cast<std::size_t>(num_owned));
    for (int i = 0; i < num_owned; ++i) {
        owned_index.emplace(local_global_ids[static_cast<std::size_t>(i)], i);
    }
    std::vector<int> send_ids;
    send_ids.reserve(wanted.size());
    for (int r = 0; r < size; ++r) {
        const int count = send_counts[static_cast<std::size_t>(r)];
        if (count == 0) {
            continue;
        }
        m_send_ranks.push_back(r);
        for (int k = 0; k < count; ++k) {
            const GlobalId gid =
                wanted[static_cast<std::size_t>(send_displs[static_cast<std::size_t>(r)] + k)];
            const auto it = owned_index.find(gid);
            INTACT_REQUIRE(it != owned_index.end(), "rank " << r << " asks rank " << rank << " for global id "
                                                            << gid << ", not owned here");
            send_ids.push_back(it->second);
        }
        m_send_offsets.push_back(static_cast<int>(send_ids.size()));
    }
    m_send_ids = to_device("intact::comm::halo_send_ids", send_ids);
    m_recv_ids = to_device("intact::comm::halo_recv_ids", recv_ids);
}

HaloPlan::HaloPlan(MPI_Comm comm,
                   std::vector<int> send_ranks,
                   std::vector<int> send_offsets,
                   Kokkos::View<const int*, MemSpace> send_ids,
                   std::vector<int> recv_ranks,
                   std::vector<int> recv_offsets,
                   Kokkos::View<const int*, MemSpace> recv_ids)
    : m_comm(comm), m_send_ranks(std::move(send_ranks)), m_send_offsets(std::move(send_offsets)),
      m_recv_ranks(std::move(recv_ranks)), m_recv_offsets(std::move(recv_offsets)),
      m_send_ids(std::move(send_ids)), m_recv_ids(std::move(recv_ids)) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    auto check = [size](const std::vector<int>& ranks, const std::vector<int>& offsets, std::size_t ids,
                        const char* what) {
        INTACT_REQUIRE(offsets.size() == ranks.size() + 1 && offsets.front() == 0,
                       "explicit halo plan: " << what << " has " << ranks.size() << " ranks and "
                                              << offsets.size() << " offsets (want ranks + 1, from 0)");
        for (std::size_t k = 0; k < ranks.size(); ++k) {
            INTACT_REQUIRE(ranks[k] >= 0 && ranks[k] < size && (k == 0 || ranks[k - 1] < ranks[k]),
                           "explicit halo plan: " << what << " ranks must be ascending ranks of the "
                                                  << "communicator (rank " << ranks[k] << ")");
            INTACT_REQUIRE(offsets[k] <= offsets[k + 1],
                           "explicit halo plan: " << what << " offsets decrease at block " << k);
        }
        INTACT_REQUIRE(static_cast<std::size_t>(offsets.back()) <= ids,
                       "explicit halo plan: " << what << " blocks hold " << offsets.back()
                                              << " entries but the ids View only " << ids);
    };
    check(m_send_ranks, m_send_offsets, m_send_ids.extent(0), "send");
    check(m_recv_ranks, m_recv_offsets, m_recv_ids.extent(0), "receive");
}

} // namespace intact::comm
