// Box generator and boundary extraction: counts, positive volumes, closed 2-manifold surfaces with the
// right Euler characteristic, outward orientation (divergence theorem), agreement with the surfaces
// stored in the shared meshes.
#include "src/io/mesh_reader.hpp"
#include "src/mesh/box_mesh.hpp"
#include "src/mesh/surface.hpp"

#include "src/core/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using intact::Surface;
using intact::TetMesh;
using intact::Vec3;

Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

double tet_volume(const TetMesh& mesh, const std::array<int, 4>& t) {
    const Vec3& x0 = mesh.nodes[t[0]];
    return dot(sub(mesh.nodes[t[1]], x0), cross(sub(mesh.nodes[t[2]], x0), sub(mesh.nodes[t[3]], x0))) / 6.0;
}

double total_volume(const TetMesh& mesh) {
    double sum = 0.0;
    for (const auto& t : mesh.tets) {
        sum += tet_volume(mesh, t);
    }
    return sum;
}

/// Volume enclosed by the surface by the divergence theorem: sum of x0·(x1×x2)/6. Positive only when
/// the triangles face outward.
double enclosed_volume(const TetMesh& mesh, const Surface& surface) {
    double sum = 0.0;
    for (const auto& tri : surface.triangles) {
        sum += dot(mesh.nodes[tri[0]], cross(mesh.nodes[tri[1]], mesh.nodes[tri[2]])) / 6.0;
    }
    return sum;
}

/// Union-find over surface vertices; returns the component of every triangle (0-based, dense).
std::vector<int> triangle_components(const Surface& surface, int num_nodes, int& num_components) {
    std::vector<int> parent(num_nodes);
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&](int v) {
        while (parent[v] != v) {
            v = parent[v] = parent[parent[v]];
        }
        return v;
    };
    for (const auto& tri : surface.triangles) {
        parent[find(tri[1])] = find(tri[0]);
        parent[find(tri[2])] = find(tri[0]);
    }
    std::map<int, int> dense;
    std::vector<int> component;
    for (const auto& tri : surface.triangles) {
        component.push_back(dense.emplace(find(tri[0]), static_cast<int>(dense.size())).first->second);
    }
    num_components = static_cast<int>(dense.size());
    return component;
}

/// Euler characteristic V - E + F of every connected component of the surface.
std::vector<int> euler_characteristics(const TetMesh& mesh, const Surface& surface) {
    int num_components = 0;
    const std::vector<int> component =
        triangle_components(surface, static_cast<int>(mesh.nodes.size()), num_components);
    std::vector<std::set<int>> vertices(num_components);
    std::vector<std::set<std::array<int, 2>>> edges(num_components);
    std::vector<int> faces(num_components, 0);
    for (std::size_t t = 0; t < surface.triangles.size(); ++t) {
        const auto& tri = surface.triangles[t];
        const int c = component[t];
        ++faces[c];
        for (int k = 0; k < 3; ++k) {
            vertices[c].insert(tri[k]);
            edges[c].insert({std::min(tri[k], tri[(k + 1) % 3]), std::max(tri[k], tri[(k + 1) % 3])});
        }
    }
    std::vector<int> chi;
    for (int c = 0; c < num_components; ++c) {
        chi.push_back(static_cast<int>(vertices[c].size()) - static_cast<int>(edges[c].size()) + faces[c]);
    }
    return chi;
}

/// The invariants every closed, outward surface of a positively oriented mesh satisfies.
void expect_closed_outward_surface(const TetMesh& mesh, const Surface& surface) {
    ASSERT_FALSE(surface.triangles.empty());
    // Edges and vertices: sorted, unique, exactly those of the triangles.
    std::set<std::array<int, 2>> edge_set;
    std::set<int> vertex_set;
    std::map<std::array<int, 2>, int> directed; // each directed edge once: consistent orientation
    std::map<std::array<int, 2>, int> faces_per_edge;
    for (const auto& tri : surface.triangles) {
        for (int k = 0; k < 3; ++k) {
            const int a = tri[k];
            const int b = tri[(k + 1) % 3];
            edge_set.insert({std::min(a, b), std::max(a, b)});
            vertex_set.insert(a);
            ++directed[{a, b}];
            ++faces_per_edge[{std::min(a, b), std::max(a, b)}];
        }
    }
    EXPECT_EQ(surface.edges, (std::vector<std::array<int, 2>>(edge_set.begin(), edge_set.end())));
    EXPECT_EQ(surface.vertices, std::vector<int>(vertex_set.begin(), vertex_set.end()));
    for (const auto& [edge, count] : faces_per_edge) {
        EXPECT_EQ(count, 2) << "edge " << edge[0] << "-" << edge[1];
    }
    for (const auto& [edge, count] : directed) {
        EXPECT_EQ(count, 1) << "directed edge " << edge[0] << "->" << edge[1]
                            << " (inconsistent orientation)";
    }
    const double volume = total_volume(mesh);
    EXPECT_GT(volume, 0.0);
    EXPECT_NEAR(enclosed_volume(mesh, surface), volume, 1e-9 * std::max(1.0, volume));
}

// -- box generator --------------------------------------------------------------------------------

TEST(BoxMesh, CountsVolumesAndNodeOrder) {
    const Vec3 lo = {-1.0, 0.5, 2.0};
    const Vec3 hi = {2.0, 1.5, 4.5};
    const std::array<int, 3> cells = {3, 2, 5};
    const TetMesh mesh = intact::make_box_mesh(lo, hi, cells);
    ASSERT_EQ(mesh.nodes.size(), 4u * 3u * 6u);
    ASSERT_EQ(mesh.tets.size(), 6u * 3u * 2u * 5u);
    const double cell_volume = (3.0 / 3) * (1.0 / 2) * (2.5 / 5);
    for (const auto& t : mesh.tets) {
        EXPECT_NEAR(tet_volume(mesh, t), cell_volume / 6.0, 1e-14);
    }
    EXPECT_NEAR(total_volume(mesh), 3.0 * 1.0 * 2.5, 1e-12);
    // x fastest, then y, then z; corners exactly on the box.
    EXPECT_EQ(mesh.nodes[0], lo);
    EXPECT_EQ(mesh.nodes[1], (Vec3{0.0, 0.5, 2.0}));
    EXPECT_EQ(mesh.nodes[4], (Vec3{-1.0, 1.0, 2.0}));
    EXPECT_EQ(mesh.nodes.back(), hi);
}

TEST(BoxMesh, ConformingClosedSurface) {
    const std::array<int, 3> cells = {3, 4, 2};
    const TetMesh mesh = intact::make_box_mesh({0, 0, 0}, {1, 2, 3}, cells);
    const Surface surface = intact::extract_surface(mesh);
    // A conforming mesh has only box faces on its boundary: 2 triangles per boundary quad.
    const int nx = cells[0], ny = cells[1], nz = cells[2];
    EXPECT_EQ(surface.triangles.size(), static_cast<std::size_t>(4 * (nx * ny + ny * nz + nx * nz)));
    EXPECT_EQ(surface.vertices.size(),
              static_cast<std::size_t>((nx + 1) * (ny + 1) * (nz + 1) - (nx - 1) * (ny - 1) * (nz - 1)));
    expect_closed_outward_surface(mesh, surface);
    EXPECT_EQ(euler_characteristics(mesh, surface), std::vector<int>{2});
    // Every triangle lies on a box face and faces out of it.
    for (const auto& tri : surface.triangles) {
        const Vec3& x0 = mesh.nodes[tri[0]];
        const Vec3 n = cross(sub(mesh.nodes[tri[1]], x0), sub(mesh.nodes[tri[2]], x0));
        const Vec3 c = {(x0[0] + mesh.nodes[tri[1]][0] + mesh.nodes[tri[2]][0]) / 3.0,
                        (x0[1] + mesh.nodes[tri[1]][1] + mesh.nodes[tri[2]][1]) / 3.0,
                        (x0[2] + mesh.nodes[tri[1]][2] + mesh.nodes[tri[2]][2]) / 3.0};
        const Vec3 centre = {0.5, 1.0, 1.5};
        EXPECT_GT(dot(n, sub(c, centre)), 0.0);
    }
}

TEST(BoxMesh, RejectsBadInput) {
    EXPECT_THROW(intact::make_box_mesh({0, 0, 0}, {1, 1, 1}, {0, 1, 1}), intact::InputError);
    EXPECT_THROW(intact::make_box_mesh({0, 0, 0}, {1, 0, 1}, {1, 1, 1}), intact::InputError);
}

// -- surface extraction ---------------------------------------------------------------------------

TEST(Surface, SingleTet) {
    TetMesh mesh;
    mesh.nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    mesh.tets = {{0, 1, 2, 3}};
    const Surface surface = intact::extract_surface(mesh);
    const std::vector<std::array<int, 3>> expected = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    EXPECT_EQ(surface.triangles, expected);
    EXPECT_EQ(surface.edges.size(), 6u);
    EXPECT_EQ(surface.vertices, (std::vector<int>{0, 1, 2, 3}));
    expect_closed_outward_surface(mesh, surface);
}

TEST(Surface, InteriorFacesRemovedAndComponentsCounted) {
    // Two tets sharing a face, plus a separate tet: 6 + 4 triangles, two spheres.
    TetMesh mesh;
    mesh.nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1},
                  {5, 0, 0}, {6, 0, 0}, {5, 1, 0}, {5, 0, 1}};
    mesh.tets = {{0, 1, 2, 3}, {1, 2, 3, 4}, {5, 6, 7, 8}};
    ASSERT_GT(tet_volume(mesh, mesh.tets[1]), 0.0);
    const Surface surface = intact::extract_surface(mesh);
    EXPECT_EQ(surface.triangles.size(), 10u);
    for (const auto& tri : surface.triangles) {
        std::array<int, 3> sorted = tri;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_NE(sorted, (std::array<int, 3>{1, 2, 3})) << "the shared face is interior";
    }
    expect_closed_outward_surface(mesh, surface);
    EXPECT_EQ(euler_characteristics(mesh, surface), (std::vector<int>{2, 2}));
    // Deterministic: the same input gives the same output, tet order decides triangle order.
    const Surface again = intact::extract_surface(mesh);
    EXPECT_EQ(again.triangles, surface.triangles);
    EXPECT_EQ(again.edges, surface.edges);
}

TEST(Surface, EmptyMesh) {
    const Surface surface = intact::extract_surface(TetMesh{});
    EXPECT_TRUE(surface.triangles.empty());
    EXPECT_TRUE(surface.edges.empty());
    EXPECT_TRUE(surface.vertices.empty());
}

/// The "$Surface" section some shared meshes carry (1-based triangles), each rotated to start at its
/// smallest index so triangles compare independently of their starting vertex.
std::vector<std::array<int, 3>> stored_surface(const fs::path& path) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line) && line.rfind("$Surface", 0) != 0) {
    }
    std::size_t count = 0;
    std::vector<std::array<int, 3>> tris;
    if (!(in >> count)) {
        return tris;
    }
    for (std::size_t i = 0; i < count; ++i) {
        std::array<int, 3> t{};
        in >> t[0] >> t[1] >> t[2];
        for (int& v : t) {
            --v;
        }
        std::rotate(t.begin(), std::min_element(t.begin(), t.end()), t.end());
        tris.push_back(t);
    }
    std::sort(tris.begin(), tris.end());
    return tris;
}

TEST(Surface, SharedMeshes) {
    const fs::path dir = fs::path(INTACT_SHARED_DATA_DIR) / "meshes";
    if (!fs::is_directory(dir)) {
        GTEST_SKIP() << "shared meshes not found at " << dir << " (optional test data)";
    }
    const std::map<std::string, std::vector<int>> known_euler = {
        {"tet.msh", {2}}, {"cube.msh", {2}}, {"sphere1K.msh", {2}}, {"torus.msh", {0}}};
    int checked = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".msh") {
            continue;
        }
        const std::string name = entry.path().filename().string();
        SCOPED_TRACE(name);
        const TetMesh mesh = intact::io::read_tet_mesh(entry.path().string());
        const Surface surface = intact::extract_surface(mesh);
        expect_closed_outward_surface(mesh, surface);
        const auto known = known_euler.find(name);
        if (known != known_euler.end()) {
            EXPECT_EQ(euler_characteristics(mesh, surface), known->second);
            ++checked;
        }
        // Where the file stores its surface, ours is the same set of outward triangles.
        const std::vector<std::array<int, 3>> stored = stored_surface(entry.path());
        if (!stored.empty()) {
            std::vector<std::array<int, 3>> ours;
            for (auto t : surface.triangles) {
                std::rotate(t.begin(), std::min_element(t.begin(), t.end()), t.end());
                ours.push_back(t);
            }
            std::sort(ours.begin(), ours.end());
            EXPECT_EQ(ours, stored);
        }
    }
    EXPECT_EQ(checked, static_cast<int>(known_euler.size()))
        << "some of tet, cube, sphere1K, torus are missing";
}

} // namespace
