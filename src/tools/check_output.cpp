/// @file check_output.cpp
/// @brief check_output: reads every step of a written series, checks it, and logs and returns what it
/// found. The parts are in src/tools/check_output/: exact predicates, the broad phase, reading the series,
/// the obstacles, and the checks of one step.

#include "src/tools/check_output.hpp"

#include "src/tools/check_output/checks.hpp"
#include "src/tools/check_output/obstacles.hpp"
#include "src/tools/check_output/series.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace intact::tools {
namespace {

namespace fs = std::filesystem;

/// N of "step_N.pvtu"; -1 for another name.
int step_number(const fs::path& file) {
    const std::string stem = file.stem().string();
    const std::string prefix = "step_";
    if (stem.size() <= prefix.size() || stem.size() > prefix.size() + 9 ||
        stem.compare(0, prefix.size(), prefix) != 0) {
        return -1;
    }
    for (std::size_t i = prefix.size(); i < stem.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(stem[i]))) {
            return -1;
        }
    }
    return std::stoi(stem.substr(prefix.size()));
}

} // namespace

bool CheckReport::clean() const {
    return std::all_of(steps.begin(), steps.end(), [](const StepReport& step) { return step.clean(); });
}

CheckReport check_output(const std::string& directory, std::ostream& log) {
    const fs::path pvd = fs::path(directory) / "intact.pvd";
    const std::vector<detail::SeriesEntry> series = detail::read_series(pvd);
    const detail::Obstacles obstacles = detail::read_obstacles(fs::path(directory));
    log << obstacles.note << "\n";

    CheckReport report;
    report.obstacles_checked = obstacles.checked;
    for (const detail::Obstacle& obstacle : obstacles.entries) {
        ++(obstacle.is_plane ? report.planes : report.obstacle_meshes);
    }
    const bool any_obstacles = !obstacles.entries.empty();
    StepReport total;
    int bad_steps = 0;
    for (std::size_t s = 0; s < series.size(); ++s) {
        detail::SceneMesh scene;
        scene.body_names = obstacles.body_names;
        scene.body_offsets = obstacles.body_offsets;
        std::unordered_map<GlobalId, int> node_index;
        std::unordered_set<GlobalId> seen_tets;
        for (const fs::path& piece : detail::read_piece_list(series[s].file)) {
            detail::add_piece(piece, scene, node_index, seen_tets);
        }

        StepReport step;
        const int number = step_number(series[s].file);
        step.step_index = number >= 0 ? number : static_cast<int>(s);
        step.time = series[s].time;
        step.file = series[s].file.string();
        // The obstacles where the simulation held them (the step's written obstacles), else where their
        // motion prescribes them (output without them, or of an older Intact).
        const fs::path written = series[s].file.parent_path() / series[s].file.stem() / "obstacles.vtu";
        std::vector<detail::Obstacle> held;
        if (any_obstacles && fs::is_regular_file(written)) {
            held = detail::held_obstacles(obstacles.entries, detail::read_points(written));
        }
        detail::check_scene(scene, held.empty() ? obstacles.entries : held, step.time, step);

        log << "step " << step.step_index << " t=" << step.time << ": " << step.intersecting_pairs
            << " intersecting triangle pairs, " << step.inverted_tets << " inverted tetrahedra";
        if (any_obstacles) {
            log << ", " << step.obstacle_triangle_pairs << " body-obstacle triangle pairs, "
                << step.vertices_behind_planes << " vertices on or behind planes";
            if (step.obstacle_vertices_inside > 0) {
                log << ", " << step.obstacle_vertices_inside << " obstacle vertices inside bodies";
            }
        }
        if (step.codim_vertices_inside > 0) {
            log << ", " << step.codim_vertices_inside << " shell or rod vertices inside solids";
        }
        if (step.offset_pairs > 0) {
            log << ", " << step.offset_pairs << " pairs closer than their contact offsets";
        }
        log << "\n";
        for (const std::string& example : step.examples) {
            log << "  " << example << "\n";
        }
        if (scene.position_mismatches > 0) {
            log << "  warning: " << scene.position_mismatches
                << " nodes have different positions in different pieces (the first piece's is used)\n";
        }
        total.intersecting_pairs += step.intersecting_pairs;
        total.inverted_tets += step.inverted_tets;
        total.obstacle_triangle_pairs += step.obstacle_triangle_pairs;
        total.vertices_behind_planes += step.vertices_behind_planes;
        total.obstacle_vertices_inside += step.obstacle_vertices_inside;
        total.codim_vertices_inside += step.codim_vertices_inside;
        total.offset_pairs += step.offset_pairs;
        bad_steps += step.clean() ? 0 : 1;
        report.steps.push_back(std::move(step));
    }

    log << "checked " << series.size() << " steps of " << directory << ": ";
    if (report.clean()) {
        log << "clean (no intersecting triangles, no inverted tetrahedra"
            << (!obstacles.checked ? "; obstacles not checked"
                : any_obstacles    ? ", nothing on or through an obstacle"
                                   : "")
            << ")\n";
    } else {
        log << "NOT clean: " << bad_steps << " steps with problems, " << total.intersecting_pairs
            << " intersecting triangle pairs and " << total.inverted_tets << " inverted tetrahedra";
        if (any_obstacles) {
            log << ", " << total.obstacle_triangle_pairs << " body-obstacle triangle pairs, "
                << total.obstacle_vertices_inside << " obstacle vertices inside bodies and "
                << total.vertices_behind_planes << " vertices on or behind planes";
        }
        if (total.codim_vertices_inside > 0) {
            log << ", " << total.codim_vertices_inside << " shell or rod vertices inside solids";
        }
        if (total.offset_pairs > 0) {
            log << ", " << total.offset_pairs << " pairs closer than their contact offsets";
        }
        log << " in all" << (obstacles.checked ? "" : " (obstacles not checked)") << "\n";
    }
    log.flush();
    return report;
}

} // namespace intact::tools
