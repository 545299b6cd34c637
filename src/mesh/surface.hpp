#pragma once
/// @file surface.hpp
/// @brief Boundary of a tetrahedral mesh: outward triangles, their edges and vertices.

#include "src/mesh/tet_mesh.hpp"

#include <array>
#include <vector>

namespace intact {

/// The boundary of a tet mesh (faces that belong to exactly one tet). Indices refer to the tet mesh's
/// nodes. Triangles are oriented so that (x1-x0)×(x2-x0) points out of their tet. Edges are the unique
/// undirected edges of those triangles (stored with the smaller index first, sorted); vertices are the
/// unique nodes of those triangles, sorted. Deterministic.
struct Surface {
    std::vector<std::array<int, 3>> triangles;
    std::vector<std::array<int, 2>> edges;
    std::vector<int> vertices;
};

/// Host, O(E log E).
Surface extract_surface(const TetMesh& mesh);

} // namespace intact
