// Distribution of a partitioned scene: ownership across ranks and the contents of every LocalMesh.
#include "comm/collectives.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "tests/test_meshes.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <set>

namespace {

using namespace intact;

struct Distributed {
    SceneMesh global; // rebuilt on every rank for checking (deterministic)
    LocalMesh local;
};

Distributed distribute_box(int nx, int ny, int nz) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    Distributed d;
    d.global = build_scene_mesh(io::parse_scene(test::box_scene(nx, ny, nz), "box.json"));
    std::vector<int> parts;
    if (rank == 0) {
        parts = partition::partition_graph(partition::build_element_dual_graph(d.global.mesh.tets), size);
    }
    d.local = distribute_mesh(MPI_COMM_WORLD, rank == 0 ? d.global : SceneMesh{}, parts);
    return d;
}

TEST(Distribute, EveryNodeAndElementOwnedExactlyOnce) {
    const auto d = distribute_box(6, 4, 3);
    const auto& local = d.local;
    const long long nodes = static_cast<long long>(d.global.mesh.nodes.size());
    const long long elements = static_cast<long long>(d.global.mesh.tets.size());
    EXPECT_EQ(local.global_num_nodes, nodes);
    EXPECT_EQ(local.global_num_elements, elements);
    EXPECT_EQ(comm::allreduce_sum(MPI_COMM_WORLD, std::int64_t{local.num_owned_nodes}), nodes);
    EXPECT_EQ(comm::allreduce_sum(MPI_COMM_WORLD, std::int64_t{local.num_owned_elements}), elements);

    // Count, over all ranks, how often each global node / element is owned.
    std::vector<int> owned_nodes(static_cast<std::size_t>(nodes), 0);
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        owned_nodes[static_cast<std::size_t>(local.node_global_id[static_cast<std::size_t>(i)])] += 1;
    }
    std::vector<int> owned_elements(static_cast<std::size_t>(elements), 0);
    for (int i = 0; i < local.num_owned_elements; ++i) {
        owned_elements[static_cast<std::size_t>(local.element_global_id[static_cast<std::size_t>(i)])] += 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, owned_nodes.data(), static_cast<int>(nodes), MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, owned_elements.data(), static_cast<int>(elements), MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    for (const int c : owned_nodes) {
        ASSERT_EQ(c, 1);
    }
    for (const int c : owned_elements) {
        ASSERT_EQ(c, 1);
    }
}

TEST(Distribute, LocalMeshMatchesGlobalMesh) {
    const auto d = distribute_box(5, 3, 3);
    const auto& local = d.local;
    const auto& global = d.global.mesh;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    // Node data is the global node's.
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        const auto n = static_cast<std::size_t>(local.node_global_id[static_cast<std::size_t>(i)]);
        EXPECT_EQ(local.rest_position[static_cast<std::size_t>(i)], global.nodes[n]);
    }
    // Local tets are the global tets renumbered.
    std::set<GlobalId> nodes_of_local_elements;
    for (int e = 0; e < local.num_local_elements(); ++e) {
        const auto ge = static_cast<std::size_t>(local.element_global_id[static_cast<std::size_t>(e)]);
        for (int k = 0; k < 4; ++k) {
            const int ln = local.tets[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)];
            EXPECT_EQ(local.node_global_id[static_cast<std::size_t>(ln)],
                      global.tets[ge][static_cast<std::size_t>(k)]);
            nodes_of_local_elements.insert(local.node_global_id[static_cast<std::size_t>(ln)]);
        }
    }
    // Ghosts are exactly the local elements' nodes that this rank does not own, and owners are others.
    std::set<GlobalId> owned(local.node_global_id.begin(),
                             local.node_global_id.begin() + local.num_owned_nodes);
    std::set<GlobalId> ghosts(local.node_global_id.begin() + local.num_owned_nodes,
                              local.node_global_id.end());
    std::set<GlobalId> expected;
    for (const GlobalId n : nodes_of_local_elements) {
        if (owned.count(n) == 0) {
            expected.insert(n);
        }
    }
    EXPECT_EQ(ghosts, expected);
    for (const int owner : local.ghost_owner) {
        EXPECT_NE(owner, rank);
    }
}

} // namespace
