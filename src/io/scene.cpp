#include "src/io/scene.hpp"

#include "comm/halo_transport.hpp"
#include "src/io/json_reader.hpp"
#include "src/io/scene_codim.hpp"
#include "src/io/scene_solver.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace intact::io {

namespace {

namespace fs = std::filesystem;

// Element and node indices are 32-bit ints on every rank and in METIS; a scene stays below that.
constexpr double max_scene_elements = 2.0e9;

using detail::read_bal_options;
using detail::read_stencil_descent;
using detail::require_positive;

BoxSelector read_box(JsonObject& object, const std::string& key) {
    JsonObject box = object.object(key);
    BoxSelector selector{box.required<Vec3>("min"), box.required<Vec3>("max")};
    box.finish();
    for (int d = 0; d < 3; ++d) {
        if (!(selector.min[static_cast<std::size_t>(d)] <= selector.max[static_cast<std::size_t>(d)])) {
            box.fail("min", "is above max along axis " + std::to_string(d), "give min <= max on every axis");
        }
    }
    return selector;
}

// `start` (s, >= 0, default 0) and `end` (s, > start, default: never) of a moving box or a force.
TimeWindow read_window(JsonObject& object) {
    TimeWindow window;
    window.start = object.optional<double>("start", 0.0);
    if (!(window.start >= 0.0)) {
        object.fail("start", "must be >= 0", "give the time in seconds at which it begins, e.g. 0");
    }
    if (object.has("end")) {
        window.end = object.required<double>("end");
        if (!(*window.end > window.start)) {
            std::ostringstream problem;
            problem << "must be after start (" << window.start << " s), got " << *window.end;
            object.fail("end", problem.str(),
                        "give an end time in seconds after start, or leave \"end\" out for no end");
        }
    }
    return window;
}

// `velocity` (m/s), `angular_velocity` (rad/s) and its `center` (m): the center is required with an
// angular velocity and meaningless without one.
RigidMotion read_rigid_motion(JsonObject& object) {
    RigidMotion motion;
    motion.velocity = object.optional<Vec3>("velocity", Vec3{});
    const bool spins = object.has("angular_velocity");
    motion.angular_velocity = object.optional<Vec3>("angular_velocity", Vec3{});
    if (spins) {
        if (!object.has("center")) {
            object.fail("center", "is required with angular_velocity",
                        "give the world point [x, y, z] (m) the rotation axis passes through");
        }
        motion.center = object.required<Vec3>("center");
    } else if (object.has("center")) {
        object.fail("center", "has no effect without angular_velocity",
                    "add \"angular_velocity\": [wx, wy, wz] (rad/s), or remove \"center\"");
    }
    return motion;
}

std::string resolve_path(const std::string& directory, const std::string& file) {
    const fs::path path(file);
    return path.is_absolute() || directory.empty() ? path.lexically_normal().string()
                                                   : (fs::path(directory) / path).lexically_normal().string();
}

MeshSource read_mesh_source(JsonObject& owner, const std::string& directory, BodyType type) {
    JsonObject mesh = owner.object("mesh");
    MeshSource source;
    if (type != BodyType::solid && !mesh.has("file")) {
        detail::read_generated_codim_mesh(mesh, type, source); // a sheet or a rod, else an error
        mesh.finish();
        return source;
    }
    if (mesh.has("file") == mesh.has("box")) {
        mesh.fail(
            "file", "give exactly one of \"file\" and \"box\"",
            "write \"mesh\": {\"file\": \"part.msh\"} or \"mesh\": {\"box\": {\"min\": [..], \"max\": [..], "
            "\"cells\": [nx, ny, nz]}}");
    }
    if (mesh.has("file")) {
        source.file_as_written = mesh.required<std::string>("file");
        source.file = resolve_path(directory, source.file_as_written);
    } else {
        JsonObject box = mesh.object("box");
        source.is_box = true;
        source.box_min = box.required<Vec3>("min");
        source.box_max = box.required<Vec3>("max");
        source.box_cells = box.optional<std::array<int, 3>>("cells", {1, 1, 1});
        box.finish();
        for (int d = 0; d < 3; ++d) {
            const auto i = static_cast<std::size_t>(d);
            if (!(source.box_min[i] < source.box_max[i])) {
                box.fail("max", "must exceed min on every axis (axis " + std::to_string(d) + ")",
                         "give a box of positive size");
            }
            if (source.box_cells[i] < 1) {
                box.fail("cells", "must be >= 1 on every axis",
                         "give at least one cell per axis, e.g. [4, 4, 4]");
            }
        }
        const double tets =
            6.0 * source.box_cells[0] * double(source.box_cells[1]) * double(source.box_cells[2]);
        if (tets > max_scene_elements) {
            box.fail("cells",
                     "asks for " + std::to_string(static_cast<long long>(tets)) + " tetrahedra, more than " +
                         std::to_string(static_cast<long long>(max_scene_elements)) + " per scene",
                     "use fewer cells");
        }
    }
    mesh.finish();
    return source;
}

// Parameters given for an integrator they do not apply to are errors, not silently ignored.
void reject_unless(JsonObject& object,
                   const std::string& key,
                   const std::string& type,
                   const std::vector<std::string>& types) {
    if (object.has(key) && std::find(types.begin(), types.end(), type) == types.end()) {
        std::string names;
        for (const auto& t : types) {
            names += (names.empty() ? "\"" : " or \"") + t + "\"";
        }
        object.fail(key, "applies to integrator.type " + names + " only, not \"" + type + "\"",
                    "remove it, or set integrator.type to " + names);
    }
}

// integrator.energy (A-search spec §3.2): scale, ground energy, and either one decay (decay_time from
// decay_start on) or a piecewise schedule.
EnergyTargetSettings read_energy_target(JsonObject& energy) {
    EnergyTargetSettings target;
    target.scale = energy.optional<double>("scale", target.scale);
    require_positive(energy, "scale", target.scale,
                     "give the first target as a factor of the initial energy, e.g. 1 or 0.95");
    target.ground_energy = energy.optional<double>("ground_energy", target.ground_energy);
    if (!std::isfinite(target.ground_energy)) {
        energy.fail("ground_energy", "must be a finite number", "give the rest-state energy in J, e.g. 0");
    }
    if (energy.has("schedule") && (energy.has("decay_time") || energy.has("decay_start"))) {
        energy.fail("schedule", "cannot be combined with decay_time or decay_start",
                    "write the single decay as one schedule entry {\"from\": start, \"decay_time\": tau}");
    }
    if (energy.has("decay_start") && !energy.has("decay_time")) {
        energy.fail("decay_start", "needs decay_time", "give decay_time (s), or remove decay_start");
    }
    if (energy.has("decay_time")) {
        EnergyDecay decay;
        decay.decay_time = energy.required<double>("decay_time");
        require_positive(energy, "decay_time", *decay.decay_time, "give the e-folding time in s, e.g. 1");
        decay.from = energy.optional<double>("decay_start", 0.0);
        if (!(decay.from >= 0.0)) {
            energy.fail("decay_start", "must be >= 0", "give the time (s) at which the decay starts");
        }
        target.schedule.push_back(decay);
    }
    for (auto& entry : energy.objects("schedule")) {
        EnergyDecay decay;
        decay.from = entry.required<double>("from");
        if (!(decay.from >= 0.0) ||
            (!target.schedule.empty() && !(decay.from > target.schedule.back().from))) {
            entry.fail("from", "must be >= 0 and increase from entry to entry",
                       "list the pieces in time order, e.g. [{\"from\": 1, \"decay_time\": 1}, "
                       "{\"from\": 1.5, \"decay_time\": 0.5}]");
        }
        if (entry.has("decay_time")) {
            decay.decay_time = entry.required<double>("decay_time");
            require_positive(entry, "decay_time", *decay.decay_time,
                             "give the e-folding time in s, or leave it out to conserve from `from` on");
        }
        entry.finish();
        target.schedule.push_back(decay);
    }
    return target;
}

void read_integrator(JsonObject& integrator, Scene& scene) {
    scene.integrator = integrator.optional<std::string>("type", scene.integrator);
    const auto& types = integrator_types();
    if (std::find(types.begin(), types.end(), scene.integrator) == types.end()) {
        std::string list;
        for (const auto& t : types) {
            list += (list.empty() ? "" : ", ") + t;
        }
        integrator.fail("type", "unknown integrator '" + scene.integrator + "'", "use one of: " + list);
    }
    IntegratorSettings& settings = scene.integrator_settings;
    reject_unless(integrator, "beta", scene.integrator, {"newmark"});
    reject_unless(integrator, "gamma", scene.integrator, {"newmark"});
    reject_unless(integrator, "alpha_min", scene.integrator, {"a_search"});
    reject_unless(integrator, "alpha_max", scene.integrator, {"a_search"});
    reject_unless(integrator, "energy", scene.integrator, {"a_search"});
    if (scene.integrator == "newmark") {
        settings.beta = integrator.optional<double>("beta", settings.beta);
        if (!(settings.beta > 0.0 && settings.beta <= 0.5)) {
            integrator.fail(
                "beta", "must be in (0, 0.5]",
                "use 0.25 (average acceleration); 0 would be explicit, which cannot keep contact");
        }
        settings.gamma = integrator.optional<double>("gamma", settings.gamma);
        if (!(settings.gamma >= 0.5 && settings.gamma <= 1.0)) {
            integrator.fail("gamma", "must be in [0.5, 1]",
                            "use 0.5 (no numerical damping) or more to damp high frequencies");
        }
    }
    if (scene.integrator == "a_search") {
        settings.alpha_min = integrator.optional<double>("alpha_min", settings.alpha_min);
        settings.alpha_max = integrator.optional<double>("alpha_max", settings.alpha_max);
        if (!(settings.alpha_min >= 0.0 && settings.alpha_min <= 4.0)) {
            integrator.fail("alpha_min", "must be in [0, 4]", "use the paper's 0");
        }
        if (!(settings.alpha_max >= settings.alpha_min && settings.alpha_max <= 4.0)) {
            integrator.fail("alpha_max", "needs alpha_min <= alpha_max <= 4",
                            "use the paper's 1.1; above 1 a step may amplify a stiff mode by up to "
                            "sqrt(alpha_max)");
        }
        JsonObject energy = integrator.optional_object("energy");
        settings.energy = read_energy_target(energy);
        energy.finish();
    }
}

Material read_material(JsonObject& body, BodyType type) {
    JsonObject object = body.object("material");
    Material material;
    if (type == BodyType::rod) {
        material.model = "rod"; // a rod has one model: Hooke's law in stretching, E I in bending
        for (const char* key : {"model", "poisson_ratio"}) {
            if (object.has(key)) {
                object.fail(key, "a rod has no such key (stretching follows E, bending E I)",
                            std::string("remove material.") + key);
            }
        }
    } else {
        material.model = object.optional<std::string>("model", material.model);
    }
    if (type == BodyType::shell && material.model != "neo_hookean" && material.model != "stvk") {
        object.fail("model",
                    "shells have membrane models \"neo_hookean\" and \"stvk\", not '" + material.model + "'",
                    "use \"neo_hookean\" (the default) or \"stvk\"");
    }
    const auto& models = material_models();
    if (type == BodyType::solid && std::find(models.begin(), models.end(), material.model) == models.end()) {
        std::string list;
        for (const auto& m : models) {
            list += (list.empty() ? "" : ", ") + m;
        }
        object.fail("model", "unknown material model '" + material.model + "'", "use one of: " + list);
    }
    material.youngs_modulus = object.required<double>("youngs_modulus");
    require_positive(object, "youngs_modulus", material.youngs_modulus,
                     "give Young's modulus in Pa, e.g. 1e6");
    // A rod (no cross-section deformation) has no Poisson ratio.
    material.poisson_ratio = type == BodyType::rod ? 0.0 : object.required<double>("poisson_ratio");
    if (!(material.poisson_ratio > -1.0 && material.poisson_ratio < 0.5)) {
        std::ostringstream problem;
        problem << "must be in (-1, 0.5), got " << material.poisson_ratio;
        object.fail("poisson_ratio", problem.str(),
                    "use a value such as 0.3 (0.5 is incompressible, not allowed)");
    }
    material.density = object.required<double>("density");
    require_positive(object, "density", material.density, "give the density in kg/m^3, e.g. 1000");
    detail::read_codim_material_keys(object, type, material);
    object.finish();
    return material;
}

Body read_body(JsonObject& object, std::size_t index, const std::string& directory) {
    Body body;
    body.named = object.has("name");
    body.name = object.optional<std::string>("name", "body" + std::to_string(index));
    if (body.named) {
        object.set_subject("body \"" + body.name + "\""); // named in the messages about its keys
    }
    body.type = detail::read_body_type(object);
    body.mesh = read_mesh_source(object, directory, body.type);
    body.scale = object.optional_uniform_or_vec3("scale", 1.0);
    for (int d = 0; d < 3; ++d) {
        require_positive(object, "scale", body.scale[static_cast<std::size_t>(d)],
                         "give positive scale factors, e.g. [1, 1, 1] (mirroring would invert tetrahedra)");
    }
    body.rotate_deg = object.optional<Vec3>("rotate_deg", Vec3{});
    body.translate = object.optional<Vec3>("translate", Vec3{});
    const std::string pivot = object.optional<std::string>("rotate_about", "origin");
    if (pivot != "origin" && pivot != "center") {
        object.fail("rotate_about", "must be \"origin\" or \"center\", got '" + pivot + "'",
                    "use \"origin\" (rotate about the mesh's origin) or \"center\" (about the body's own "
                    "centroid, so that rotating does not move it)");
    }
    body.rotate_about_center = pivot == "center";
    body.material = read_material(object, body.type);
    body.contact_offset = detail::read_contact_offset(object, body.type, body.material);
    body.velocity = object.optional<Vec3>("velocity", Vec3{});
    body.angular_velocity = object.optional<Vec3>("angular_velocity", Vec3{});
    for (auto& fixed : object.objects("fixed")) {
        body.fixed.push_back(read_box(fixed, "box"));
        fixed.finish();
    }
    for (auto& moving : object.objects("moving")) {
        MovingSelector selector;
        selector.box = read_box(moving, "box");
        if (!moving.has("velocity") && !moving.has("angular_velocity")) {
            moving.fail("velocity", "is missing: a moving box needs a velocity, an angular_velocity or both",
                        "add \"velocity\": [vx, vy, vz] (m/s) and/or \"angular_velocity\": [wx, wy, wz] "
                        "(rad/s) with \"center\"");
        }
        selector.motion = read_rigid_motion(moving);
        selector.window = read_window(moving);
        moving.finish();
        body.moving.push_back(selector);
    }
    for (auto& force : object.objects("forces")) {
        ForceSelector selector;
        selector.box = read_box(force, "box");
        selector.force = force.required<Vec3>("force");
        selector.window = read_window(force);
        force.finish();
        body.forces.push_back(selector);
    }
    object.finish();
    return body;
}

Obstacle read_obstacle(JsonObject& object, const std::string& directory) {
    Obstacle obstacle;
    if (object.has("plane") == object.has("mesh")) {
        object.fail(
            "plane", "give exactly one of \"plane\" and \"mesh\"",
            "write {\"plane\": {\"point\": [..], \"normal\": [..]}} or {\"mesh\": {\"file\": \"x.obj\"}}");
    }
    if (object.has("plane")) {
        JsonObject plane = object.object("plane");
        obstacle.kind = Obstacle::Kind::plane;
        obstacle.point = plane.required<Vec3>("point");
        obstacle.normal = plane.required<Vec3>("normal");
        plane.finish();
        const double length =
            std::sqrt(obstacle.normal[0] * obstacle.normal[0] + obstacle.normal[1] * obstacle.normal[1] +
                      obstacle.normal[2] * obstacle.normal[2]);
        if (!(length > 0.0)) {
            plane.fail("normal", "must not be the zero vector",
                       "give the direction of the free side, e.g. [0, 0, 1]");
        }
        for (auto& c : obstacle.normal) {
            c /= length;
        }
    } else {
        JsonObject mesh = object.object("mesh");
        obstacle.kind = Obstacle::Kind::mesh;
        obstacle.mesh.file_as_written = mesh.required<std::string>("file");
        obstacle.mesh.file = resolve_path(directory, obstacle.mesh.file_as_written);
        mesh.finish();
    }
    obstacle.scale = object.optional_uniform_or_vec3("scale", 1.0);
    for (int d = 0; d < 3; ++d) {
        require_positive(object, "scale", obstacle.scale[static_cast<std::size_t>(d)],
                         "give positive scale factors, e.g. [1, 1, 1] (mirroring would turn the obstacle's "
                         "triangles inside out)");
    }
    obstacle.rotate_deg = object.optional<Vec3>("rotate_deg", Vec3{});
    obstacle.translate = object.optional<Vec3>("translate", Vec3{});
    obstacle.motion = read_rigid_motion(object);
    const Vec3& w = obstacle.motion.angular_velocity;
    if (obstacle.kind == Obstacle::Kind::plane && (w[0] != 0.0 || w[1] != 0.0 || w[2] != 0.0)) {
        object.fail("angular_velocity", "is not supported for a plane (an infinite plane only translates)",
                    "use a mesh obstacle (.obj) for a rotating wall, or remove angular_velocity");
    }
    if (object.has("friction")) {
        obstacle.friction = object.required<double>("friction");
        if (!(*obstacle.friction >= 0.0)) {
            object.fail("friction", "must be >= 0",
                        "give the Coulomb coefficient against this obstacle, e.g. 0.5 (0 for frictionless; "
                        "leave it out to use contact.friction)");
        }
    }
    object.finish();
    return obstacle;
}

} // namespace

std::string body_label(const Body& body, std::size_t index) {
    const std::string label = "bodies[" + std::to_string(index) + "]";
    return body.named ? label + " (\"" + body.name + "\")" : label;
}

Scene parse_scene(const nlohmann::json& document, const std::string& file) {
    Scene scene;
    scene.file = file;
    scene.directory = fs::path(file).parent_path().string();
    JsonObject root(document, file, "", scene.resolved);
    // `$schema` points editors to the scene schema, relative to the scene's folder; it must be a string,
    // and the resolved scene (written to the output folder) leaves it out.
    if (root.has("$schema")) {
        root.required<std::string>("$schema");
        scene.resolved.erase("$schema");
    }

    // time: dt and either end or steps.
    JsonObject time = root.object("time");
    scene.dt = time.required<double>("dt");
    require_positive(time, "dt", scene.dt, "give the time step in seconds, e.g. 0.01");
    if (time.has("end") == time.has("steps")) {
        time.fail("end", "give exactly one of \"end\" (seconds) and \"steps\"",
                  "write \"end\": 2.0 or \"steps\": 200");
    }
    if (time.has("steps")) {
        scene.steps = time.required<int>("steps");
        if (scene.steps < 0) {
            time.fail("steps", "must be >= 0, got " + std::to_string(scene.steps),
                      "give a number of time steps");
        }
    } else {
        const double end = time.required<double>("end");
        if (!(end >= 0.0)) {
            time.fail("end", "must be >= 0", "give the end time in seconds");
        }
        const double steps = std::ceil(end / scene.dt - 1e-9);
        if (!(steps <= std::numeric_limits<int>::max())) {
            time.fail("end", "needs more than 2147483647 steps of dt", "shorten end or enlarge dt");
        }
        scene.steps = static_cast<int>(steps);
    }
    scene.end_time = scene.steps * scene.dt;
    scene.resolved["time"]["steps"] = scene.steps;
    time.finish();

    scene.gravity = root.optional<Vec3>("gravity", scene.gravity);

    auto bodies = root.objects("bodies");
    if (bodies.empty()) {
        root.fail("bodies", "must list at least one body",
                  "add \"bodies\": [ { \"mesh\": ..., \"material\": ... } ]");
    }
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        scene.bodies.push_back(read_body(bodies[i], i, scene.directory));
    }
    for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (scene.bodies[i].name == scene.bodies[j].name) {
                bodies[i].fail("name", "repeats the name of bodies[" + std::to_string(j) + "]",
                               "give every body its own name");
            }
        }
    }
    for (auto& obstacle : root.objects("obstacles")) {
        scene.obstacles.push_back(read_obstacle(obstacle, scene.directory));
    }

    JsonObject contact = root.optional_object("contact");
    scene.contact.enabled = contact.optional<bool>("enabled", true);
    if (contact.has("dhat")) {
        scene.contact.dhat = contact.required<double>("dhat");
        require_positive(contact, "dhat", *scene.contact.dhat, "give the contact distance in metres");
    }
    scene.contact.dhat_relative = contact.optional<double>("dhat_relative", scene.contact.dhat_relative);
    require_positive(contact, "dhat_relative", scene.contact.dhat_relative,
                     "give dhat as a fraction of the scene's bounding-box diagonal, e.g. 1e-3");
    scene.contact.friction = contact.optional<double>("friction", 0.0);
    if (!(scene.contact.friction >= 0.0)) {
        contact.fail("friction", "must be >= 0",
                     "give the Coulomb coefficient, e.g. 0.3 (0 for frictionless)");
    }
    scene.contact.epsv = contact.optional<double>("epsv", scene.contact.epsv);
    require_positive(contact, "epsv", scene.contact.epsv,
                     "give the friction smoothing velocity in m/s, e.g. 1e-3");
    scene.contact.friction_iterations =
        contact.optional<int>("friction_iterations", scene.contact.friction_iterations);
    if (scene.contact.friction_iterations < 1) {
        contact.fail("friction_iterations", "must be >= 1",
                     "give the most lagged friction solves per time step, e.g. 1 (the IPC default) or 3");
    }
    contact.finish();
    // The resolved scene names obstacle meshes by absolute path and always states the placement, the
    // motion and μ, so that `intact check` can place obstacles at any output time from the output folder
    // alone.
    const auto as_list = [](const Vec3& v) { return std::vector<double>(v.begin(), v.end()); };
    for (std::size_t k = 0; k < scene.obstacles.size(); ++k) {
        const Obstacle& obstacle = scene.obstacles[k];
        auto& resolved = scene.resolved["obstacles"][k];
        if (obstacle.kind == Obstacle::Kind::mesh) {
            std::error_code ec;
            const fs::path absolute = fs::absolute(obstacle.mesh.file, ec);
            resolved["mesh"]["file"] = ec ? obstacle.mesh.file : absolute.lexically_normal().string();
        }
        resolved["velocity"] = as_list(obstacle.motion.velocity);
        resolved["angular_velocity"] = as_list(obstacle.motion.angular_velocity);
        resolved["center"] = as_list(obstacle.motion.center);
        resolved["friction"] = scene.obstacle_friction(k);
    }

    JsonObject integrator = root.optional_object("integrator");
    read_integrator(integrator, scene);
    integrator.finish();

    JsonObject solver = root.optional_object("solver");
    // Default: `ipc`, the method whose steps end at the stopping rule. `al` was the default where bodies
    // can meet with friction until it was found to gain energy on impacts of stiff bodies and to brake
    // sliding late with one friction lag, every step reported converged (README "Solver framework").
    scene.solver = solver.optional<std::string>("type", "ipc");
    if (scene.solver != "ipc" && scene.solver != "al" && scene.solver != "bal" &&
        scene.solver != "stencil_descent") {
        solver.fail(
            "type", "unknown solver '" + scene.solver + "'",
            "use \"ipc\" (projected Newton with the log barrier), \"al\" (barrier-free augmented "
            "Lagrangian with a CCD-built active set; needs contact), \"bal\" (barrier-augmented "
            "Lagrangian with inexact Newton-PCG, for stiff scenes) or \"stencil_descent\" (Newton-free "
            "second-order stencil descent)");
    }
    if (solver.has("stencil_descent")) {
        if (scene.solver != "stencil_descent") {
            solver.fail("stencil_descent", "is set but solver.type is '" + scene.solver + "'",
                        "set solver.type to \"stencil_descent\", or remove solver.stencil_descent");
        }
        read_stencil_descent(solver.object("stencil_descent"), scene.stencil_descent);
    }
    if (scene.solver == "al" && !scene.contact.enabled) {
        solver.fail("type", "\"al\" needs contact, and contact.enabled is false",
                    "use solver.type \"ipc\" for scenes without contact, or enable contact");
    }
    read_bal_options(solver, scene);
    scene.fallback = solver.optional<std::string>("fallback", scene.fallback);
    if (scene.fallback != "ipc" && scene.fallback != "none") {
        solver.fail("fallback", "unknown fallback '" + scene.fallback + "'",
                    "use \"ipc\" (a step the certificate rejects is solved again from its start with "
                    "ipc) or \"none\" (it is kept and reported NOT CERTIFIED)");
    }
    scene.max_substeps = solver.optional<int>("max_substeps", scene.max_substeps);
    if (scene.max_substeps < 1 || (scene.max_substeps & (scene.max_substeps - 1)) != 0) {
        solver.fail(
            "max_substeps", "must be a power of two >= 1, got " + std::to_string(scene.max_substeps),
            "use 1 (a rejected step is kept and reported NOT CERTIFIED), or 2, 4, 8, 16 (the default: "
            "a rejected step is solved again in halves, down to 1/16 of the step)");
    }
    scene.preconditioner = solver.optional<std::string>("preconditioner", scene.preconditioner);
    if (scene.preconditioner != "block_jacobi" && scene.preconditioner != "decade_warm_start" &&
        scene.preconditioner != "rigid_coarse") {
        solver.fail("preconditioner", "unknown preconditioner '" + scene.preconditioner + "'",
                    "use \"block_jacobi\" (PCG from zero), \"decade_warm_start\" (PCG started from the "
                    "stiffness-decade group solve) or \"rigid_coarse\" (block Jacobi plus a coarse "
                    "correction on every body's rigid modes)");
    }
    if (solver.has("preconditioner") && scene.solver == "stencil_descent") {
        solver.fail("preconditioner", "is set but solver.type \"stencil_descent\" solves no global system",
                    "remove solver.preconditioner (it applies to \"ipc\", \"al\" and \"bal\")");
    }
    if (solver.has("al")) {
        if (scene.solver != "al") {
            solver.fail("al",
                        "is set but solver.type is '" + scene.solver + "'" +
                            (solver.has("type") ? "" : " (the default)"),
                        "set solver.type to \"al\", or remove solver.al");
        }
        JsonObject al = solver.object("al");
        AlOptions& o = scene.al;
        o.epsilon = al.optional<double>("epsilon", o.epsilon);
        if (!(o.epsilon > 0.0 && o.epsilon < 1.0)) {
            al.fail("epsilon", "must be in (0, 1)", "give the cumulative-TOI threshold, e.g. 1e-3");
        }
        if (al.has("k_min")) {
            o.k_min = al.required<int>("k_min");
            if (*o.k_min < 1) {
                al.fail("k_min", "must be >= 1",
                        "give the minimum outer iterations, e.g. 2 (6 with friction)");
            }
        }
        o.decay = al.optional<double>("decay", o.decay);
        if (!(o.decay >= 0.0 && o.decay <= 1.0)) {
            al.fail("decay", "must be in [0, 1]", "give Γ, the fade of inactive constraints, e.g. 0.9");
        }
        o.removal_threshold = al.optional<double>("removal_threshold", o.removal_threshold);
        if (!(o.removal_threshold >= 0.0 && o.removal_threshold < 1.0)) {
            al.fail("removal_threshold", "must be in [0, 1)",
                    "give the γ below which a constraint leaves, e.g. 0.01");
        }
        o.mu_scale = al.optional<double>("mu_scale", o.mu_scale);
        require_positive(al, "mu_scale", o.mu_scale, "give μ's factor on the Hessian diagonal, e.g. 0.1");
        if (al.has("offset")) {
            o.offset = al.required<double>("offset");
            require_positive(al, "offset", *o.offset, "give the contact offset δ in metres, e.g. 1e-3");
        }
        o.max_outer_iterations = al.optional<int>("max_outer_iterations", o.max_outer_iterations);
        if (o.max_outer_iterations < 1) {
            al.fail("max_outer_iterations", "must be >= 1", "allow at least one outer iteration, e.g. 300");
        }
        o.literal_order = al.optional<bool>("literal_order", o.literal_order);
        o.pure_penalty = al.optional<bool>("pure_penalty", o.pure_penalty);
        o.settle = al.optional<bool>("settle", o.settle);
        o.repair = al.optional<std::string>("repair", o.repair);
        if (o.repair != "without_fallback" && o.repair != "always" && o.repair != "never") {
            al.fail("repair", "unknown value '" + o.repair + "'",
                    "use \"without_fallback\" (settle on only where no fallback can solve the step again), "
                    "\"always\" (before the fallback) or \"never\"");
        }
        o.start = al.optional<std::string>("start", o.start);
        if (o.start != "inertial" && o.start != "positions") {
            al.fail("start", "unknown value '" + o.start + "'",
                    "use \"inertial\" (each step's iterate starts at the inertial target) or \"positions\" "
                    "(at the step's start positions, as the paper)");
        }
        al.finish();
    }
    if (solver.has("newton_tolerance")) {
        scene.newton_tolerance = solver.required<double>("newton_tolerance");
        require_positive(solver, "newton_tolerance", *scene.newton_tolerance,
                         "give the Newton tolerance in m/s (‖Δx‖∞ / h), e.g. 1e-3");
    }
    if (solver.has("acceleration_tolerance")) {
        scene.acceleration_tolerance = solver.required<double>("acceleration_tolerance");
        require_positive(solver, "acceleration_tolerance", *scene.acceleration_tolerance,
                         "give the largest unbalanced force per mass in m/s² at which a step may end, "
                         "e.g. 1e-3");
    }
    scene.max_newton_iterations = solver.optional<int>("max_newton_iterations", scene.max_newton_iterations);
    if (scene.max_newton_iterations < 1) {
        solver.fail("max_newton_iterations", "must be >= 1", "allow at least one Newton iteration, e.g. 100");
    }
    scene.linear_tolerance = solver.optional<double>("linear_tolerance", scene.linear_tolerance);
    scene.linear_forcing = solver.optional<std::string>("linear_forcing", scene.linear_forcing);
    if (scene.linear_forcing != "eisenstat_walker" && scene.linear_forcing != "fixed") {
        solver.fail("linear_forcing", "unknown value '" + scene.linear_forcing + "'",
                    "use \"eisenstat_walker\" (PCG's tolerance follows the Newton residual, with "
                    "solver.linear_tolerance as its floor) or \"fixed\" (solver.linear_tolerance on every "
                    "solve)");
    }
    if (!(scene.linear_tolerance > 0.0 && scene.linear_tolerance < 1.0)) {
        solver.fail("linear_tolerance", "must be in (0, 1)", "give the relative PCG residual, e.g. 1e-5");
    }
    scene.max_linear_iterations = solver.optional<int>("max_linear_iterations", scene.max_linear_iterations);
    if (scene.max_linear_iterations < 1) {
        solver.fail("max_linear_iterations", "must be >= 1", "allow at least one PCG iteration, e.g. 2000");
    }
    solver.finish();

    JsonObject output = root.optional_object("output");
    scene.output_dir = output.optional<std::string>("dir", scene.output_dir);
    if (scene.output_dir.empty()) {
        output.fail("dir", "must not be empty", "give a folder for the results, e.g. \"output\"");
    }
    scene.output_every = output.optional<int>("every", scene.output_every);
    if (scene.output_every < 1) {
        output.fail("every", "must be >= 1", "write every n-th step, e.g. 1");
    }
    const std::string format = output.optional<std::string>("format", "binary");
    if (format != "binary" && format != "ascii") {
        output.fail("format", "must be \"binary\" or \"ascii\", got '" + format + "'",
                    "use \"binary\" (smaller, faster)");
    }
    scene.output_binary = format == "binary";
    scene.checkpoint_every = output.optional<int>("checkpoint_every", scene.checkpoint_every);
    if (scene.checkpoint_every < 0) {
        output.fail("checkpoint_every", "must be >= 0, got " + std::to_string(scene.checkpoint_every),
                    "give the number of steps between checkpoints, e.g. 100, or 0 for none");
    }
    scene.checkpoint_seconds = output.optional<double>("checkpoint_seconds", scene.checkpoint_seconds);
    if (!(scene.checkpoint_seconds >= 0.0) || !std::isfinite(scene.checkpoint_seconds)) {
        output.fail("checkpoint_seconds", "must be a finite number >= 0",
                    "give the wall-clock seconds between checkpoints, e.g. 1800, or 0 for none");
    }
    output.finish();

    JsonObject partition = root.optional_object("partition");
    if (partition.has("file")) {
        scene.partition_file = resolve_path(scene.directory, partition.required<std::string>("file"));
    }
    partition.finish();

    JsonObject parallel = root.optional_object("parallel");
    scene.halo_transport = parallel.optional<std::string>("halo_transport", scene.halo_transport);
    const auto transports = comm::available_transports();
    if (scene.halo_transport != "auto" &&
        std::find(transports.begin(), transports.end(), scene.halo_transport) == transports.end()) {
        std::string list = "auto";
        for (const auto& t : transports) {
            list += ", " + t;
        }
        parallel.fail("halo_transport", "'" + scene.halo_transport + "' is not available in this build",
                      "use one of: " + list + " (NCCL needs a build against a CUDA Kokkos with NCCL)");
    }
    parallel.finish();

    root.finish();
    return scene;
}

Scene load_scene(const std::string& file, const std::vector<std::string>& overrides) {
    std::ifstream in(file);
    if (!in) {
        throw InputError("cannot open scene file '" + file + "': " + std::strerror(errno) +
                         "; fix: check the path");
    }
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json document;
    try {
        // Reject repeated keys in one object (JSON allows them; the last one would silently win).
        std::vector<std::set<std::string>> open_objects;
        std::string repeated;
        const nlohmann::json::parser_callback_t check_keys = [&](int, nlohmann::json::parse_event_t event,
                                                                 nlohmann::json& parsed) {
            if (event == nlohmann::json::parse_event_t::object_start) {
                open_objects.emplace_back();
            } else if (event == nlohmann::json::parse_event_t::object_end && !open_objects.empty()) {
                open_objects.pop_back();
            } else if (event == nlohmann::json::parse_event_t::key && !open_objects.empty() &&
                       !open_objects.back().insert(parsed.get<std::string>()).second && repeated.empty()) {
                repeated = parsed.get<std::string>();
            }
            return true;
        };
        document = nlohmann::json::parse(text.str(), check_keys);
        if (!repeated.empty()) {
            throw InputError(input_error_message(file, repeated, "appears twice in the same object",
                                                 "keep one of the two entries"));
        }
    } catch (const nlohmann::json::parse_error& error) {
        throw InputError(input_error_message(file, "", std::string("is not valid JSON: ") + error.what(),
                                             "fix the syntax at the byte position given"));
    } catch (const nlohmann::json::exception& error) {
        // For example a number too large for a double (1e999).
        throw InputError(input_error_message(file, "", std::string("cannot be read: ") + error.what(),
                                             "write numbers that fit a double"));
    }
    for (const auto& assignment : overrides) {
        apply_override(document, assignment, file);
    }
    Scene scene = parse_scene(document, file);
    scene.overrides = overrides;
    return scene;
}

} // namespace intact::io
