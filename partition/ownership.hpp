#pragma once
/// @file ownership.hpp
/// @brief Who owns each node, and what every rank keeps: owned entries first, then ghosts.
///
/// Elements are 4-corner stencils; a shell triangle or rod segment has −1 in its unused corners.
/// Rule: a node is owned by the lowest part among the elements that contain it. A rank keeps its
/// owned elements (part == rank) plus every element that touches one of its owned nodes (the one-ring
/// of ghost elements), and every node of those elements: its owned nodes first, then ghost nodes, each
/// group in ascending global id. So a rank can assemble complete rows for its owned nodes alone.

#include "src/core/ids.hpp"

#include <array>
#include <vector>

namespace intact::partition {

/// Owner part of every node (size num_nodes). A node no element refers to is an error (ends the job).
std::vector<int>
node_owners(const std::vector<std::array<int, 4>>& tets, const std::vector<int>& parts, int num_nodes);

/// What one rank keeps, as global ids.
struct RankLayout {
    std::vector<GlobalId> nodes; ///< owned nodes (ascending), then ghost nodes (ascending)
    int num_owned_nodes = 0;
    std::vector<int> ghost_owners;  ///< owner of each ghost node (size nodes.size() - num_owned_nodes)
    std::vector<GlobalId> elements; ///< owned elements (ascending), then ghost elements (ascending)
    int num_owned_elements = 0;
};

/// The layout of every part. Host, serial, O(E log E).
std::vector<RankLayout> build_rank_layouts(const std::vector<std::array<int, 4>>& tets,
                                           const std::vector<int>& parts,
                                           const std::vector<int>& owners,
                                           int num_parts);

} // namespace intact::partition
