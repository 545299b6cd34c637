/// @file surface.cpp
/// @brief Boundary extraction: sort the 4 faces of every tet by their sorted node triple; a face whose
/// triple occurs once is on the boundary.

#include "src/mesh/surface.hpp"

#include <algorithm>
#include <cstdint>

namespace intact {
namespace {

/// Local faces of a tet (v0, v1, v2, v3), each ordered so that (x1-x0)×(x2-x0) points away from the
/// opposite vertex when det[x1-x0, x2-x0, x3-x0] > 0. Face f is opposite vertex f.
constexpr int k_tet_faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

/// One face occurrence: its sorted node triple and where it came from (4 * tet + local face).
struct FaceKey {
    std::array<int, 3> sorted;
    std::int64_t id;
};

/// Append the undirected edges (smaller index first) and the nodes of closed polygons `items` (triangles;
/// a segment (a, b) gives the edge twice) to `surface`, unsorted.
template <std::size_t N>
void add_edges_and_vertices(const std::vector<std::array<int, N>>& items, Surface& surface) {
    for (const auto& item : items) {
        for (std::size_t k = 0; k < N; ++k) {
            const int a = item[k];
            const int b = item[(k + 1) % N];
            surface.edges.push_back({std::min(a, b), std::max(a, b)});
            surface.vertices.push_back(a);
        }
    }
}

/// Sort the edges and vertices of `surface` and drop repeats.
void sort_unique(Surface& surface) {
    std::sort(surface.edges.begin(), surface.edges.end());
    surface.edges.erase(std::unique(surface.edges.begin(), surface.edges.end()), surface.edges.end());
    std::sort(surface.vertices.begin(), surface.vertices.end());
    surface.vertices.erase(std::unique(surface.vertices.begin(), surface.vertices.end()),
                           surface.vertices.end());
}

} // namespace

Surface extract_surface(const TetMesh& mesh) {
    const std::size_t num_tets = mesh.tets.size();
    std::vector<FaceKey> faces(4 * num_tets);
    for (std::size_t t = 0; t < num_tets; ++t) {
        for (int f = 0; f < 4; ++f) {
            std::array<int, 3> key = {mesh.tets[t][k_tet_faces[f][0]], mesh.tets[t][k_tet_faces[f][1]],
                                      mesh.tets[t][k_tet_faces[f][2]]};
            std::sort(key.begin(), key.end());
            faces[4 * t + f] = {key, static_cast<std::int64_t>(4 * t + f)};
        }
    }
    std::sort(faces.begin(), faces.end(), [](const FaceKey& a, const FaceKey& b) {
        return a.sorted != b.sorted ? a.sorted < b.sorted : a.id < b.id;
    });

    // Faces met exactly once, in (tet, local face) order so the result does not depend on the sort.
    std::vector<std::int64_t> boundary;
    for (std::size_t i = 0; i < faces.size();) {
        std::size_t j = i + 1;
        while (j < faces.size() && faces[j].sorted == faces[i].sorted) {
            ++j;
        }
        if (j == i + 1) {
            boundary.push_back(faces[i].id);
        }
        i = j;
    }
    std::sort(boundary.begin(), boundary.end());

    Surface surface;
    surface.triangles.reserve(boundary.size());
    for (const std::int64_t id : boundary) {
        const auto& tet = mesh.tets[static_cast<std::size_t>(id / 4)];
        const int* local = k_tet_faces[id % 4];
        surface.triangles.push_back({tet[local[0]], tet[local[1]], tet[local[2]]});
    }

    surface.edges.reserve(3 * surface.triangles.size());
    surface.vertices.reserve(3 * surface.triangles.size());
    add_edges_and_vertices(surface.triangles, surface);
    sort_unique(surface);
    return surface;
}

Surface extract_surface(const TetMesh& mesh, const CodimElements& codim) {
    Surface surface = extract_surface(mesh);
    if (codim.triangles.empty() && codim.segments.empty()) {
        return surface;
    }
    surface.triangles.insert(surface.triangles.end(), codim.triangles.begin(), codim.triangles.end());
    add_edges_and_vertices(codim.triangles, surface);
    add_edges_and_vertices(codim.segments, surface);
    sort_unique(surface);
    return surface;
}

} // namespace intact
