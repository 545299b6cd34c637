#pragma once
/// @file simulation.hpp
/// @brief A scene set up on every rank: partitioned mesh, halo plan, node fields, output.
///
/// Construction (collective) follows DESIGN.md's data flow:
///   1. rank 0 builds the scene mesh (reads or generates bodies, validates) and partitions it
///      (METIS, or the partition file the scene names);
///   2. rank 0 hands every rank its LocalMesh; every rank builds the node halo plan;
///   3. fields live in Kokkos Views (positions, velocities), owned rows first then ghosts;
///   4. rank 0 prepares the output folder: scene.resolved.json, metrics.jsonl, intact.pvd (obstacles, when
///      there are any with contact, are part 1 of every output step).
/// Input problems found on any rank surface as an InputError thrown on every rank at once.
///
/// `run` then takes `time.steps` implicit steps, writing every `output.every`-th step and the last one,
/// with one metrics line and one progress line per step.
///
/// Checkpoints (io/checkpoint.hpp): after every `output.checkpoint_every`-th step, after
/// `output.checkpoint_seconds` of wall time, after the last step when either key is set, and after the
/// step during which SIGTERM or SIGUSR1 arrived — then `run` returns early (`stopped()`). The signals
/// are caught while a StopSignals object lives (core/stop_signals.hpp); `intact run` makes one before
/// the set-up, so a signal during the set-up stops the run after its first step. Each component saves its own
/// state: x, v, t and the step here, obstacle rows in BoundaryMotion, history in the Integrator, state
/// carried between steps in the StepSolver. A restart builds everything from the scene as usual, then reads
/// that state back (by global node id, so on any rank count) and continues the output folder's series and
/// metrics after the checkpoint's step. Simulation owns the step's shared parts (the incremental potential,
/// the boundary motion, the contact model and the integrator) and the method that `solver.type` names
/// (solver/step_solver.hpp).

#include "comm/halo_exchange.hpp"
#include "src/contact/contact_model.hpp"
#include "src/io/metrics.hpp"
#include "src/io/obstacle_output.hpp"
#include "src/io/scene.hpp"
#include "src/io/vtk_writer.hpp"
#include "src/mesh/distribute.hpp"
#include "src/solver/applied_forces.hpp"
#include "src/solver/boundary_motion.hpp"
#include "src/solver/energy_model.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/integrator.hpp"
#include "src/solver/step_bound.hpp"
#include "src/solver/step_certificate.hpp"
#include "src/solver/step_solver.hpp"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace intact {

class Simulation {
public:
    /// Collective over `comm`. `output_dir` overrides the scene's `output.dir` when not empty. With
    /// `restart`, the state comes from the newest complete checkpoint in the output folder; a scene that
    /// differs from the checkpointed run's in anything but time.end, time.steps and the output,
    /// partition and parallel keys is an InputError naming the key.
    Simulation(MPI_Comm comm, io::Scene scene, const std::string& output_dir = "", bool restart = false);

    /// Write the initial state (not on a restart), then take the remaining time steps of the scene,
    /// calling `after_step` (when given) after each. Returns early, after a checkpoint, when a stop
    /// signal arrived. Collective.
    void run(const std::function<void(const solver::StepResult&)>& after_step = {});
    /// Whether the last `run` stopped early on SIGTERM or SIGUSR1 (the checkpoint is written).
    /// Whether `run` ended early on a stop request. A request that arrives during the last step finds the
    /// run complete: it is not a stop (exit status 0, nothing to continue).
    bool stopped() const { return m_stop_signal != 0 && m_step < m_scene.steps; }
    /// The step and time the simulation is at.
    int current_step() const { return m_step; }
    double current_time() const { return m_time; }

    /// Write a checkpoint of the current state now, with the scene file and `--set` overrides the run was
    /// started with, so that `intact run --restart DIR` continues it as started.
    /// Collective.
    void write_checkpoint();

    /// Take the current positions and velocities as the integrator's start (Newmark's a⁰, A-search's
    /// H⁰): call it after setting them by hand, before the first step. Collective.
    void reset_integrator() {
        m_account_current = false;
        m_integrator->start(m_x, m_v);
    }

    /// One time step from the current state, judged by the step certificate (step_certificate.hpp) and,
    /// when the run's method's step is rejected, solved again from its start by the fallback
    /// (solver.fallback), then, when still rejected, in substeps (solver.max_substeps;
    /// simulation_step.cpp). The result's `converged` is the certificate's verdict (`last_verdict` says
    /// what was checked and what the fallback repaired). Collective.
    solver::StepResult step();
    /// How many parts the last step was solved in (1: whole; more: solve_in_substeps).
    int last_substeps() const { return m_substeps; }
    /// The step certificate's verdict on the last step.
    const solver::StepVerdict& last_verdict() const { return m_verdict; }

    const LocalMesh& local_mesh() const { return m_local; }
    const io::Scene& scene() const { return m_scene; }
    const comm::HaloPlan& halo_plan() const { return *m_halo_plan; }
    std::string pvd_path() const;
    const std::string& output_dir() const { return m_output_dir; }

    /// Current positions and velocities (device). Rows: local nodes, owned first.
    NodeField positions() const { return m_x; }
    NodeField velocities() const { return m_v; }
    /// Lumped nodal masses (kg), complete for owned nodes.
    Kokkos::View<const double*, MemSpace> lumped_mass() const { return m_potential->lumped_mass(); }

    /// The step's shared parts, for tests and benchmarks.
    solver::IncrementalPotential& potential() { return *m_potential; }
    comm::HaloExchange& halo() { return *m_halo; }
    /// The method that solves each step, and the last step's problem (h, x̂, c), for tests.
    solver::StepSolver& step_solver() { return *m_solver; }
    const solver::StepProblem& last_problem() const { return m_problem; }

    /// Seconds this rank spent in node halo exchanges so far.
    double halo_seconds() const { return m_halo->seconds(); }

    /// Kinetic, elastic, gravitational and stored contact energy of the current state (J, summed over
    /// ranks); the gravitational datum is the origin. Collective.
    std::array<double, 4> energies() const;
    /// The energies as the step certificate counts them (kinetic, elastic, gravitational, the stored
    /// terms with their weights, momentum) at the current state. Collective.
    solver::EnergyAccount energy_account() const;
    /// The integrator (its name, A-search's control numbers).
    const solver::Integrator& integrator() const { return *m_integrator; }

    /// energy_account() of the state (x, v), the contact model gathered at x. Collective. (Public: it
    /// holds device lambdas, which CUDA allows in public members only.)
    solver::EnergyAccount energy_account_of(const NodeField& x, const NodeField& v) const;
    /// The work of the applied forces from the step's start to x (J; 0 when energy is not checked).
    /// Collective.
    double applied_work() const;

private:
    /// Start-up: an error when surfaces touch or cross, a warning naming the closest pair when it is
    /// within d̂. Collective.
    void check_initial_contact(double dhat);
    void write_output(int step, double time);
    void write_metrics(int step, const solver::StepResult& result, double wall_seconds);
    /// energies() from an account: the contact energy is the stored terms' (EnergyTerm::stores_energy).
    static std::array<double, 4> energies_of(const solver::EnergyAccount& account);
    void restore_checkpoint();
    /// Whether a rejected step is solved again by the reference method (solver.fallback).
    /// How the run's method first ended a step the certificate rejected, before any repair: the checks it
    /// failed, its Newton iterations (sweeps) and its unbalanced force per mass (the repair record).
    struct FirstEnd {
        std::vector<std::string> failed;
        int iterations = 0;
        double residual_acceleration = 0.0;
    };
    FirstEnd first_end(const solver::StepResult& result) const;
    /// The repair record on m_verdict: repaired `by` a method, `itself` (the run's method going on).
    void record_repair(const std::string& by, bool itself);
    bool can_fall_back() const;
    /// Whether a rejected step may be solved again in substeps: solver.max_substeps > 1, solver.fallback
    /// not "none", and an integrator without history.
    bool can_substep() const;
    /// One part of a step, h seconds from start_time to end_time (the whole step, or a substep): the
    /// method's solve, its repair, the fallback, the integrator's end state and the certificate's verdict
    /// (m_verdict). Leaves the step's clock alone. Collective.
    solver::StepResult solve_part(double h, double start_time, double end_time);
    /// The step rejected as `whole` solved again from its start in parts: halves, then each rejected part
    /// halved again, down to 1/solver.max_substeps of the step. Returns the last part's state figures
    /// with the work of every solve; m_verdict is the first kept part's rejection, else the last part's.
    solver::StepResult solve_in_substeps(const solver::StepResult& whole, double start_time, double end_time);
    /// Back to the last part's start: x, v, the obstacles, the contact model there, the energy account.
    void restore_part_start();
    /// The integrator's end state (simulation_step.cpp).
    void finish_step(const solver::StepProblem& problem);
    /// Solve the current part again from its start with the reference method.
    solver::StepResult fall_back(const solver::StepProblem& problem, const solver::StepResult& rejected);
    /// The reference method's energy account of the step's start (after its solve: its weights).
    solver::EnergyAccount reference_start_account();
    /// energy_account() at a step's end, with the stored terms' slopes along the step for the
    /// certificate's contact defect (step_certificate.hpp). Collective.
    solver::EnergyAccount step_end_account();
    /// The checkpoint's record of how the run was started: the scene file (absolute) and its overrides.
    nlohmann::json recorded_command() const;
    bool checkpoint_is_due(bool last_step);
    std::vector<GlobalId> owned_ids() const;

    MPI_Comm m_comm;
    int m_rank = 0;
    int m_size = 1;
    io::Scene m_scene;
    std::string m_output_dir;
    LocalMesh m_local;
    std::shared_ptr<comm::HaloPlan> m_halo_plan;
    std::unique_ptr<comm::HaloExchange> m_halo;
    NodeField m_x;                                      ///< positions, metres
    NodeField m_v;                                      ///< velocities, m/s
    NodeField m_x0;                                     ///< rest positions, metres
    std::unique_ptr<contact::ContactSurface> m_surface; ///< when contact is enabled
    std::unique_ptr<contact::ContactModel> m_contact;   ///< when contact is enabled
    std::unique_ptr<solver::BoundaryMotion> m_boundary;
    std::unique_ptr<solver::IncrementalPotential> m_potential;
    std::unique_ptr<solver::SceneEnergyModel> m_energy_model;
    std::unique_ptr<solver::AppliedForces> m_forces;
    std::unique_ptr<solver::Integrator> m_integrator;
    std::unique_ptr<solver::StepBound> m_move_bound; ///< the integrator's move limit (set_move_limit)
    solver::StepProblem m_problem;                   ///< the last step's problem (c h² of its contact terms)
    std::unique_ptr<solver::StepSolver> m_solver;
    solver::NewtonSettings m_newton_settings;
    int m_step = 0;
    double m_time = 0.0;
    std::unique_ptr<io::VtkSeriesWriter> m_vtk;
    std::unique_ptr<io::ObstacleOutput> m_obstacle_output; ///< rank 0, with contact and obstacles
    std::optional<io::MetricsWriter> m_metrics;            ///< rank 0 only
    double m_setup_seconds = 0.0;
    bool m_restarted = false;
    std::uint64_t m_mesh_hash = 0;    ///< io::mesh_fingerprint of the rest mesh
    Kokkos::Timer m_since_checkpoint; ///< wall time since the last checkpoint (or the run's start)
    int m_stop_signal = 0;            ///< the stop signal agreed on, 0 while none
    std::unique_ptr<solver::StepCertificate> m_certificate;
    solver::EnergyAccount m_account; ///< energy_account() of the current state, while m_account_current
    bool m_account_current = false;
    NodeField m_step_start;                 ///< positions at the step's start (the applied forces' work)
    NodeField m_velocity_start;             ///< velocities at the step's start (a fallback's start)
    NodeField m_elastic_gradient;           ///< the step end's elastic gradient (the energy check's D_e)
    contact::SurfaceField m_obstacle_start; ///< obstacle rows at the step's start (a fallback's start)
    solver::StepVerdict m_verdict;          ///< the certificate's verdict on the last step
    double m_length = 1.0;                  ///< the rest bounding-box diagonal l (StepParts::length)
    /// The fallback (`ipc`), made at the first step the run's method fails; each method's energy terms.
    std::unique_ptr<solver::StepSolver> m_reference;
    std::vector<solver::EnergyTerm*> m_method_terms;
    std::vector<solver::EnergyTerm*> m_reference_terms;
    std::string m_fallback_reason; ///< what the run's method's last rejected step failed
    /// The part of the step being solved (solve_part): its length, start and end time, and the energy
    /// account and problem of its start (restore_part_start).
    double m_part_h = 0.0;
    double m_part_time = 0.0;
    double m_part_end = 0.0;
    solver::EnergyAccount m_part_account;
    solver::StepProblem m_part_problem;
    int m_substeps = 1;                  ///< parts the last step was solved in
    std::optional<FirstEnd> m_first_end; ///< this step's, when the certificate rejected it
};

} // namespace intact
