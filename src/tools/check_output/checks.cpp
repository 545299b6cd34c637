/// @file checks.cpp
/// @brief The checks of one merged step: inverted or flat tets, intersecting boundary triangles, body
/// triangles meeting mesh obstacles, obstacle vertices inside bodies, body vertices on or behind
/// planes and pairs closer than their contact offsets, each counted with up to five examples (declared in
/// checks.hpp; surface_triangles_meet in check_output.hpp).

#include "src/tools/check_output/checks.hpp"

#include "kernels/pair_distance.hpp"
#include "src/mesh/surface.hpp"
#include "src/tools/check_output/broad_phase.hpp"
#include "src/tools/check_output/predicates.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace intact::tools::detail {
namespace {

constexpr std::size_t k_max_examples = 5;

/// Whether two boundary triangles (node indices into `x`) meet in a way that is not mere adjacency; see
/// the header for the rule.
bool boundary_triangles_meet(const std::array<int, 3>& s,
                             const std::array<int, 3>& t,
                             const std::vector<Vec3>& x) {
    // Items may be degenerate: a rod segment (a, b, b). Shared nodes are counted once per distinct node.
    const auto distinct = [](const std::array<int, 3>& item) {
        std::array<int, 3> nodes = item;
        int count = 1;
        for (int k = 1; k < 3; ++k) {
            bool seen = false;
            for (int j = 0; j < count; ++j) {
                seen = seen || nodes[j] == item[k];
            }
            if (!seen) {
                nodes[count++] = item[k];
            }
        }
        return std::make_pair(nodes, count);
    };
    const auto [s_nodes, s_count] = distinct(s);
    const auto [t_nodes, t_count] = distinct(t);
    int shared = 0;
    int shared_node = -1;
    for (int a = 0; a < s_count; ++a) {
        for (int b = 0; b < t_count; ++b) {
            if (s_nodes[a] == t_nodes[b]) {
                ++shared;
                shared_node = s_nodes[a];
            }
        }
    }
    const auto at = [&](int node) -> const Vec3& { return x[static_cast<std::size_t>(node)]; };
    if (shared >= 2) {
        return false;
    }
    if (shared == 1) {
        // What is left of each item without the shared node (the opposite edge of a triangle, the far end
        // of a segment) must not meet the other item.
        const auto rest = [&](const std::array<int, 3>& nodes, int count) {
            std::array<int, 3> out{};
            int n = 0;
            for (int k = 0; k < count; ++k) {
                if (nodes[k] != shared_node) {
                    out[n++] = nodes[k];
                }
            }
            for (int k = n; k < 3; ++k) {
                out[k] = out[n - 1];
            }
            return out;
        };
        const auto s_rest = rest(s_nodes, s_count);
        const auto t_rest = rest(t_nodes, t_count);
        return triangles_intersect({at(s_rest[0]), at(s_rest[1]), at(s_rest[2])},
                                   {at(t[0]), at(t[1]), at(t[2])}) ||
               triangles_intersect({at(t_rest[0]), at(t_rest[1]), at(t_rest[2])},
                                   {at(s[0]), at(s[1]), at(s[2])});
    }
    return triangles_intersect({at(s[0]), at(s[1]), at(s[2])}, {at(t[0]), at(t[1]), at(t[2])});
}

std::string describe_triangle(const SceneMesh& scene, const std::array<int, 3>& tri) {
    std::ostringstream out;
    out << body_text(scene, scene.node_body[static_cast<std::size_t>(tri[0])]);
    if (tri[1] == tri[2]) {
        out << " segment (" << scene.node_id[static_cast<std::size_t>(tri[0])] << ", "
            << scene.node_id[static_cast<std::size_t>(tri[1])] << ")";
        return out.str();
    }
    out << " triangle (" << scene.node_id[static_cast<std::size_t>(tri[0])] << ", "
        << scene.node_id[static_cast<std::size_t>(tri[1])] << ", "
        << scene.node_id[static_cast<std::size_t>(tri[2])] << ")";
    return out.str();
}

/// Adds the bounding box of triangle (a, b, c) to `boxes` unless a vertex is not finite.
bool add_box(const Vec3& a, const Vec3& b, const Vec3& c, std::vector<Box>& boxes) {
    if (!finite(a) || !finite(b) || !finite(c)) {
        return false;
    }
    Box box;
    for (int k = 0; k < 3; ++k) {
        box.lo[k] = std::min({a[k], b[k], c[k]});
        box.hi[k] = std::max({a[k], b[k], c[k]});
    }
    boxes.push_back(box);
    return true;
}

/// The parts of a mesh obstacle as (possibly degenerate) triangles: its triangles, then its segments
/// (a, b, b), then its vertices in no triangle or segment (p, p, p). triangles_intersect is exact for
/// degenerate triangles too, so one test covers triangle, segment and point contact.
std::vector<std::array<int, 3>> obstacle_items(const TriMesh& mesh) {
    std::vector<std::array<int, 3>> items = mesh.tris;
    std::vector<char> used(mesh.nodes.size(), 0);
    for (const auto& t : mesh.tris) {
        for (const int n : t) {
            used[static_cast<std::size_t>(n)] = 1;
        }
    }
    for (const auto& e : mesh.segments) {
        items.push_back({e[0], e[1], e[1]});
        used[static_cast<std::size_t>(e[0])] = used[static_cast<std::size_t>(e[1])] = 1;
    }
    for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
        if (!used[n]) {
            items.push_back({static_cast<int>(n), static_cast<int>(n), static_cast<int>(n)});
        }
    }
    return items;
}

/// "triangle i", "segment i" (0-based among the 'l' segments) or "point v" (0-based vertex index).
std::string obstacle_item_name(const TriMesh& mesh, int item) {
    const int triangles = static_cast<int>(mesh.tris.size());
    const int segments = static_cast<int>(mesh.segments.size());
    if (item < triangles) {
        return "triangle " + std::to_string(item);
    }
    if (item < triangles + segments) {
        return "segment " + std::to_string(item - triangles);
    }
    return "point " + std::to_string(obstacle_items(mesh)[static_cast<std::size_t>(item)][0]);
}

/// Whether x lies in the closed tet (a, b, c, d) of positive orientation. Exact.
bool in_closed_tet(const Vec3& x, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    return orient3d(x, b, c, d) >= 0 && orient3d(a, x, c, d) >= 0 && orient3d(a, b, x, d) >= 0 &&
           orient3d(a, b, c, x) >= 0;
}

/// Closer than its offset ξ by more than this share of ξ: a contact offset violation.
constexpr double k_offset_tolerance = 1e-6;

/// One item of the offset check: a triangle, a segment or a point (1 to 3 distinct nodes), its offset
/// and where it comes from. Body nodes are their scene index; obstacle nodes are −1 − a running index, so
/// that only items of the same body or obstacle share nodes.
struct OffsetItem {
    std::array<Vec3, 3> x{};
    std::array<long long, 3> node{};
    int count = 0;
    double offset = 0.0;
    int body_item = -1;          ///< index among the body items, or −1
    int obstacle = -1, item = 0; ///< obstacles[obstacle], its item `item` (obstacle_items)
};

bool has_node(const OffsetItem& item, long long node) {
    for (int k = 0; k < item.count; ++k) {
        if (item.node[static_cast<std::size_t>(k)] == node) {
            return true;
        }
    }
    return false;
}

/// The smallest distance of the pairs the simulator forms between two items (contact_surface.hpp):
/// a vertex of one and the other when it is a triangle, and two edges (segments), sharing no node; +∞
/// when there is none.
double offset_pair_distance(const OffsetItem& a, const OffsetItem& b) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [p, t] : {std::make_pair(&a, &b), std::make_pair(&b, &a)}) {
        if (t->count != 3) {
            continue;
        }
        const kernels::Vec3 t0 = kernels::from_array(t->x[0]), t1 = kernels::from_array(t->x[1]),
                            t2 = kernels::from_array(t->x[2]);
        for (int k = 0; k < p->count; ++k) {
            if (has_node(*t, p->node[static_cast<std::size_t>(k)])) {
                continue;
            }
            const kernels::Vec3 q = kernels::from_array(p->x[static_cast<std::size_t>(k)]);
            best = std::min(best, std::sqrt(kernels::point_triangle_distance(
                                      q, t0, t1, t2, kernels::point_triangle_case(q, t0, t1, t2))));
        }
    }
    const auto edges = [](const OffsetItem& item) { return item.count == 3 ? 3 : (item.count == 2 ? 1 : 0); };
    for (int i = 0; i < edges(a); ++i) {
        const auto a0 = static_cast<std::size_t>(i), a1 = static_cast<std::size_t>((i + 1) % a.count);
        for (int j = 0; j < edges(b); ++j) {
            const auto b0 = static_cast<std::size_t>(j), b1 = static_cast<std::size_t>((j + 1) % b.count);
            if (b.node[b0] == a.node[a1] || b.node[b1] == a.node[a1] || b.node[b0] == a.node[a0] ||
                b.node[b1] == a.node[a0]) {
                continue;
            }
            const kernels::Vec3 p0 = kernels::from_array(a.x[a0]), p1 = kernels::from_array(a.x[a1]),
                                q0 = kernels::from_array(b.x[b0]), q1 = kernels::from_array(b.x[b1]);
            best = std::min(best, std::sqrt(kernels::edge_edge_distance(
                                      p0, p1, q0, q1, kernels::edge_edge_case(p0, p1, q0, q1))));
        }
    }
    return best;
}

/// The contact offset check (check_output.hpp): body items (`items`, node indices into x) and the mesh
/// obstacles' items at `time` against each other, body nodes against planes. Counts into
/// report.offset_pairs, examples into `examples`.
void check_offsets(const SceneMesh& scene,
                   const std::vector<std::array<int, 3>>& items,
                   const std::vector<Obstacle>& obstacles,
                   const std::vector<std::vector<Vec3>>& obstacle_nodes,
                   double time,
                   StepReport& report,
                   std::vector<std::string>& examples) {
    const std::vector<Vec3>& x = scene.mesh.nodes;
    const auto node_offset = [&](int node) {
        const auto body = static_cast<std::size_t>(scene.node_body[static_cast<std::size_t>(node)]);
        return body < scene.body_offsets.size() ? scene.body_offsets[body] : 0.0;
    };
    std::vector<OffsetItem> all;
    bool any = false;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& tri = items[i];
        OffsetItem item;
        item.body_item = static_cast<int>(i);
        item.offset = node_offset(tri[0]);
        any = any || item.offset > 0.0;
        for (const int n : tri) {
            if (!has_node(item, n)) {
                item.x[static_cast<std::size_t>(item.count)] = x[static_cast<std::size_t>(n)];
                item.node[static_cast<std::size_t>(item.count++)] = n;
            }
        }
        all.push_back(item);
    }
    if (!any) {
        return;
    }
    long long next_obstacle_node = 0;
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        if (obstacles[k].is_plane) {
            continue;
        }
        const auto parts = obstacle_items(obstacles[k].mesh);
        for (std::size_t i = 0; i < parts.size(); ++i) {
            OffsetItem item;
            item.obstacle = static_cast<int>(k);
            item.item = static_cast<int>(i);
            for (const int n : parts[i]) {
                if (!has_node(item, -1 - next_obstacle_node - n)) {
                    item.x[static_cast<std::size_t>(item.count)] =
                        obstacle_nodes[k][static_cast<std::size_t>(n)];
                    item.node[static_cast<std::size_t>(item.count++)] = -1 - next_obstacle_node - n;
                }
            }
            all.push_back(item);
        }
        next_obstacle_node += static_cast<long long>(obstacles[k].mesh.nodes.size());
    }
    // Boxes grown by each item's own offset meet when the items come within the sum of their offsets.
    std::vector<Box> boxes;
    std::vector<int> box_item;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const OffsetItem& item = all[i];
        if (!add_box(item.x[0], item.x[item.count > 1 ? 1 : 0],
                     item.x[static_cast<std::size_t>(item.count - 1)], boxes)) {
            continue;
        }
        for (int c = 0; c < 3; ++c) {
            boxes.back().lo[c] -= item.offset;
            boxes.back().hi[c] += item.offset;
        }
        box_item.push_back(static_cast<int>(i));
    }
    const auto describe = [&](const OffsetItem& item) {
        if (item.body_item >= 0) {
            return describe_triangle(scene, items[static_cast<std::size_t>(item.body_item)]);
        }
        return "obstacles[" + std::to_string(item.obstacle) + "] (mesh) " +
               obstacle_item_name(obstacles[static_cast<std::size_t>(item.obstacle)].mesh, item.item);
    };
    for_each_overlapping_pair(boxes, [&](int i, int j) {
        const OffsetItem& a = all[static_cast<std::size_t>(box_item[static_cast<std::size_t>(i)])];
        const OffsetItem& b = all[static_cast<std::size_t>(box_item[static_cast<std::size_t>(j)])];
        const double offset = a.offset + b.offset;
        if (!(offset > 0.0) || (a.body_item < 0 && b.body_item < 0)) {
            return;
        }
        const double distance = offset_pair_distance(a, b);
        if (!(distance < (1.0 - k_offset_tolerance) * offset)) {
            return;
        }
        ++report.offset_pairs;
        if (examples.size() < k_max_examples) {
            std::ostringstream out;
            out << describe(a) << " is " << distance << " m from " << describe(b)
                << ", closer than their contact offsets " << offset << " m";
            examples.push_back(out.str());
        }
    });
    // Planes: every node of an item with an offset, at least its offset on the free side.
    std::vector<int> nodes;
    for (const auto& tri : items) {
        if (node_offset(tri[0]) > 0.0) {
            nodes.insert(nodes.end(), tri.begin(), tri.end());
        }
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        const Obstacle& plane = obstacles[k];
        if (!plane.is_plane) {
            continue;
        }
        const Vec3 point = plane.at(plane.point, time);
        const double length =
            std::sqrt(plane.normal[0] * plane.normal[0] + plane.normal[1] * plane.normal[1] +
                      plane.normal[2] * plane.normal[2]);
        for (const int node : nodes) {
            const Vec3& p = x[static_cast<std::size_t>(node)];
            const double distance =
                ((p[0] - point[0]) * plane.normal[0] + (p[1] - point[1]) * plane.normal[1] +
                 (p[2] - point[2]) * plane.normal[2]) /
                length;
            const double offset = node_offset(node);
            if (!finite(p) || !(distance > 0.0) || !(distance < (1.0 - k_offset_tolerance) * offset)) {
                continue; // non-finite or behind: reported by the other checks
            }
            ++report.offset_pairs;
            if (examples.size() < k_max_examples) {
                std::ostringstream out;
                out << body_text(scene, scene.node_body[static_cast<std::size_t>(node)]) << " node "
                    << scene.node_id[static_cast<std::size_t>(node)] << " is " << distance
                    << " m from obstacles[" << k << "] (plane), closer than its contact offset " << offset
                    << " m";
                examples.push_back(out.str());
            }
        }
    }
}

} // namespace

void check_scene(const SceneMesh& scene,
                 const std::vector<Obstacle>& obstacles,
                 double time,
                 StepReport& report) {
    const std::vector<Vec3>& x = scene.mesh.nodes;
    std::vector<std::string> tet_examples;
    for (std::size_t t = 0; t < scene.mesh.tets.size(); ++t) {
        const auto& tet = scene.mesh.tets[t];
        const Vec3& x0 = x[static_cast<std::size_t>(tet[0])];
        const Vec3& x1 = x[static_cast<std::size_t>(tet[1])];
        const Vec3& x2 = x[static_cast<std::size_t>(tet[2])];
        const Vec3& x3 = x[static_cast<std::size_t>(tet[3])];
        const bool defined = finite(x0) && finite(x1) && finite(x2) && finite(x3);
        const int orientation = defined ? orient3d(x0, x1, x2, x3) : 0;
        if (defined && orientation > 0) {
            continue;
        }
        ++report.inverted_tets;
        if (tet_examples.size() < k_max_examples) {
            std::ostringstream out;
            out << body_text(scene, scene.tet_body[t]) << " tet " << scene.tet_id[t] << " (nodes "
                << scene.node_id[static_cast<std::size_t>(tet[0])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[1])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[2])] << ", "
                << scene.node_id[static_cast<std::size_t>(tet[3])] << ") is "
                << (!defined          ? "undefined (non-finite node position)"
                    : orientation < 0 ? "inverted"
                                      : "flat");
            tet_examples.push_back(out.str());
        }
    }

    // One broad phase over the body's boundary triangles followed by every obstacle triangle (at `time`);
    // box i < num_body is body triangle box_triangle[i], box i >= num_body is obstacle triangle
    // box_triangle[i] of obstacles[box_obstacle[i - num_body]].
    // The body items: the solids' boundary triangles, the shells' triangles (both sides: an intersection
    // test has no side) and the rods' segments as degenerate triangles (a, b, b), for which
    // triangles_intersect is exact too.
    Surface surface = extract_surface(scene.mesh);
    surface.triangles.insert(surface.triangles.end(), scene.shell_triangles.begin(),
                             scene.shell_triangles.end());
    for (const auto& segment : scene.rod_segments) {
        surface.triangles.push_back({segment[0], segment[1], segment[1]});
    }
    std::vector<Box> boxes;
    std::vector<int> box_triangle;
    boxes.reserve(surface.triangles.size());
    box_triangle.reserve(surface.triangles.size());
    for (std::size_t i = 0; i < surface.triangles.size(); ++i) {
        const auto& tri = surface.triangles[i];
        if (add_box(x[static_cast<std::size_t>(tri[0])], x[static_cast<std::size_t>(tri[1])],
                    x[static_cast<std::size_t>(tri[2])], boxes)) {
            box_triangle.push_back(static_cast<int>(i));
        } // else its tet is reported above
    }
    const std::size_t num_body = boxes.size();
    std::vector<std::vector<Vec3>> obstacle_nodes(obstacles.size()); // mesh obstacles at `time`
    std::vector<int> box_obstacle;
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        const Obstacle& obstacle = obstacles[k];
        if (obstacle.is_plane) {
            continue;
        }
        std::vector<Vec3>& y = obstacle_nodes[k];
        y.reserve(obstacle.mesh.nodes.size());
        for (const Vec3& rest : obstacle.mesh.nodes) {
            y.push_back(obstacle.at(rest, time));
        }
        const auto items = obstacle_items(obstacle.mesh);
        for (std::size_t i = 0; i < items.size(); ++i) {
            const auto& tri = items[i];
            if (add_box(y[static_cast<std::size_t>(tri[0])], y[static_cast<std::size_t>(tri[1])],
                        y[static_cast<std::size_t>(tri[2])], boxes)) {
                box_triangle.push_back(static_cast<int>(i));
                box_obstacle.push_back(static_cast<int>(k));
            }
        }
    }
    std::vector<std::string> obstacle_examples;
    for_each_overlapping_pair(boxes, [&](int i, int j) {
        if (static_cast<std::size_t>(i) >= num_body) {
            return; // two obstacle triangles (i < j)
        }
        const auto& s =
            surface.triangles[static_cast<std::size_t>(box_triangle[static_cast<std::size_t>(i)])];
        if (static_cast<std::size_t>(j) >= num_body) {
            const int k = box_obstacle[static_cast<std::size_t>(j) - num_body];
            const int o = box_triangle[static_cast<std::size_t>(j)];
            const TriMesh& mesh = obstacles[static_cast<std::size_t>(k)].mesh;
            const auto tri = obstacle_items(mesh)[static_cast<std::size_t>(o)];
            const std::vector<Vec3>& y = obstacle_nodes[static_cast<std::size_t>(k)];
            const auto at = [](const std::vector<Vec3>& p, int node) {
                return p[static_cast<std::size_t>(node)];
            };
            if (!triangles_intersect({at(x, s[0]), at(x, s[1]), at(x, s[2])},
                                     {at(y, tri[0]), at(y, tri[1]), at(y, tri[2])})) {
                return;
            }
            ++report.obstacle_triangle_pairs;
            if (obstacle_examples.size() < k_max_examples) {
                obstacle_examples.push_back(describe_triangle(scene, s) + " meets obstacles[" +
                                            std::to_string(k) + "] (mesh) " + obstacle_item_name(mesh, o));
            }
            return;
        }
        const auto& t =
            surface.triangles[static_cast<std::size_t>(box_triangle[static_cast<std::size_t>(j)])];
        if (!boundary_triangles_meet(s, t, x)) {
            return;
        }
        ++report.intersecting_pairs;
        if (report.examples.size() < k_max_examples) {
            report.examples.push_back(describe_triangle(scene, s) + " meets " + describe_triangle(scene, t));
        }
    });

    // Planes: the body's boundary triangles are the convex hulls of their vertices, so the body is strictly
    // on the free side iff every boundary vertex is.
    std::vector<std::string> plane_examples;
    std::vector<int> surface_nodes;
    for (const auto& tri : surface.triangles) {
        surface_nodes.insert(surface_nodes.end(), tri.begin(), tri.end());
    }
    std::sort(surface_nodes.begin(), surface_nodes.end());
    surface_nodes.erase(std::unique(surface_nodes.begin(), surface_nodes.end()), surface_nodes.end());
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
        const Obstacle& plane = obstacles[k];
        if (!plane.is_plane) {
            continue;
        }
        const Vec3 point = plane.at(plane.point, time);
        const double length =
            std::sqrt(plane.normal[0] * plane.normal[0] + plane.normal[1] * plane.normal[1] +
                      plane.normal[2] * plane.normal[2]);
        for (const int node : surface_nodes) {
            const Vec3& p = x[static_cast<std::size_t>(node)];
            if (!finite(p)) {
                continue; // its tet is reported above
            }
            const int side = plane_side(p, point, plane.normal);
            if (side > 0) {
                continue;
            }
            ++report.vertices_behind_planes;
            if (plane_examples.size() < k_max_examples) {
                const double distance =
                    ((p[0] - point[0]) * plane.normal[0] + (p[1] - point[1]) * plane.normal[1] +
                     (p[2] - point[2]) * plane.normal[2]) /
                    length;
                std::ostringstream out;
                out << body_text(scene, scene.node_body[static_cast<std::size_t>(node)]) << " node "
                    << scene.node_id[static_cast<std::size_t>(node)] << " at (" << p[0] << ", " << p[1]
                    << ", " << p[2] << ") is ";
                if (side == 0) {
                    out << "on";
                } else if (distance < 0.0) {
                    out << -distance << " m behind";
                } else {
                    out << "behind (by less than the rounding error)";
                }
                out << " obstacles[" << k << "] (plane)";
                plane_examples.push_back(out.str());
            }
        }
    }
    // Mesh obstacle vertices inside a body: a point or a short pin can pass a surface between two output
    // steps and end up wholly inside. One broad phase over the tets followed by the vertices.
    std::vector<std::string> inside_examples;
    {
        std::vector<Box> volume;
        std::vector<int> tet_of;
        for (std::size_t t = 0; t < scene.mesh.tets.size(); ++t) {
            const auto& tet = scene.mesh.tets[t];
            Box box{x[static_cast<std::size_t>(tet[0])], x[static_cast<std::size_t>(tet[0])]};
            bool ok = true;
            for (const int n : tet) {
                const Vec3& p = x[static_cast<std::size_t>(n)];
                ok = ok && finite(p);
                for (int c = 0; c < 3; ++c) {
                    box.lo[c] = std::min(box.lo[c], p[c]);
                    box.hi[c] = std::max(box.hi[c], p[c]);
                }
            }
            if (ok) {
                volume.push_back(box);
                tet_of.push_back(static_cast<int>(t));
            }
        }
        const std::size_t num_tets = volume.size();
        std::vector<std::pair<int, int>> vertex_of; // (obstacle, vertex)
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            for (std::size_t n = 0; n < obstacle_nodes[k].size(); ++n) {
                const Vec3& p = obstacle_nodes[k][n];
                if (finite(p)) {
                    volume.push_back({p, p});
                    vertex_of.emplace_back(static_cast<int>(k), static_cast<int>(n));
                }
            }
        }
        // Shell and rod vertices too (obstacle −1, n their node): a sheet or a rod can end up wholly inside
        // a solid between two output steps. A node is never inside its own body's tets (it has none).
        std::vector<char> codim_node(x.size(), 0);
        for (const auto& tri : scene.shell_triangles) {
            for (const int n : tri) {
                codim_node[static_cast<std::size_t>(n)] = 1;
            }
        }
        for (const auto& segment : scene.rod_segments) {
            codim_node[static_cast<std::size_t>(segment[0])] =
                codim_node[static_cast<std::size_t>(segment[1])] = 1;
        }
        for (std::size_t n = 0; n < x.size(); ++n) {
            if (codim_node[n] && finite(x[n])) {
                volume.push_back({x[n], x[n]});
                vertex_of.emplace_back(-1, static_cast<int>(n));
            }
        }
        std::set<std::pair<int, int>> reported;
        for_each_overlapping_pair(volume, [&](int i, int j) {
            if (static_cast<std::size_t>(i) >= num_tets || static_cast<std::size_t>(j) < num_tets) {
                return; // two tets or two vertices
            }
            const auto [k, n] = vertex_of[static_cast<std::size_t>(j) - num_tets];
            const auto& tet = scene.mesh.tets[static_cast<std::size_t>(tet_of[static_cast<std::size_t>(i)])];
            const Vec3& p = k < 0 ? x[static_cast<std::size_t>(n)]
                                  : obstacle_nodes[static_cast<std::size_t>(k)][static_cast<std::size_t>(n)];
            if (!in_closed_tet(p, x[static_cast<std::size_t>(tet[0])], x[static_cast<std::size_t>(tet[1])],
                               x[static_cast<std::size_t>(tet[2])], x[static_cast<std::size_t>(tet[3])]) ||
                !reported.insert({k, n}).second) {
                return;
            }
            if (k < 0) {
                ++report.codim_vertices_inside;
                if (inside_examples.size() < k_max_examples) {
                    inside_examples.push_back(
                        body_text(scene, scene.node_body[static_cast<std::size_t>(n)]) + " node " +
                        std::to_string(scene.node_id[static_cast<std::size_t>(n)]) +
                        " (shell or rod) is inside " +
                        body_text(
                            scene,
                            scene.tet_body[static_cast<std::size_t>(tet_of[static_cast<std::size_t>(i)])]));
                }
                return;
            }
            ++report.obstacle_vertices_inside;
            if (inside_examples.size() < k_max_examples) {
                inside_examples.push_back(
                    "obstacles[" + std::to_string(k) + "] (mesh) vertex " + std::to_string(n) +
                    " is inside " +
                    body_text(scene,
                              scene.tet_body[static_cast<std::size_t>(tet_of[static_cast<std::size_t>(i)])]));
            }
        });
    }
    std::vector<std::string> offset_examples;
    check_offsets(scene, surface.triangles, obstacles, obstacle_nodes, time, report, offset_examples);
    for (const auto* extra :
         {&obstacle_examples, &plane_examples, &inside_examples, &offset_examples, &tet_examples}) {
        report.examples.insert(report.examples.end(), extra->begin(), extra->end());
    }
}

} // namespace intact::tools::detail

namespace intact::tools {

bool surface_triangles_meet(const std::array<int, 3>& s,
                            const std::array<int, 3>& t,
                            const std::vector<Vec3>& x) {
    return detail::boundary_triangles_meet(s, t, x);
}

} // namespace intact::tools
