// Halo exchange: after a gather every ghost holds its owner's value (rank-1 and rank-2 fields).
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

} // namespace
