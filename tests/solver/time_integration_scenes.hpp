#pragma once
// Scenes and helpers shared by test_time_integration (physics, one rank) and test_integrator_ranks
// (partition-dependent checks, 1-4 ranks).
#include "comm/collectives.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "src/tools/check_output.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace intact::test::integration {

using nlohmann::json;

inline std::string output_dir(const std::string& name, MPI_Comm comm) {
    return test::output_dir("time_integration", name, comm);
}

inline Simulation
make_simulation(const json& document, const std::string& name, MPI_Comm comm = MPI_COMM_WORLD) {
    return Simulation(comm, io::parse_scene(document, name + ".json"), output_dir(name, comm));
}

// A cantilever 0.4 × 0.1 × 0.1 m (4 × 1 × 1 cells, 24 tets; coarse on purpose, so that a 2 s run takes a
// second), linear material, clamped at x = 0, no gravity, contact off, started with a smooth transverse
// velocity v_z = 0.5 (x / L)² m/s. Tight solver tolerances: the solve's error stays far below the
// integrators' own.
inline json beam_scene(const std::string& integrator, double dt, int steps) {
    json body;
    body["mesh"]["box"] = {{"min", {0.0, 0.0, 0.0}}, {"max", {0.4, 0.1, 0.1}}, {"cells", {4, 1, 1}}};
    body["material"] = {
        {"model", "linear"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["fixed"] = json::array({{{"box", {{"min", {-1, -1, -1}}, {"max", {0.0, 1, 1}}}}}});
    json scene;
    scene["time"] = {{"dt", dt}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, 0.0};
    scene["bodies"] = json::array({body});
    scene["contact"] = {{"enabled", false}};
    scene["integrator"] = {{"type", integrator}};
    scene["solver"] = {
        {"newton_tolerance", 1e-9}, {"linear_tolerance", 1e-12}, {"max_linear_iterations", 5000}};
    scene["output"] = {{"every", 1000000}};
    return scene;
}

// The beam's initial velocity field (the scene's bodies[].velocity is uniform).
inline void set_beam_velocity(Simulation& simulation) {
    const auto& local = simulation.local_mesh();
    auto v = Kokkos::create_mirror_view(simulation.velocities());
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        const Vec3& x = local.rest_position[static_cast<std::size_t>(i)];
        const bool fixed = local.constraint[static_cast<std::size_t>(i)] != NodeConstraint::free;
        v(i, 0) = v(i, 1) = 0.0;
        v(i, 2) = fixed ? 0.0 : 0.5 * (x[0] / 0.4) * (x[0] / 0.4);
    }
    Kokkos::deep_copy(simulation.velocities(), v);
}

inline double total_energy(const Simulation& simulation) {
    const auto e = simulation.energies();
    return e[0] + e[1] + e[2] + e[3];
}

// Positions at time T of the beam with `integrator` and step T / steps.
inline std::map<GlobalId, Vec3> beam_positions(const std::string& integrator, double end_time, int steps) {
    Simulation simulation = make_simulation(beam_scene(integrator, end_time / steps, steps),
                                            "beam_" + integrator + "_" + std::to_string(steps));
    set_beam_velocity(simulation);
    simulation.reset_integrator();
    for (int n = 0; n < steps; ++n) {
        EXPECT_TRUE(simulation.step().converged);
    }
    return test::gather_positions(simulation, MPI_COMM_WORLD);
}

inline double max_difference(const std::map<GlobalId, Vec3>& a, const std::map<GlobalId, Vec3>& b) {
    double worst = 0.0;
    for (const auto& [id, x] : a) {
        for (std::size_t c = 0; c < 3; ++c) {
            worst = std::max(worst, std::abs(x[c] - b.at(id)[c]));
        }
    }
    return worst;
}

// A block (10 cm, 2 × 2 × 2 cells, E = 1e6 Pa, 1 kg) dropped from 5 cm onto the plane z = 0 with IPC
// contact, h = 1/120 s, for long enough to bounce three times. The figures its tests quote are `ipc`'s
// (named, though it is this frictionless scene's default): with `al` at its frictionless K_min = 2 the
// impacts end each step before the multipliers converge, and A-search's rebounds scatter (0.78, 0.43,
// 0.48, 1.36 of the drop; README "Augmented-Lagrangian solver").
inline json bounce_scene(const std::string& integrator, int steps) {
    json body;
    body["mesh"]["box"] = {{"min", {0.0, 0.0, 0.05}}, {"max", {0.1, 0.1, 0.15}}, {"cells", {2, 2, 2}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e6}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    json scene;
    scene["time"] = {{"dt", 1.0 / 120.0}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({body});
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}};
    scene["integrator"] = {{"type", integrator}};
    scene["solver"] = {{"type", "ipc"},
                       {"newton_tolerance", 1e-5},
                       {"linear_tolerance", 1e-10},
                       {"max_newton_iterations", 200}};
    scene["output"] = {{"every", 10}};
    return scene;
}

// Mass-weighted mean of the z component of a node field (positions: the centre-of-mass height, m;
// velocities: its velocity, m/s), reduced over ranks.
inline double centre_z(const Simulation& simulation, const NodeField& field) {
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    double m = 0.0, mz = 0.0;
    for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
        m += mass(i);
        mz += mass(i) * x(i, 2);
    }
    return comm::allreduce_sum(MPI_COMM_WORLD, mz) / comm::allreduce_sum(MPI_COMM_WORLD, m);
}

// Centre-of-mass height (m), reduced over ranks.
inline double centre_height(const Simulation& simulation) {
    return centre_z(simulation, simulation.positions());
}

} // namespace intact::test::integration
