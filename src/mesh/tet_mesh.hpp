#pragma once
/// @file tet_mesh.hpp
/// @brief Host-side meshes as read from files or generated, before partitioning and distribution.

#include "src/core/ids.hpp"

#include <array>
#include <vector>

namespace intact {

/// A tetrahedral mesh on the host. Node indices are 0-based. A positively oriented tet has
/// det[x1-x0, x2-x0, x3-x0] > 0 (readers reorient nothing: validation reports inverted input).
struct TetMesh {
    std::vector<Vec3> nodes;              ///< num_nodes positions, metres
    std::vector<std::array<int, 4>> tets; ///< num_tets × 4 node indices
};

/// A triangle surface mesh on the host (obstacles, extracted boundaries). Counter-clockwise seen from
/// outside: the normal (x1-x0)×(x2-x0) points outward. Obstacles may also have segments (codimension 2)
/// and points (every node; a file of vertices alone is a point set).
struct TriMesh {
    std::vector<Vec3> nodes;                  ///< num_nodes positions, metres
    std::vector<std::array<int, 3>> tris;     ///< num_tris × 3 node indices
    std::vector<std::array<int, 2>> segments; ///< num_segments × 2 node indices (obstacles only)
};

} // namespace intact
