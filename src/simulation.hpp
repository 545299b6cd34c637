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
/// with one metrics line and one progress line per step. Simulation owns the step's shared parts (the
/// incremental potential, the boundary motion, the contact model and the integrator) and the method
/// that `solver.type` names (solver/step_solver.hpp).

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
#include "src/solver/step_solver.hpp"

#include <mpi.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace intact {

class Simulation {
public:
    /// Collective over `comm`. `output_dir` overrides the scene's `output.dir` when not empty.
    Simulation(MPI_Comm comm, io::Scene scene, const std::string& output_dir = "");

    /// Write the initial state, then take every time step of the scene, calling `after_step` (when
    /// given) after each. Collective.
    void run(const std::function<void(const solver::StepResult&)>& after_step = {});

    /// Take the current positions and velocities as the integrator's start (Newmark's a⁰, A-search's
    /// H⁰): call it after setting them by hand, before the first step. Collective.
    void reset_integrator() { m_integrator->start(m_x, m_v); }

    /// One time step from the current state. Returns the method's result. Collective.
    solver::StepResult step();

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

    /// Seconds this rank spent in node halo exchanges so far.
    double halo_seconds() const { return m_halo->seconds(); }

    /// Kinetic, elastic, gravitational and stored contact energy of the current state (J, summed over
    /// ranks); the gravitational datum is the origin. Collective.
    std::array<double, 4> energies() const;
    /// The integrator (its name, A-search's control numbers).
    const solver::Integrator& integrator() const { return *m_integrator; }

private:
    /// Start-up: an error when surfaces touch or cross, a warning naming the closest pair when it is
    /// within d̂. Collective.
    void check_initial_contact(double dhat);
    void write_output(int step, double time);
    void write_metrics(int step, const solver::StepResult& result, double wall_seconds);

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
    solver::StepProblem m_problem; ///< the last step's problem (c h² of its contact terms)
    std::unique_ptr<solver::StepSolver> m_solver;
    solver::NewtonSettings m_newton_settings;
    int m_step = 0;
    double m_time = 0.0;
    std::unique_ptr<io::VtkSeriesWriter> m_vtk;
    std::unique_ptr<io::ObstacleOutput> m_obstacle_output; ///< rank 0, with contact and obstacles
    std::optional<io::MetricsWriter> m_metrics;            ///< rank 0 only
    double m_setup_seconds = 0.0;
};

} // namespace intact
