#pragma once
/// @file mesh_reader.hpp
/// @brief Readers for tetrahedral volume meshes and triangle surface meshes. Host, serial (rank 0).
///
/// Volume formats, chosen by file extension:
/// - `.msh`  Gmsh 2.2 and 4.1, ASCII and binary (tetrahedra = element type 4; other elements skipped)
/// - `.mesh` MEDIT (`Vertices`, `Tetrahedra` sections)
/// - `.node` / `.ele` TetGen (either file may be named; the other is found beside it)
/// - `.vtu`  VTK XML unstructured grid, `.vtk` legacy VTK unstructured grid (VTK_TETRA cells)
/// Shell and rod formats: `.obj` as below, or `.msh` (triangles = element type 2, lines = type 1).
/// Obstacle format: `.obj`: vertices, faces (polygons are fan-triangulated) and lines (`l`, polylines
/// split into segments); a file of vertices alone is a point set.
///
/// Every failure throws `InputError` whose message names the file, the line or section where reading
/// stopped, what was expected, and a fix. Nodes no tet refers to are kept (they are removed later only
/// if the caller asks); node numbering is compacted to 0-based in file order.

#include "src/mesh/tet_mesh.hpp"

#include <string>

namespace intact::io {

/// Read a tetrahedral mesh; the format comes from the extension (case-insensitive).
TetMesh read_tet_mesh(const std::string& path);

/// Read an obstacle mesh (`.obj`): triangles, segments and points (every vertex).
TriMesh read_triangle_mesh(const std::string& path);

/// The elements a codimensional body is made of.
enum class CodimElementKind { triangles, segments };

/// Read a shell's triangles or a rod's segments: `.obj` (faces or lines; the other kind is read too and
/// left to the caller) or `.msh` (Gmsh 2.2 or 4.1: triangles, element type 2, or lines, type 1; other
/// elements skipped). A `.msh` with none of `kind` throws InputError naming what the file has instead.
TriMesh read_codim_mesh(const std::string& path, CodimElementKind kind);

} // namespace intact::io
