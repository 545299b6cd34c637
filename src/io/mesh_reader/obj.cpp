/// @file obj.cpp
/// @brief The Wavefront .obj reader for obstacles: vertices, faces (fan-triangulated) and lines (split
/// into segments); other records are ignored.

#include "src/io/mesh_reader/common.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace intact::io::detail {

TriMesh read_obj(const std::string& path) {
    const std::string text = read_file(path);
    TextCursor cur(text, '#');
    TriMesh mesh;
    std::vector<std::string_view> tokens;
    std::vector<int> polygon;
    std::string_view line;
    while (cur.next_line(line)) {
        split(line, tokens);
        const std::string where = at_line(cur.line());
        if (tokens[0] == "v") {
            Vec3 x;
            // Extra values after x y z (a w weight or per-vertex colours) are ignored.
            if (tokens.size() < 4 || !parse_double(tokens[1], x[0]) || !parse_double(tokens[2], x[1]) ||
                !parse_double(tokens[3], x[2])) {
                fail(path, where, "expected a vertex 'v x y z', found " + quoted(line), k_reexport_fix);
            }
            mesh.nodes.push_back(x);
        } else if (tokens[0] == "f" || tokens[0] == "l") {
            const bool face = tokens[0] == "f";
            polygon.clear();
            for (std::size_t k = 1; k < tokens.size(); ++k) {
                // "i", "i/t", "i//n" or "i/t/n": the vertex index is before the first slash.
                const std::string_view entry = tokens[k].substr(0, tokens[k].find('/'));
                std::int64_t index = 0;
                if (!parse_int(entry, index) || index == 0) {
                    fail(path, where,
                         std::string("expected a vertex index (1-based, or negative from the end) in ") +
                             (face ? "face" : "line") + " entry " + quoted(tokens[k]),
                         k_reexport_fix);
                }
                const std::int64_t num = static_cast<std::int64_t>(mesh.nodes.size());
                const std::int64_t zero_based = index > 0 ? index - 1 : num + index;
                if (zero_based < 0 || zero_based >= num) {
                    fail(path, where,
                         std::string(face ? "face" : "line") + " refers to vertex " + std::to_string(index) +
                             ", but only " + std::to_string(num) + " vertices are defined before this line",
                         "the file is inconsistent; re-export it");
                }
                polygon.push_back(static_cast<int>(zero_based));
            }
            const std::size_t least = face ? 3 : 2;
            if (polygon.size() < least) {
                fail(path, where,
                     "expected at least " + std::to_string(least) + " vertices in a " +
                         (face ? "face" : "line") + ", found " + std::to_string(polygon.size()),
                     k_reexport_fix);
            }
            if (face) {
                for (std::size_t k = 1; k + 1 < polygon.size(); ++k) {
                    mesh.tris.push_back({polygon[0], polygon[k], polygon[k + 1]});
                }
            } else { // a polyline: one segment per consecutive pair
                for (std::size_t k = 0; k + 1 < polygon.size(); ++k) {
                    mesh.segments.push_back({polygon[k], polygon[k + 1]});
                }
            }
        }
        // Other records (vt, vn, g, o, s, usemtl, mtllib, p, ...) carry nothing an obstacle needs (every
        // vertex is a contact point already).
    }
    if (mesh.nodes.empty()) {
        fail(path, "end of file", "no vertices ('v' lines)",
             "export the obstacle as .obj: triangles ('f'), segments ('l') or vertices alone (a point set)");
    }
    return mesh;
}

} // namespace intact::io::detail
