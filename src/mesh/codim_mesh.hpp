#pragma once
/// @file codim_mesh.hpp
/// @brief The mesh of one codimensional body (a shell or a rod) as the scene gives it: generated (`sheet`,
/// `rod`) or read from a file (triangles for a shell, segments for a rod), validated, with its hinges or
/// rod bending vertices.

#include "src/io/scene.hpp"
#include "src/mesh/codim_elements.hpp"

#include <vector>

namespace intact {

struct CodimBodyMesh {
    std::vector<Vec3> nodes; ///< in the mesh's own coordinates (not yet scaled, rotated, translated)
    CodimElements elements;  ///< body-local node indices, body index `b`, everything counted as owned
};

/// Sheet [0, length] × [0, width] at z = 0 with cells_x × cells_y cells, each split by its diagonal from
/// (i, j) to (i + 1, j + 1) into two triangles; node (i, j) is i + (cells_x + 1) j.
CodimBodyMesh make_sheet_mesh(double length, double width, int cells_x, int cells_y);

/// Straight rod from `start` to `end` in `segments` equal segments; node k at start + k/segments (end −
/// start).
CodimBodyMesh make_rod_mesh(const Vec3& start, const Vec3& end, int segments);

/// Body b of the scene (a shell or a rod): generated or read, nodes no element uses dropped, then checked:
/// no zero-area triangle, no zero-length segment, no edge of more than two triangles; hinges or rod
/// vertices added. Throws InputError naming the body, its mesh file, the item and the fix. Host.
CodimBodyMesh load_codim_body(const io::Scene& scene, std::size_t b);

/// Appends `body` (body-local node ids) to `all`, shifting node ids by `node_offset`.
void append_codim_elements(CodimElements& all, const CodimElements& body, int node_offset);

} // namespace intact
