// The integrators' physics on whole simulations (one rank; the partition-dependent checks are in
// test_integrator_ranks): order of accuracy on a vibrating beam, energy over 2 s (conservation and
// exponential decay with A-search), a bouncing block with IPC contact (rebounds, no penetration) and the
// paper's bouncing ball (rebounds within 5% with ipc and al).
#include "tests/solver/time_integration_scenes.hpp"

namespace {

using namespace intact;
using namespace intact::test::integration;
using test::gather_positions;
using test::world_rank;
using test::world_size;

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

TEST(TimeIntegration, BouncingBlockKeepsBouncingWithASearchAndNeverPenetrates) {
    const int steps = 96; // 0.8 s: the fall and three bounces
    std::map<std::string, std::vector<double>> apexes;
    std::map<std::string, double> final_energy; // over the initial one
    for (const std::string integrator : {"a_search", "implicit_euler"}) {
        Simulation simulation = make_simulation(bounce_scene(integrator, steps), "bounce_" + integrator);
        const double rest = 0.05; // centre height of the block resting unloaded on the plane
        std::vector<double> heights{centre_height(simulation)};
        const double drop = heights[0] - rest;
        const double initial = total_energy(simulation);
        double closest = 1e300;
        simulation.run([&](const solver::StepResult& result) {
            // (IPC reports a line-search failure for implicit Euler's resting block: its first, compulsory
            // Newton step is round-off; the position is unaffected.)
            if (integrator == "a_search") {
                EXPECT_TRUE(result.converged);
            }
            if (result.contact_pairs > 0) {
                closest = std::min(closest, result.min_distance);
            }
            heights.push_back(centre_height(simulation));
        });
        EXPECT_GT(closest, 0.0) << integrator;
        // A-search's energy counts the free-flight loss it defers to the next impact (a_search.hpp).
        const auto control = simulation.integrator().control();
        const double deferred = control ? control->deferred : 0.0;
        final_energy[integrator] = (total_energy(simulation) + deferred) / initial;
        for (std::size_t n = 1; n + 1 < heights.size(); ++n) {
            if (heights[n] > heights[n - 1] && heights[n] >= heights[n + 1] &&
                heights[n] > rest + 0.1 * drop) {
                apexes[integrator].push_back((heights[n] - rest) / drop);
            }
        }
        if (world_rank() == 0) {
            std::printf("%s: E_end / E_0 = %.4f, rebound heights / drop height:", integrator.c_str(),
                        final_energy[integrator]);
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
    // A-search bounces three times and keeps the total energy; implicit Euler never rises again. The
    // issue's "rebound within 5%" (BouncingBallKeepsItsReboundWithASearch) does not hold on this coarse
    // 2 × 2 × 2-cell block: each impact leaves part of the (conserved) energy in the block's vibration,
    // measured rebounds 0.65, 0.80, 0.82 of the drop.
    ASSERT_GE(apexes["a_search"].size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) {
        EXPECT_GT(apexes["a_search"][k], 0.5) << "bounce " << k;
    }
    EXPECT_NEAR(final_energy["a_search"], 1.0, 0.02);
    EXPECT_TRUE(apexes["implicit_euler"].empty());
    EXPECT_LT(final_energy["implicit_euler"], 0.6);
}

TEST(TimeIntegration, BouncingBallKeepsItsReboundWithASearch) {
    // The paper's bouncing ball (spec §5, validation 4): 10 cm across (inputs/meshes/ball.msh, 207 nodes,
    // scaled by 0.5), neo-Hookean E = 1e6 Pa, dropped 1 m onto a frictionless plane at h = 1/120 s, with
    // `ipc` and with `al` (k_min 12: with fewer outer iterations an impact loses energy that A-search then
    // has to pump back; README "A-search"). A-search keeps each of the first three rebounds within 5% of
    // the drop (measured 0.979, 0.979, 0.980 with ipc and 0.979, 0.963, 0.975 with al; with ipc 0.979,
    // 0.940, 0.919 before free-flight steps deferred the centre of mass's implicit-Euler loss to the next
    // impact, a_search.hpp); implicit Euler loses most of the energy at the first impact. Never
    // penetrating: `intact check` on the written frames.
    const double radius = 0.05;
    const double drop = 1.0;
    auto ball = [&](const std::string& integrator, const std::string& solver) {
        json body;
        body["mesh"]["file"] = INTACT_SOURCE_DIR "/inputs/meshes/ball.msh";
        body["scale"] = 0.5;
        body["translate"] = {0.0, 0.0, radius + drop};
        body["material"] = {
            {"model", "neo_hookean"}, {"youngs_modulus", 1e6}, {"poisson_ratio", 0.4}, {"density", 1000.0}};
        json scene;
        // Three rebounds; implicit Euler only through the first impact and the time it would take to rise.
        scene["time"] = {{"dt", 1.0 / 120.0}, {"end", integrator == "a_search" ? 2.9 : 1.2}};
        scene["gravity"] = {0.0, 0.0, -9.81};
        scene["bodies"] = json::array({body});
        scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
        scene["contact"] = {{"enabled", true}};
        scene["integrator"] = {{"type", integrator}};
        scene["solver"] = {{"type", solver}};
        if (solver == "al") {
            scene["solver"]["al"] = {{"k_min", 12}};
        }
        scene["output"] = {{"every", 4}};
        return scene;
    };
    for (const auto& [integrator, solver] : std::vector<std::pair<std::string, std::string>>{
             {"a_search", "ipc"}, {"a_search", "al"}, {"implicit_euler", "ipc"}}) {
        const std::string name = "ball_" + integrator + "_" + solver;
        Simulation simulation = make_simulation(ball(integrator, solver), name);
        std::vector<double> heights{centre_height(simulation)};
        simulation.run([&](const solver::StepResult&) { heights.push_back(centre_height(simulation)); });
        std::vector<double> rebounds;
        for (std::size_t n = 1; n + 1 < heights.size(); ++n) {
            if (heights[n] > heights[n - 1] && heights[n] >= heights[n + 1] &&
                heights[n] > radius + 0.1 * drop) {
                rebounds.push_back((heights[n] - radius) / drop);
            }
        }
        if (world_rank() == 0) {
            std::printf("%s: rebound heights / drop height:", name.c_str());
            for (double r : rebounds) {
                std::printf(" %.4f", r);
            }
            std::printf("\n");
            std::ostringstream log;
            EXPECT_TRUE(tools::check_output(simulation.output_dir(), log).clean())
                << name << ": " << log.str();
        }
        if (integrator == "a_search") {
            ASSERT_GE(rebounds.size(), 3u) << name;
            for (std::size_t k = 0; k < 3; ++k) {
                EXPECT_NEAR(rebounds[k], 1.0, 0.05) << name << " bounce " << k;
            }
        } else {
            EXPECT_TRUE(rebounds.empty() || rebounds.front() < 0.5) << name;
        }
    }
}

TEST(TimeIntegration, ImplicitMidpointNeverLeavesAStatePastTheWall) {
    // Implicit midpoint's xⁿ⁺¹ = 2y − xⁿ lies past the solve's feasible y: on impact the full move puts
    // the block's bottom behind the plane. The cut move (README "Time integrators") keeps every node
    // above it at every step, and the run still falls, hits and leaves the plane.
    const int steps = 60;
    Simulation simulation = make_simulation(bounce_scene("implicit_midpoint", steps), "midpoint_wall");
    double lowest = 1e300, smallest_fraction = 1.0;
    int cut_steps = 0;
    simulation.run([&](const solver::StepResult&) {
        const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
        double z = 1e300;
        for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
            z = std::min(z, x(i, 2));
        }
        lowest = std::min(lowest, comm::allreduce_min(MPI_COMM_WORLD, z));
        const double fraction = simulation.integrator().move_fraction().value();
        smallest_fraction = std::min(smallest_fraction, fraction);
        cut_steps += fraction < 1.0 ? 1 : 0;
    });
    if (world_rank() == 0) {
        std::printf("implicit_midpoint: lowest node %.3e m, %d cut steps, smallest fraction %.3f\n", lowest,
                    cut_steps, smallest_fraction);
    }
    EXPECT_GT(lowest, 0.0);
    EXPECT_GE(cut_steps, 1); // the impact did need the cut
    EXPECT_GT(smallest_fraction, 0.0);
    std::ostringstream log;
    EXPECT_TRUE(tools::check_output(simulation.output_dir(), log).clean()) << log.str();
}

TEST(TimeIntegration, ImplicitMidpointCutStepsKeepTheRebound) {
    // No gravity: a soft block (E = 1e5 Pa) flies at 4 m/s into the plane and must come back. A cut step
    // keeps the rule's velocity 4 (y − xⁿ)/h − vⁿ (README "Time integrators"): it leaves at 2.25 m/s
    // (measured). Deriving the velocity from the cut position instead made the impact almost inelastic: 0.08
    // m/s.
    json document = bounce_scene("implicit_midpoint", 30);
    document["gravity"] = {0.0, 0.0, 0.0};
    document["bodies"][0]["velocity"] = {0.0, 0.0, -4.0};
    document["bodies"][0]["material"]["youngs_modulus"] = 1e5;
    Simulation simulation = make_simulation(document, "midpoint_rebound");
    int cut_steps = 0;
    simulation.run([&](const solver::StepResult&) {
        cut_steps += simulation.integrator().move_fraction().value() < 1.0 ? 1 : 0;
    });
    const double velocity = centre_z(simulation, simulation.velocities());
    if (world_rank() == 0) {
        std::printf("implicit_midpoint rebound: centre velocity %.4f m/s after the impact, %d cut steps\n",
                    velocity, cut_steps);
    }
    EXPECT_GE(cut_steps, 1); // the impact did need the cut
    EXPECT_GT(velocity, 1.0);
}

TEST(TimeIntegration, ImplicitMidpointCutStepsConserveMomentum) {
    // Two soft blocks, no gravity, no friction: one flies at 4 m/s into the other at rest. Contact forces
    // are equal and opposite, so the rule's velocity 4 (y − xⁿ)/h − vⁿ keeps Σ m v exactly, cut steps
    // included (a velocity from the cut position would scale the momentum by the cut fraction t).
    json moving;
    moving["mesh"]["box"] = {{"min", {-0.25, 0.0, 0.0}}, {"max", {-0.05, 0.2, 0.2}}, {"cells", {2, 2, 2}}};
    moving["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    moving["velocity"] = {4.0, 0.0, 0.0};
    json resting = moving;
    resting["mesh"]["box"] = {{"min", {0.05, 0.02, 0.01}}, {"max", {0.25, 0.22, 0.21}}, {"cells", {2, 2, 2}}};
    resting["velocity"] = {0.0, 0.0, 0.0};
    json document;
    document["time"] = {{"dt", 0.005}, {"end", 0.15}};
    document["gravity"] = {0.0, 0.0, 0.0};
    document["bodies"] = json::array({moving, resting});
    document["contact"] = {{"enabled", true}, {"dhat", 1e-3}};
    document["integrator"] = {{"type", "implicit_midpoint"}};
    // `ipc` (named, though it is this frictionless scene's default), whose Newton solve is converged, to a
    // tight force balance: Σ m v moves by h Σ r a step, r the force left unbalanced. `al` keeps Σ m v only
    // as well as its inner solves, which end at their first full Newton step (measured 1.6e-7 here;
    // `test_al` holds it to 1e-8 under implicit Euler).
    document["solver"] = {{"type", "ipc"}, {"acceleration_tolerance", 1e-8}};
    document["output"] = {{"every", 1000}};
    Simulation simulation = make_simulation(document, "midpoint_momentum");
    const auto momentum = [&]() {
        const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
        const auto v = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
        double p = 0.0;
        for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
            p += mass(i) * v(i, 0);
        }
        return comm::allreduce_sum(MPI_COMM_WORLD, p);
    };
    const double initial = momentum();
    int cut_steps = 0, contact_steps = 0;
    double drift = 0.0;
    simulation.run([&](const solver::StepResult& result) {
        cut_steps += simulation.integrator().move_fraction().value() < 1.0 ? 1 : 0;
        contact_steps += result.contact_pairs > 0 ? 1 : 0;
        drift = std::max(drift, std::abs(momentum() - initial) / std::abs(initial));
    });
    if (world_rank() == 0) {
        std::printf(
            "implicit_midpoint momentum: largest relative drift %.3e, %d cut steps, %d steps in contact\n",
            drift, cut_steps, contact_steps);
    }
    EXPECT_GE(cut_steps, 1);
    EXPECT_GE(contact_steps, 1);
    EXPECT_LT(drift, 1e-9);
}

} // namespace
