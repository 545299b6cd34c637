// Contact end to end on 1-4 ranks, each test with `ipc` (the default) and with `al`: a block landing on a
// plane, a head-on impact of two blocks (momentum, no intersection), the start-up proximity check, friction
// on a slope, a moving mesh obstacle pushing a block, moving planes squeezing one with lagged friction, and
// rank-count equivalence (with and without moving obstacles).
#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

namespace {

using namespace intact;
using nlohmann::json;
using test::world_rank;
using test::world_size;

// The solver under test, set by the fixture from the test's parameter.
std::string solver_type = "ipc";

class Contact : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override { solver_type = GetParam(); }
};

std::string output_dir(const std::string& name, MPI_Comm comm) {
    return test::output_dir("contact", solver_type + "_" + name, comm);
}

json block(
    const Vec3& lo, const Vec3& hi, std::array<int, 3> cells, const Vec3& velocity, double youngs = 1e5) {
    json body;
    body["mesh"]["box"] = {{"min", lo}, {"max", hi}, {"cells", cells}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", youngs}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["velocity"] = velocity;
    return body;
}

json scene(std::vector<json> bodies, int steps, double dt = 0.01) {
    json s;
    s["time"] = {{"dt", dt}, {"steps", steps}};
    s["gravity"] = {0.0, 0.0, 0.0};
    s["bodies"] = bodies;
    s["contact"] = {{"enabled", true}, {"dhat", 1e-3}};
    s["solver"] = {{"type", solver_type},
                   {"newton_tolerance", 1e-4},
                   {"linear_tolerance", 1e-8},
                   {"max_newton_iterations", 200}};
    return s;
}

// Minimum over owned nodes of a function of the position, reduced over ranks.
template <class F> double min_over_nodes(const Simulation& simulation, F&& f) {
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
    double smallest = 1e300;
    for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
        smallest = std::min(smallest, f(Vec3{x(i, 0), x(i, 1), x(i, 2)}));
    }
    return comm::allreduce_min(MPI_COMM_WORLD, smallest);
}

TEST_P(Contact, BlockLandsOnAPlaneAndStaysAbove) {
    json document = scene({block({0, 0, 0.05}, {0.2, 0.2, 0.25}, {2, 2, 2}, {0, 0, -2.0})}, 40);
    document["gravity"] = {0.0, 0.0, -9.81};
    document["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "plane.json"),
                          output_dir("plane", MPI_COMM_WORLD));
    double lowest = 1e300;
    long long max_pairs = 0;
    for (int n = 0; n < 40; ++n) {
        const auto result = simulation.step();
        EXPECT_FALSE(result.line_search_failed);
        max_pairs = std::max(max_pairs, result.contact_pairs);
        lowest = std::min(lowest, min_over_nodes(simulation, [](const Vec3& x) { return x[2]; }));
    }
    EXPECT_GT(max_pairs, 0); // it touched the plane
    EXPECT_GT(lowest, 0.0);  // and never went through it
    EXPECT_LT(lowest, 2e-3); // it is resting within a few dhat of it
}

TEST_P(Contact, HeadOnImpactKeepsBlocksApartAndConservesMomentum) {
    json document = scene({block({0, 0, 0}, {0.2, 0.2, 0.2}, {2, 2, 2}, {3.0, 0, 0}),
                           block({0.25, 0.02, 0.03}, {0.45, 0.22, 0.23}, {2, 2, 2}, {-3.0, 0, 0})},
                          12);
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "impact.json"),
                          output_dir("impact", MPI_COMM_WORLD));
    const auto& local = simulation.local_mesh();
    auto momentum_x = [&] {
        const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
        const auto v = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
        double p = 0.0;
        for (int i = 0; i < local.num_owned_nodes; ++i) {
            p += mass(i) * v(i, 0);
        }
        return comm::allreduce_sum(MPI_COMM_WORLD, p);
    };
    const double before = momentum_x();
    long long max_pairs = 0;
    double closest = 1e300;
    for (int n = 0; n < 12; ++n) {
        const auto result = simulation.step();
        max_pairs = std::max(max_pairs, result.contact_pairs);
        closest = std::min(closest, result.min_distance);
    }
    EXPECT_GT(max_pairs, 0);
    EXPECT_GT(closest, 0.0);
    // The blocks bounced: the first now moves left or slower, and total momentum (zero) is kept.
    EXPECT_NEAR(momentum_x(), before, 1e-6 * 8.0 * 3.0);
    // The first block (rest x < 0.22) was stopped or thrown back by the second.
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
    const auto v = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
    double p = 0.0, m = 0.0;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        if (local.rest_position[static_cast<std::size_t>(i)][0] < 0.22) {
            p += mass(i) * v(i, 0);
            m += mass(i);
        }
    }
    EXPECT_LT(comm::allreduce_sum(MPI_COMM_WORLD, p) / comm::allreduce_sum(MPI_COMM_WORLD, m), 1.5);
}

// The start-up message for `document`, or empty when the simulation sets up.
std::string start_up_error(const json& document, const std::string& name) {
    try {
        Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, name + ".json"),
                              output_dir(name, MPI_COMM_WORLD));
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

TEST_P(Contact, TouchingOrIntersectingStartIsAnErrorNamingTheBodies) {
    // Face to face (distance 0), and pushed 1 cm into each other (every vertex and edge distance positive).
    for (const double x : {0.2, 0.19}) {
        json document = scene({block({0, 0, 0}, {0.2, 0.2, 0.2}, {1, 1, 1}, {0, 0, 0}),
                               block({x, 0.03, 0.02}, {x + 0.2, 0.23, 0.22}, {1, 1, 1}, {0, 0, 0})},
                              1);
        document["bodies"][0]["name"] = "left";
        document["bodies"][1]["name"] = "right";
        const std::string message = start_up_error(document, "touching");
        EXPECT_NE(message.find("touches or intersects"), std::string::npos) << x << ": " << message;
        EXPECT_NE(message.find("bodies[0] (\"left\") triangle"), std::string::npos) << message;
        EXPECT_NE(message.find("bodies[1] (\"right\") triangle"), std::string::npos) << message;
        EXPECT_NE(message.find("fix:"), std::string::npos) << message;
    }
}

TEST_P(Contact, StartingCloserThanDhatRunsAndSeparates) {
    // 0.5 mm apart with d̂ = 1 mm, at rest, no gravity: accepted (`ipc`'s barrier is finite there, and
    // `al`'s constraints aim at the gap δ = d̂); the contact pushes the blocks apart and they never touch.
    json document = scene({block({0, 0, 0}, {0.2, 0.2, 0.2}, {2, 2, 2}, {0, 0, 0}),
                           block({0.2005, 0.03, 0.02}, {0.4005, 0.23, 0.22}, {2, 2, 2}, {0, 0, 0})},
                          10);
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "close.json"),
                          output_dir("close", MPI_COMM_WORLD));
    double closest = 1e300;
    for (int n = 0; n < 10; ++n) {
        const auto result = simulation.step();
        EXPECT_TRUE(result.converged);
        EXPECT_FALSE(result.line_search_failed);
        closest = std::min(closest, result.min_distance);
    }
    EXPECT_GT(closest, 0.0);
    // Gap between the blocks along x (bodies told apart by their rest positions).
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
    const auto& local = simulation.local_mesh();
    double left = -1e300, right = 1e300;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        const bool in_left = local.rest_position[static_cast<std::size_t>(i)][0] < 0.2002;
        (in_left ? left : right) = in_left ? std::max(left, x(i, 0)) : std::min(right, x(i, 0));
    }
    const double gap = comm::allreduce_min(MPI_COMM_WORLD, right) - comm::allreduce_max(MPI_COMM_WORLD, left);
    if (world_rank() == 0) {
        std::printf("start closer than dhat: gap 5e-4 m -> %.3e m after 10 steps, closest %.3e m\n", gap,
                    closest);
    }
    EXPECT_GT(gap, 5e-4); // pushed apart
}

// Center-of-mass travel down the slope between t = 0.1 s and 0.3 s for a block landing on a plane
// tilted by θ = atan(0.5), with Coulomb coefficient mu.
double slide_on_slope(double mu) {
    const double theta = std::atan(0.5);
    const Vec3 normal{-std::sin(theta), 0.0, std::cos(theta)};
    const double gap = 2.5e-3;
    json body = block({-0.05, -0.05, 0.0}, {0.05, 0.05, 0.06}, {2, 2, 2}, {0, 0, 0}, 1e6);
    body["rotate_deg"] = {0.0, -theta * 180.0 / 3.14159265358979323846, 0.0};
    body["translate"] = {gap * normal[0], 0.0, gap * normal[2]};
    json document = scene({body}, 30);
    document["gravity"] = {0.0, 0.0, -9.81};
    document["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", normal}}}}});
    document["contact"]["friction"] = mu;
    document["contact"]["epsv"] = 1e-4;
    document["solver"]["newton_tolerance"] = 1e-5;
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "slope.json"),
                          output_dir("slope_" + std::to_string(mu), MPI_COMM_WORLD));
    auto center = [&] {
        const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
        const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
        double sums[2] = {0.0, 0.0};
        for (int i = 0; i < simulation.local_mesh().num_owned_nodes; ++i) {
            sums[0] += mass(i) * (-std::cos(theta) * x(i, 0) - std::sin(theta) * x(i, 2)); // downhill
            sums[1] += mass(i);
        }
        return comm::allreduce_sum(MPI_COMM_WORLD, sums[0]) / comm::allreduce_sum(MPI_COMM_WORLD, sums[1]);
    };
    // The first 10 steps land the block (friction is lagged, so it acts from the step after contact).
    for (int n = 0; n < 10; ++n) {
        simulation.step();
    }
    const double start = center();
    for (int n = 10; n < 30; ++n) {
        simulation.step();
    }
    return center() - start;
}

TEST_P(Contact, FrictionHoldsABlockOnASlopeOnlyAboveTanTheta) {
    // tan θ = 0.5. Sliding: a = g (sin θ − μ cos θ) = 0.88 m/s² for μ = 0.4, over 1 cm in 0.2 s; sticking:
    // creep bounded by ε_v t = 2e-5 m.
    const double sticks = slide_on_slope(0.6);
    const double slides = slide_on_slope(0.4);
    if (world_rank() == 0) {
        std::printf("slope: downhill travel %.3e m with mu = 0.6, %.3e m with mu = 0.4\n", sticks, slides);
    }
    EXPECT_LT(std::abs(sticks), 2e-4);
    EXPECT_GT(slides, 1e-2);
}

// Run `document` on rank 0 alone and on all ranks; positions must agree to 1e-6 relative.
void expect_same_trajectory_on_every_rank_count(const json& document, const std::string& name) {
    std::map<GlobalId, Vec3> reference;
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    if (world_rank() == 0) {
        {
            Simulation serial(alone, io::parse_scene(document, name + ".json"), output_dir(name, alone));
            serial.run();
            reference = test::gather_positions(serial, alone);
        }
        MPI_Comm_free(&alone);
    }
    Simulation parallel(MPI_COMM_WORLD, io::parse_scene(document, name + ".json"),
                        output_dir(name, MPI_COMM_WORLD));
    parallel.run();
    const auto result = test::gather_positions(parallel, MPI_COMM_WORLD);
    if (world_rank() == 0) {
        double worst = 0.0, scale = 0.0;
        for (const auto& [id, x] : reference) {
            for (int c = 0; c < 3; ++c) {
                worst = std::max(worst, std::abs(result.at(id)[static_cast<std::size_t>(c)] -
                                                 x[static_cast<std::size_t>(c)]));
                scale = std::max(scale, std::abs(x[static_cast<std::size_t>(c)]));
            }
        }
        std::printf("%s: rank-count equivalence %.3e relative on %d ranks\n", name.c_str(), worst / scale,
                    world_size());
        EXPECT_LT(worst / scale, 1e-6);
    }
}

json tight_solver() {
    return {{"type", solver_type},
            {"newton_tolerance", 1e-8},
            {"linear_tolerance", 1e-12},
            {"max_newton_iterations", 300},
            {"max_linear_iterations", 5000}};
}

TEST_P(Contact, SameTrajectoryOnEveryRankCount) {
    json document = scene({block({0, 0, 0}, {0.2, 0.2, 0.2}, {3, 2, 2}, {2.0, 0, 0}),
                           block({0.22, 0.05, 0.0}, {0.42, 0.25, 0.2}, {3, 2, 2}, {-2.0, 0, 0.5})},
                          10);
    document["solver"] = tight_solver();
    expect_same_trajectory_on_every_rank_count(document, "equal");
}

// An axis-aligned box as a triangle mesh (.obj), written on rank 0; returns its path.
std::string write_box_obj(const std::string& name, const Vec3& lo, const Vec3& hi) {
    const std::string path = output_dir("obstacles", MPI_COMM_WORLD) + "/" + name + ".obj";
    if (world_rank() == 0) {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream out(path);
        for (int k = 0; k < 8; ++k) {
            out << "v " << (k & 1 ? hi[0] : lo[0]) << " " << (k & 2 ? hi[1] : lo[1]) << " "
                << (k & 4 ? hi[2] : lo[2]) << "\n";
        }
        out << "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}

// A block on a plane, pushed along x by a box-shaped triangle-mesh obstacle moving at 1 m/s.
json paddle_scene(int steps) {
    json document = scene({block({0, 0, 0.0015}, {0.1, 0.1, 0.1}, {2, 2, 2}, {0, 0, 0}, 1e6)}, steps);
    document["gravity"] = {0.0, 0.0, -9.81};
    document["obstacles"] = json::array(
        {{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}},
         {{"mesh", {{"file", write_box_obj("paddle", {-0.06, -0.05, 0.01}, {-0.01, 0.15, 0.12})}}},
          {"velocity", {1.0, 0.0, 0.0}}}});
    return document;
}

TEST_P(Contact, MovingMeshObstaclePushesABlockWithoutPassingThrough) {
    const int steps = 20;
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(paddle_scene(steps), "paddle.json"),
                          output_dir("paddle", MPI_COMM_WORLD));
    simulation.run();
    // The paddle's front face ends at x = -0.01 + 1 m/s × 0.2 s = 0.19: the block (starting at x = 0) is
    // ahead of it, so it was pushed at least 0.19 m, and at most twice the paddle's travel (an elastic
    // bounce off an infinitely heavy paddle on a frictionless plane); and it stays above the plane.
    const double front = -0.01 + 1.0 * steps * 0.01;
    const double behind = min_over_nodes(simulation, [](const Vec3& x) { return x[0]; });
    const double lowest = min_over_nodes(simulation, [](const Vec3& x) { return x[2]; });
    EXPECT_GT(behind, front);
    EXPECT_LT(behind, 2.0 * 0.2);
    EXPECT_GT(lowest, 0.0);
}

TEST_P(Contact, MovingPlatesSqueezeABlockWithLaggedFriction) {
    // Two planes close on a block at 0.5 m/s each; friction is lagged up to 3 times per step.
    const int steps = 6;
    json document = scene({block({0, 0, 0.002}, {0.1, 0.1, 0.102}, {2, 2, 2}, {0, 0, 0})}, steps);
    document["obstacles"] = json::array(
        {{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}, {"velocity", {0.0, 0.0, 0.5}}},
         {{"plane", {{"point", {0, 0, 0.104}}, {"normal", {0, 0, -1}}}}, {"velocity", {0.0, 0.0, -0.5}}}});
    document["contact"]["friction"] = 0.3;
    document["contact"]["friction_iterations"] = 3;
    const std::string dir = output_dir("squeeze_planes", MPI_COMM_WORLD);
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "squeeze_planes.json"), dir);
    simulation.run();
    const double bottom = 0.5 * steps * 0.01;
    const double top = 0.104 - 0.5 * steps * 0.01;
    EXPECT_GT(min_over_nodes(simulation, [&](const Vec3& x) { return x[2] - bottom; }), 0.0);
    EXPECT_GT(min_over_nodes(simulation, [&](const Vec3& x) { return top - x[2]; }), 0.0);
    // Squeezed from 0.1 m to the gap of 0.044 m (less at most 2 d̂ of barrier clearance).
    const double height = -min_over_nodes(simulation, [](const Vec3& x) { return -x[2]; }) -
                          min_over_nodes(simulation, [](const Vec3& x) { return x[2]; });
    EXPECT_LT(height, top - bottom);
    EXPECT_GT(height, top - bottom - 2e-3);
    if (world_rank() == 0) {
        int most_lags = 0;
        std::ifstream metrics(dir + "/metrics.jsonl");
        for (std::string line; std::getline(metrics, line);) {
            most_lags = std::max(most_lags, json::parse(line).value("friction_lags", 0));
        }
        EXPECT_GE(most_lags, 2) << "the lag loop re-lagged friction at least once";
        EXPECT_LE(most_lags, 3);
    }
}

TEST_P(Contact, SameTrajectoryWithMovingObstaclesOnEveryRankCount) {
    json document = paddle_scene(8);
    document["contact"]["friction"] = 0.2;
    document["solver"] = tight_solver();
    expect_same_trajectory_on_every_rank_count(document, "equal_obstacles");
}

INSTANTIATE_TEST_SUITE_P(Solvers,
                         Contact,
                         ::testing::Values("ipc", "al"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

} // namespace
