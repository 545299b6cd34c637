/// @file obstacles.cpp
/// @brief Reading the obstacles of a run from scene.resolved.json: planes and meshes placed by their
/// scale, rotation and translation, with their rigid motion (declared in obstacles.hpp).

#include "src/tools/check_output/obstacles.hpp"

#include "src/core/error.hpp"
#include "src/io/mesh_reader.hpp"
#include "src/io/obstacle_output.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "src/tools/check_output/predicates.hpp"
#include "src/tools/check_output/series.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>

namespace intact::tools::detail {
namespace {

const char* const k_resolved_fix =
    "fix: run the scene again into this folder to rewrite it, or correct the entry; an obstacle is "
    "{\"plane\": {\"point\": [x, y, z], \"normal\": [nx, ny, nz]}} or {\"mesh\": {\"file\": "
    "\"/path/x.obj\"}}, "
    "either with optional \"velocity\", \"angular_velocity\", \"center\", \"translate\", \"rotate_deg\" "
    "([x, y, z]) and \"scale\" (a number or [sx, sy, sz])";

[[noreturn]] void bad_obstacle(const fs::path& file, const std::string& key, const std::string& problem) {
    throw InputError(quoted(file) + ": key '" + key + "': " + problem + "; " + k_resolved_fix);
}

/// `parent[name]` as three finite numbers; `fallback` when absent and `required` is false.
Vec3 read_vec3(const nlohmann::json& parent,
               const char* name,
               const std::string& parent_key,
               const fs::path& file,
               bool required,
               const Vec3& fallback = Vec3{}) {
    const std::string key = parent_key + "." + name;
    if (!parent.contains(name)) {
        if (required) {
            bad_obstacle(file, key, "missing");
        }
        return fallback;
    }
    const nlohmann::json& value = parent.at(name);
    if (!value.is_array() || value.size() != 3 ||
        !std::all_of(value.begin(), value.end(), [](const nlohmann::json& c) { return c.is_number(); })) {
        bad_obstacle(file, key, "must be an array of three numbers, got " + value.dump());
    }
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
        v[k] = value[static_cast<std::size_t>(k)].get<double>();
    }
    if (!finite(v)) {
        bad_obstacle(file, key, "must be finite, got " + value.dump());
    }
    return v;
}

} // namespace

Obstacles read_obstacles(const fs::path& directory) {
    const fs::path file = directory / "scene.resolved.json";
    Obstacles obstacles;
    if (!fs::exists(file)) {
        obstacles.note = "obstacles not checked: " + quoted(file) +
                         " not found (output of an older Intact, or a copy without it); body triangles and "
                         "tetrahedra are checked";
        return obstacles;
    }
    std::ifstream in(file);
    if (!in) {
        throw InputError(quoted(file) + " cannot be opened; fix: make it readable, or remove it to skip the "
                                        "obstacle checks");
    }
    nlohmann::json scene;
    try {
        scene = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& error) {
        throw InputError(quoted(file) + " is not valid JSON (" + error.what() +
                         "); fix: run the scene again into this folder to rewrite it");
    }
    if (!scene.is_object()) {
        throw InputError(
            quoted(file) +
            " does not hold a JSON object; fix: run the scene again into this folder to rewrite it");
    }
    obstacles.checked = true;
    if (scene.contains("bodies") && scene.at("bodies").is_array()) {
        const nlohmann::json& bodies = scene.at("bodies");
        for (std::size_t b = 0; b < bodies.size(); ++b) {
            const nlohmann::json& body = bodies[b];
            const bool named = body.is_object() && body.contains("name") && body.at("name").is_string() &&
                               body.at("name").get<std::string>() != "body" + std::to_string(b);
            obstacles.body_names.push_back(named ? body.at("name").get<std::string>() : std::string());
            double offset = 0.0;
            if (body.is_object() && body.contains("contact_offset")) {
                const nlohmann::json& value = body.at("contact_offset");
                if (!value.is_number() || !(value.get<double>() >= 0.0) ||
                    !std::isfinite(value.get<double>())) {
                    throw InputError(quoted(file) + ": key 'bodies[" + std::to_string(b) +
                                     "].contact_offset': must be a finite number >= 0, got " + value.dump() +
                                     "; fix: run the scene again into this folder to rewrite it");
                }
                offset = value.get<double>();
            }
            obstacles.body_offsets.push_back(offset);
        }
    }
    const nlohmann::json none = nlohmann::json::array();
    const nlohmann::json& list =
        scene.contains("obstacles") && !scene.at("obstacles").is_null() ? scene.at("obstacles") : none;
    if (!list.is_array()) {
        bad_obstacle(file, "obstacles", "must be an array of obstacles, got " + list.dump());
    }
    int planes = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string key = "obstacles[" + std::to_string(i) + "]";
        const nlohmann::json& entry = list[i];
        if (!entry.is_object() || entry.contains("plane") == entry.contains("mesh")) {
            bad_obstacle(file, key,
                         "must be an object with exactly one of \"plane\" and \"mesh\", got " + entry.dump());
        }
        Obstacle obstacle;
        obstacle.velocity = read_vec3(entry, "velocity", key, file, false);
        obstacle.angular_velocity = read_vec3(entry, "angular_velocity", key, file, false);
        obstacle.center = read_vec3(entry, "center", key, file, false);
        const Vec3 translate = read_vec3(entry, "translate", key, file, false);
        const Vec3 rotate_deg = read_vec3(entry, "rotate_deg", key, file, false);
        Vec3 scale{1.0, 1.0, 1.0};
        if (entry.contains("scale") && entry.at("scale").is_number()) {
            const double uniform = entry.at("scale").get<double>();
            scale = {uniform, uniform, uniform};
        } else {
            scale = read_vec3(entry, "scale", key, file, false, scale);
        }
        if (!(scale[0] > 0.0 && scale[1] > 0.0 && scale[2] > 0.0)) {
            bad_obstacle(file, key + ".scale", "must be positive");
        }
        if (entry.contains("plane")) {
            const nlohmann::json& plane = entry.at("plane");
            if (!plane.is_object()) {
                bad_obstacle(file, key + ".plane", "must be an object with \"point\" and \"normal\"");
            }
            obstacle.point = read_vec3(plane, "point", key + ".plane", file, true);
            obstacle.normal = read_vec3(plane, "normal", key + ".plane", file, true);
            if (obstacle.normal == Vec3{0.0, 0.0, 0.0}) {
                bad_obstacle(file, key + ".plane.normal", "must not be the zero vector");
            }
            obstacle.point = transform_point(obstacle.point, scale, rotate_deg, translate);
            obstacle.normal = transform_normal(obstacle.normal, scale, rotate_deg);
            ++planes;
        } else {
            obstacle.is_plane = false;
            const nlohmann::json& mesh = entry.at("mesh");
            if (!mesh.is_object() || !mesh.contains("file") || !mesh.at("file").is_string()) {
                bad_obstacle(file, key + ".mesh.file", "missing, or not a string");
            }
            // Written absolute; a relative path is taken relative to the output folder.
            fs::path path = mesh.at("file").get<std::string>();
            if (path.is_relative()) {
                path = directory / path;
            }
            try {
                obstacle.mesh = io::read_triangle_mesh(path.string());
            } catch (const InputError& error) {
                throw InputError(quoted(file) + ": key '" + key + ".mesh.file': " + error.what() +
                                 " (if the output was moved, copy the obstacle mesh to that path or edit it "
                                 "there)");
            }
            for (Vec3& x : obstacle.mesh.nodes) {
                x = transform_point(x, scale, rotate_deg, translate);
                if (!finite(x)) {
                    throw InputError(quoted(file) + ": key '" + key + ".mesh.file': " + quoted(path) +
                                     " has a non-finite vertex; fix: repair the obstacle mesh");
                }
            }
        }
        obstacles.entries.push_back(std::move(obstacle));
    }
    const int meshes = static_cast<int>(obstacles.entries.size()) - planes;
    const auto count = [](int n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    obstacles.note = "obstacles: " +
                     (obstacles.entries.empty()
                          ? std::string("none")
                          : count(planes, "plane", "planes") + ", " + count(meshes, "mesh", "meshes")) +
                     " in " + quoted(file);
    return obstacles;
}

std::vector<Obstacle> held_obstacles(const std::vector<Obstacle>& prescribed,
                                     const std::vector<Vec3>& points) {
    std::vector<Obstacle> held = prescribed;
    std::size_t next = 0;
    for (Obstacle& obstacle : held) {
        const std::size_t count = io::written_obstacle_points(obstacle.is_plane, obstacle.mesh.nodes.size());
        if (next + count > points.size()) {
            return {};
        }
        if (obstacle.is_plane) {
            obstacle.point = points[next]; // a corner of the square lies on the plane; planes only translate
        } else {
            std::copy(points.begin() + static_cast<std::ptrdiff_t>(next),
                      points.begin() + static_cast<std::ptrdiff_t>(next + count),
                      obstacle.mesh.nodes.begin());
        }
        obstacle.velocity = {0.0, 0.0, 0.0};
        obstacle.angular_velocity = {0.0, 0.0, 0.0};
        obstacle.center = {0.0, 0.0, 0.0};
        next += count;
    }
    return next == points.size() ? held : std::vector<Obstacle>{};
}

} // namespace intact::tools::detail
