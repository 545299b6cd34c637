#pragma once
/// @file dual_graph.hpp
/// @brief The element dual graph of a tetrahedral mesh: elements are vertices, shared faces are edges.

#include <array>
#include <vector>

namespace intact::partition {

/// Compressed sparse rows: the neighbours of vertex v are neighbors[offsets[v] .. offsets[v+1]).
struct CsrGraph {
    std::vector<int> offsets;   ///< size num_vertices + 1
    std::vector<int> neighbors; ///< size offsets.back(), each row sorted ascending
    int num_vertices() const { return offsets.empty() ? 0 : static_cast<int>(offsets.size()) - 1; }
    int num_edges() const { return static_cast<int>(neighbors.size()) / 2; }
};

/// Two tetrahedra are neighbours when they share a face (three nodes), two shell triangles when they
/// share an edge, two rod segments when they share a node. Host, deterministic, O(E log E).
/// @param tets element connectivity (num_elements × 4 node indices; a triangle or a segment has −1 in
///             its unused corners).
CsrGraph build_element_dual_graph(const std::vector<std::array<int, 4>>& tets);

} // namespace intact::partition
