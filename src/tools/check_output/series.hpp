#pragma once
/// @file series.hpp
/// @brief Private to the output checker (src/tools/check_output/): reading a written series (intact.pvd,
/// each step's .pvtu and its pieces) with VTK's XML readers, and merging a step's pieces into one
/// scene-wide mesh. Host only, serial.

#include "src/core/ids.hpp"
#include "src/mesh/tet_mesh.hpp"

#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace intact::tools::detail {

namespace fs = std::filesystem;

/// `path` in single quotes, for messages.
std::string quoted(const fs::path& path);

/// One step of the series: its `timestep` and its .pvtu.
struct SeriesEntry {
    double time;
    fs::path file;
};

/// The steps (part 0) listed in `pvd`, in its order. Throws InputError when `pvd` or a listed file is
/// missing or `pvd` is malformed.
std::vector<SeriesEntry> read_series(const fs::path& pvd);

/// The points of an unstructured grid file (.vtu), in order. Throws InputError when it cannot be read.
std::vector<Vec3> read_points(const fs::path& vtu);

/// The pieces a .pvtu lists, as paths.
std::vector<fs::path> read_piece_list(const fs::path& pvtu);

/// One step's pieces merged into a scene-wide mesh.
struct SceneMesh {
    TetMesh mesh;
    std::vector<GlobalId> node_id;       ///< per node: its `global_id`
    std::vector<int> node_body;          ///< per node: the body of a tet that uses it (-1: unused)
    std::vector<GlobalId> tet_id;        ///< per tet: cell `global_id` (-1 when the pieces have none)
    std::vector<int> tet_body;           ///< per tet: cell `body` (-1 when the pieces have none)
    long long position_mismatches = 0;   ///< nodes whose copies in different pieces disagree
    std::vector<std::string> body_names; ///< per body: its scene name, empty when it has none
    std::vector<double> body_offsets;    ///< per body: its contact offset, m (0 past the end)
    /// Shell triangles (VTK triangles) and rod segments (VTK lines), with their cell `body`.
    std::vector<std::array<int, 3>> shell_triangles;
    std::vector<int> shell_triangle_body;
    std::vector<std::array<int, 2>> rod_segments;
    std::vector<int> rod_segment_body;
};

/// How messages name body `body` of `scene`: `bodies[b] ("name")`, or `bodies[b]` without a name.
std::string body_text(const SceneMesh& scene, int body);

/// Adds one piece to `scene`: nodes are merged by `global_id` (first copy's position kept), cells
/// (tetrahedra, shell triangles, rod lines) with a cell `global_id` already seen are skipped. Any other
/// cell type is an error.
void add_piece(const fs::path& file,
               SceneMesh& scene,
               std::unordered_map<GlobalId, int>& node_index,
               std::unordered_set<GlobalId>& seen_tets);

} // namespace intact::tools::detail
