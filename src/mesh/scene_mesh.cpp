#include "src/mesh/scene_mesh.hpp"

#include "src/io/json_reader.hpp"
#include "src/io/mesh_reader.hpp"
#include "src/mesh/box_mesh.hpp"
#include "src/mesh/codim_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace intact {

double tet_signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const Vec3 u{b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const Vec3 v{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const Vec3 w{d[0] - a[0], d[1] - a[1], d[2] - a[2]};
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) /
           6.0;
}

std::vector<std::array<int, 4>> partition_elements(const SceneMesh& scene_mesh) {
    std::vector<std::array<int, 4>> elements = scene_mesh.mesh.tets;
    for (const auto& t : scene_mesh.codim.triangles) {
        elements.push_back({t[0], t[1], t[2], -1});
    }
    for (const auto& s : scene_mesh.codim.segments) {
        elements.push_back({s[0], s[1], -1, -1});
    }
    return elements;
}

namespace {

// R = Rz Ry Rx applied to p.
Vec3 rotate_euler(Vec3 p, const Vec3& rotate_deg) {
    constexpr double deg = 3.14159265358979323846 / 180.0;
    const double cx = std::cos(rotate_deg[0] * deg), sx = std::sin(rotate_deg[0] * deg);
    const double cy = std::cos(rotate_deg[1] * deg), sy = std::sin(rotate_deg[1] * deg);
    const double cz = std::cos(rotate_deg[2] * deg), sz = std::sin(rotate_deg[2] * deg);
    p = {p[0], cx * p[1] - sx * p[2], sx * p[1] + cx * p[2]};  // about x
    p = {cy * p[0] + sy * p[2], p[1], -sy * p[0] + cy * p[2]}; // about y
    p = {cz * p[0] - sz * p[1], sz * p[0] + cz * p[1], p[2]};  // about z
    return p;
}

} // namespace

Vec3 transform_point(
    const Vec3& x, const Vec3& scale, const Vec3& rotate_deg, const Vec3& translate, const Vec3& pivot) {
    const Vec3 p = rotate_euler(
        {x[0] * scale[0] - pivot[0], x[1] * scale[1] - pivot[1], x[2] * scale[2] - pivot[2]}, rotate_deg);
    return {p[0] + pivot[0] + translate[0], p[1] + pivot[1] + translate[1], p[2] + pivot[2] + translate[2]};
}

Vec3 transform_normal(const Vec3& n, const Vec3& scale, const Vec3& rotate_deg) {
    const Vec3 p = rotate_euler({n[0] / scale[0], n[1] / scale[1], n[2] / scale[2]}, rotate_deg);
    const double length = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    return {p[0] / length, p[1] / length, p[2] / length};
}

void place_plane(const io::Obstacle& obstacle, Vec3& point, Vec3& normal) {
    point = transform_point(obstacle.point, obstacle.scale, obstacle.rotate_deg, obstacle.translate);
    normal = transform_normal(obstacle.normal, obstacle.scale, obstacle.rotate_deg);
}

namespace {

// Keep only the nodes some tet uses, renumbered in their original order.
void drop_unused_nodes(TetMesh& mesh) {
    std::vector<int> new_index(mesh.nodes.size(), -1);
    for (const auto& t : mesh.tets) {
        for (const int n : t) {
            new_index[static_cast<std::size_t>(n)] = 0;
        }
    }
    std::vector<Vec3> kept;
    for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
        if (new_index[n] == 0) {
            new_index[n] = static_cast<int>(kept.size());
            kept.push_back(mesh.nodes[n]);
        }
    }
    for (auto& t : mesh.tets) {
        for (int& n : t) {
            n = new_index[static_cast<std::size_t>(n)];
        }
    }
    mesh.nodes = std::move(kept);
}

// Volume-weighted centroid of a mesh's tets (its centre of mass at uniform density); the node mean when
// the volume is not positive (the validation below reports such a mesh).
Vec3 volume_centroid(const TetMesh& mesh) {
    Vec3 sum{};
    double volume = 0.0;
    for (const auto& t : mesh.tets) {
        const auto& x = mesh.nodes;
        const Vec3& a = x[static_cast<std::size_t>(t[0])];
        const Vec3& b = x[static_cast<std::size_t>(t[1])];
        const Vec3& c = x[static_cast<std::size_t>(t[2])];
        const Vec3& d = x[static_cast<std::size_t>(t[3])];
        const double v = tet_signed_volume(a, b, c, d);
        for (std::size_t k = 0; k < 3; ++k) {
            sum[k] += v * (a[k] + b[k] + c[k] + d[k]) / 4.0;
        }
        volume += v;
    }
    if (volume > 0.0) {
        return {sum[0] / volume, sum[1] / volume, sum[2] / volume};
    }
    Vec3 mean{};
    for (const Vec3& x : mesh.nodes) {
        for (std::size_t k = 0; k < 3; ++k) {
            mean[k] += x[k] / static_cast<double>(mesh.nodes.size());
        }
    }
    return mean;
}

Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

Vec3 minus(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

std::string body_and_mesh(const io::Body& body, std::size_t index) {
    std::ostringstream label;
    label << io::body_label(body, index);
    if (!body.mesh.is_generated()) {
        label << " (mesh '" << body.mesh.file << "')";
    }
    return label.str();
}

} // namespace

SceneMesh build_scene_mesh(const io::Scene& scene) {
    SceneMesh result;
    result.bbox_min = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                       std::numeric_limits<double>::max()};
    result.bbox_max = {-result.bbox_min[0], -result.bbox_min[1], -result.bbox_min[2]};

    int next_motion = 0; // index in scene.moving_selectors()
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const io::Body& body = scene.bodies[b];
        result.body_contact_offset.push_back(body.contact_offset);
        TetMesh mesh;
        CodimElements codim; // a shell's or rod's elements, body-local node ids
        if (body.type != io::BodyType::solid) {
            CodimBodyMesh loaded = load_codim_body(scene, b);
            mesh.nodes = std::move(loaded.nodes);
            codim = std::move(loaded.elements);
        } else if (body.mesh.is_box) {
            mesh = make_box_mesh(body.mesh.box_min, body.mesh.box_max, body.mesh.box_cells);
        } else {
            try {
                mesh = io::read_tet_mesh(body.mesh.file);
            } catch (const InputError& error) {
                // The reader names the mesh file; add which scene key pointed at it.
                throw InputError(io::input_error_message(
                    scene.file, "bodies[" + std::to_string(b) + "].mesh.file", error.what(), ""));
            }
        }
        if (body.type == io::BodyType::solid) {
            drop_unused_nodes(mesh); // load_codim_body drops a shell's or rod's
        }
        for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
            const Vec3& x = mesh.nodes[n];
            if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2])) {
                throw InputError(io::input_error_message(scene.file, "bodies[" + std::to_string(b) + "].mesh",
                                                         body_and_mesh(body, b) + ": node " +
                                                             std::to_string(n) +
                                                             " has a coordinate that is not a finite number",
                                                         "repair the mesh file"));
            }
        }
        if (result.mesh.tets.size() + mesh.tets.size() >
                static_cast<std::size_t>(std::numeric_limits<int>::max() / 4) ||
            result.mesh.nodes.size() + mesh.nodes.size() >
                static_cast<std::size_t>(std::numeric_limits<int>::max() / 4)) {
            throw InputError(io::input_error_message(scene.file, "bodies",
                                                     "the scene has more than 536870911 nodes or tetrahedra",
                                                     "use coarser meshes (indices are 32-bit)"));
        }
        // "center": the pivot is the centroid of the scaled mesh, so rotating does not move the body.
        Vec3 pivot{};
        if (body.rotate_about_center) {
            TetMesh scaled = mesh;
            for (auto& x : scaled.nodes) {
                x = {x[0] * body.scale[0], x[1] * body.scale[1], x[2] * body.scale[2]};
            }
            pivot = volume_centroid(scaled);
        }
        for (auto& x : mesh.nodes) {
            x = transform_point(x, body.scale, body.rotate_deg, body.translate, pivot);
        }
        const Vec3 center_of_mass = volume_centroid(mesh); // uniform density

        // Validate every tet: positive volume, judged relative to its longest edge so that the test is
        // independent of the mesh's units.
        for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
            const auto& t = mesh.tets[e];
            const Vec3& a = mesh.nodes[static_cast<std::size_t>(t[0])];
            const Vec3& bb = mesh.nodes[static_cast<std::size_t>(t[1])];
            const Vec3& c = mesh.nodes[static_cast<std::size_t>(t[2])];
            const Vec3& d = mesh.nodes[static_cast<std::size_t>(t[3])];
            double longest = 0.0;
            const Vec3* corners[4] = {&a, &bb, &c, &d};
            for (int i = 0; i < 4; ++i) {
                for (int j = i + 1; j < 4; ++j) {
                    double l2 = 0.0;
                    for (int k = 0; k < 3; ++k) {
                        const double diff = (*corners[i])[static_cast<std::size_t>(k)] -
                                            (*corners[j])[static_cast<std::size_t>(k)];
                        l2 += diff * diff;
                    }
                    longest = std::max(longest, std::sqrt(l2));
                }
            }
            const double volume = tet_signed_volume(a, bb, c, d);
            const double tolerance = 1e-12 * longest * longest * longest;
            if (!(volume > tolerance)) { // also catches NaN coordinates
                std::ostringstream problem;
                problem << "tetrahedron " << e << " (nodes " << t[0] << " " << t[1] << " " << t[2] << " "
                        << t[3] << ", 0-based) has " << (volume < -tolerance ? "negative" : "zero")
                        << " volume " << volume << " m^3";
                throw InputError(io::input_error_message(
                    scene.file, "bodies[" + std::to_string(b) + "].mesh",
                    body_and_mesh(body, b) + ": " + problem.str(),
                    volume < -tolerance
                        ? "reorder the tet's nodes (swap two) so det[x1-x0, x2-x0, x3-x0] > 0, or "
                          "re-export the mesh with positive orientation"
                        : "remove or repair the flat tetrahedron in the mesh generator"));
            }
        }

        // Boundary conditions, selected in world coordinates; every selector must catch a node.
        const std::size_t first_node = result.mesh.nodes.size();
        const int node_offset = static_cast<int>(first_node);
        for (const auto& x : mesh.nodes) {
            result.mesh.nodes.push_back(x);
            result.node_body.push_back(static_cast<int>(b));
            const Vec3 spin = cross(body.angular_velocity, minus(x, center_of_mass));
            result.velocity.push_back(
                {body.velocity[0] + spin[0], body.velocity[1] + spin[1], body.velocity[2] + spin[2]});
            result.constraint.push_back(NodeConstraint::free);
            result.motion.push_back(-1);
            for (int k = 0; k < 3; ++k) {
                const auto i = static_cast<std::size_t>(k);
                result.bbox_min[i] = std::min(result.bbox_min[i], x[i]);
                result.bbox_max[i] = std::max(result.bbox_max[i], x[i]);
            }
        }
        for (const auto& t : mesh.tets) {
            result.mesh.tets.push_back(
                {t[0] + node_offset, t[1] + node_offset, t[2] + node_offset, t[3] + node_offset});
            result.tet_body.push_back(static_cast<int>(b));
        }
        append_codim_elements(result.codim, codim, node_offset);
        // Prescribed nodes start with the velocity of their motion (zero when held until a later start).
        auto select = [&](const io::BoxSelector& box, NodeConstraint kind, const io::MovingSelector* moving,
                          int motion, const std::string& key) {
            int count = 0;
            for (std::size_t n = first_node; n < result.mesh.nodes.size(); ++n) {
                const Vec3& x = result.mesh.nodes[n];
                if (!box.contains(x)) {
                    continue;
                }
                ++count;
                if (kind == NodeConstraint::free) {
                    continue; // a force box: only counted
                }
                result.constraint[n] = kind;
                result.motion[n] = motion;
                result.velocity[n] = Vec3{};
                if (moving && moving->window.start == 0.0) {
                    const io::RigidMotion& m = moving->motion;
                    const Vec3 spin = cross(m.angular_velocity, minus(x, m.center));
                    result.velocity[n] = {m.velocity[0] + spin[0], m.velocity[1] + spin[1],
                                          m.velocity[2] + spin[2]};
                }
            }
            if (count == 0) {
                throw InputError(io::input_error_message(
                    scene.file, key, body_and_mesh(body, b) + ": the box selects no node of the body",
                    "give the box in world coordinates (after scale, rotate_deg and translate) so that it "
                    "contains some of the body's nodes"));
            }
        };
        for (std::size_t k = 0; k < body.fixed.size(); ++k) {
            select(body.fixed[k], NodeConstraint::fixed, nullptr, -1,
                   "bodies[" + std::to_string(b) + "].fixed[" + std::to_string(k) + "].box");
        }
        for (std::size_t k = 0; k < body.moving.size(); ++k) {
            select(body.moving[k].box, NodeConstraint::moving, &body.moving[k], next_motion++,
                   "bodies[" + std::to_string(b) + "].moving[" + std::to_string(k) + "].box");
        }
        for (std::size_t k = 0; k < body.forces.size(); ++k) {
            select(body.forces[k].box, NodeConstraint::free, nullptr, -1,
                   "bodies[" + std::to_string(b) + "].forces[" + std::to_string(k) + "].box");
        }
    }

    for (std::size_t k = 0; k < scene.obstacles.size(); ++k) {
        const auto& obstacle = scene.obstacles[k];
        result.obstacle_meshes.emplace_back();
        if (obstacle.kind == io::Obstacle::Kind::mesh) {
            try {
                result.obstacle_meshes.back() = io::read_triangle_mesh(obstacle.mesh.file);
            } catch (const InputError& error) {
                throw InputError(io::input_error_message(
                    scene.file, "obstacles[" + std::to_string(k) + "].mesh.file", error.what(), ""));
            }
            TriMesh& placed = result.obstacle_meshes.back();
            for (auto& x : placed.nodes) {
                x = transform_point(x, obstacle.scale, obstacle.rotate_deg, obstacle.translate);
            }
            // A zero-length segment has no direction: its edge–edge distance is undefined.
            for (std::size_t e = 0; e < placed.segments.size(); ++e) {
                const Vec3 d = minus(placed.nodes[static_cast<std::size_t>(placed.segments[e][1])],
                                     placed.nodes[static_cast<std::size_t>(placed.segments[e][0])]);
                if (!(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 0.0)) {
                    throw InputError(io::input_error_message(
                        scene.file, "obstacles[" + std::to_string(k) + "].mesh.file",
                        "mesh '" + obstacle.mesh.file_as_written + "': segment " + std::to_string(e + 1) +
                            " (counting the segments of the 'l' lines in order) has zero length",
                        "remove the segment, or merge its two vertices into one point"));
                }
            }
            // A zero-area triangle has no normal: its distances and CCD are undefined.
            const TriMesh& mesh = placed;
            for (std::size_t t = 0; t < mesh.tris.size(); ++t) {
                const Vec3& a = mesh.nodes[static_cast<std::size_t>(mesh.tris[t][0])];
                const Vec3& b = mesh.nodes[static_cast<std::size_t>(mesh.tris[t][1])];
                const Vec3& c = mesh.nodes[static_cast<std::size_t>(mesh.tris[t][2])];
                const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
                const double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
                const double w[3] = {c[0] - b[0], c[1] - b[1], c[2] - b[2]};
                const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                                     u[0] * v[1] - u[1] * v[0]};
                const double longest = std::max({u[0] * u[0] + u[1] * u[1] + u[2] * u[2],
                                                 v[0] * v[0] + v[1] * v[1] + v[2] * v[2],
                                                 w[0] * w[0] + w[1] * w[1] + w[2] * w[2]});
                const double area2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
                if (!(area2 > 1e-24 * longest * longest)) {
                    throw InputError(io::input_error_message(
                        scene.file, "obstacles[" + std::to_string(k) + "].mesh.file",
                        "mesh '" + obstacle.mesh.file_as_written + "': triangle " + std::to_string(t + 1) +
                            " (counting the triangles of the 'f' lines in order, polygons fan-triangulated) "
                            "has zero area",
                        "remove degenerate faces from the obstacle mesh (or merge its collinear vertices)"));
                }
            }
        }
    }
    return result;
}

} // namespace intact
