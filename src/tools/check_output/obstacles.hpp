#pragma once
/// @file obstacles.hpp
/// @brief Private to the output checker (src/tools/check_output/): the obstacles of a run, read from
/// scene.resolved.json and placed at time 0, and the rigid motion that places them at a step's time.
/// Host only.

#include "kernels/rigid_motion.hpp"
#include "src/core/ids.hpp"
#include "src/mesh/tet_mesh.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace intact::tools::detail {

namespace fs = std::filesystem;

/// One entry of `obstacles` in scene.resolved.json, placed at time 0 (scale, rotate_deg, translate).
struct Obstacle {
    bool is_plane = true;
    Vec3 point{};            ///< plane: a point on it at time 0
    Vec3 normal{};           ///< plane: unit, to the free side
    TriMesh mesh;            ///< mesh: triangles, segments and points at time 0
    Vec3 velocity{};         ///< m/s, constant
    Vec3 angular_velocity{}; ///< rad/s, about `center`
    Vec3 center{};           ///< m, at time 0
    /// Where the rigid motion takes `x` (at time 0) at time t, as the simulator moves obstacle rows.
    Vec3 at(const Vec3& x, double t) const {
        const kernels::Vec3 y = kernels::rigid_motion_position(
            kernels::from_array(x), kernels::from_array(velocity), kernels::from_array(angular_velocity),
            kernels::from_array(center), t);
        return {y(0), y(1), y(2)};
    }
};

/// The obstacles of a run, or why there are none to check.
struct Obstacles {
    bool checked = false;          ///< scene.resolved.json was found
    std::string note;              ///< the line logged before the steps
    std::vector<Obstacle> entries; ///< in the order of `obstacles`
    /// Per entry of `bodies`: the name the scene gave it, empty when it gave none (the default "body<i>").
    std::vector<std::string> body_names;
    /// Per entry of `bodies`: its `contact_offset` (m; 0 when absent: solids, older output).
    std::vector<double> body_offsets;
};

/// The obstacles where the simulation held them at one step, from the points of that step's written
/// obstacles (`steps/<step>/obstacles.vtu`, laid out as io::written_obstacle_points says), as obstacles at
/// rest there (no motion).
/// They differ from `prescribed` moved to the step's time after a step that ended before its obstacles
/// reached their targets. Empty when the points are not laid out so (output of an older Intact).
std::vector<Obstacle> held_obstacles(const std::vector<Obstacle>& prescribed,
                                     const std::vector<Vec3>& points);

/// The obstacles listed in `directory`/scene.resolved.json, and the bodies' names and contact offsets.
/// Throws InputError (naming the file, the key and
/// the fix) when the file is there but malformed or an obstacle mesh cannot be read.
Obstacles read_obstacles(const fs::path& directory);

} // namespace intact::tools::detail
