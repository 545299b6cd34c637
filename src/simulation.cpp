#include "src/simulation.hpp"

#include "comm/collectives.hpp"
#include "comm/halo_transport.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/ownership.hpp"
#include "partition/partition_file.hpp"
#include "partition/partition_stats.hpp"
#include "src/contact/initial_contact.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/core/stop_signals.hpp"
#include "src/io/checkpoint.hpp"
#include "src/io/json_reader.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace intact {

namespace {

namespace fs = std::filesystem;

// Copy host rows into a new device field.
NodeField to_device(const std::string& label, const std::vector<Vec3>& rows) {
    NodeField field(label, rows.size());
    auto host = Kokkos::create_mirror_view(field);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
            host(i, c) = rows[i][static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(field, host);
    return field;
}

// Run `work` on rank 0 only; an InputError there stops every rank with the same message.
template <class Work> void on_root(MPI_Comm comm, int rank, Work&& work) {
    std::string error;
    if (rank == 0) {
        try {
            work();
        } catch (const InputError& e) {
            error = e.what();
        } catch (const std::bad_alloc&) {
            error = "out of memory on rank 0 while building the scene mesh; fix: use smaller meshes, or "
                    "partition "
                    "once with `intact partition` on a machine with more memory";
        }
    }
    error = comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw InputError(error);
    }
}

// The step line's count of the method's own iterations: sweeps for stencil descent, outer and Newton
// iterations for `al`, Newton and PCG iterations for the others.
std::string iterations_text(const solver::StepResult& result) {
    std::ostringstream out;
    if (result.sweeps >= 0) {
        out << "sweeps " << result.sweeps;
    } else if (result.outer_iterations >= 0) {
        out << "outer " << result.outer_iterations << "  newton " << result.iterations << "  pcg "
            << result.linear_iterations;
    } else {
        out << "newton " << result.iterations << "  pcg " << result.linear_iterations;
    }
    return out.str();
}

// Stencil descent's sweeps per step, predicted before the first step. A rigid motion of a body shrinks by
// about ρ ℓ² / (h² E) per sweep (12-DOF stencils move it one element at a time), so a step needs about
// four times h² E / (ρ ℓ²) sweeps, with ℓ the body's mean element size: measured 11, 43 and 149 sweeps
// per step where that ratio is 2.5, 10 and 40 (a 1e6 Pa block on a slope), 570 and 2000 (the cap) where
// it is 250 and 1000 (1e8 Pa). Warns on rank 0 for each body predicted above solver.stencil_descent.
// max_sweeps. Collective.
void warn_about_sweeps(MPI_Comm comm, const io::Scene& scene, const LocalMesh& mesh, int rank) {
    const std::size_t bodies = scene.bodies.size();
    std::vector<double> sums(2 * bodies, 0.0); // per body: volume, elements
    for (int e = 0; e < mesh.num_owned_elements; ++e) {
        const auto& tet = mesh.tets[static_cast<std::size_t>(e)];
        const auto at = [&](int k) {
            return mesh.rest_position[static_cast<std::size_t>(tet[static_cast<std::size_t>(k)])];
        };
        const double volume = std::abs(tet_signed_volume(at(0), at(1), at(2), at(3)));
        const auto body = static_cast<std::size_t>(mesh.element_body[static_cast<std::size_t>(e)]);
        sums[2 * body] += volume;
        sums[2 * body + 1] += 1.0;
    }
    INTACT_CHECK_MPI(
        MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm));
    if (rank != 0) {
        return;
    }
    const int cap = scene.stencil_descent.max_sweeps;
    for (std::size_t b = 0; b < bodies; ++b) {
        if (sums[2 * b + 1] == 0.0) {
            continue;
        }
        const double size = std::cbrt(6.0 * sums[2 * b] / sums[2 * b + 1]); // ℓ: a cube cell's edge
        const io::Material& material = scene.bodies[b].material;
        const double ratio = scene.dt * scene.dt * material.youngs_modulus / (material.density * size * size);
        const double predicted = 4.0 * ratio;
        if (predicted > cap) {
            log::warn()
                << "stencil_descent: " << io::body_label(scene.bodies[b], b)
                << " (E = " << material.youngs_modulus << " Pa, elements of about " << size
                << " m) needs about " << predicted << " sweeps per step at time.dt = " << scene.dt
                << " s (a rigid motion shrinks by about rho l^2 / (dt^2 E) = " << 1.0 / ratio
                << " per sweep), above solver.stencil_descent.max_sweeps = " << cap
                << ": its steps will end at the cap, not converged. Use solver.type \"ipc\" or \"bal\" "
                   "for stiff bodies, or a time.dt below "
                << scene.dt * std::sqrt(cap / predicted) << " s";
        }
    }
}

// The unbalanced force per mass as the log line shows it; not a number: the method does not measure it.
// Σ (μ + λ) V over the scene's elements (J): the scale of the elastic energy's round-off (the step
// certificate's allowance). Collective.
double elastic_scale(MPI_Comm comm, const io::Scene& scene, const LocalMesh& mesh) {
    double sum = 0.0;
    for (int e = 0; e < mesh.num_owned_elements; ++e) {
        const auto& tet = mesh.tets[static_cast<std::size_t>(e)];
        const auto at = [&](int k) {
            return mesh.rest_position[static_cast<std::size_t>(tet[static_cast<std::size_t>(k)])];
        };
        const auto& material =
            scene.bodies[static_cast<std::size_t>(mesh.element_body[static_cast<std::size_t>(e)])].material;
        const double E = material.youngs_modulus, nu = material.poisson_ratio;
        const double mu = E / (2.0 * (1.0 + nu));
        const double lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
        sum += (mu + lambda) * std::abs(tet_signed_volume(at(0), at(1), at(2), at(3)));
    }
    return comm::allreduce_sum(comm, sum);
}

std::string residual_acceleration_text(double acceleration) {
    std::ostringstream text;
    if (std::isfinite(acceleration)) {
        text << acceleration << " m/s^2";
    } else {
        text << "n/a";
    }
    return text.str();
}

/// The progress token of a step line: `35% ETA 2m10s`, the share of the run's steps done and the time left
/// at the mean pace of the steps this process has run so far (`elapsed` seconds for `done` steps).
std::string progress_text(int step, int steps, int done, double elapsed) {
    const int percent = steps > 0 ? static_cast<int>(100LL * step / steps) : 100;
    const double left = done > 0 ? elapsed / done * std::max(steps - step, 0) : 0.0;
    const long long seconds = std::llround(left);
    std::ostringstream text;
    text << percent << "% ETA ";
    if (seconds >= 3600) {
        text << seconds / 3600 << "h" << std::setfill('0') << std::setw(2) << seconds % 3600 / 60 << "m";
    } else if (seconds >= 60) {
        text << seconds / 60 << "m" << std::setfill('0') << std::setw(2) << seconds % 60 << "s";
    } else {
        text << seconds << "s";
    }
    return text.str();
}

} // namespace

Simulation::Simulation(MPI_Comm comm, io::Scene scene, const std::string& output_dir, bool restart)
    : m_comm(comm), m_scene(std::move(scene)),
      m_output_dir(output_dir.empty() ? m_scene.output_dir : output_dir), m_restarted(restart) {
    Kokkos::Timer timer;
    MPI_Comm_rank(comm, &m_rank);
    MPI_Comm_size(comm, &m_size);

    // 1. Scene mesh and partition on rank 0.
    SceneMesh scene_mesh;
    std::vector<int> parts;
    double dhat = 0.0;
    on_root(comm, m_rank, [&] {
        scene_mesh = build_scene_mesh(m_scene);
        const auto elements = partition_elements(scene_mesh); // tets, shell triangles, rod segments
        const long long count = static_cast<long long>(elements.size());
        if (count < m_size) {
            throw InputError(io::input_error_message(
                m_scene.file, "bodies",
                "the scene has " + std::to_string(count) + " elements but the job has " +
                    std::to_string(m_size) + " ranks (every rank needs at least one element)",
                "run with at most " + std::to_string(count) + " ranks, or refine the meshes"));
        }
        const auto graph = partition::build_element_dual_graph(elements);
        if (m_scene.partition_file.empty()) {
            parts = partition::partition_graph(graph, m_size, partition::element_work(elements));
        } else {
            parts = partition::read_partition_file(m_scene.partition_file, count, m_size);
        }
        const auto owners =
            partition::node_owners(elements, parts, static_cast<int>(scene_mesh.mesh.nodes.size()));
        log::info() << partition::describe(
            partition::compute_partition_stats(graph, elements, parts, owners, m_size));
        const Vec3 lo = scene_mesh.bbox_min;
        const Vec3 hi = scene_mesh.bbox_max;
        const double diagonal =
            std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                      (hi[2] - lo[2]) * (hi[2] - lo[2]));
        dhat = m_scene.contact.dhat ? *m_scene.contact.dhat : m_scene.contact.dhat_relative * diagonal;
    });
    INTACT_CHECK_MPI(MPI_Bcast(&dhat, 1, MPI_DOUBLE, 0, comm));
    m_scene.contact.dhat = dhat;
    m_scene.resolved["contact"]["dhat"] = dhat;
    m_scene.resolved["output"]["dir"] = m_output_dir;

    // 2. Every rank its share; the halo plan over nodes.
    m_local = distribute_mesh(comm, scene_mesh, parts);
    if (m_scene.contact.enabled) {
        m_surface = std::make_unique<contact::ContactSurface>(comm, scene_mesh, m_scene.obstacles, m_local);
        std::vector<std::string> labels;
        for (std::size_t b = 0; b < m_scene.bodies.size(); ++b) {
            labels.push_back(io::body_label(m_scene.bodies[b], b));
        }
        m_surface->set_body_labels(std::move(labels));
        if (m_rank == 0 && !m_scene.obstacles.empty()) {
            m_obstacle_output = std::make_unique<io::ObstacleOutput>(scene_mesh, m_scene);
        }
    }
    scene_mesh = SceneMesh{};
    m_halo_plan = std::make_shared<comm::HaloPlan>(comm, m_local.num_owned_nodes, m_local.node_global_id,
                                                   m_local.ghost_owner);
    m_halo =
        std::make_unique<comm::HaloExchange>(m_halo_plan, comm::make_transport(comm, m_scene.halo_transport));
    m_scene.resolved["parallel"]["halo_transport"] = m_halo->transport_name();
    if (m_surface) {
        // Contact ghosts travel by the same kind of transport as the node halo (collective).
        m_surface->set_transport(comm::make_transport(comm, m_scene.halo_transport));
    }

    // 3. Fields on the device.
    m_x0 = to_device("intact::rest_positions", m_local.rest_position);
    m_x = to_device("intact::positions", m_local.rest_position);
    m_v = to_device("intact::velocities", m_local.velocity);
    m_boundary = std::make_unique<solver::BoundaryMotion>(comm, m_local, m_scene, m_surface.get());
    m_potential =
        std::make_unique<solver::IncrementalPotential>(m_local, m_scene, *m_halo, m_boundary->free_mask());
    m_forces = std::make_unique<solver::AppliedForces>(comm, m_local, m_scene, m_potential->lumped_mass());
    m_energy_model = std::make_unique<solver::SceneEnergyModel>(*m_potential, *m_halo, m_scene.gravity);
    m_integrator = solver::make_integrator(m_scene, *m_energy_model, m_local.num_local_nodes());

    // The stopping rule's tolerances (solver/stopping_rule.hpp) scale with l, the rest bounding-box diagonal.
    double diagonal = 0.0;
    {
        Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
        for (const auto& x : m_local.rest_position) {
            for (int d = 0; d < 3; ++d) {
                lo[d] = std::min(lo[d], x[d]);
                hi[d] = std::max(hi[d], x[d]);
            }
        }
        double extent2 = 0.0;
        for (int d = 0; d < 3; ++d) {
            const double span = comm::allreduce_max(comm, hi[d]) - comm::allreduce_min(comm, lo[d]);
            extent2 += span * span;
        }
        diagonal = std::sqrt(extent2);
    }
    m_newton_settings.stop = solver::stopping_tolerances(m_scene, diagonal);
    m_newton_settings.max_iterations = m_scene.max_newton_iterations;
    m_newton_settings.friction_iterations = m_scene.contact.friction_iterations;
    // A scene written for `ipc` stays runnable with another solver (`--set solver.type=...`), so what
    // another solver does not use is a warning, not an input error: the user should know it has no effect.
    const bool frictional = m_scene.contact.enabled && m_scene.has_friction();
    if (frictional && m_scene.solver == "bal" && m_scene.contact.friction_iterations != 1) {
        log::warn() << "contact.friction_iterations = " << m_scene.contact.friction_iterations
                    << " applies to solver.type \"ipc\", \"al\" and \"stencil_descent\" only: \"bal\" lags "
                       "friction its own way (solver.bal.friction_update)";
    }
    m_newton_settings.linear.tolerance = m_scene.linear_tolerance;
    m_newton_settings.forcing = m_scene.linear_forcing == "eisenstat_walker";
    m_newton_settings.linear.max_iterations = m_scene.max_linear_iterations;
    m_newton_settings.preconditioner = m_scene.preconditioner;
    m_certificate = std::make_unique<solver::StepCertificate>(m_scene, m_newton_settings.stop);
    m_certificate->set_elastic_scale(elastic_scale(comm, m_scene, m_local));
    if (m_scene.solver != "ipc" && m_scene.fallback == "ipc" && m_scene.integrator == "a_search") {
        log::warn() << "solver.fallback: no fallback under integrator.type \"a_search\" (its energy target "
                       "counts the contact energy of "
                    << m_scene.solver
                    << "'s terms, which a step of ipc's would change); steps the certificate rejects are "
                       "reported NOT CERTIFIED";
    }
    log::info() << "step certificate: force balance within " << m_newton_settings.stop.acceleration
                << " m/s^2; energy " << m_certificate->energy_rule();
    m_scene.resolved["solver"]["newton_tolerance"] = m_newton_settings.stop.velocity;
    m_scene.resolved["solver"]["acceleration_tolerance"] = m_newton_settings.stop.acceleration;

    // Contact: the bodies' boundaries and the obstacles. The start may be closer than d̂ (a warning), but
    // nothing may touch or cross.
    if (m_scene.contact.enabled) {
        m_contact = std::make_unique<contact::ContactModel>(comm, *m_surface, dhat);
        m_surface->begin_step(m_x);
        m_contact->update(m_x, m_boundary->obstacle_positions());
        check_initial_contact(dhat);
    }
    if (m_scene.solver == "stencil_descent") {
        warn_about_sweeps(comm, m_scene, m_local, m_rank);
    }
    m_solver = solver::make_step_solver(solver::StepParts{comm, m_scene, *m_halo, *m_potential, *m_boundary,
                                                          m_contact.get(), diagonal, &m_local},
                                        m_newton_settings);
    m_method_terms = m_potential->terms();
    m_length = diagonal;
    // The integrator's start (Newmark's a⁰, A-search's H⁰ and ∇P(x⁰)) sees the solver's terms; the
    // contact model is at x⁰. Until the first step, contact energies take c = 1 (they are zero at x⁰).
    m_problem.h = m_scene.dt;
    m_integrator->start(m_x, m_v);
    // An integrator moving past the solver's minimiser (implicit midpoint) stops where that move would
    // invert an element or close a contact gap (the step bound the solvers' line searches use).
    m_move_bound = std::make_unique<solver::StepBound>(comm, m_potential->elastic(), m_contact.get());
    m_integrator->set_move_limit([this](const NodeField& from, const NodeField& direction) {
        return m_move_bound->along(from, direction, *m_boundary);
    });

    // A restart reads the state of the newest checkpoint into the parts just built.
    m_mesh_hash = io::mesh_fingerprint(comm, owned_ids(), m_x0);
    if (m_restarted) {
        restore_checkpoint();
    }

    // 4. Output folder (rank 0 prepares it; old step files of an earlier run are removed, a restart's
    //    series and metrics continue after its step).
    on_root(comm, m_rank, [&] {
        std::error_code ec;
        fs::create_directories(m_output_dir, ec);
        if (ec) {
            throw InputError("cannot create output folder '" + m_output_dir + "': " + ec.message() +
                             "; fix: choose a writable folder with --output or output.dir");
        }
        if (!m_restarted) {
            // A new run: nothing of an earlier run in this folder may be listed or restarted from.
            fs::remove_all(fs::path(m_output_dir) / "steps", ec);
            fs::remove_all(fs::path(m_output_dir) / "checkpoints", ec);
        }
        const std::string resolved = (fs::path(m_output_dir) / "scene.resolved.json").string();
        std::ofstream out(resolved);
        if (!(out << m_scene.resolved.dump(2) << '\n')) {
            throw InputError("cannot write '" + resolved + "'; fix: choose a writable output folder");
        }
        const std::string metrics = (fs::path(m_output_dir) / "metrics.jsonl").string();
        if (m_restarted) {
            m_metrics.emplace(metrics, m_step);
        } else {
            m_metrics.emplace(metrics);
        }
    });
    m_vtk = std::make_unique<io::VtkSeriesWriter>(comm, m_output_dir, m_scene.output_binary,
                                                  m_restarted ? m_step : -1);
    m_setup_seconds = comm::allreduce_max(comm, timer.seconds());
    if (!m_scene.contact.enabled && !m_scene.obstacles.empty()) {
        log::warn() << "contact.enabled is false: the scene's " << m_scene.obstacles.size()
                    << " obstacle(s) take no part in the simulation";
    }
    log::info() << "set-up: " << m_local.global_num_nodes << " nodes, " << m_local.global_num_elements
                << " tetrahedra, " << m_size << " ranks, " << m_setup_seconds << " s";
}

void Simulation::check_initial_contact(double dhat) {
    // IPC needs a feasible start: every distance positive (contact/initial_contact.hpp). Between 0 and d̂
    // the barrier is finite, so such a start is run, with the closest pair named.
    std::string crossing;
    if (m_rank == 0) {
        crossing = contact::first_meeting_triangles(*m_surface);
    }
    crossing = comm::agree_on_error(m_comm, crossing);
    const auto closest = m_contact->closest_pair();
    if (!crossing.empty() || closest.distance == 0.0) {
        throw InputError(io::input_error_message(
            m_scene.file, "bodies",
            "the initial state touches or intersects: " + (crossing.empty() ? closest.text : crossing),
            "move the bodies (and obstacles) apart; a gap smaller than dhat = " + std::to_string(dhat) +
                " m is allowed" +
                (m_surface->max_offset() > 0.0
                     ? " (beyond the shells' and rods' contact offsets: lower bodies[].contact_offset if a "
                       "body's own rest shape is closer than twice its offset)"
                     : "")));
    }
    if (closest.distance < dhat) {
        log::warn() << "the initial state is closer than dhat = " << dhat << " m: " << closest.text
                    << "; the barrier is finite there and pushes the pair apart in the first steps";
    }
}

std::string Simulation::pvd_path() const {
    return m_vtk->pvd_path();
}

void Simulation::run(const std::function<void(const solver::StepResult&)>& after_step) {
    m_stop_signal = 0;
    m_since_checkpoint.reset();
    if (!m_restarted) {
        write_metrics(0, solver::StepResult{}, 0.0);
        write_output(0, 0.0);
    } else if (m_step == m_scene.steps) {
        log::info() << "the checkpoint is at the last step (" << m_step << "); nothing left to run";
    }
    int uncertified = 0;
    int fallbacks = 0;
    int fallbacks_certified = 0;
    int repaired_itself = 0;
    int substepped = 0;
    int most_substeps = 1;
    const int first_step = m_step + 1;
    Kokkos::Timer run_timer;
    for (int n = first_step; n <= m_scene.steps; ++n) {
        Kokkos::Timer timer;
        const solver::StepResult result = step();
        const double wall = comm::allreduce_max(m_comm, timer.seconds());
        uncertified += result.converged ? 0 : 1;
        fallbacks += m_verdict.fell_back() ? 1 : 0;
        fallbacks_certified += m_verdict.fell_back() && result.converged ? 1 : 0;
        repaired_itself += m_verdict.repaired_itself ? 1 : 0;
        substepped += m_substeps > 1 ? 1 : 0;
        most_substeps = std::max(most_substeps, m_substeps);
        // A fallback step's residual is the fallback's stopping measure.
        const solver::StepSolver& measured = m_verdict.fell_back() ? *m_reference : *m_solver;
        log::info() << "step " << m_step << "  t " << m_time << " s  " << iterations_text(result) << "  "
                    << measured.residual_name() << " " << result.residual
                    << (*measured.residual_unit() ? " " : "") << measured.residual_unit() << "  |r|/m "
                    << residual_acceleration_text(result.residual_acceleration)
                    << (m_verdict.fell_back() ? "  solved by " + m_verdict.repaired_by : "")
                    << (m_verdict.repaired_itself ? "  repaired" : "")
                    << (m_substeps > 1 ? "  substeps " + std::to_string(m_substeps) : "")
                    << (result.converged ? ""
                                         : "  NOT CERTIFIED: " +
                                               m_verdict.explain(m_certificate->acceleration_tolerance()))
                    << (result.line_search_failed ? " (line search failed)" : "") << "  wall " << wall
                    << " s  " << progress_text(n, m_scene.steps, n - first_step + 1, run_timer.seconds());
        write_metrics(m_step, result, wall);
        if (m_step % m_scene.output_every == 0 || n == m_scene.steps) {
            write_output(m_step, m_time);
        }
        if (after_step) {
            after_step(result);
        }
        if (checkpoint_is_due(n == m_scene.steps)) {
            write_checkpoint();
        }
        if (m_stop_signal != 0 && n < m_scene.steps) {
            log::info() << "stopped by " << StopSignals::name(m_stop_signal) << " after step " << m_step
                        << " of " << m_scene.steps << " (t " << m_time << " s)";
            break;
        }
    }
    if (repaired_itself > 0) {
        log::info() << repaired_itself << " of " << m_scene.steps << " steps failed the step certificate as "
                    << m_solver->name() << " first ended them and were certified after " << m_solver->name()
                    << " went on from there; see \"repair\" in metrics.jsonl";
    }
    if (fallbacks > 0) {
        log::warn() << fallbacks << " of " << m_scene.steps << " steps failed the step certificate with "
                    << m_solver->name() << " and were solved again from their start with "
                    << m_reference->name() << " (" << fallbacks_certified
                    << " of them certified); see \"repair\" in metrics.jsonl";
    }
    if (substepped > 0) {
        log::warn() << substepped << " of " << m_scene.steps
                    << " steps failed the step certificate as one step "
                    << "and were solved again in up to " << most_substeps
                    << " substeps (solver.max_substeps); see \"substeps\" in metrics.jsonl";
    }
    if (uncertified > 0) {
        log::warn() << uncertified << " of " << m_scene.steps
                    << " steps are NOT CERTIFIED: the method's stopping test within its limit "
                       "(solver.max_newton_iterations; solver.al.max_outer_iterations; "
                       "solver.stencil_descent.max_sweeps), the balance of forces within "
                       "solver.acceleration_tolerance, or the energy under implicit Euler failed; see "
                       "\"certificate\" in metrics.jsonl";
    }
}

std::vector<GlobalId> Simulation::owned_ids() const {
    return {m_local.node_global_id.begin(), m_local.node_global_id.begin() + m_local.num_owned_nodes};
}

bool Simulation::checkpoint_is_due(bool last_step) {
    // One reduction agrees on a stop signal (any rank that saw one) and on the wall-clock interval.
    const bool by_time =
        m_scene.checkpoint_seconds > 0.0 && m_since_checkpoint.seconds() >= m_scene.checkpoint_seconds;
    int local[2] = {StopSignals::received(), by_time ? 1 : 0};
    int agreed[2] = {0, 0};
    INTACT_CHECK_MPI(MPI_Allreduce(local, agreed, 2, MPI_INT, MPI_MAX, m_comm));
    m_stop_signal = agreed[0];
    const bool by_steps = m_scene.checkpoint_every > 0 && m_step % m_scene.checkpoint_every == 0;
    const bool at_end = last_step && (m_scene.checkpoint_every > 0 || m_scene.checkpoint_seconds > 0.0);
    return m_stop_signal != 0 || agreed[1] != 0 || by_steps || at_end;
}

nlohmann::json Simulation::recorded_command() const {
    // Each key path once, its last assignment (a restart line's override comes after the recorded one). A
    // partition belongs to a rank count, and a restart may use another, so `partition.*` is not recorded.
    std::vector<std::string> overrides;
    for (auto it = m_scene.overrides.rbegin(); it != m_scene.overrides.rend(); ++it) {
        const std::string key = it->substr(0, it->find('='));
        const bool later = std::any_of(overrides.begin(), overrides.end(),
                                       [&](const std::string& o) { return o.substr(0, o.find('=')) == key; });
        if (!later && key.rfind("partition.", 0) != 0) {
            overrides.insert(overrides.begin(), *it);
        }
    }
    std::error_code ec;
    const fs::path scene = fs::absolute(m_scene.file, ec);
    return {{"scene", ec ? m_scene.file : scene.lexically_normal().string()}, {"overrides", overrides}};
}

void Simulation::write_checkpoint() {
    Kokkos::Timer timer;
    io::CheckpointWriter out(owned_ids());
    out.put_node_field("positions", m_x);
    out.put_node_field("velocities", m_v);
    m_boundary->save(out);
    m_integrator->save(out);
    m_solver->save(out);
    io::CheckpointInfo info;
    info.step = m_step;
    info.time = m_time;
    info.ranks = m_size;
    info.mesh_hash = m_mesh_hash;
    info.scene = io::compared_scene(m_scene.resolved);
    info.command = recorded_command();
    const std::string folder = io::write_checkpoint(m_comm, m_output_dir, out, info);
    m_since_checkpoint.reset();
    log::info() << "checkpoint after step " << m_step << ": " << (fs::path(m_output_dir) / folder).string()
                << " (" << comm::allreduce_max(m_comm, timer.seconds()) << " s)";
}

void Simulation::restore_checkpoint() {
    const io::CheckpointReader in(m_comm, m_output_dir, owned_ids(), *m_halo);
    const io::CheckpointInfo& info = in.info();
    // 1. The same scene and meshes (the reader's verdicts are the same on every rank).
    const io::SceneDifference difference =
        io::first_difference(info.scene, io::compared_scene(m_scene.resolved));
    if (!difference.key.empty()) {
        throw InputError(io::input_error_message(
            m_scene.file, difference.key,
            "differs from the checkpointed run's (" + difference.was + " there, " + difference.now + " here)",
            "restart with the scene the run began with (only time.end, time.steps and the output keys may "
            "change), or run the new scene without --restart into another output folder"));
    }
    if (info.mesh_hash != m_mesh_hash) {
        throw InputError(io::input_error_message(
            m_scene.file, "bodies", "the meshes differ from the checkpointed run's (a mesh file changed?)",
            "restart with the mesh files the run began with, or start a new run without --restart"));
    }
    if (info.step > m_scene.steps) {
        throw InputError(io::input_error_message(
            m_scene.file, "time.steps",
            "the checkpoint is at step " + std::to_string(info.step) + ", past the scene's " +
                std::to_string(m_scene.steps) + " steps",
            "give time.steps >= " + std::to_string(info.step) +
                " (or time.end >= " + std::to_string(static_cast<double>(info.step) * m_scene.dt) + " s)"));
    }
    // 2. The state, each part its own.
    m_account_current = false; // the state is replaced
    in.node_field("positions", m_x);
    in.node_field("velocities", m_v);
    m_boundary->restore(in);
    m_integrator->restore(in);
    m_solver->restore(in);
    if (m_contact) {
        // The contact model at the restored positions (it was set up at the rest state): the step
        // certificate's start energy reads the barrier there, as after any step.
        m_surface->begin_step(m_x);
        m_contact->update(m_x, m_boundary->obstacle_positions());
    }
    m_step = static_cast<int>(info.step);
    m_time = info.time;
}

std::array<double, 4> Simulation::energies() const {
    return energies_of(energy_account());
}

std::array<double, 4> Simulation::energies_of(const solver::EnergyAccount& a) {
    // Only the terms that store energy count (the barrier): the value of an augmented-Lagrangian
    // multiplier term is not energy the system holds (it may be negative, and it is not given back).
    double contact = 0.0;
    for (double e : a.stored) {
        contact += e;
    }
    return {a.kinetic, a.elastic, a.gravitational, contact};
}

void Simulation::write_metrics(int step, const solver::StepResult& result, double wall_seconds) {
    // The account of the state just reached (step() made it; the start's is made here).
    if (!m_account_current) {
        m_account = energy_account();
        m_account_current = true;
    }
    const auto e = energies_of(m_account);
    const auto control = m_integrator->control();
    const auto fraction = m_integrator->move_fraction();
    using nlohmann::json;
    if (m_rank == 0) {
        m_metrics->write(
            {{"step", step},
             {"time", step * m_scene.dt},
             {"ranks", m_size},
             {"nodes", m_local.global_num_nodes},
             {"elements", m_local.global_num_elements},
             {"newton_iterations", result.iterations},
             {"linear_iterations", result.linear_iterations},
             {"newton_residual", result.residual},
             // NaN: not measured (every method measures it at its step's end; kept for safety).
             {"residual_acceleration", std::isfinite(result.residual_acceleration)
                                           ? nlohmann::json(result.residual_acceleration)
                                           : nlohmann::json(nullptr)},
             {"converged", step == 0 ? true : result.converged},
             {"certificate", step == 0 ? nlohmann::json(nullptr) : m_verdict.to_json()},
             {"repair", step == 0 ? nlohmann::json(nullptr) : m_verdict.repair_json()},
             {"substeps", step == 0 ? 0 : m_substeps},
             {"line_search_failed", result.line_search_failed},
             {"contact_pairs", result.contact_pairs},
             {"min_contact_distance", std::isfinite(result.min_distance) ? nlohmann::json(result.min_distance)
                                                                         : nlohmann::json(nullptr)},
             {"barrier_stiffness", result.kappa},
             {"friction_lags", result.friction_lags},
             {"outer_iterations", result.outer_iterations >= 0 ? nlohmann::json(result.outer_iterations)
                                                               : nlohmann::json(nullptr)},
             {"mean_toi", result.mean_toi >= 0.0 ? nlohmann::json(result.mean_toi) : nlohmann::json(nullptr)},
             {"active_set_size",
              result.active_set_size >= 0 ? nlohmann::json(result.active_set_size) : nlohmann::json(nullptr)},
             {"warm_start_iterations", result.warm_start_iterations},
             {"augmented_pairs",
              result.augmented_pairs >= 0 ? nlohmann::json(result.augmented_pairs) : nlohmann::json(nullptr)},
             {"sigma", result.sigma >= 0.0 ? nlohmann::json(result.sigma) : nlohmann::json(nullptr)},
             {"sweeps", result.sweeps >= 0 ? nlohmann::json(result.sweeps) : nlohmann::json(nullptr)},
             {"warm_start_sweeps", result.warm_start_sweeps >= 0 ? nlohmann::json(result.warm_start_sweeps)
                                                                 : nlohmann::json(nullptr)},
             {"barrier_stencils", result.barrier_stencils >= 0 ? nlohmann::json(result.barrier_stencils)
                                                               : nlohmann::json(nullptr)},
             {"grey_fraction",
              result.grey_fraction >= 0.0 ? nlohmann::json(result.grey_fraction) : nlohmann::json(nullptr)},
             {"kinetic_energy", e[0]},
             {"elastic_energy", e[1]},
             {"gravitational_energy", e[2]},
             {"potential_energy", e[1] + e[2]},
             {"contact_energy", e[3]},
             {"total_energy", e[0] + e[1] + e[2] + e[3]},
             {"energy_target", control && control->target ? json(*control->target) : json(nullptr)},
             {"alpha", control && control->alpha ? json(*control->alpha) : json(nullptr)},
             {"dissipated_energy", control ? json(control->dissipated) : json(nullptr)},
             {"deferred_energy", control && control->target ? json(control->deferred) : json(nullptr)},
             {"move_fraction", step > 0 && fraction ? json(*fraction) : json(nullptr)},
             {"phase_seconds",
              {{"contact", result.seconds.contact},
               {"assembly", result.seconds.assembly},
               {"linear_solve", result.seconds.linear_solve},
               {"step_bound", result.seconds.step_bound},
               {"line_search", result.seconds.line_search}}},
             {"setup_seconds", m_setup_seconds},
             {"wall_seconds", wall_seconds}});
    }
}

void Simulation::write_output(int step, double time) {
    // The piece holds this rank's owned elements and the nodes they use (owned or ghost).
    auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), m_x);
    auto v = Kokkos::create_mirror_view_and_copy(HostSpace(), m_v);
    auto x0 = Kokkos::create_mirror_view_and_copy(HostSpace(), m_x0);
    io::VtkPiece piece;
    std::vector<int> point_of(static_cast<std::size_t>(m_local.num_local_nodes()), -1);
    const auto add_cell = [&](const auto& nodes, int body, GlobalId id) {
        std::array<int, 4> cell{-1, -1, -1, -1};
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            const int n = nodes[k];
            int& p = point_of[static_cast<std::size_t>(n)];
            if (p < 0) {
                p = static_cast<int>(piece.points.size());
                piece.points.push_back({x(n, 0), x(n, 1), x(n, 2)});
                piece.displacement.push_back({x(n, 0) - x0(n, 0), x(n, 1) - x0(n, 1), x(n, 2) - x0(n, 2)});
                piece.velocity.push_back({v(n, 0), v(n, 1), v(n, 2)});
                piece.point_global_id.push_back(m_local.node_global_id[static_cast<std::size_t>(n)]);
            }
            cell[k] = p;
        }
        piece.cells.push_back(cell);
        piece.cell_rank.push_back(m_rank);
        piece.cell_body.push_back(body);
        piece.cell_global_id.push_back(id);
    };
    for (int e = 0; e < m_local.num_owned_elements; ++e) {
        add_cell(m_local.tets[static_cast<std::size_t>(e)], m_local.element_body[static_cast<std::size_t>(e)],
                 m_local.element_global_id[static_cast<std::size_t>(e)]);
    }
    // Shells as triangles, rods as lines (their global ids follow the tets', partition_elements).
    const CodimElements& codim = m_local.codim;
    for (int t = 0; t < codim.num_owned_triangles; ++t) {
        const auto k = static_cast<std::size_t>(t);
        add_cell(codim.triangles[k], codim.triangle_body[k], codim.triangle_id[k]);
    }
    for (int s = 0; s < codim.num_owned_segments; ++s) {
        const auto k = static_cast<std::size_t>(s);
        add_cell(codim.segments[k], codim.segment_body[k], codim.segment_id[k]);
    }
    if (m_obstacle_output) { // rank 0
        // Where the simulation holds the obstacles (their rows lag their prescription after a step that
        // ended short of its targets), not where their motion prescribes them.
        const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), m_boundary->obstacle_positions());
        std::vector<Vec3> obstacle_rows;
        for (int r = m_surface->num_vertices() - m_surface->num_obstacle_rows();
             r < m_surface->num_vertices(); ++r) {
            obstacle_rows.push_back({rows(r, 0), rows(r, 1), rows(r, 2)});
        }
        const io::VtkObstacles obstacles = m_obstacle_output->at(time, obstacle_rows);
        m_vtk->write(step, time, piece, &obstacles);
    } else {
        m_vtk->write(step, time, piece);
    }
}

} // namespace intact
