/// @file scene_solver.cpp
/// @brief The scene keys of `solver.bal` and `solver.stencil_descent` (scene_solver.hpp).

#include "src/io/scene_solver.hpp"

#include "src/io/scene_codim.hpp"

#include <sstream>

namespace intact::io::detail {

// `solver.bal` (only with solver.type "bal"; README "Solvers").
void read_bal_options(JsonObject& solver, Scene& scene) {
    if (!solver.has("bal")) {
        return;
    }
    if (scene.solver != "bal") {
        solver.fail("bal", "is set but solver.type is '" + scene.solver + "'",
                    "set solver.type to \"bal\", or remove solver.bal");
    }
    JsonObject bal = solver.object("bal");
    BalOptions& o = scene.bal;
    if (bal.has("augment_distance")) {
        o.augment_distance = bal.required<double>("augment_distance");
        require_positive(
            bal, "augment_distance", *o.augment_distance,
            "give the distance in metres below which a pair is augmented, e.g. 1e-2 × contact.dhat");
    }
    o.sigma_growth = bal.optional<double>("sigma_growth", o.sigma_growth);
    if (!(o.sigma_growth >= 1.0)) {
        bal.fail("sigma_growth", "must be >= 1", "give σ's growth factor per iteration, e.g. 1.2");
    }
    o.sigma_jump = bal.optional<double>("sigma_jump", o.sigma_jump);
    if (!(o.sigma_jump >= 1.0)) {
        bal.fail("sigma_jump", "must be >= 1", "give σ's jump target as a multiple of σ₀, e.g. 100");
    }
    o.sigma_rule = bal.optional<std::string>("sigma_rule", o.sigma_rule);
    if (o.sigma_rule != "max" && o.sigma_rule != "min") {
        bal.fail("sigma_rule", "unknown rule '" + o.sigma_rule + "'",
                 "use \"max\" (the paper's max(growth σ, jump σ₀)) or \"min\" (growth capped at jump σ₀)");
    }
    o.tolerance = bal.optional<double>("tolerance", o.tolerance);
    if (!(o.tolerance > 0.0 && o.tolerance < 1.0)) {
        bal.fail("tolerance", "must be in (0, 1)",
                 "give the relative gradient reduction of a step, e.g. 1e-4");
    }
    o.pcg_tolerance = bal.optional<double>("pcg_tolerance", o.pcg_tolerance);
    if (!(o.pcg_tolerance > 0.0 && o.pcg_tolerance < 1.0)) {
        bal.fail("pcg_tolerance", "must be in (0, 1)", "give the relative PCG residual, e.g. 1e-4");
    }
    o.stall_window = bal.optional<int>("stall_window", o.stall_window);
    if (o.stall_window < 1) {
        bal.fail("stall_window", "must be >= 1", "give the PCG stall window in iterations, e.g. 100");
    }
    o.stall_test = bal.optional<std::string>("stall_test", o.stall_test);
    if (o.stall_test != "energy" && o.stall_test != "residual") {
        bal.fail("stall_test", "unknown value '" + o.stall_test + "'",
                 "use \"energy\" (PCG stops once its CG model stops falling) or \"residual\" (once ‖r‖ "
                 "reaches no new low: the paper's words)");
    }
    o.friction_update = bal.optional<std::string>("friction_update", o.friction_update);
    if (o.friction_update != "per_iteration" && o.friction_update != "per_solve") {
        bal.fail("friction_update", "unknown value '" + o.friction_update + "'",
                 "use \"per_iteration\" (the paper's per-iteration lag, §2.8) or \"per_solve\" (lagged once "
                 "per step at its start)");
    }
    bal.finish();
}

// `solver.stencil_descent` (README "Solvers").
void read_stencil_descent(JsonObject sd, StencilDescentOptions& o) {
    auto at_least_one = [&](const char* key, int& value, const char* fix) {
        value = sd.optional<int>(key, value);
        if (value < 1) {
            sd.fail(key, "must be >= 1", fix);
        }
    };
    at_least_one("cg_iterations", o.cg_iterations,
                 "give the CG iterations per stencil, e.g. 12 (the stencil's DOFs)");
    at_least_one("colors", o.colors, "give T, the colors per scheme, e.g. 15");
    if (o.colors > 254) {
        sd.fail("colors", "must be at most 254", "give T, the colors per scheme, e.g. 15");
    }
    at_least_one("schemes", o.schemes, "give S, the number of color schemes, e.g. 3");
    if (o.schemes > 8) {
        sd.fail("schemes", "must be at most 8", "give S, the number of color schemes, e.g. 3");
    }
    o.toi_factor = sd.optional<double>("toi_factor", o.toi_factor);
    if (!(o.toi_factor > 0.0 && o.toi_factor < 1.0)) {
        sd.fail("toi_factor", "must be in (0, 1)",
                "give the fraction of a stencil's bound it may take, e.g. 0.8");
    }
    at_least_one("max_sweeps", o.max_sweeps, "give the most hybrid sweeps per step, e.g. 2000");
    at_least_one("regular_ccd_every", o.regular_ccd_every,
                 "give the sweeps between regular CCDs, e.g. 1 (every sweep) or 4");
    o.element_batch = sd.optional<int>("element_batch", o.element_batch);
    if (o.element_batch < 0) {
        sd.fail("element_batch", "must be >= 0",
                "give the elements whose derivatives a sweep holds at once, e.g. 16384, or 0 (automatic)");
    }
    o.accept_updates = sd.optional<bool>("accept_updates", o.accept_updates);
    o.tolerance = sd.optional<double>("tolerance", o.tolerance);
    if (!(o.tolerance >= 0.0 && o.tolerance < 1.0)) {
        sd.fail("tolerance", "must be in [0, 1)",
                "give the relative gradient norm that ends a step, e.g. 1e-4");
    }
    o.warm_start_sweeps = sd.optional<int>("warm_start_sweeps", o.warm_start_sweeps);
    if (o.warm_start_sweeps < 0) {
        sd.fail("warm_start_sweeps", "must be >= 0",
                "give the most warm-start sweeps per step, e.g. 30 (0: none)");
    }
    sd.finish();
}

} // namespace intact::io::detail
