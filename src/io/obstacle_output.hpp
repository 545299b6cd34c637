#pragma once
/// @file obstacle_output.hpp
/// @brief The obstacles as ParaView draws them at any time: mesh obstacles with their triangles, segments
/// and lone vertices, planes as a square around the bodies, each placed at time 0 (scale, rotate_deg,
/// translate) and carried by its rigid motion (kernels/rigid_motion.hpp, the formula the simulation moves
/// the obstacle rows with). Host, rank 0.

#include "src/io/scene.hpp"
#include "src/io/vtk_writer.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <cstddef>
#include <vector>

namespace intact::io {

/// How many points one obstacle takes in the written obstacles (`steps/<step>/obstacles.vtu`), which hold
/// every obstacle in scene order: a plane as the 4 corners of a square on it, a mesh as its vertices.
/// `intact check` reads a step's obstacles back by this layout (tools/check_output/obstacles.hpp).
inline std::size_t written_obstacle_points(bool is_plane, std::size_t mesh_vertices) {
    return is_plane ? 4 : mesh_vertices;
}

class ObstacleOutput {
public:
    /// `scene_mesh` holds the placed obstacle meshes and the bodies' bounding box (rank 0).
    ObstacleOutput(const SceneMesh& scene_mesh, const Scene& scene);

    bool empty() const { return m_frame.cells.empty(); }

    /// The obstacles at time t (s), where their motion prescribes them.
    VtkObstacles at(double time) const;
    /// The obstacles where the simulation holds them: `rows` are the contact surface's obstacle rows
    /// (ContactSurface: every mesh obstacle's vertices in scene order, then one point per plane). They are
    /// the prescribed positions except after a step that ended before its obstacles reached their targets
    /// (a step at its iteration cap, NOT CERTIFIED), from which the obstacles lag; written at their
    /// prescribed place, they would cross bodies the simulation kept them apart from. Mesh vertices take
    /// their rows; a plane's square moves with its row's lag (planes only translate).
    VtkObstacles at(double time, const std::vector<Vec3>& rows) const;

private:
    VtkObstacles m_frame;              ///< at time 0
    std::vector<RigidMotion> m_motion; ///< per point
    /// Per point: its obstacle row (mesh vertices), or −1 − r for a plane's corner with plane row r.
    std::vector<int> m_row;
    int m_num_rows = 0;            ///< obstacle rows (mesh vertices, then planes)
    std::vector<Vec3> m_row_point; ///< per plane row: the plane's point at time 0 (other rows unused)
};

} // namespace intact::io
