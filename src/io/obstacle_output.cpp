#include "src/io/obstacle_output.hpp"

#include "kernels/rigid_motion.hpp"
#include "src/core/error.hpp"

#include <Eigen/Geometry>

#include <cmath>

namespace intact::io {

namespace {

// The corners of a square on the plane (point p, unit normal n) centred at the projection of `center`,
// of half side `half`.
std::vector<Vec3> plane_square(const Vec3& p, const Vec3& n, const Vec3& center, double half) {
    const kernels::Vec3 normal = kernels::from_array(n);
    const kernels::Vec3 mid = kernels::from_array(center) -
                              normal.dot(kernels::from_array(center) - kernels::from_array(p)) * normal;
    const kernels::Vec3 helper = std::abs(normal(0)) < 0.9 ? kernels::Vec3(1, 0, 0) : kernels::Vec3(0, 1, 0);
    const kernels::Vec3 u = normal.cross(helper).normalized();
    const kernels::Vec3 v = normal.cross(u);
    std::vector<Vec3> corners;
    for (const auto& [a, b] : {std::pair{-1.0, -1.0}, {1.0, -1.0}, {1.0, 1.0}, {-1.0, 1.0}}) {
        const kernels::Vec3 x = mid + half * (a * u + b * v);
        corners.push_back({x(0), x(1), x(2)});
    }
    return corners;
}

} // namespace

ObstacleOutput::ObstacleOutput(const SceneMesh& scene_mesh, const Scene& scene) {
    const Vec3& lo = scene_mesh.bbox_min;
    const Vec3& hi = scene_mesh.bbox_max;
    const Vec3 center{(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
    const double diagonal = std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                      (hi[2] - lo[2]) * (hi[2] - lo[2]));
    // Obstacle rows as ContactSurface numbers them: mesh vertices obstacle by obstacle, then the planes.
    int mesh_rows = 0;
    for (std::size_t k = 0; k < scene.obstacles.size(); ++k) {
        if (scene.obstacles[k].kind != Obstacle::Kind::plane) {
            mesh_rows += static_cast<int>(scene_mesh.obstacle_meshes[k].nodes.size());
        }
    }
    int next_mesh_row = 0;
    int next_plane_row = mesh_rows;
    for (std::size_t k = 0; k < scene.obstacles.size(); ++k) {
        const Obstacle& obstacle = scene.obstacles[k];
        const int first = static_cast<int>(m_frame.points.size());
        auto add_cell = [&](std::vector<int> cell) {
            for (int& p : cell) {
                p += first;
            }
            m_frame.cells.push_back(std::move(cell));
            m_frame.cell_obstacle.push_back(static_cast<int>(k));
        };
        if (obstacle.kind == Obstacle::Kind::plane) {
            Vec3 point, normal;
            place_plane(obstacle, point, normal);
            m_row_point.resize(static_cast<std::size_t>(next_plane_row) + 1);
            m_row_point[static_cast<std::size_t>(next_plane_row)] = point;
            const std::vector<Vec3> corners = plane_square(point, normal, center, diagonal);
            INTACT_REQUIRE(corners.size() == written_obstacle_points(true, 0),
                           "ObstacleOutput: a plane's square has " << corners.size() << " corners");
            for (const Vec3& corner : corners) {
                m_frame.points.push_back(corner);
                m_row.push_back(-1 - next_plane_row);
            }
            ++next_plane_row;
            add_cell({0, 1, 2, 3});
        } else {
            const TriMesh& mesh = scene_mesh.obstacle_meshes[k];
            m_frame.points.insert(m_frame.points.end(), mesh.nodes.begin(), mesh.nodes.end());
            for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
                m_row.push_back(next_mesh_row++);
            }
            std::vector<char> used(mesh.nodes.size(), 0);
            for (const auto& t : mesh.tris) {
                add_cell({t[0], t[1], t[2]});
                used[static_cast<std::size_t>(t[0])] = used[static_cast<std::size_t>(t[1])] =
                    used[static_cast<std::size_t>(t[2])] = 1;
            }
            for (const auto& e : mesh.segments) {
                add_cell({e[0], e[1]});
                used[static_cast<std::size_t>(e[0])] = used[static_cast<std::size_t>(e[1])] = 1;
            }
            for (std::size_t n = 0; n < mesh.nodes.size(); ++n) {
                if (!used[n]) {
                    add_cell({static_cast<int>(n)});
                }
            }
        }
        m_motion.resize(m_frame.points.size(), obstacle.motion);
    }
    m_num_rows = next_plane_row;
}

VtkObstacles ObstacleOutput::at(double time) const {
    VtkObstacles frame = m_frame;
    for (std::size_t p = 0; p < frame.points.size(); ++p) {
        const RigidMotion& m = m_motion[p];
        const kernels::Vec3 x = kernels::rigid_motion_position(
            kernels::from_array(m_frame.points[p]), kernels::from_array(m.velocity),
            kernels::from_array(m.angular_velocity), kernels::from_array(m.center), time);
        frame.points[p] = {x(0), x(1), x(2)};
    }
    return frame;
}

VtkObstacles ObstacleOutput::at(double time, const std::vector<Vec3>& rows) const {
    INTACT_REQUIRE(static_cast<int>(rows.size()) == m_num_rows,
                   "ObstacleOutput: " << rows.size() << " obstacle rows for " << m_num_rows);
    VtkObstacles frame = at(time);
    for (std::size_t p = 0; p < frame.points.size(); ++p) {
        const int row = m_row[p];
        if (row >= 0) {
            frame.points[p] = rows[static_cast<std::size_t>(row)];
            continue;
        }
        // A plane's corner: its prescribed place moved by the plane row's lag behind its prescription.
        const auto r = static_cast<std::size_t>(-1 - row);
        const RigidMotion& m = m_motion[p];
        const kernels::Vec3 prescribed = kernels::rigid_motion_position(
            kernels::from_array(m_row_point[r]), kernels::from_array(m.velocity),
            kernels::from_array(m.angular_velocity), kernels::from_array(m.center), time);
        for (int c = 0; c < 3; ++c) {
            frame.points[p][static_cast<std::size_t>(c)] +=
                rows[r][static_cast<std::size_t>(c)] - prescribed(c);
        }
    }
    return frame;
}

} // namespace intact::io
