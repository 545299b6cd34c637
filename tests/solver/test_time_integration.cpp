// The integrators on whole simulations, 1-4 ranks: order of accuracy on a vibrating beam, energy over
// 2 s (conservation and exponential decay with A-search), momentum with gravity off (T4), a bouncing
// block with IPC contact (rebound heights, no penetration), α = 0 reproducing implicit Euler bit for bit
// (T6), and the same α and positions on every rank count.
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

namespace {

using namespace intact;
using nlohmann::json;
using test::gather_positions;
using test::world_rank;
using test::world_size;

std::string output_dir(const std::string& name, MPI_Comm comm) {
    return test::output_dir("time_integration", name, comm);
}

Simulation make_simulation(const json& document, const std::string& name, MPI_Comm comm = MPI_COMM_WORLD) {
    return Simulation(comm, io::parse_scene(document, name + ".json"), output_dir(name, comm));
}

// A cantilever 0.4 × 0.1 × 0.1 m (4 × 1 × 1 cells, 24 tets; coarse on purpose, so that a 2 s run takes a
// second), linear material, clamped at x = 0, no gravity, contact off, started with a smooth transverse
// velocity v_z = 0.5 (x / L)² m/s. Tight solver tolerances: the solve's error stays far below the
// integrators' own.
json beam_scene(const std::string& integrator, double dt, int steps) {
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
void set_beam_velocity(Simulation& simulation) {
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

double total_energy(const Simulation& simulation) {
    const auto e = simulation.energies();
    return e[0] + e[1] + e[2] + e[3];
}

// Positions at time T of the beam with `integrator` and step T / steps.
std::map<GlobalId, Vec3> beam_positions(const std::string& integrator, double end_time, int steps) {
    Simulation simulation = make_simulation(beam_scene(integrator, end_time / steps, steps),
                                            "beam_" + integrator + "_" + std::to_string(steps));
    set_beam_velocity(simulation);
    simulation.reset_integrator();
    for (int n = 0; n < steps; ++n) {
        EXPECT_TRUE(simulation.step().converged);
    }
    return gather_positions(simulation, MPI_COMM_WORLD);
}

double max_difference(const std::map<GlobalId, Vec3>& a, const std::map<GlobalId, Vec3>& b) {
    double worst = 0.0;
    for (const auto& [id, x] : a) {
        for (std::size_t c = 0; c < 3; ++c) {
            worst = std::max(worst, std::abs(x[c] - b.at(id)[c]));
        }
    }
    return worst;
}

TEST(TimeIntegration, OrderOfAccuracyOnAVibratingBeam) {
    // Errors at T = 0.02 s for h = T/8 ... T/64 against Newmark at T/2048: slopes ≈ 1 for implicit Euler
    // and ≈ 2 for BDF2, Newmark and implicit midpoint. The horizon is short because the coarse beam's
    // stiffest modes (periods of a few ms) must be resolved by the finer steps: over T = 0.2 s with
    // h ≥ 6 ms their unresolved phase error leaves every method at a 5e-4 m plateau (measured).
    const double end_time = 0.02;
    const auto reference = beam_positions("newmark", end_time, 2048);
    for (const std::string integrator : {"implicit_euler", "bdf2", "newmark", "implicit_midpoint"}) {
        std::vector<double> errors;
        for (const int steps : {8, 16, 32, 64}) {
            errors.push_back(max_difference(beam_positions(integrator, end_time, steps), reference));
        }
        const double expected = integrator == "implicit_euler" ? 1.0 : 2.0;
        std::string slopes;
        for (std::size_t k = 1; k < errors.size(); ++k) {
            slopes += " " + std::to_string(std::log2(errors[k - 1] / errors[k]));
        }
        if (world_rank() == 0) {
            std::printf("%s: errors %.3e %.3e %.3e %.3e, slopes%s\n", integrator.c_str(), errors[0],
                        errors[1], errors[2], errors[3], slopes.c_str());
        }
        // The last two halvings are in the asymptotic range.
        for (std::size_t k = 2; k < errors.size(); ++k) {
            const double slope = std::log2(errors[k - 1] / errors[k]);
            EXPECT_NEAR(slope, expected, 0.25) << integrator << " halving " << k;
        }
    }
}

TEST(TimeIntegration, BeamEnergyOverTwoSeconds) {
    // h = 1/200 s over 2 s (about 100 steps per period of the first bending mode): implicit Euler loses
    // most of the energy; A-search ends within 1% of H₀ and stays within 1% on average, with short dips
    // where the kinetic energy passes through its minimum and α pinned at α_max cannot make up the
    // implicit-Euler loss at once (measured 3.4% at h = 1/200 s, 8.1% at 1/100, 1.1% at 1/500: the
    // dips shrink like h); with decay_time τ = 2 s it follows H₀ exp(−t/τ) within 2%. A target can
    // only decay as fast as implicit Euler dissipates (about h ω² per unit time for a mode ω), hence τ.
    const double h = 1.0 / 200.0;
    const int steps = 400;
    for (const std::string integrator : {"implicit_euler", "a_search", "a_search_decay"}) {
        json document = beam_scene(integrator == "a_search_decay" ? "a_search" : integrator, h, steps);
        if (integrator == "a_search_decay") {
            document["integrator"]["energy"] = {{"decay_time", 2.0}};
        }
        Simulation simulation = make_simulation(document, "energy_" + integrator);
        set_beam_velocity(simulation);
        simulation.reset_integrator();
        const double initial = total_energy(simulation);
        double worst = 0.0, mean = 0.0;
        int n = 0;
        simulation.run([&](const solver::StepResult& result) {
            EXPECT_TRUE(result.converged);
            ++n;
            const double expected =
                integrator == "a_search_decay" ? initial * std::exp(-n * h / 2.0) : initial;
            const double ratio = total_energy(simulation) / expected;
            worst = std::max(worst, std::abs(ratio - 1.0));
            mean += ratio / steps;
        });
        const double final_ratio = total_energy(simulation) / initial;
        if (world_rank() == 0) {
            std::printf("%s: E(2 s) / E(0) = %.4f; E / target: mean %.4f, worst deviation %.2e\n",
                        integrator.c_str(), final_ratio, mean, worst);
        }
        if (integrator == "implicit_euler") {
            EXPECT_LT(final_ratio, 0.3);
        } else if (integrator == "a_search") {
            EXPECT_NEAR(final_ratio, 1.0, 0.01);
            EXPECT_NEAR(mean, 1.0, 0.01);
            EXPECT_LT(worst, 0.05);
        } else {
            EXPECT_LT(worst, 0.02);
        }
    }
}

TEST(TimeIntegration, MomentumIsConservedWithGravityOff) {
    // T4: a free, spinning and stretching block; internal forces (and A-search's force difference) sum to
    // zero, so total momentum stays put for every integrator.
    for (const std::string integrator :
         {"implicit_euler", "bdf2", "newmark", "implicit_midpoint", "a_search", "a1"}) {
        json document = beam_scene(integrator, 0.01, 10);
        document["bodies"][0].erase("fixed");
        document["bodies"][0]["material"]["model"] = "neo_hookean";
        Simulation simulation = make_simulation(document, "momentum_" + integrator);
        const auto& local = simulation.local_mesh();
        auto v = Kokkos::create_mirror_view(simulation.velocities());
        for (int i = 0; i < local.num_local_nodes(); ++i) {
            const Vec3& x = local.rest_position[static_cast<std::size_t>(i)];
            v(i, 0) = 0.3 - 4.0 * (x[2] - 0.05) + 2.0 * x[0];
            v(i, 1) = 1.0 * x[0];
            v(i, 2) = 4.0 * (x[0] - 0.2);
        }
        Kokkos::deep_copy(simulation.velocities(), v);
        simulation.reset_integrator();
        auto momentum = [&] {
            const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
            const auto vel = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
            std::array<double, 4> p{0.0, 0.0, 0.0, 0.0};
            for (int i = 0; i < local.num_owned_nodes; ++i) {
                for (std::size_t c = 0; c < 3; ++c) {
                    p[c] += mass(i) * vel(i, static_cast<int>(c));
                    p[3] += mass(i) * std::abs(vel(i, static_cast<int>(c)));
                }
            }
            for (auto& value : p) {
                value = comm::allreduce_sum(MPI_COMM_WORLD, value);
            }
            return p;
        };
        const auto before = momentum();
        for (int n = 0; n < 10; ++n) {
            EXPECT_TRUE(simulation.step().converged);
        }
        const auto after = momentum();
        for (std::size_t c = 0; c < 3; ++c) {
            EXPECT_NEAR(after[c], before[c], 1e-10 * before[3]) << integrator << " axis " << c;
        }
    }
}

// A soft block (10 cm, 2 × 2 × 2 cells, E = 1e5 Pa, 1 kg) dropped from 5 cm onto the plane z = 0 with
// IPC contact, h = 1/120 s, for long enough to bounce three times.
json bounce_scene(const std::string& integrator, int steps) {
    json body;
    body["mesh"]["box"] = {{"min", {0.0, 0.0, 0.05}}, {"max", {0.1, 0.1, 0.15}}, {"cells", {2, 2, 2}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    json scene;
    scene["time"] = {{"dt", 1.0 / 120.0}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({body});
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}};
    scene["integrator"] = {{"type", integrator}};
    scene["solver"] = {
        {"newton_tolerance", 1e-5}, {"linear_tolerance", 1e-10}, {"max_newton_iterations", 200}};
    scene["output"] = {{"every", 10}};
    return scene;
}

// Centre-of-mass height (m), reduced over ranks.
double centre_height(const Simulation& simulation) {
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
    double m = 0.0, mz = 0.0;
    for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
        m += mass(i);
        mz += mass(i) * x(i, 2);
    }
    return comm::allreduce_sum(MPI_COMM_WORLD, mz) / comm::allreduce_sum(MPI_COMM_WORLD, m);
}

TEST(TimeIntegration, BouncingBlockKeepsItsReboundWithASearchAndNeverPenetrates) {
    const int steps = 96; // 0.8 s: the fall and three bounces
    std::map<std::string, std::vector<double>> apexes;
    for (const std::string integrator : {"a_search", "implicit_euler"}) {
        Simulation simulation = make_simulation(bounce_scene(integrator, steps), "bounce_" + integrator);
        const double rest = 0.05; // centre height of the block resting unloaded on the plane
        std::vector<double> heights{centre_height(simulation)};
        const double drop = heights[0] - rest;
        double closest = 1e300;
        simulation.run([&](const solver::StepResult& result) {
            EXPECT_TRUE(result.converged) << integrator;
            if (result.contact_pairs > 0) {
                closest = std::min(closest, result.min_distance);
            }
            heights.push_back(centre_height(simulation));
        });
        EXPECT_GT(closest, 0.0) << integrator;
        for (std::size_t n = 1; n + 1 < heights.size(); ++n) {
            if (heights[n] > heights[n - 1] && heights[n] >= heights[n + 1] &&
                heights[n] > rest + 0.1 * drop) {
                apexes[integrator].push_back((heights[n] - rest) / drop);
            }
        }
        if (world_rank() == 0) {
            std::printf("%s: rebound heights / drop height:", integrator.c_str());
            for (double a : apexes[integrator]) {
                std::printf(" %.4f", a);
            }
            std::printf("\n");
            // `intact check`: no intersection and nothing behind the plane in any written frame.
            std::ostringstream log;
            const auto report = tools::check_output(simulation.output_dir(), log);
            EXPECT_TRUE(report.clean()) << integrator << ": " << log.str();
        }
    }
    ASSERT_GE(apexes["a_search"].size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
        EXPECT_NEAR(apexes["a_search"][k], 1.0, 0.05) << "bounce " << k;
    }
    ASSERT_GE(apexes["implicit_euler"].size(), 1u);
    EXPECT_LT(apexes["implicit_euler"][0], 0.95);
}

TEST(TimeIntegration, AlphaZeroIsImplicitEulerBitForBit) {
    // T6, through an impact: the same positions and velocities to the last bit.
    const int steps = 24;
    json search = bounce_scene("a_search", steps);
    search["integrator"]["alpha_min"] = 0.0;
    search["integrator"]["alpha_max"] = 0.0;
    Simulation a = make_simulation(search, "alpha_zero");
    Simulation b = make_simulation(bounce_scene("implicit_euler", steps), "alpha_zero_reference");
    for (int n = 0; n < steps; ++n) {
        a.step();
        b.step();
    }
    const auto xa = Kokkos::create_mirror_view_and_copy(HostSpace(), a.positions());
    const auto xb = Kokkos::create_mirror_view_and_copy(HostSpace(), b.positions());
    const auto va = Kokkos::create_mirror_view_and_copy(HostSpace(), a.velocities());
    const auto vb = Kokkos::create_mirror_view_and_copy(HostSpace(), b.velocities());
    int differing = 0;
    for (int i = 0; i < a.local_mesh().num_local_nodes(); ++i) {
        for (int c = 0; c < 3; ++c) {
            differing += (xa(i, c) != xb(i, c) || va(i, c) != vb(i, c)) ? 1 : 0;
        }
    }
    EXPECT_EQ(differing, 0);
    EXPECT_LT(centre_height(a), 0.0999); // it has been falling
}

TEST(TimeIntegration, SameAlphaAndPositionsOnEveryRankCount) {
    const int steps = 20; // through the first impact
    const json document = bounce_scene("a_search", steps);
    auto follow = [&](Simulation& simulation, std::vector<double>& alphas) {
        for (int n = 0; n < steps; ++n) {
            simulation.step();
            alphas.push_back(*simulation.integrator().control()->alpha);
        }
    };
    std::map<GlobalId, Vec3> reference;
    std::vector<double> reference_alphas;
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    if (world_rank() == 0) {
        {
            Simulation serial = make_simulation(document, "ranks", alone);
            follow(serial, reference_alphas);
            reference = gather_positions(serial, alone);
        }
        MPI_Comm_free(&alone);
    }
    Simulation parallel = make_simulation(document, "ranks", MPI_COMM_WORLD);
    std::vector<double> alphas;
    follow(parallel, alphas);
    const auto result = gather_positions(parallel, MPI_COMM_WORLD);
    if (world_rank() == 0) {
        const double worst = max_difference(reference, result) / 0.15;
        double worst_alpha = 0.0;
        for (std::size_t n = 0; n < alphas.size(); ++n) {
            worst_alpha = std::max(worst_alpha, std::abs(alphas[n] - reference_alphas[n]));
        }
        std::printf("A-search on %d ranks vs 1: positions %.3e relative, alpha %.3e\n", world_size(), worst,
                    worst_alpha);
        EXPECT_LT(worst, 1e-6);
        EXPECT_LT(worst_alpha, 1e-6);
    }
}

} // namespace
