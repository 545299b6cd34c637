#pragma once
/// @file surface.hpp
/// @brief Boundary of a tetrahedral mesh: outward triangles, their edges and vertices.

#include "src/mesh/codim_elements.hpp"
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

/// The contact surface of a scene: the solids' boundary (extract_surface) plus every shell triangle (as
/// given; an unsigned distance acts on both of its sides, so one copy serves both faces), the unique
/// edges of the shell triangles and the rod segments, and every vertex of a shell or a rod. A rod vertex
/// needs no point–edge pair kind: the edge–edge pairs of its segments cover the point–edge and
/// point–point closest-feature cases, as for obstacle segments. Triangles: the solids' first, then the
/// shells' in `codim` order; edges and vertices sorted and unique. Host.
Surface extract_surface(const TetMesh& mesh, const CodimElements& codim);

} // namespace intact
