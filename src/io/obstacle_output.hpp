#pragma once
/// @file obstacle_output.hpp
/// @brief The obstacles as ParaView draws them at any time: mesh obstacles with their triangles, segments
/// and lone vertices, planes as a square around the bodies, each placed at time 0 (scale, rotate_deg,
/// translate) and carried by its rigid motion (kernels/rigid_motion.hpp, the formula the simulation moves
/// the obstacle rows with). Host, rank 0.

#include "src/io/scene.hpp"
#include "src/io/vtk_writer.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <vector>

namespace intact::io {

class ObstacleOutput {
public:
    /// `scene_mesh` holds the placed obstacle meshes and the bodies' bounding box (rank 0).
    ObstacleOutput(const SceneMesh& scene_mesh, const Scene& scene);

    bool empty() const { return m_frame.cells.empty(); }

    /// The obstacles at time t (s).
    VtkObstacles at(double time) const;

private:
    VtkObstacles m_frame;              ///< at time 0
    std::vector<RigidMotion> m_motion; ///< per point
};

} // namespace intact::io
