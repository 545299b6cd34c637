/// @file tetgen.cpp
/// @brief The TetGen .node / .ele reader: either file may be named, the other is read from beside it.

#include "src/io/mesh_reader/common.hpp"

#include "src/core/error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace intact::io::detail {

TetMesh read_tetgen(const std::string& path) {
    const std::string node_path = with_extension(path, ".node");
    const std::string ele_path = with_extension(path, ".ele");
    const std::string other = extension_of(path) == ".node" ? ele_path : node_path;
    require_readable(path);
    {
        errno = 0;
        std::FILE* file = std::fopen(other.c_str(), "rb");
        if (!file) {
            throw InputError("cannot open mesh file '" + other + "' (the TetGen file beside '" + path +
                             "'): " + std::strerror(errno) + "; fix: keep the .node and .ele files together");
        }
        std::fclose(file);
    }
    TetMesh mesh;
    NodeNumbering numbering;

    const std::string node_text = read_file(node_path);
    TokenReader nodes(node_path, node_text, '#');
    const std::int64_t num_nodes = nodes.count("the number of points in the .node header");
    const std::int64_t dim = nodes.integer("the dimension in the .node header");
    if (dim != 3) {
        nodes.fail_here("expected dimension 3 in the .node header, found " + std::to_string(dim),
                        "generate a 3-D TetGen mesh");
    }
    const std::int64_t num_attributes = nodes.count("the number of attributes in the .node header");
    const std::int64_t num_markers =
        nodes.count("the number of boundary markers (0 or 1) in the .node header");
    if (num_markers > 1) {
        nodes.fail_here("expected 0 or 1 boundary markers, found " + std::to_string(num_markers),
                        k_reexport_fix);
    }
    mesh.nodes.reserve(static_cast<std::size_t>(std::min<std::int64_t>(num_nodes, node_text.size() / 8 + 1)));
    for (std::int64_t i = 0; i < num_nodes; ++i) {
        const std::string what =
            "point " + std::to_string(i + 1) + " of " + std::to_string(num_nodes) + " 'id x y z'";
        const std::int64_t id = nodes.integer(what);
        Vec3 x;
        for (double& xi : x) {
            xi = nodes.real(what);
        }
        for (std::int64_t a = 0; a < num_attributes + num_markers; ++a) {
            nodes.token(what + " with its attributes and marker");
        }
        int index = 0;
        if (!numbering.add(id, index)) {
            nodes.fail_here("point " + std::to_string(id) + " is defined twice", k_reexport_fix);
        }
        mesh.nodes.push_back(x);
    }

    const std::string ele_text = read_file(ele_path);
    TokenReader eles(ele_path, ele_text, '#');
    const std::int64_t num_tets = eles.count("the number of tetrahedra in the .ele header");
    const std::int64_t nodes_per_tet = eles.integer("the nodes per tetrahedron in the .ele header");
    if (nodes_per_tet != 4) {
        eles.fail_here("expected 4 nodes per tetrahedron, found " + std::to_string(nodes_per_tet),
                       "run tetgen without -o2 (first-order tetrahedra)");
    }
    const std::int64_t num_regions = eles.count("the number of region attributes in the .ele header");
    mesh.tets.reserve(static_cast<std::size_t>(std::min<std::int64_t>(num_tets, ele_text.size() / 10 + 1)));
    for (std::int64_t i = 0; i < num_tets; ++i) {
        const std::string what =
            "tetrahedron " + std::to_string(i + 1) + " of " + std::to_string(num_tets) + " 'id n1 n2 n3 n4'";
        eles.integer(what);
        std::array<int, 4> tet{};
        for (int& v : tet) {
            const std::int64_t id = eles.integer(what);
            if (!numbering.find(id, v)) {
                eles.fail_here("tetrahedron " + std::to_string(i + 1) + " refers to point " +
                                   std::to_string(id) + ", which '" + node_path + "' does not define",
                               "the .node and .ele files must come from the same tetgen run");
            }
        }
        for (std::int64_t a = 0; a < num_regions; ++a) {
            eles.token(what + " with its region attributes");
        }
        mesh.tets.push_back(tet);
    }
    if (mesh.tets.empty()) {
        fail(ele_path, "line 1", "no tetrahedra", "tetrahedralize the volume with tetgen");
    }
    return mesh;
}

} // namespace intact::io::detail
