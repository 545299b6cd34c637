// Halo exchange: after a gather every ghost holds its owner's value (rank-1 and rank-2 fields); an explicit
// plan (given blocks and ids, as the contact ghosts use) moves packed buffers through every transport.
#include "comm/halo_exchange.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "tests/test_meshes.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

using namespace intact;

LocalMesh distributed_box() {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    SceneMesh global;
    std::vector<int> parts;
    if (rank == 0) {
        global = build_scene_mesh(io::parse_scene(test::box_scene(6, 5, 4), "box.json"));
        parts = partition::partition_graph(partition::build_element_dual_graph(global.mesh.tets), size);
    }
    return distribute_mesh(MPI_COMM_WORLD, global, parts);
}

// Owned rows hold f(global id, component), ghost rows hold -1; returns the View (device).
Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> make_field(const LocalMesh& local, int width) {
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> field("field", local.num_local_nodes(), width);
    auto host = Kokkos::create_mirror_view(field);
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        for (int c = 0; c < width; ++c) {
            host(i, c) =
                i < local.num_owned_nodes
                    ? static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)]) + 0.25 * c
                    : -1.0;
        }
    }
    Kokkos::deep_copy(field, host);
    return field;
}

// Number of rows whose value differs from f(global id, component).
int count_wrong_rows(const LocalMesh& local,
                     const Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>& field) {
    auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    int wrong = 0;
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        for (int c = 0; c < static_cast<int>(field.extent(1)); ++c) {
            const double expected =
                static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)]) + 0.25 * c;
            wrong += host(i, c) != expected;
        }
    }
    return wrong;
}

// Every transport compiled into this build (MPI; NCCL on CUDA builds with NCCL).
class HaloTest : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Transports, HaloTest, ::testing::ValuesIn(comm::available_transports()));

TEST_P(HaloTest, EveryGhostReceivesItsOwnersValue) {
    const LocalMesh local = distributed_box();
    auto plan = std::make_shared<comm::HaloPlan>(MPI_COMM_WORLD, local.num_owned_nodes, local.node_global_id,
                                                 local.ghost_owner);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        EXPECT_GT(plan->num_ghost(), 0);
    } else {
        EXPECT_EQ(plan->num_ghost(), 0);
    }
    comm::HaloExchange halo(plan, comm::make_transport(MPI_COMM_WORLD, GetParam()));
    EXPECT_EQ(std::string(halo.transport_name()), GetParam());
    // Several widths through one exchange object: buffers grow and are reused.
    for (const int width : {1, 3, 2, 3}) {
        auto field = make_field(local, width);
        const int ghosts = local.num_local_nodes() - local.num_owned_nodes;
        EXPECT_EQ(count_wrong_rows(local, field), ghosts * width); // ghosts start out wrong
        halo.gather(field);
        EXPECT_EQ(count_wrong_rows(local, field), 0) << "width " << width;
    }
    // A rank-1 field of global ids.
    Kokkos::View<double*, MemSpace> ids("ids", local.num_local_nodes());
    auto host = Kokkos::create_mirror_view(ids);
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        host(i) = i < local.num_owned_nodes
                      ? static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)])
                      : -7.0;
    }
    Kokkos::deep_copy(ids, host);
    halo.gather(ids);
    Kokkos::deep_copy(host, ids);
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        EXPECT_EQ(host(i), static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)]));
    }
}

// An explicit plan: every rank sends 2 + rank values to every other rank r, taken at ids 3 r + k of its
// array, and receives them in consecutive slots, a block per sender. Values encode sender, receiver, k.
double encoded(int from, int to, int k) {
    return 1000.0 * from + 10.0 * to + k;
}

TEST_P(HaloTest, ExplicitPlanMovesGivenBlocks) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<int> send_ranks, send_offsets{0}, send_ids, recv_ranks, recv_offsets{0}, recv_ids;
    for (int r = 0; r < size; ++r) {
        if (r == rank) {
            continue;
        }
        send_ranks.push_back(r);
        for (int k = 0; k < 2 + rank; ++k) {
            send_ids.push_back(3 * r + k);
        }
        send_offsets.push_back(static_cast<int>(send_ids.size()));
        recv_ranks.push_back(r);
        for (int k = 0; k < 2 + r; ++k) {
            recv_ids.push_back(static_cast<int>(recv_ids.size())); // receiver slots, in block order
        }
        recv_offsets.push_back(static_cast<int>(recv_ids.size()));
    }
    const int num_send = send_offsets.back();
    const int num_recv = recv_offsets.back();
    auto device = [](const std::vector<int>& ids) {
        Kokkos::View<int*, MemSpace> view("ids", ids.size() + 3); // longer than needed: capacity
        Kokkos::deep_copy(
            Kokkos::subview(view, std::make_pair(std::size_t{0}, ids.size())),
            Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>(ids.data(), ids.size()));
        return Kokkos::View<const int*, MemSpace>(view);
    };
    const comm::HaloPlan plan(MPI_COMM_WORLD, send_ranks, send_offsets, device(send_ids), recv_ranks,
                              recv_offsets, device(recv_ids));
    EXPECT_EQ(plan.num_send(), num_send);
    EXPECT_EQ(plan.num_recv(), num_recv);
    EXPECT_EQ(plan.num_owned(), 0);

    // Pack by the plan's send ids from an array whose entry 3 r + k holds encoded(rank, r, k).
    Kokkos::View<double*, MemSpace> send("send", 3 * static_cast<std::size_t>(num_send));
    Kokkos::View<double*, MemSpace> recv("recv", 3 * static_cast<std::size_t>(num_recv));
    auto send_host = Kokkos::create_mirror_view(send);
    const auto ids = Kokkos::create_mirror_view_and_copy(HostSpace(), plan.send_ids());
    for (std::size_t b = 0; b < send_ranks.size(); ++b) {
        for (int e = send_offsets[b]; e < send_offsets[b + 1]; ++e) {
            const int k = ids(e) - 3 * send_ranks[b];
            for (int c = 0; c < 3; ++c) {
                send_host(3 * e + c) = encoded(rank, send_ranks[b], k) + 0.25 * c;
            }
        }
    }
    Kokkos::deep_copy(send, send_host);
    const auto transport = comm::make_transport(MPI_COMM_WORLD, GetParam());
    transport->exchange(plan, send, recv, 3);
    const auto recv_host = Kokkos::create_mirror_view_and_copy(HostSpace(), recv);
    int wrong = 0;
    for (std::size_t b = 0; b < recv_ranks.size(); ++b) {
        for (int e = recv_offsets[b]; e < recv_offsets[b + 1]; ++e) {
            for (int c = 0; c < 3; ++c) {
                wrong += recv_host(3 * e + c) != encoded(recv_ranks[b], rank, e - recv_offsets[b]) + 0.25 * c;
            }
        }
    }
    EXPECT_EQ(wrong, 0);
}

} // namespace
