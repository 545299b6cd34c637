#pragma once
/// @file step_solver.hpp
/// @brief The interface every per-step method implements, the parts they are built from, and the
/// factory that picks one by the scene's `solver.type`.
///
/// A method minimises the step's incremental potential (StepProblem) from the state at the step's
/// start. It does not own the potential, the boundary motion or the contact model: Simulation does, and
/// hands them in as StepParts, so every method uses the same ones. Methods own what is theirs alone
/// (IPC: κ, the lagged friction, PCG buffers; AL: the multipliers).

#include "comm/halo_exchange.hpp"
#include "src/contact/contact_model.hpp"
#include "src/io/scene.hpp"
#include "src/solver/boundary_motion.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/pcg.hpp"
#include "src/solver/step_problem.hpp"
#include "src/solver/stopping_rule.hpp"

#include <memory>
#include <string>

namespace intact::io {
class CheckpointWriter;
class CheckpointReader;
} // namespace intact::io

namespace intact::solver {

/// Settings of the Newton-type methods, from the scene's `solver` and `contact` sections.
struct NewtonSettings {
    StoppingTolerances stop;     ///< ε_d and ε_a of the stopping rule (stopping_rule.hpp)
    int max_iterations = 100;    ///< Newton iterations per lagged solve; non-convergence past this
    int friction_iterations = 1; ///< lagged solves per step at most (IPC spec §6.5)
    PcgSettings linear;
    bool forcing = true; ///< PCG's tolerance by Eisenstat–Walker forcing terms (forcing_term.hpp), `ipc`
    std::string preconditioner = "rigid_coarse"; ///< solver.preconditioner (newton_system.hpp)
};

/// What a method is built on; owned by Simulation, alive for the whole run.
struct StepParts {
    MPI_Comm comm;
    const io::Scene& scene;
    comm::HaloExchange& halo;
    IncrementalPotential& potential;
    BoundaryMotion& boundary;
    contact::ContactModel* contact = nullptr; ///< null without contact
    double length = 1.0;                      ///< scene bounding-box diagonal l (m)
    const LocalMesh* mesh = nullptr;          ///< this rank's mesh (stencil descent builds its halo from it)
};

class StepSolver {
public:
    virtual ~StepSolver() = default;
    virtual const char* name() const = 0;
    /// How the log line names StepResult::residual, the method's own stopping measure, with its unit
    /// (empty: dimensionless or in the potential's units).
    virtual const char* residual_name() const = 0;
    virtual const char* residual_unit() const = 0;
    /// Whether the method's own stopping test includes the balance of forces (stopping_rule.hpp's
    /// a < ε_a, or its round-off ends): then the step certificate takes a converged step as balanced;
    /// otherwise the measured StepResult::residual_acceleration decides (step_certificate.hpp).
    virtual bool tests_balance() const { return false; }
    /// Minimise the step's potential starting from x (feasible, ghost rows current; the boundary's
    /// begin_step done). On return x holds the step's end, prescribed rows on their targets, ghost rows
    /// current, and the contact model (when there is one) is gathered at x with its pairs there: the
    /// integrator evaluates the energy terms there (integrator.hpp). Collective.
    virtual StepResult solve(const NodeField& x, const StepProblem& problem) = 0;
    /// After a solve whose end the step certificate found unbalanced: go on from where that solve stopped
    /// (x as it returned it, the method's own state as it left it) until the end passes the balance or a
    /// budget of the method's runs out, adding the work to `result` and ending as solve does.
    /// `can_fall_back`: whether another method would solve the step again if this one does not repair it.
    /// Returns false, changing nothing, where the method does not repair (then the step falls back, or stays
    /// uncertified). Collective.
    virtual bool repair(const NodeField& /*x*/,
                        const StepProblem& /*problem*/,
                        StepResult& /*result*/,
                        bool /*can_fall_back*/) {
        return false;
    }

    /// Checkpoint: the method's state that one step hands to the next (active sets, multipliers, κ when
    /// it carries over, lagged friction data), under section names of its own. Pairs are keyed by global
    /// ids (surface rows depend on the partition). Called between steps. Local.
    virtual void save(io::CheckpointWriter& out) const = 0;
    /// Restart: read back what `save` wrote, on this job's ranks (maybe another count than wrote it:
    /// io::CheckpointReader::bytes_of_every_rank gives every old rank's bytes). Collective.
    virtual void restore(const io::CheckpointReader& in) = 0;
};

/// The method named by `scene.solver`: "ipc", "al", "bal" or "stencil_descent".
std::unique_ptr<StepSolver> make_step_solver(const StepParts& parts, const NewtonSettings& settings);

} // namespace intact::solver
