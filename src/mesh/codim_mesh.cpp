#include "src/mesh/codim_mesh.hpp"

#include "src/core/error.hpp"
#include "src/io/json_reader.hpp"
#include "src/io/mesh_reader.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace intact {

namespace {

double distance2(const Vec3& a, const Vec3& b) {
    double sum = 0.0;
    for (std::size_t k = 0; k < 3; ++k) {
        sum += (a[k] - b[k]) * (a[k] - b[k]);
    }
    return sum;
}

// Twice the area of triangle abc, squared.
double double_area2(const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const Vec3 v{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const Vec3 n{u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    return n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
}

// Keep the nodes some element uses, renumbered in their original order.
void drop_unused_nodes(CodimBodyMesh& mesh) {
    std::vector<int> index(mesh.nodes.size(), -1);
    for (const auto& t : mesh.elements.triangles) {
        for (const int n : t) {
            index[static_cast<std::size_t>(n)] = 0;
        }
    }
    for (const auto& s : mesh.elements.segments) {
        for (const int n : s) {
            index[static_cast<std::size_t>(n)] = 0;
        }
    }
    std::vector<Vec3> kept;
    for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
        if (index[n] == 0) {
            index[n] = static_cast<int>(kept.size());
            kept.push_back(mesh.nodes[n]);
        }
    }
    for (auto& t : mesh.elements.triangles) {
        for (int& n : t) {
            n = index[static_cast<std::size_t>(n)];
        }
    }
    for (auto& s : mesh.elements.segments) {
        for (int& n : s) {
            n = index[static_cast<std::size_t>(n)];
        }
    }
    mesh.nodes = std::move(kept);
}

} // namespace

CodimBodyMesh make_sheet_mesh(double length, double width, int cells_x, int cells_y) {
    CodimBodyMesh mesh;
    for (int j = 0; j <= cells_y; ++j) {
        for (int i = 0; i <= cells_x; ++i) {
            mesh.nodes.push_back({length * i / cells_x, width * j / cells_y, 0.0});
        }
    }
    const auto id = [&](int i, int j) { return i + (cells_x + 1) * j; };
    for (int j = 0; j < cells_y; ++j) {
        for (int i = 0; i < cells_x; ++i) {
            if ((i + j) % 2 == 0) {
                mesh.elements.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
                mesh.elements.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
            } else {
                mesh.elements.triangles.push_back({id(i, j), id(i + 1, j), id(i, j + 1)});
                mesh.elements.triangles.push_back({id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)});
            }
        }
    }
    return mesh;
}

CodimBodyMesh make_rod_mesh(const Vec3& start, const Vec3& end, int segments) {
    CodimBodyMesh mesh;
    for (int k = 0; k <= segments; ++k) {
        const double t = static_cast<double>(k) / segments;
        mesh.nodes.push_back({start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]),
                              start[2] + t * (end[2] - start[2])});
    }
    for (int k = 0; k < segments; ++k) {
        mesh.elements.segments.push_back({k, k + 1});
    }
    return mesh;
}

CodimBodyMesh load_codim_body(const io::Scene& scene, std::size_t b) {
    const io::Body& body = scene.bodies[b];
    const bool shell = body.type == io::BodyType::shell;
    const std::string key = "bodies[" + std::to_string(b) + "].mesh";
    const std::string label = "bodies[" + std::to_string(b) + "] ('" + body.name + "'" +
                              (body.mesh.is_generated() ? "" : ", mesh '" + body.mesh.file_as_written + "'") +
                              ")";
    const auto fail = [&](const std::string& problem, const std::string& fix) {
        throw InputError(io::input_error_message(scene.file, key, label + ": " + problem, fix));
    };

    // 1. Generated, or read (a shell keeps the file's triangles, a rod its segments).
    CodimBodyMesh mesh;
    if (body.mesh.is_sheet) {
        mesh = make_sheet_mesh(body.mesh.sheet_length, body.mesh.sheet_width, body.mesh.sheet_cells_x,
                               body.mesh.sheet_cells_y);
    } else if (body.mesh.is_rod) {
        mesh = make_rod_mesh(body.mesh.rod_start, body.mesh.rod_end, body.mesh.rod_segments);
    } else {
        TriMesh read;
        try {
            read = io::read_codim_mesh(body.mesh.file, shell ? io::CodimElementKind::triangles
                                                             : io::CodimElementKind::segments);
        } catch (const InputError& error) {
            throw InputError(io::input_error_message(scene.file, key + ".file", error.what(), ""));
        }
        mesh.nodes = std::move(read.nodes);
        if (shell) {
            mesh.elements.triangles = std::move(read.tris);
        } else {
            mesh.elements.segments = std::move(read.segments);
        }
        if (mesh.elements.triangles.empty() && mesh.elements.segments.empty()) {
            fail(shell ? "the file has no triangles" : "the file has no segments",
                 shell ? "give a triangle mesh (.obj faces 'f', .msh triangles) for a shell"
                       : "give a segment mesh (.obj lines 'l', .msh lines) for a rod");
        }
    }
    drop_unused_nodes(mesh);
    CodimElements& e = mesh.elements;
    e.triangle_body.assign(e.triangles.size(), static_cast<int>(b));
    e.segment_body.assign(e.segments.size(), static_cast<int>(b));

    // 2. Validate: finite coordinates, no degenerate element (relative to its own size).
    for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
        const Vec3& x = mesh.nodes[n];
        if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2])) {
            fail("node " + std::to_string(n) + " has a coordinate that is not a finite number",
                 "repair the mesh file");
        }
    }
    for (std::size_t t = 0; t < e.triangles.size(); ++t) {
        const auto& tri = e.triangles[t];
        const Vec3& a = mesh.nodes[static_cast<std::size_t>(tri[0])];
        const Vec3& bb = mesh.nodes[static_cast<std::size_t>(tri[1])];
        const Vec3& c = mesh.nodes[static_cast<std::size_t>(tri[2])];
        const double longest2 = std::max({distance2(a, bb), distance2(bb, c), distance2(c, a)});
        if (!(double_area2(a, bb, c) > 1e-24 * longest2 * longest2)) {
            fail("triangle " + std::to_string(t) + " (0-based) has zero area",
                 "remove degenerate faces from the mesh (or merge its collinear vertices)");
        }
    }
    for (std::size_t s = 0; s < e.segments.size(); ++s) {
        if (!(distance2(mesh.nodes[static_cast<std::size_t>(e.segments[s][0])],
                        mesh.nodes[static_cast<std::size_t>(e.segments[s][1])]) > 0.0)) {
            fail("segment " + std::to_string(s) + " (0-based) has zero length",
                 "remove the segment, or merge its two vertices into one point");
        }
    }

    // 3. Bending stencils.
    const CodimTopologyReport hinges = add_hinges(e);
    if (hinges.non_manifold_edges > 0) {
        fail(std::to_string(hinges.non_manifold_edges) + " edge(s) are shared by more than two triangles",
             "split the shell into bodies whose edges join at most two triangles");
    }
    add_rod_vertices(e); // junctions (3+ segments) bend freely: documented in docs/codim.md
    e.num_owned_triangles = static_cast<int>(e.triangles.size());
    e.num_owned_hinges = static_cast<int>(e.hinges.size());
    e.num_owned_segments = static_cast<int>(e.segments.size());
    e.num_owned_rod_vertices = static_cast<int>(e.rod_vertices.size());
    return mesh;
}

void append_codim_elements(CodimElements& all, const CodimElements& body, int node_offset) {
    const auto shifted = [node_offset](auto list) {
        for (auto& n : list) {
            n += node_offset;
        }
        return list;
    };
    for (std::size_t k = 0; k < body.triangles.size(); ++k) {
        all.triangles.push_back(shifted(body.triangles[k]));
        all.triangle_body.push_back(body.triangle_body[k]);
    }
    for (std::size_t k = 0; k < body.hinges.size(); ++k) {
        all.hinges.push_back(shifted(body.hinges[k]));
        all.hinge_body.push_back(body.hinge_body[k]);
    }
    for (std::size_t k = 0; k < body.segments.size(); ++k) {
        all.segments.push_back(shifted(body.segments[k]));
        all.segment_body.push_back(body.segment_body[k]);
    }
    for (std::size_t k = 0; k < body.rod_vertices.size(); ++k) {
        all.rod_vertices.push_back(shifted(body.rod_vertices[k]));
        all.rod_vertex_body.push_back(body.rod_vertex_body[k]);
    }
    all.num_owned_triangles = static_cast<int>(all.triangles.size());
    all.num_owned_hinges = static_cast<int>(all.hinges.size());
    all.num_owned_segments = static_cast<int>(all.segments.size());
    all.num_owned_rod_vertices = static_cast<int>(all.rod_vertices.size());
}

} // namespace intact
