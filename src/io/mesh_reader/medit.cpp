/// @file medit.cpp
/// @brief The MEDIT .mesh reader (ASCII): `Vertices` and `Tetrahedra` sections; other sections skipped.

#include "src/io/mesh_reader/common.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace intact::io::detail {
namespace {

bool starts_with_letter(std::string_view t) {
    return !t.empty() && std::isalpha(static_cast<unsigned char>(t.front())) != 0;
}

} // namespace

TetMesh read_medit(const std::string& path, std::string_view text) {
    constexpr const char* fix = "export an ASCII MEDIT mesh (.mesh) with Vertices and Tetrahedra";
    TokenReader in(path, text, '#');
    TextCursor& cur = in.cursor();
    TetMesh mesh;
    std::vector<int> tet_lines; // for index checks once all vertices are known
    bool have_vertices = false;
    std::string_view t;
    while (cur.next_token(t)) {
        if (!starts_with_letter(t)) {
            in.fail_here("expected a keyword such as Vertices or Tetrahedra, found " + quoted(t), fix);
        }
        if (iequals(t, "End")) {
            break;
        }
        if (iequals(t, "MeshVersionFormatted")) {
            in.integer("the MeshVersionFormatted number");
        } else if (iequals(t, "Dimension")) {
            const std::int64_t dim = in.integer("the Dimension");
            if (dim != 3) {
                in.fail_here("expected Dimension 3, found " + std::to_string(dim),
                             "export a 3-D volume mesh");
            }
        } else if (iequals(t, "Vertices")) {
            if (have_vertices) {
                in.fail_here("a second Vertices section", fix);
            }
            have_vertices = true;
            const std::int64_t n = in.count("the number of Vertices");
            mesh.nodes.reserve(static_cast<std::size_t>(std::min<std::int64_t>(n, text.size() / 8 + 1)));
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string what =
                    "vertex " + std::to_string(i + 1) + " of " + std::to_string(n) + " 'x y z ref'";
                Vec3 x;
                for (double& xi : x) {
                    xi = in.real(what);
                }
                in.token(what); // reference number, unused
                mesh.nodes.push_back(x);
            }
        } else if (iequals(t, "Tetrahedra")) {
            const std::int64_t n = in.count("the number of Tetrahedra");
            mesh.tets.reserve(mesh.tets.size() +
                              static_cast<std::size_t>(std::min<std::int64_t>(n, text.size() / 10 + 1)));
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string what = "tetrahedron " + std::to_string(i + 1) + " of " + std::to_string(n) +
                                         " 'v1 v2 v3 v4 ref'";
                std::array<int, 4> tet{};
                for (int& v : tet) {
                    const std::int64_t one_based = in.integer(what);
                    if (one_based < 1 || one_based > INT_MAX) {
                        in.fail_here("vertex index " + std::to_string(one_based) +
                                         " out of range (MEDIT indices start at 1)",
                                     k_reexport_fix);
                    }
                    v = static_cast<int>(one_based - 1);
                }
                tet_lines.push_back(cur.line());
                in.token(what); // reference number, unused
                mesh.tets.push_back(tet);
            }
        } else {
            // A section this reader does not use (Edges, Triangles, Corners, Normals, ...): its data are
            // numbers, so it ends at the next keyword.
            TextCursor::State state = cur.save();
            while (cur.next_token(t) && !starts_with_letter(t)) {
                state = cur.save();
            }
            cur.restore(state);
        }
    }
    if (mesh.tets.empty()) {
        fail(path, "end of file", "no Tetrahedra section (or it is empty)", fix);
    }
    const int num_vertices = static_cast<int>(mesh.nodes.size());
    for (std::size_t i = 0; i < mesh.tets.size(); ++i) {
        for (const int v : mesh.tets[i]) {
            if (v >= num_vertices) {
                fail(path, at_line(tet_lines[i]),
                     "tetrahedron " + std::to_string(i + 1) + " refers to vertex " + std::to_string(v + 1) +
                         ", but the file has " + std::to_string(num_vertices) + " Vertices",
                     "the file is inconsistent; re-export it from the mesher");
            }
        }
    }
    return mesh;
}

} // namespace intact::io::detail
