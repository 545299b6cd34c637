#pragma once
/// @file box_mesh.hpp
/// @brief Built-in generator: an axis-aligned box split into positively oriented tetrahedra.

#include "src/mesh/tet_mesh.hpp"

#include <array>

namespace intact {

/// Box [min, max] with cells[0] × cells[1] × cells[2] hexahedral cells, each split into 6 tets
/// (Kuhn/Freudenthal split along the main diagonal, conforming across cells). Nodes are numbered
/// x fastest, then y, then z. Every tet has positive volume. Requires cells >= 1 and min < max.
TetMesh make_box_mesh(const Vec3& min, const Vec3& max, const std::array<int, 3>& cells);

} // namespace intact
