#include "src/solver/step_solver.hpp"

#include "src/core/error.hpp"
#include "src/solver/al_solver.hpp"
#include "src/solver/bal_solver.hpp"
#include "src/solver/ipc_solver.hpp"
#include "src/solver/stencil_descent.hpp"

namespace intact::solver {

std::unique_ptr<StepSolver> make_step_solver(const StepParts& parts, const NewtonSettings& settings) {
    if (parts.scene.solver == "al") {
        INTACT_REQUIRE(parts.contact, "solver 'al' needs contact (the scene reader checks this)");
        return std::make_unique<AlSolver>(parts, settings);
    }
    if (parts.scene.solver == "bal") {
        return std::make_unique<BalSolver>(parts, settings);
    }
    if (parts.scene.solver == "stencil_descent") {
        INTACT_REQUIRE(parts.mesh, "solver 'stencil_descent' needs the local mesh in StepParts");
        return std::make_unique<StencilDescent>(parts, settings, *parts.mesh);
    }
    INTACT_REQUIRE(parts.scene.solver == "ipc",
                   "unknown solver '" << parts.scene.solver << "' (the scene reader checks this)");
    return std::make_unique<IpcSolver>(parts, settings);
}

} // namespace intact::solver
