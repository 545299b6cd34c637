#pragma once
/// @file scene.hpp
/// @brief A validated scene: everything `intact run` reads from SCENE.json, in SI units.
///
/// Every key is in the key table of scene_keys.hpp (type, bounds, default, meaning). Reading checks types,
/// ranges and unknown keys and throws `InputError` naming the file, the key path and the fix. `resolved`
/// holds every key with the value in effect (defaults filled in) and is written to
/// `<output>/scene.resolved.json`.

#include "src/core/types.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace intact::io {

/// Axis-aligned box [min, max], metres, in world coordinates (after the body's transform).
struct BoxSelector {
    Vec3 min{};
    Vec3 max{};
    bool contains(const Vec3& x) const {
        return x[0] >= min[0] && x[0] <= max[0] && x[1] >= min[1] && x[1] <= max[1] && x[2] >= min[2] &&
               x[2] <= max[2];
    }
};

/// A rigid motion at constant rates: points turn at `angular_velocity` (rad/s, right-handed about its
/// direction) about an axis through `center`, while `center` moves at `velocity` (m/s); see
/// kernels/rigid_motion.hpp. `center` is the axis point when the motion starts.
struct RigidMotion {
    Vec3 velocity{};
    Vec3 angular_velocity{};
    Vec3 center{};
};

/// A time window [start, end) in seconds; `end` absent: forever.
struct TimeWindow {
    double start = 0.0;
    std::optional<double> end;
    /// Seconds of the step [t, t + h] that lie inside the window (exactly h when all of it does).
    double active_seconds(double t, double h) const {
        if (t >= start && (!end || t + h <= *end)) {
            return h;
        }
        const double lo = t > start ? t : start;
        const double hi = end && *end < t + h ? *end : t + h;
        return hi > lo ? hi - lo : 0.0;
    }
    /// Seconds of [0, t] inside the window.
    double active_before(double t) const {
        const double hi = end && *end < t ? *end : t;
        return hi > start ? hi - start : 0.0;
    }
};

/// Nodes in `box` follow `motion` while `window` lasts. Before `window.start` they are held where they
/// are; from the first step that starts at or after `window.end` they are free (released with the
/// velocity they had).
struct MovingSelector {
    BoxSelector box;
    RigidMotion motion;
    TimeWindow window;
};

/// A total `force` (N) on the nodes in `box`, spread over them by lumped mass, while `window` lasts.
struct ForceSelector {
    BoxSelector box;
    Vec3 force{};
    TimeWindow window;
};

/// Constitutive model names accepted by `material.model`.
inline const std::vector<std::string>& material_models() {
    static const std::vector<std::string> names{"neo_hookean", "stable_neo_hookean", "fixed_corotated",
                                                "stvk", "linear"};
    return names;
}

struct Material {
    std::string model = "neo_hookean";
    double youngs_modulus = 0.0; ///< Pa, > 0
    double poisson_ratio = 0.0;  ///< in (-1, 0.5)
    double density = 0.0;        ///< kg/m^3, > 0
    // Codimensional bodies (docs/codim.md): 0 where the body type has no such parameter.
    double thickness = 0.0;         ///< shells: m, > 0
    double bending_stiffness = 0.0; ///< shells: J (default E h³/(12(1 − ν²))); rods: N m² (default E π r⁴/4)
    double radius = 0.0;            ///< rods: m, > 0
};

/// What a body is made of: tetrahedra (solid), triangles (shell, e.g. cloth) or segments (rod).
enum class BodyType { solid, shell, rod };

/// Where a body's tetrahedra come from: a file, or the built-in box generator.
struct MeshSource {
    std::string file; ///< absolute or relative to the working directory (resolved from the scene's folder)
    std::string file_as_written; ///< as in the scene, for messages
    bool is_box = false;
    Vec3 box_min{}, box_max{};
    std::array<int, 3> box_cells{1, 1, 1};
    /// Shells: the generated sheet [0, length] × [0, width] in the plane z = 0, cells_x × cells_y cells
    /// each split into two triangles.
    bool is_sheet = false;
    double sheet_length = 0.0, sheet_width = 0.0;
    int sheet_cells_x = 1, sheet_cells_y = 1;
    /// Rods: the generated straight rod from rod_start to rod_end in rod_segments segments.
    bool is_rod = false;
    Vec3 rod_start{}, rod_end{};
    int rod_segments = 1;
    bool is_generated() const { return is_box || is_sheet || is_rod; }
};

struct Body {
    std::string name;
    BodyType type = BodyType::solid;
    bool named = false; ///< whether the scene gave the name (else it is body<i>)
    MeshSource mesh;
    Vec3 scale{1.0, 1.0, 1.0};        ///< per axis, applied first
    Vec3 rotate_deg{};                ///< Euler angles in degrees about x, then y, then z, applied second
    Vec3 translate{};                 ///< metres, applied last
    bool rotate_about_center = false; ///< rotate about the scaled mesh's centroid instead of the origin
    Material material;
    /// Contact offset, m (shells and rods; 0 for solids): contact keeps this body's primitives at least
    /// this far from others beyond their own offsets (`contact_offset`, default thickness / 2 for a
    /// shell, the radius for a rod).
    double contact_offset = 0.0;
    Vec3 velocity{};         ///< initial velocity, m/s
    Vec3 angular_velocity{}; ///< initial spin about the body's centre of mass, rad/s
    std::vector<BoxSelector> fixed;
    std::vector<MovingSelector> moving;
    std::vector<ForceSelector> forces;
};

/// A rigid obstacle. Its placement at time 0 is the file's geometry (or the plane) under scale → rotate →
/// translate, as for bodies (about the origin); from there it follows `motion`.
struct Obstacle {
    enum class Kind { plane, mesh };
    Kind kind = Kind::plane;
    Vec3 point{};    ///< plane: a point on it (as written)
    Vec3 normal{};   ///< plane: unit normal (normalised on reading), pointing to the free side
    MeshSource mesh; ///< mesh: triangles, segments and points (.obj)
    Vec3 scale{1.0, 1.0, 1.0};
    Vec3 rotate_deg{};
    Vec3 translate{};
    RigidMotion motion;             ///< planes: translation only
    std::optional<double> friction; ///< Coulomb μ against this obstacle; absent: contact.friction
};

struct Contact {
    bool enabled = true;
    std::optional<double> dhat; ///< metres; absent: dhat_relative × scene bounding-box diagonal
    double dhat_relative = 1e-3;
    double friction = 0.0;       ///< Coulomb coefficient μ >= 0
    double epsv = 1e-3;          ///< m/s, friction smoothing velocity
    int friction_iterations = 1; ///< lagged solves per step at most (IPC spec §6.5)
};

/// `solver.al`: the barrier-free augmented Lagrangian (AL spec §2.1; README "Solvers").
struct AlOptions {
    double epsilon = 1e-3;           ///< termination: cumulative TOI weight B below this
    std::optional<int> k_min;        ///< minimum outer iterations; absent: 6 with friction, else 2
    double decay = 0.9;              ///< Γ, γ's factor per inactive update
    double removal_threshold = 0.01; ///< constraints whose γ falls below this leave the set
    double mu_scale = 0.1;           ///< μ = mu_scale × max diagonal of ∇²E at the step's start
    std::optional<double> offset;    ///< δ (m); absent: contact.dhat
    int max_outer_iterations = 300;  ///< cap per friction lag (logged, the step reports not converged)
    bool literal_order = false;      ///< the paper's Alg. 1 order: solve, then update the set
    bool pure_penalty = false;       ///< λ held at 0 (the paper's ablation §6.3; not for production)
    bool settle = false;             ///< past B < ε, iterate on until the stopping rule passes
    /// When a step the certificate finds unbalanced settles on (AlSolver::repair): "without_fallback"
    /// (only where no fallback can solve it again), "always" (before the fallback), "never".
    std::string repair = "without_fallback";
    /// Where the AL iterate y starts each step: "inertial" (the integrator's x̂, e.g. xᵗ + h vᵗ) or
    /// "positions" (xᵗ, the paper's §2.9)
    std::string start = "inertial";
};

/// `solver.bal`: the barrier-augmented Lagrangian with inexact Newton-PCG (BAL spec, seed 002; README
/// "Solvers").
struct BalOptions {
    std::optional<double> augment_distance; ///< m: A′ takes pairs closer than this; absent: 1e-2 d̂
    double sigma_growth = 1.2;              ///< σ's factor per iteration with a pair that close
    double sigma_jump = 100.0;              ///< … and its jump target, this × σ₀
    std::string sigma_rule = "min";         ///< "max": max(growth σ, jump σ₀) (paper); "min": capped
    double tolerance = 1e-4;           ///< stop at ‖∇L‖ ≤ tolerance ‖∇L at the first iterate‖
    double pcg_tolerance = 1e-4;       ///< relative PCG residual of each inexact Newton step
    int stall_window = 100;            ///< PCG stops when it has stalled over this many iterations …
    std::string stall_test = "energy"; ///< … of its CG model ("energy") or of ‖r‖ ("residual", paper)
    /// "per_solve" (lagged once at xᵗ, as `ipc`'s one lag) or "per_iteration" (the paper's §2.8: re-lagged
    /// at every inexact Newton iterate until ‖e‖ stops reaching new minima). per_solve is the default: it
    /// took as many or fewer Newton iterations on every scene measured (README "Barrier-augmented
    /// Lagrangian solver").
    std::string friction_update = "per_solve";
};

/// `solver.stencil_descent`: second-order stencil descent (stencil descent spec §6.1; README "Stencil
/// descent").
struct StencilDescentOptions {
    int cg_iterations = 12;     ///< CG iterations per stencil and sweep (12 = the stencil's DOFs)
    int colors = 15;            ///< T, colors per scheme
    int schemes = 3;            ///< S, color schemes (more are added until every tet has a color in one)
    double toi_factor = 0.8;    ///< a clipped stencil step takes this fraction of its local bound
    int max_sweeps = 2000;      ///< cap per step (logged; the step reports not converged)
    double tolerance = 1e-4;    ///< ‖g‖₂ ≤ tolerance ‖g(x⁰)‖₂ + ε_abs ends the step
    int warm_start_sweeps = 30; ///< most warm-start sweeps per step (0: no warm start)
    int regular_ccd_every = 1;  ///< N_rccd: sweeps between regular CCDs (between: B's pairs alone)
    int element_batch = 0;      ///< elements whose derivatives are held at once (0: automatic)
    bool accept_updates = true; ///< the energy test on the assembled update (false: the paper's sweep)
};

/// Integrator names accepted by `integrator.type` (A-search spec §2, §3).
inline const std::vector<std::string>& integrator_types() {
    static const std::vector<std::string> names{"implicit_euler",    "bdf2",     "newmark",
                                                "implicit_midpoint", "a_search", "a1"};
    return names;
}

/// One piece of an energy-target schedule (A-search spec §3.2): from time `from` (s) on, the target
/// decays towards the ground energy with e-folding time `decay_time` (s); without one it is conserved
/// (minus friction losses).
struct EnergyDecay {
    double from = 0.0;
    std::optional<double> decay_time;
};

/// `integrator.energy`: A-search's energy target.
struct EnergyTargetSettings {
    double scale = 1.0;                ///< s0: the first target is s0 × the initial total energy
    double ground_energy = 0.0;        ///< E_g, J, in the gravity datum of `gravitational_energy` (origin)
    std::vector<EnergyDecay> schedule; ///< pieces by increasing `from`; empty: conservation
};

/// The parameters of `integrator` besides its type; each applies to the types named.
struct IntegratorSettings {
    double beta = 0.25;     ///< newmark β (> 0: implicit)
    double gamma = 0.5;     ///< newmark γ
    double alpha_min = 0.0; ///< a_search: α's clip interval
    double alpha_max = 1.1;
    EnergyTargetSettings energy; ///< a_search
};

struct Scene {
    std::string file;                   ///< the scene file as given
    std::vector<std::string> overrides; ///< the `--set` assignments applied to it, in order (load_scene)
    std::string directory;              ///< folder of the scene file (mesh paths are relative to it)
    double dt = 0.0;                    ///< s
    int steps = 0;                      ///< number of time steps (time.steps, or ceil(time.end / dt))
    double end_time = 0.0;              ///< s, steps × dt
    Vec3 gravity{0.0, 0.0, -9.81};
    std::vector<Body> bodies;
    std::vector<Obstacle> obstacles;
    Contact contact;
    std::string integrator = "implicit_euler"; ///< integrator.type
    IntegratorSettings integrator_settings;    ///< the other integrator.* keys
    /// solver.type: "ipc" (the default), "al", "bal" or "stencil_descent"
    std::string solver = "ipc";
    AlOptions al;
    BalOptions bal;
    StencilDescentOptions stencil_descent;
    /// solver.fallback: the method that solves a step again from its start when the run's method
    /// returned one the step certificate rejects: "ipc" (the default; the reference method), or "none"
    /// (the rejected step is kept and reported NOT CERTIFIED)
    std::string fallback = "ipc";
    /// solver.max_substeps: a step still rejected after its repairs is solved again from its start in
    /// halves, quarters, ... down to 1/max_substeps of it (a power of two; 1: never), under integrators
    /// without history (implicit Euler, implicit midpoint) and unless fallback is "none".
    /// Simulation::solve_in_substeps.
    int max_substeps = 16;
    std::string preconditioner =
        "rigid_coarse";                     ///< solver.preconditioner: or "block_jacobi", "decade_warm_start"
    std::optional<double> newton_tolerance; ///< m/s; absent: 1e-2 × bounding-box diagonal per second
    std::optional<double> acceleration_tolerance; ///< m/s²; absent: 1e-4 |g| (solver/stopping_rule.hpp)
    int max_newton_iterations = 100;
    double linear_tolerance = 1e-5; ///< relative residual of PCG (the floor of the forcing terms)
    /// solver.linear_forcing: "eisenstat_walker" (PCG's tolerance follows Newton's progress, `ipc`;
    /// solver/forcing_term.hpp) or "fixed" (linear_tolerance on every solve)
    std::string linear_forcing = "eisenstat_walker";
    int max_linear_iterations = 2000;
    std::string output_dir = "output";
    int output_every = 1;
    bool output_binary = true;
    int checkpoint_every = 0;            ///< steps between checkpoints; 0: none by step count
    double checkpoint_seconds = 0.0;     ///< wall-clock seconds between checkpoints; 0: none by time
    std::string partition_file;          ///< empty: partition with METIS at start-up
    std::string halo_transport = "auto"; ///< "auto", "mpi" or "nccl" (CUDA builds with NCCL)
    nlohmann::json resolved;             ///< every key with the value in effect

    /// μ against obstacle k (its own `friction`, or contact.friction).
    double obstacle_friction(std::size_t k) const {
        return obstacles[k].friction ? *obstacles[k].friction : contact.friction;
    }
    /// Whether any contact has μ > 0 (contact.friction or an obstacle's).
    bool has_friction() const {
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            if (obstacle_friction(k) > 0.0) {
                return true;
            }
        }
        return contact.friction > 0.0;
    }
    /// The moving selectors of all bodies in one list (bodies in order, each body's `moving` in order):
    /// the index a node's prescribed motion refers to.
    std::vector<MovingSelector> moving_selectors() const {
        std::vector<MovingSelector> all;
        for (const Body& body : bodies) {
            all.insert(all.end(), body.moving.begin(), body.moving.end());
        }
        return all;
    }
};

/// How messages name body `index`: `bodies[2] ("ball")`, or `bodies[2]` when the scene gave no name.
std::string body_label(const Body& body, std::size_t index);

/// Parse and validate a scene document. `file` is used in messages and to resolve relative mesh paths.
/// Throws InputError. Host, serial.
Scene parse_scene(const nlohmann::json& document, const std::string& file);

/// Read SCENE.json, apply `--set` overrides in order, then parse. Throws InputError (missing file,
/// JSON syntax error with line and column, any validation error).
Scene load_scene(const std::string& file, const std::vector<std::string>& overrides = {});

} // namespace intact::io
