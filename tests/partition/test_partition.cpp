// Element dual graph, METIS partition, ownership rule, partition statistics and partition files.
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/ownership.hpp"
#include "partition/partition_file.hpp"
#include "partition/partition_stats.hpp"
#include "src/core/error.hpp"
#include "src/mesh/box_mesh.hpp"
#include "src/mesh/codim_mesh.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

namespace {

using namespace intact;
namespace fs = std::filesystem;

TEST(DualGraph, TwoTetsShareOneFace) {
    const std::vector<std::array<int, 4>> tets{{0, 1, 2, 3}, {1, 2, 3, 4}, {5, 6, 7, 8}};
    const auto graph = partition::build_element_dual_graph(tets);
    ASSERT_EQ(graph.num_vertices(), 3);
    EXPECT_EQ(graph.num_edges(), 1);
    EXPECT_EQ(graph.neighbors, (std::vector<int>{1, 0}));
    EXPECT_FALSE(partition::is_connected(graph));
}

// Shell triangles (corner 3 = −1) meet at edges, rod segments (corners 2, 3 = −1) at nodes; neither
// shares a face with a tet, even where a triangle lies on the tet's face.
TEST(DualGraph, TrianglesMeetAtEdgesAndSegmentsAtNodes) {
    const std::vector<std::array<int, 4>> elements{
        {0, 1, 2, 3},    // 0: tet
        {0, 1, 2, -1},   // 1: triangle on the tet's face
        {1, 2, 4, -1},   // 2: triangle sharing edge 1-2 with 1
        {4, 5, 6, -1},   // 3: triangle sharing only node 4 with 2
        {7, 8, -1, -1},  // 4: segment
        {8, 9, -1, -1},  // 5: segment sharing node 8 with 4
        {2, 7, -1, -1}}; // 6: segment sharing node 2 with triangles, node 7 with 4
    const auto graph = partition::build_element_dual_graph(elements);
    ASSERT_EQ(graph.num_vertices(), 7);
    const auto neighbours = [&](int v) {
        return std::vector<int>(graph.neighbors.begin() + graph.offsets[static_cast<std::size_t>(v)],
                                graph.neighbors.begin() + graph.offsets[static_cast<std::size_t>(v) + 1]);
    };
    EXPECT_TRUE(neighbours(0).empty());
    EXPECT_EQ(neighbours(1), (std::vector<int>{2}));
    EXPECT_EQ(neighbours(2), (std::vector<int>{1}));
    EXPECT_TRUE(neighbours(3).empty());
    EXPECT_EQ(neighbours(4), (std::vector<int>{5, 6}));
    EXPECT_EQ(neighbours(6), (std::vector<int>{4}));
    // Ownership skips the unused corners.
    const std::vector<int> parts{0, 1, 1, 0, 1, 0, 1};
    const auto owners = partition::node_owners(elements, parts, 10);
    EXPECT_EQ(owners[4], 0);
    EXPECT_EQ(owners[9], 0);
    EXPECT_EQ(owners[7], 1);
    const auto layouts = partition::build_rank_layouts(elements, parts, owners, 2);
    for (const auto& layout : layouts) {
        for (const GlobalId n : layout.nodes) {
            EXPECT_GE(n, 0);
        }
    }
}

TEST(DualGraph, BoxMeshInteriorFacesAreEdges) {
    const auto mesh = make_box_mesh({0, 0, 0}, {1, 1, 1}, {3, 2, 2});
    const auto graph = partition::build_element_dual_graph(mesh.tets);
    // Every tet has 4 faces; boundary faces are 2 triangles per boundary cell face.
    const int tets = 6 * 3 * 2 * 2;
    const int boundary_faces = 2 * 2 * (3 * 2 + 3 * 2 + 2 * 2);
    EXPECT_EQ(graph.num_edges(), (4 * tets - boundary_faces) / 2);
    EXPECT_TRUE(partition::is_connected(graph));
}

class PartitionParts : public ::testing::TestWithParam<int> {};

TEST_P(PartitionParts, EveryElementInOnePartDeterministicAndBalanced) {
    const int parts_wanted = GetParam();
    const auto mesh = make_box_mesh({0, 0, 0}, {2, 1, 1}, {8, 4, 4});
    const auto graph = partition::build_element_dual_graph(mesh.tets);
    const auto parts = partition::partition_graph(graph, parts_wanted);
    ASSERT_EQ(parts.size(), mesh.tets.size());
    std::vector<int> count(static_cast<std::size_t>(parts_wanted), 0);
    for (const int p : parts) {
        ASSERT_GE(p, 0);
        ASSERT_LT(p, parts_wanted);
        ++count[static_cast<std::size_t>(p)];
    }
    for (const int c : count) {
        EXPECT_GT(c, 0);
    }
    EXPECT_EQ(parts, partition::partition_graph(graph, parts_wanted)); // deterministic

    const auto owners = partition::node_owners(mesh.tets, parts, static_cast<int>(mesh.nodes.size()));
    const auto stats = partition::compute_partition_stats(graph, mesh.tets, parts, owners, parts_wanted);
    EXPECT_EQ(stats.num_elements, static_cast<long long>(mesh.tets.size()));
    EXPECT_LE(stats.element_imbalance, 1.1);
    EXPECT_EQ(stats.empty_parts, 0);
    if (parts_wanted == 1) {
        EXPECT_EQ(stats.edge_cut, 0);
        EXPECT_EQ(stats.interface_nodes, 0);
    } else {
        EXPECT_GT(stats.edge_cut, 0);
        EXPECT_GT(stats.interface_nodes, 0);
        EXPECT_LT(stats.edge_cut, graph.num_edges() / 2); // a real cut, not a random split
    }
    EXPECT_NE(partition::describe(stats).find("edge cut"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Metis, PartitionParts, ::testing::Values(1, 2, 3, 4, 7));

// A block of 1296 tets beside a sheet of 288 triangles and a rod of 40 segments (three bodies, as
// partition_elements lists them): weighted by element_work, two parts carry equal work; counted by
// elements, the part with the sheet would carry most of it.
TEST(PartitionWork, MixedBodiesGetEqualWorkNotEqualElementCounts) {
    auto elements = make_box_mesh({0, 0, 0}, {1, 1, 1}, {6, 6, 6}).tets;
    const int box_nodes = 7 * 7 * 7;
    const CodimBodyMesh sheet = make_sheet_mesh(1.0, 1.0, 12, 12);
    for (const auto& t : sheet.elements.triangles) {
        elements.push_back({t[0] + box_nodes, t[1] + box_nodes, t[2] + box_nodes, -1});
    }
    const int rod_first = box_nodes + static_cast<int>(sheet.nodes.size());
    for (int k = 0; k < 40; ++k) {
        elements.push_back({rod_first + k, rod_first + k + 1, -1, -1});
    }
    const int num_nodes = rod_first + 41;
    const auto work = partition::element_work(elements);
    ASSERT_EQ(work.size(), elements.size());
    EXPECT_EQ(work.front(), partition::ElementWork::tet);
    EXPECT_EQ(work[1296], partition::ElementWork::triangle);
    EXPECT_EQ(work.back(), partition::ElementWork::segment);
    ASSERT_GT(partition::ElementWork::triangle, 2 * partition::ElementWork::tet) << "a test of weights";

    const auto graph = partition::build_element_dual_graph(elements);
    const auto stats_of = [&](const std::vector<int>& parts) {
        return partition::compute_partition_stats(graph, elements, parts,
                                                  partition::node_owners(elements, parts, num_nodes), 2);
    };
    const auto weighted = stats_of(partition::partition_graph(graph, 2, work));
    EXPECT_LE(weighted.work_imbalance, 1.05) << partition::describe(weighted);
    EXPECT_NE(partition::describe(weighted).find("work per part"), std::string::npos);
    const auto counted = stats_of(partition::partition_graph(graph, 2));
    EXPECT_LE(counted.element_imbalance, 1.05);
    EXPECT_GT(counted.work_imbalance, 1.3) << partition::describe(counted);
}

TEST(Ownership, EveryNodeOwnedOnceAndGhostsAreTheOtherNodesOfLocalElements) {
    const auto mesh = make_box_mesh({0, 0, 0}, {1, 1, 1}, {5, 4, 3});
    const int num_parts = 4;
    const auto graph = partition::build_element_dual_graph(mesh.tets);
    const auto parts = partition::partition_graph(graph, num_parts);
    const auto owners = partition::node_owners(mesh.tets, parts, static_cast<int>(mesh.nodes.size()));
    const auto layouts = partition::build_rank_layouts(mesh.tets, parts, owners, num_parts);

    std::vector<int> times_owned(mesh.nodes.size(), 0);
    std::vector<int> times_owned_element(mesh.tets.size(), 0);
    for (int p = 0; p < num_parts; ++p) {
        const auto& layout = layouts[static_cast<std::size_t>(p)];
        std::set<GlobalId> local_element_nodes;
        for (std::size_t i = 0; i < layout.elements.size(); ++i) {
            const GlobalId e = layout.elements[i];
            const bool owned = static_cast<int>(i) < layout.num_owned_elements;
            EXPECT_EQ(parts[static_cast<std::size_t>(e)] == p, owned);
            times_owned_element[static_cast<std::size_t>(e)] += owned;
            for (const int n : mesh.tets[static_cast<std::size_t>(e)]) {
                local_element_nodes.insert(n);
            }
        }
        std::set<GlobalId> owned_nodes(layout.nodes.begin(), layout.nodes.begin() + layout.num_owned_nodes);
        std::set<GlobalId> ghost_nodes(layout.nodes.begin() + layout.num_owned_nodes, layout.nodes.end());
        for (const GlobalId n : owned_nodes) {
            EXPECT_EQ(owners[static_cast<std::size_t>(n)], p);
            ++times_owned[static_cast<std::size_t>(n)];
        }
        // Ghosts are exactly the non-owned nodes of local elements.
        std::set<GlobalId> expected_ghosts;
        for (const GlobalId n : local_element_nodes) {
            if (owners[static_cast<std::size_t>(n)] != p) {
                expected_ghosts.insert(n);
            }
        }
        EXPECT_EQ(ghost_nodes, expected_ghosts);
        ASSERT_EQ(layout.ghost_owners.size(), ghost_nodes.size());
        for (std::size_t g = 0; g < layout.ghost_owners.size(); ++g) {
            const GlobalId n = layout.nodes[static_cast<std::size_t>(layout.num_owned_nodes) + g];
            EXPECT_EQ(layout.ghost_owners[g], owners[static_cast<std::size_t>(n)]);
        }
        // Owned first then ghosts, each ascending.
        EXPECT_TRUE(std::is_sorted(layout.nodes.begin(), layout.nodes.begin() + layout.num_owned_nodes));
        EXPECT_TRUE(std::is_sorted(layout.nodes.begin() + layout.num_owned_nodes, layout.nodes.end()));
        // Every element touching an owned node is local (complete rows for owned nodes).
        for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
            const auto& t = mesh.tets[e];
            const bool touches = std::any_of(t.begin(), t.end(),
                                             [&](int n) { return owners[static_cast<std::size_t>(n)] == p; });
            if (touches) {
                EXPECT_TRUE(std::binary_search(layout.elements.begin() + layout.num_owned_elements,
                                               layout.elements.end(), static_cast<GlobalId>(e)) ||
                            parts[e] == p);
            }
        }
    }
    for (const int t : times_owned) {
        EXPECT_EQ(t, 1);
    }
    for (const int t : times_owned_element) {
        EXPECT_EQ(t, 1);
    }
}

TEST(PartitionFile, RoundTripAndMismatches) {
    const fs::path dir = fs::path(INTACT_BINARY_DIR) / "test_output" / "partition_file";
    fs::create_directories(dir);
    const std::string path = (dir / "mesh.part.3").string();
    const std::vector<int> parts{0, 1, 2, 2, 1, 0, 0};
    partition::write_partition_file(path, parts, 3);
    EXPECT_EQ(partition::read_partition_file(path, 7, 3), parts);

    auto message_of = [&](long long elements, int num_parts) {
        try {
            partition::read_partition_file(path, elements, num_parts);
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message_of(8, 3).find("is for 7 elements"), std::string::npos);
    EXPECT_NE(message_of(7, 4).find("has 3 parts"), std::string::npos);
    std::ofstream(path) << "# intact partition 1\nelements 2\nparts 2\n0\n5\n";
    EXPECT_NE(message_of(2, 2).find("element 1"), std::string::npos);
    EXPECT_NE(message_of(2, 2).find(path), std::string::npos);
}

} // namespace
