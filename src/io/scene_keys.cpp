#include "src/io/scene_keys.hpp"

#include "src/io/scene.hpp"

#include <sstream>

namespace intact::io {

SceneKey& SceneKey::means(std::string text) {
    meaning = std::move(text);
    return *this;
}
SceneKey& SceneKey::needed() {
    required = true;
    return *this;
}
SceneKey& SceneKey::default_value(nlohmann::json value) {
    fallback = std::move(value);
    return *this;
}
SceneKey& SceneKey::default_text(std::string text) {
    fallback_text = std::move(text);
    return *this;
}
SceneKey& SceneKey::above(double x) {
    lo = KeyBound{x, true};
    return *this;
}
SceneKey& SceneKey::at_least(double x) {
    lo = KeyBound{x, false};
    return *this;
}
SceneKey& SceneKey::below(double x) {
    hi = KeyBound{x, true};
    return *this;
}
SceneKey& SceneKey::at_most(double x) {
    hi = KeyBound{x, false};
    return *this;
}
SceneKey& SceneKey::one_of(std::vector<std::string> names) {
    values = std::move(names);
    return *this;
}
SceneKey& SceneKey::only_when(std::string setting) {
    only_with = std::move(setting);
    return *this;
}
SceneKey& SceneKey::for_example(nlohmann::json value) {
    example = std::move(value);
    return *this;
}

namespace {

SceneKey key(std::string path, KeyType type) {
    SceneKey k;
    k.path = std::move(path);
    k.type = type;
    return k;
}
SceneKey number(std::string path) {
    return key(std::move(path), KeyType::number);
}
SceneKey integer(std::string path) {
    return key(std::move(path), KeyType::integer);
}
SceneKey boolean(std::string path) {
    return key(std::move(path), KeyType::boolean);
}
SceneKey text(std::string path) {
    return key(std::move(path), KeyType::string);
}
SceneKey vec3(std::string path) {
    return key(std::move(path), KeyType::vec3);
}
SceneKey object(std::string path) {
    return key(std::move(path), KeyType::object);
}
SceneKey list(std::string path) {
    return key(std::move(path), KeyType::object_array);
}

const nlohmann::json zero3 = {0.0, 0.0, 0.0};

// `box.min` and `box.max` of a selector box (world coordinates, after the body's transform).
void add_selector_box(std::vector<SceneKey>& keys, const std::string& owner, const std::string& what) {
    keys.push_back(object(owner + ".box").needed().means(what + ", in world coordinates"));
    keys.push_back(
        vec3(owner + ".box.min").needed().means("lower corner, m").for_example({-1.0, -1.0, -1.0}));
    keys.push_back(
        vec3(owner + ".box.max").needed().means("upper corner, m (min ≤ max)").for_example({1.0, 1.0, 1.0}));
}

// `start` and `end` of a moving box or a force.
void add_window(std::vector<SceneKey>& keys, const std::string& owner, const std::string& what) {
    keys.push_back(
        number(owner + ".start").at_least(0.0).default_value(0.0).means("s; " + what + " begins then"));
    keys.push_back(number(owner + ".end")
                       .default_text("none")
                       .means("s, after `start`; " + what + " stops then")
                       .for_example(1.0));
}

// `velocity`, `angular_velocity` and `center` of a rigid motion.
void add_rigid_motion(std::vector<SceneKey>& keys, const std::string& owner, const std::string& about) {
    keys.push_back(vec3(owner + ".velocity").default_value(zero3).means("m/s; " + about));
    keys.push_back(vec3(owner + ".angular_velocity")
                       .default_value(zero3)
                       .means("rad/s, right-handed about its direction, through `center`"));
    keys.push_back(
        vec3(owner + ".center")
            .default_text("required with `angular_velocity`")
            .means("m, a point of the rotation axis when the motion starts; travels with `velocity`")
            .for_example(zero3));
}

// `scale`, `rotate_deg` and `translate` of a body or an obstacle.
void add_placement(std::vector<SceneKey>& keys, const std::string& owner, const std::string& pivot) {
    keys.push_back(key(owner + ".scale", KeyType::number_or_vec3)
                       .above(0.0)
                       .default_value(1.0)
                       .means("one factor or [sx, sy, sz]; applied first, about " + pivot));
    keys.push_back(vec3(owner + ".rotate_deg")
                       .default_value(zero3)
                       .means("Euler angles in degrees about x, then y, then z; applied second"));
    keys.push_back(vec3(owner + ".translate").default_value(zero3).means("m, applied last"));
}

std::vector<SceneKey> build_table() {
    std::vector<SceneKey> k;
    k.push_back(text("$schema")
                    .means("the JSON Schema this file follows, for editors that complete and check "
                           "keys (for example \"../docs/scene.schema.json\"); the run does not use it")
                    .default_text("none")
                    .for_example("scene.schema.json"));

    k.push_back(object("time").needed().means("the time steps: `dt` and either `end` or `steps`"));
    k.push_back(number("time.dt").needed().above(0.0).means("time step h, s").for_example(0.01));
    k.push_back(number("time.end")
                    .at_least(0.0)
                    .default_text("give `end` or `steps`")
                    .means("end time, s; the run takes ceil(end / dt) steps")
                    .for_example(1.0));
    k.push_back(integer("time.steps")
                    .at_least(0.0)
                    .default_text("give `end` or `steps`")
                    .means("number of time steps")
                    .for_example(1));

    k.push_back(vec3("gravity").default_value({0.0, 0.0, -9.81}).means("m/s²; z is up by default"));

    k.push_back(list("bodies").needed().means("the deformable bodies, at least one"));
    k.push_back(text("bodies[].name")
                    .default_text("`body<i>`")
                    .means("unique name, used in messages")
                    .for_example("block"));
    k.push_back(
        text("bodies[].type")
            .one_of({"solid", "shell", "rod"})
            .default_value("solid")
            .means("tetrahedra, triangles (cloth, sheets) or segments (ropes, hair); see Shells and rods"));
    k.push_back(
        object("bodies[].mesh").needed().means("the body's elements: `file`, `box`, `sheet` or `rod`"));
    k.push_back(
        text("bodies[].mesh.file")
            .default_text("give `file` or `box`")
            .means(
                "solids: a tet mesh (.msh .mesh .node/.ele .vtu .vtk); shells: triangles (.obj .msh); rods: "
                "segments (.obj .msh); relative to the scene file's folder")
            .for_example("meshes/block.msh"));
    k.push_back(object("bodies[].mesh.box").default_text("give `file` or `box`").means("a generated box"));
    k.push_back(vec3("bodies[].mesh.box.min").needed().means("lower corner, m").for_example({0.0, 0.0, 0.0}));
    k.push_back(vec3("bodies[].mesh.box.max")
                    .needed()
                    .means("upper corner, m (above `min` on every axis)")
                    .for_example({0.1, 0.1, 0.1}));
    k.push_back(key("bodies[].mesh.box.cells", KeyType::int3)
                    .at_least(1.0)
                    .default_value({1, 1, 1})
                    .means("hexahedral cells along x, y and z, 6 tetrahedra each"));
    k.push_back(object("bodies[].mesh.sheet")
                    .default_text("shells: give `file` or `sheet`")
                    .means("a generated rectangle in the xy-plane from the origin, split into triangles"));
    k.push_back(
        number("bodies[].mesh.sheet.length").needed().above(0.0).means("extent along x, m").for_example(1.0));
    k.push_back(
        number("bodies[].mesh.sheet.width").needed().above(0.0).means("extent along y, m").for_example(1.0));
    k.push_back(integer("bodies[].mesh.sheet.cells_x").at_least(1.0).default_value(1).means("cells along x"));
    k.push_back(integer("bodies[].mesh.sheet.cells_y").at_least(1.0).default_value(1).means("cells along y"));
    k.push_back(object("bodies[].mesh.rod")
                    .default_text("rods: give `file` or `rod`")
                    .means("a generated straight rod of equal segments"));
    k.push_back(vec3("bodies[].mesh.rod.start").needed().means("first end, m").for_example({0.0, 0.0, 0.0}));
    k.push_back(vec3("bodies[].mesh.rod.end").needed().means("second end, m").for_example({1.0, 0.0, 0.0}));
    k.push_back(integer("bodies[].mesh.rod.segments").at_least(1.0).default_value(1).means("segments"));
    add_placement(k, "bodies[]", "the mesh's own origin");
    k.push_back(text("bodies[].rotate_about")
                    .one_of({"origin", "center"})
                    .default_value("origin")
                    .means("rotate about the mesh's origin, or about the scaled mesh's centroid"));
    k.push_back(object("bodies[].material").needed().means("the body's material"));
    k.push_back(text("bodies[].material.model")
                    .one_of(material_models())
                    .default_value("neo_hookean")
                    .means("constitutive model (see Materials)"));
    k.push_back(number("bodies[].material.youngs_modulus")
                    .needed()
                    .above(0.0)
                    .means("Young's modulus E, Pa")
                    .for_example(1e6));
    k.push_back(number("bodies[].material.poisson_ratio")
                    .needed()
                    .above(-1.0)
                    .below(0.5)
                    .means("Poisson's ratio ν")
                    .for_example(0.3));
    k.push_back(number("bodies[].material.density").needed().above(0.0).means("kg/m³").for_example(1000.0));
    k.push_back(number("bodies[].material.thickness")
                    .above(0.0)
                    .default_text("required for shells")
                    .means("a shell's thickness, m (its mass and stiffness per area)")
                    .for_example(1e-3));
    k.push_back(number("bodies[].material.radius")
                    .above(0.0)
                    .default_text("required for rods")
                    .means("a rod's radius, m (its mass and stiffness per length)")
                    .for_example(1e-3));
    k.push_back(number("bodies[].material.bending_stiffness")
                    .above(0.0)
                    .default_text("shells E h³ / (12 (1 − ν²)), rods E π r⁴ / 4")
                    .means("shells: k_b, J; rods: E I, N m²")
                    .for_example(1e-3));
    k.push_back(number("bodies[].contact_offset")
                    .at_least(0.0)
                    .default_text("shells `thickness` / 2, rods `radius`; solids have none")
                    .means("shells and rods: the contact offset, m; contact keeps the body's primitives this "
                           "far from others beyond their own offsets (plus the gap d̂); see Shells and rods")
                    .for_example(5e-4));
    k.push_back(vec3("bodies[].velocity").default_value(zero3).means("initial velocity, m/s"));
    k.push_back(vec3("bodies[].angular_velocity")
                    .default_value(zero3)
                    .means("initial spin ω, rad/s, about the centre of mass"));
    k.push_back(list("bodies[].fixed")
                    .default_value(nlohmann::json::array())
                    .means("boxes whose nodes are held in place"));
    add_selector_box(k, "bodies[].fixed[]", "the nodes held");
    k.push_back(list("bodies[].moving")
                    .default_value(nlohmann::json::array())
                    .means("boxes whose nodes move rigidly"));
    add_selector_box(k, "bodies[].moving[]", "the nodes that move");
    add_rigid_motion(k, "bodies[].moving[]", "give it, `angular_velocity`, or both");
    add_window(k, "bodies[].moving[]", "the motion");
    k.push_back(list("bodies[].forces")
                    .default_value(nlohmann::json::array())
                    .means("total forces on the nodes of boxes"));
    add_selector_box(k, "bodies[].forces[]", "the nodes at time 0 that share the force");
    k.push_back(
        vec3("bodies[].forces[].force").needed().means("total force, N").for_example({0.0, 0.0, -1.0}));
    add_window(k, "bodies[].forces[]", "the force");

    k.push_back(list("obstacles")
                    .default_value(nlohmann::json::array())
                    .means("rigid obstacles, static or moving: a `plane` or a `mesh` each"));
    k.push_back(
        object("obstacles[].plane").default_text("give `plane` or `mesh`").means("an infinite plane"));
    k.push_back(vec3("obstacles[].plane.point").needed().means("a point on the plane, m").for_example(zero3));
    k.push_back(vec3("obstacles[].plane.normal")
                    .needed()
                    .means("normal towards the free side (any non-zero length)")
                    .for_example({0.0, 0.0, 1.0}));
    k.push_back(object("obstacles[].mesh")
                    .default_text("give `plane` or `mesh`")
                    .means("a Wavefront .obj: triangles, segments (`l`) and points"));
    k.push_back(text("obstacles[].mesh.file")
                    .needed()
                    .means("the .obj file, relative to the scene file's folder")
                    .for_example("meshes/wall.obj"));
    add_placement(k, "obstacles[]", "the origin");
    add_rigid_motion(k, "obstacles[]",
                     "the obstacle moves rigidly from its placement (planes only translate)");
    k.push_back(number("obstacles[].friction")
                    .at_least(0.0)
                    .default_text("`contact.friction`")
                    .means("Coulomb μ of contacts with this obstacle")
                    .for_example(0.5));

    k.push_back(object("contact").means("contact between bodies (self-contact included) and with obstacles"));
    k.push_back(boolean("contact.enabled").default_value(true).means("whether anything takes contact"));
    k.push_back(number("contact.dhat")
                    .above(0.0)
                    .default_text("`dhat_relative` × bbox diagonal")
                    .means("contact distance d̂, m")
                    .for_example(1e-3));
    k.push_back(number("contact.dhat_relative")
                    .above(0.0)
                    .default_value(1e-3)
                    .means("d̂ relative to the scene's bounding-box diagonal, when `dhat` is absent"));
    k.push_back(number("contact.friction")
                    .at_least(0.0)
                    .default_value(0.0)
                    .means("Coulomb coefficient μ (0: frictionless)"));
    k.push_back(
        number("contact.epsv").above(0.0).default_value(1e-3).means("friction smoothing velocity ε_v, m/s"));
    k.push_back(integer("contact.friction_iterations")
                    .at_least(1.0)
                    .default_value(1)
                    .means("lagged friction solves per step at most"));

    k.push_back(object("integrator").means("the time integrator"));
    k.push_back(text("integrator.type")
                    .one_of(integrator_types())
                    .default_value("implicit_euler")
                    .means("the time integrator"));
    k.push_back(number("integrator.beta")
                    .above(0.0)
                    .at_most(0.5)
                    .default_value(0.25)
                    .only_when("integrator.type=newmark")
                    .means("Newmark β"));
    k.push_back(number("integrator.gamma")
                    .at_least(0.5)
                    .at_most(1.0)
                    .default_value(0.5)
                    .only_when("integrator.type=newmark")
                    .means("Newmark γ (0.25, 0.5: average acceleration, no numerical damping)"));
    k.push_back(number("integrator.alpha_min")
                    .at_least(0.0)
                    .at_most(4.0)
                    .default_value(0.0)
                    .only_when("integrator.type=a_search")
                    .means("lower end of α's clip interval (≤ alpha_max)"));
    k.push_back(number("integrator.alpha_max")
                    .at_least(0.0)
                    .at_most(4.0)
                    .default_value(1.1)
                    .only_when("integrator.type=a_search")
                    .means("upper end of α's clip interval"));
    k.push_back(
        object("integrator.energy").only_when("integrator.type=a_search").means("A-search's energy target"));
    k.push_back(number("integrator.energy.scale")
                    .above(0.0)
                    .default_value(1.0)
                    .means("first target = scale × the initial total energy"));
    k.push_back(number("integrator.energy.decay_time")
                    .above(0.0)
                    .default_text("none (conserve)")
                    .means("e-folding time τ, s, of the target towards `ground_energy`")
                    .for_example(1.0));
    k.push_back(number("integrator.energy.decay_start")
                    .at_least(0.0)
                    .default_value(0.0)
                    .means("with `decay_time`: time, s, from which the target decays"));
    k.push_back(number("integrator.energy.ground_energy")
                    .default_value(0.0)
                    .means("E_g, J, the level a decay tends to"));
    k.push_back(list("integrator.energy.schedule")
                    .default_value(nlohmann::json::array())
                    .means("a piecewise decay, instead of `decay_time` and `decay_start`"));
    k.push_back(number("integrator.energy.schedule[].from")
                    .needed()
                    .at_least(0.0)
                    .means("s, increasing from piece to piece: the piece starts then")
                    .for_example(0.0));
    k.push_back(number("integrator.energy.schedule[].decay_time")
                    .above(0.0)
                    .default_text("none (conserve)")
                    .means("e-folding time τ, s, from `from` on")
                    .for_example(1.0));

    k.push_back(object("solver").means("the method and its tolerances"));
    k.push_back(text("solver.type")
                    .one_of({"ipc", "al", "bal", "stencil_descent"})
                    .default_value("ipc")
                    .means("the method (see Choosing a method)"));
    k.push_back(
        text("solver.fallback")
            .one_of({"ipc", "none"})
            .default_value("ipc")
            .means("`ipc`: a step of `al`, `bal` or `stencil_descent` that the step certificate rejects is "
                   "solved again from its start with `ipc`; `none`: kept as the method ended it (no substeps "
                   "either) and "
                   "reported NOT CERTIFIED"));
    k.push_back(integer("solver.max_substeps")
                    .at_least(1.0)
                    .default_value(16)
                    .means("a power of two: a step the step certificate still rejects after its repairs is "
                           "solved again from its start in halves, quarters, ... down to 1/max_substeps of "
                           "the step (implicit Euler and implicit midpoint; not with solver.fallback "
                           "`none`); 1: never"));
    k.push_back(text("solver.preconditioner")
                    .one_of({"rigid_coarse", "block_jacobi", "decade_warm_start"})
                    .default_value("rigid_coarse")
                    .means("PCG's preconditioner (not for `stencil_descent`)"));
    k.push_back(number("solver.newton_tolerance")
                    .above(0.0)
                    .default_text("1e-2 × bbox diagonal per second")
                    .means("ε_d, m/s: a step may end only when ‖Δx‖∞ / h < ε_d")
                    .for_example(1e-3));
    k.push_back(number("solver.acceleration_tolerance")
                    .above(0.0)
                    .default_text("1e-4 × |gravity|")
                    .means("ε_a, m/s²: largest unbalanced force per mass at a step's end")
                    .for_example(1e-3));
    k.push_back(
        integer("solver.max_newton_iterations")
            .at_least(1.0)
            .default_value(100)
            .means("per (lagged) solve; past it the step is reported unconverged and the run goes on"));
    k.push_back(number("solver.linear_tolerance")
                    .above(0.0)
                    .below(1.0)
                    .default_value(1e-5)
                    .means("relative residual at which PCG stops (with `eisenstat_walker`: the tightest it "
                           "asks for)"));
    k.push_back(
        text("solver.linear_forcing")
            .one_of({"eisenstat_walker", "fixed"})
            .default_value("eisenstat_walker")
            .means("`ipc`'s PCG tolerance per Newton iteration: `eisenstat_walker` (0.9 (‖∇E‖ / previous "
                   "‖∇E‖)², between `linear_tolerance` and 0.1) or `fixed` (`linear_tolerance` always)"));
    k.push_back(integer("solver.max_linear_iterations")
                    .at_least(1.0)
                    .default_value(2000)
                    .means("PCG iterations per Newton iteration at most"));

    const AlOptions al;
    k.push_back(object("solver.al").only_when("solver.type=al").means("the augmented Lagrangian's settings"));
    k.push_back(number("solver.al.epsilon")
                    .above(0.0)
                    .below(1.0)
                    .default_value(al.epsilon)
                    .means("ε: a step ends when the cumulative-TOI weight B < ε"));
    k.push_back(integer("solver.al.k_min")
                    .at_least(1.0)
                    .default_text("6 with friction, else 2")
                    .means("K_min: outer iterations at least")
                    .for_example(2));
    k.push_back(number("solver.al.decay")
                    .at_least(0.0)
                    .at_most(1.0)
                    .default_value(al.decay)
                    .means("Γ: γ's factor per inactive update"));
    k.push_back(number("solver.al.removal_threshold")
                    .at_least(0.0)
                    .below(1.0)
                    .default_value(al.removal_threshold)
                    .means("a constraint whose γ falls below this leaves the set"));
    k.push_back(number("solver.al.mu_scale")
                    .above(0.0)
                    .default_value(al.mu_scale)
                    .means("μ = this × the largest diagonal entry of ∇²E at the step's start"));
    k.push_back(number("solver.al.offset")
                    .above(0.0)
                    .default_text("`contact.dhat`")
                    .means("δ, the gap the constraints aim for, m")
                    .for_example(1e-3));
    k.push_back(
        integer("solver.al.max_outer_iterations")
            .at_least(1.0)
            .default_value(al.max_outer_iterations)
            .means("cap per friction lag; past it the step ends at its last safe state, unconverged"));
    k.push_back(
        boolean("solver.al.literal_order")
            .default_value(al.literal_order)
            .means("the paper's Alg. 1 order (solve, then update the set) instead of update-then-solve"));
    k.push_back(boolean("solver.al.pure_penalty")
                    .default_value(al.pure_penalty)
                    .means("hold λ at 0 (the paper's ablation; it stalls under load)"));
    k.push_back(boolean("solver.al.settle")
                    .default_value(al.settle)
                    .means("iterate past B < ε until the stopping rule passes"));
    k.push_back(text("solver.al.repair")
                    .one_of({"without_fallback", "always", "never"})
                    .default_value(al.repair)
                    .means("when a step that ends unbalanced settles on from where it stopped: only where no "
                           "fallback can solve it again (A-search, solver.fallback \"none\"), always (before "
                           "the fallback), or never (the paper's steps as they end)"));
    k.push_back(text("solver.al.start")
                    .one_of({"inertial", "positions"})
                    .default_value(al.start)
                    .means("where each step's iterate starts: the inertial target x̂, or xᵗ (the paper)"));

    const BalOptions bal;
    k.push_back(object("solver.bal")
                    .only_when("solver.type=bal")
                    .means("the barrier-augmented Lagrangian's settings"));
    k.push_back(
        number("solver.bal.augment_distance")
            .above(0.0)
            .default_text("1e-2 × d̂")
            .means("m: closer pairs join the augmentation set A′, and σ grows while a pair is that close")
            .for_example(1e-5));
    k.push_back(number("solver.bal.sigma_growth")
                    .at_least(1.0)
                    .default_value(bal.sigma_growth)
                    .means("σ's factor per iteration that leaves a pair closer than `augment_distance`"));
    k.push_back(number("solver.bal.sigma_jump")
                    .at_least(1.0)
                    .default_value(bal.sigma_jump)
                    .means("σ's jump target, this × σ₀"));
    k.push_back(text("solver.bal.sigma_rule")
                    .one_of({"min", "max"})
                    .default_value(bal.sigma_rule)
                    .means("`min`: σ ← max(σ, min(growth σ, jump σ₀)); `max`: σ ← max(growth σ, jump σ₀) "
                           "(the paper)"));
    k.push_back(number("solver.bal.tolerance")
                    .above(0.0)
                    .below(1.0)
                    .default_value(bal.tolerance)
                    .means("a step ends when ‖∇L‖ ≤ this × ‖∇L‖ at its first iterate"));
    k.push_back(number("solver.bal.pcg_tolerance")
                    .above(0.0)
                    .below(1.0)
                    .default_value(bal.pcg_tolerance)
                    .means("relative PCG residual of each inexact Newton step (replaces "
                           "`solver.linear_tolerance`)"));
    k.push_back(integer("solver.bal.stall_window")
                    .at_least(1.0)
                    .default_value(bal.stall_window)
                    .means("PCG stops when it has stalled over this many iterations"));
    k.push_back(text("solver.bal.stall_test")
                    .one_of({"energy", "residual"})
                    .default_value(bal.stall_test)
                    .means("what \"stalled\" means: CG's quadratic model, or the residual (the paper)"));
    k.push_back(
        text("solver.bal.friction_update")
            .one_of({"per_solve", "per_iteration"})
            .default_value(bal.friction_update)
            .means("lag friction once at the step's start, or at every Newton iteration (the paper)"));

    const StencilDescentOptions sd;
    const std::string s = "solver.stencil_descent.";
    k.push_back(object("solver.stencil_descent")
                    .only_when("solver.type=stencil_descent")
                    .means("stencil descent's settings"));
    k.push_back(
        integer(s + "cg_iterations")
            .at_least(1.0)
            .default_value(sd.cg_iterations)
            .means(
                "CG iterations per stencil and sweep (12 = a stencil's DOFs: an exact local Newton step)"));
    k.push_back(
        integer(s + "colors")
            .at_least(1.0)
            .at_most(254.0)
            .default_value(sd.colors)
            .means("T, colors per scheme; stencils that find none are grey (Jacobi only) in that scheme"));
    k.push_back(
        integer(s + "schemes")
            .at_least(1.0)
            .at_most(8.0)
            .default_value(sd.schemes)
            .means("S, complementary color schemes; more are added until every tet has a color in one"));
    k.push_back(
        number(s + "toi_factor")
            .above(0.0)
            .below(1.0)
            .default_value(sd.toi_factor)
            .means("a stencil step clipped by its local CCD or inversion bound takes this fraction of it"));
    k.push_back(integer(s + "max_sweeps")
                    .at_least(1.0)
                    .default_value(sd.max_sweeps)
                    .means("sweeps per step at most, lag loop included"));
    k.push_back(number(s + "tolerance")
                    .at_least(0.0)
                    .below(1.0)
                    .default_value(sd.tolerance)
                    .means("relative gradient norm that ends a step"));
    k.push_back(integer(s + "element_batch")
                    .at_least(0.0)
                    .default_value(sd.element_batch)
                    .means("elements whose gradients and Hessians a sweep holds at once (0: automatic)"));
    k.push_back(integer(s + "regular_ccd_every")
                    .at_least(1.0)
                    .default_value(sd.regular_ccd_every)
                    .means("sweeps between regular CCDs (broad phase over every primitive)"));
    k.push_back(boolean(s + "accept_updates")
                    .default_value(sd.accept_updates)
                    .means("the energy test on each sweep's update; false: the paper's sweep"));
    k.push_back(integer(s + "warm_start_sweeps")
                    .at_least(0.0)
                    .default_value(sd.warm_start_sweeps)
                    .means("warm-start sweeps per step at most (0: none)"));

    k.push_back(object("output").means("what is written, and where"));
    k.push_back(text("output.dir")
                    .default_value("output")
                    .means("results folder, relative to the working folder (`--output` replaces it)"));
    k.push_back(integer("output.every").at_least(1.0).default_value(1).means("write every n-th step"));
    k.push_back(text("output.format")
                    .one_of({"binary", "ascii"})
                    .default_value("binary")
                    .means("encoding of the .vtu pieces"));
    k.push_back(
        integer("output.checkpoint_every")
            .at_least(0.0)
            .default_value(0)
            .means("write a checkpoint after every n-th step and after the last (0: none by step count)"));
    k.push_back(
        number("output.checkpoint_seconds")
            .at_least(0.0)
            .default_value(0.0)
            .means("write a checkpoint when this much wall time, s, has passed since the last, and after "
                   "the last step (0: none by time)"));

    k.push_back(object("partition").means("a saved partition instead of METIS at start-up"));
    k.push_back(text("partition.file")
                    .default_text("none")
                    .means("a partition written by `intact partition` (as `--partition`), relative to the "
                           "scene file")
                    .for_example("scene.part.2"));
    k.push_back(object("parallel").means("parallel settings"));
    k.push_back(
        text("parallel.halo_transport")
            .one_of({"auto", "mpi", "nccl"})
            .default_value("auto")
            .means("halo exchange transport; `auto` is NCCL when built in, else MPI (`nccl` needs a CUDA "
                   "build with NCCL)"));
    return k;
}

std::string parent_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string leaf_of(const std::string& path) {
    const auto dot = path.rfind('.');
    return dot == std::string::npos ? path : path.substr(dot + 1);
}

// The numeric bounds as JSON Schema keywords (on a number, or on every item of a vector).
void add_bounds(nlohmann::ordered_json& schema, const SceneKey& key) {
    if (key.lo) {
        schema[key.lo->exclusive ? "exclusiveMinimum" : "minimum"] = key.lo->value;
    }
    if (key.hi) {
        schema[key.hi->exclusive ? "exclusiveMaximum" : "maximum"] = key.hi->value;
    }
}

nlohmann::ordered_json fixed_array(const char* item_type, const SceneKey& key) {
    nlohmann::ordered_json item = {{"type", item_type}};
    add_bounds(item, key);
    return {{"type", "array"}, {"items", item}, {"minItems", 3}, {"maxItems", 3}};
}

nlohmann::ordered_json object_schema(const std::string& path);

nlohmann::ordered_json key_schema(const SceneKey& key) {
    nlohmann::ordered_json schema;
    switch (key.type) {
    case KeyType::number:
        schema = {{"type", "number"}};
        add_bounds(schema, key);
        break;
    case KeyType::integer:
        schema = {{"type", "integer"}};
        add_bounds(schema, key);
        break;
    case KeyType::boolean:
        schema = {{"type", "boolean"}};
        break;
    case KeyType::string:
        schema = {{"type", "string"}};
        if (!key.values.empty()) {
            schema["enum"] = key.values;
        }
        break;
    case KeyType::vec3:
        schema = fixed_array("number", key);
        break;
    case KeyType::int3:
        schema = fixed_array("integer", key);
        break;
    case KeyType::number_or_vec3: {
        nlohmann::ordered_json one = {{"type", "number"}};
        add_bounds(one, key);
        schema = {{"oneOf", {one, fixed_array("number", key)}}};
        break;
    }
    case KeyType::object:
        schema = object_schema(key.path);
        break;
    case KeyType::object_array:
        schema = {{"type", "array"}, {"items", object_schema(key.path + "[]")}};
        if (key.required) {
            schema["minItems"] = 1;
        }
        break;
    }
    std::string description = key.meaning;
    if (!key.only_with.empty()) {
        const auto eq = key.only_with.find('=');
        description +=
            ". Only with " + key.only_with.substr(0, eq) + " \"" + key.only_with.substr(eq + 1) + "\"";
    }
    if (!key.fallback_text.empty()) {
        description += ". Default: " + key.fallback_text;
        schema["x-intact-default"] = key.fallback_text;
    }
    schema["description"] = description + ".";
    if (!key.fallback.is_null()) {
        schema["default"] = nlohmann::ordered_json::parse(key.fallback.dump());
    }
    if (!key.example.is_null()) {
        schema["examples"] =
            nlohmann::ordered_json::array({nlohmann::ordered_json::parse(key.example.dump())});
    }
    return schema;
}

nlohmann::ordered_json object_schema(const std::string& path) {
    nlohmann::ordered_json schema = {{"type", "object"}, {"additionalProperties", false}};
    schema["properties"] = nlohmann::ordered_json::object();
    std::vector<std::string> required;
    for (const SceneKey* child : scene_key_children(path)) {
        schema["properties"][leaf_of(child->path)] = key_schema(*child);
        if (child->required) {
            required.push_back(leaf_of(child->path));
        }
    }
    if (!required.empty()) {
        schema["required"] = required;
    }
    return schema;
}

} // namespace

const std::vector<SceneKey>& scene_keys() {
    static const std::vector<SceneKey> table = build_table();
    return table;
}

const SceneKey* find_scene_key(const std::string& path) {
    for (const SceneKey& k : scene_keys()) {
        if (k.path == path) {
            return &k;
        }
    }
    return nullptr;
}

std::vector<const SceneKey*> scene_key_children(const std::string& parent) {
    std::vector<const SceneKey*> children;
    for (const SceneKey& k : scene_keys()) {
        if (parent_of(k.path) == parent) {
            children.push_back(&k);
        }
    }
    return children;
}

std::string scene_key_pattern(const std::string& path) {
    std::string pattern;
    for (std::size_t i = 0; i < path.size(); ++i) {
        pattern += path[i];
        if (path[i] == '[') {
            while (i + 1 < path.size() && path[i + 1] != ']') {
                ++i;
            }
        }
    }
    return pattern;
}

nlohmann::ordered_json scene_json_schema() {
    nlohmann::ordered_json schema = object_schema("");
    nlohmann::ordered_json head = {
        {"$schema", "https://json-schema.org/draft/2020-12/schema"},
        {"title", "Intact scene"},
        {"description",
         "A scene for `intact run`: bodies, obstacles, contact, time stepping, method and output. "
         "SI units (m, s, kg, Pa). Printed by `intact schema`."}};
    head.update(schema);
    return head;
}

} // namespace intact::io
