/// @file mesh_reader.cpp
/// @brief read_tet_mesh and read_triangle_mesh: the format comes from the extension; each format's reader
/// is in src/io/mesh_reader/ (gmsh, medit, tetgen, vtk, obj), their shared helpers in common.hpp.
///
/// Text formats are parsed from the whole file held in memory by a cursor that counts lines, so every
/// error can name the line where reading stopped; binary Gmsh data is read from the same buffer and
/// errors there name the section and byte offset. VTK files go through VTK's own readers, whose error
/// messages are caught by an observer and turned into `InputError`.

#include "src/io/mesh_reader.hpp"

#include "src/core/error.hpp"
#include "src/io/mesh_reader/common.hpp"

#include <string>

namespace intact::io {
namespace {

constexpr const char* k_supported_volume = ".msh (Gmsh 2.2 or 4.1), .mesh (MEDIT), .node/.ele (TetGen), "
                                           ".vtu (VTK XML), .vtk (legacy VTK)";

} // namespace

TetMesh read_tet_mesh(const std::string& path) {
    const std::string ext = detail::extension_of(path);
    if (ext == ".msh") {
        const std::string text = detail::read_file(path);
        return detail::read_gmsh(path, text);
    }
    if (ext == ".mesh") {
        const std::string text = detail::read_file(path);
        return detail::read_medit(path, text);
    }
    if (ext == ".node" || ext == ".ele") {
        return detail::read_tetgen(path);
    }
    if (ext == ".vtu" || ext == ".vtk") {
        return detail::read_vtk(path, ext == ".vtu");
    }
    throw InputError("mesh '" + path + "': unsupported extension '" + ext +
                     "' for a tetrahedral mesh; supported: " + k_supported_volume +
                     "; fix: convert the mesh to one of these (e.g. with gmsh or meshio)");
}

TriMesh read_triangle_mesh(const std::string& path) {
    const std::string ext = detail::extension_of(path);
    if (ext != ".obj") {
        throw InputError(
            "mesh '" + path + "': unsupported extension '" + ext +
            "' for a triangle mesh; supported: .obj (Wavefront); fix: export the surface as .obj");
    }
    return detail::read_obj(path);
}

TriMesh read_codim_mesh(const std::string& path, CodimElementKind kind) {
    const std::string ext = detail::extension_of(path);
    if (ext == ".msh") {
        const std::string text = detail::read_file(path);
        return detail::read_gmsh_codim(path, text,
                                       kind == CodimElementKind::triangles ? detail::GmshElements::triangles
                                                                           : detail::GmshElements::lines);
    }
    if (ext != ".obj") {
        throw InputError("mesh '" + path + "': unsupported extension '" + ext + "' for a " +
                         (kind == CodimElementKind::triangles ? "shell" : "rod") +
                         "; supported: .obj (Wavefront), .msh (Gmsh 2.2 or 4.1); fix: export the " +
                         (kind == CodimElementKind::triangles ? "triangles" : "lines") + " as one of these");
    }
    return detail::read_obj(path);
}

} // namespace intact::io
