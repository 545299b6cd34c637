// Shells and rods as simulated bodies, end to end with `ipc` and no contact: the scene keys and their
// errors, a cantilever strip against Euler–Bernoulli (converging under refinement), a chain-like rod
// pinned at both ends against the catenary, and rank-count equivalence.
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
#include <string>

namespace {

using namespace intact;
using nlohmann::json;
using test::gather_positions;
using test::world_rank;
using test::world_size;

std::string output_dir(const std::string& name, MPI_Comm comm) {
    return test::output_dir("codim_bodies", name, comm);
}

Simulation make_simulation(const json& document, const std::string& name) {
    return test::make_simulation(document, "codim_bodies", name);
}

// A strip [0, L] × [0, b] of a shell with thickness h, clamped by holding its first two columns of nodes
// (x ≤ dx: a shell's edge held alone would be a hinge), quasi-static under gravity (one long step).
json cantilever_scene(int cells_x, int cells_y, double E) {
    const double L = 1.0, b = 0.1, h = 0.01;
    json body;
    body["type"] = "shell";
    body["mesh"]["sheet"] = {{"length", L}, {"width", b}, {"cells_x", cells_x}, {"cells_y", cells_y}};
    body["material"] = {{"model", "stvk"},
                        {"youngs_modulus", E},
                        {"poisson_ratio", 0.0},
                        {"density", 1000.0},
                        {"thickness", h}};
    body["fixed"] = json::array({test::box_selector({-1, -1, -1}, {L / cells_x + 1e-9, 1, 1})});
    json scene;
    scene["time"] = {{"dt", 100.0}, {"steps", 1}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({body});
    scene["contact"] = {{"enabled", false}};
    scene["solver"] = {
        {"newton_tolerance", 1e-12}, {"linear_tolerance", 1e-10}, {"max_linear_iterations", 20000}};
    return scene;
}

// Mean deflection (−Δz) of the nodes at x = L.
double tip_deflection(const Simulation& simulation) {
    const auto positions = gather_positions(simulation, MPI_COMM_WORLD);
    const auto& local = simulation.local_mesh();
    double sum = 0.0;
    std::int64_t count = 0;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        const Vec3& X = local.rest_position[static_cast<std::size_t>(i)];
        if (std::abs(X[0] - 1.0) < 1e-12) {
            sum += X[2] - positions.at(local.node_global_id[static_cast<std::size_t>(i)])[2];
            ++count;
        }
    }
    return comm::allreduce_sum(MPI_COMM_WORLD, sum) /
           static_cast<double>(comm::allreduce_sum(MPI_COMM_WORLD, count));
}

TEST(CodimScene, KeysAreValidatedWithTheirNames) {
    const auto error_of = [](const json& document) -> std::string {
        try {
            io::parse_scene(document, "test.json");
        } catch (const InputError& e) {
            return e.what();
        }
        return "no error";
    };
    json document = cantilever_scene(4, 2, 1e9);
    EXPECT_EQ(error_of(document), "no error");
    json missing = document;
    missing["bodies"][0]["material"].erase("thickness");
    EXPECT_NE(error_of(missing).find("thickness"), std::string::npos) << error_of(missing);
    json negative = document;
    negative["bodies"][0]["material"]["thickness"] = -1.0;
    EXPECT_NE(error_of(negative).find("must be > 0"), std::string::npos) << error_of(negative);
    json wrong_model = document;
    wrong_model["bodies"][0]["material"]["model"] = "fixed_corotated";
    EXPECT_NE(error_of(wrong_model).find("membrane models"), std::string::npos) << error_of(wrong_model);
    json solid_key = document;
    solid_key["bodies"][0]["type"] = "solid";
    EXPECT_NE(error_of(solid_key).find("bodies[0].mesh"), std::string::npos) << error_of(solid_key);
    json rod_mesh = document;
    rod_mesh["bodies"][0]["type"] = "rod";
    EXPECT_NE(error_of(rod_mesh).find("sheet"), std::string::npos) << error_of(rod_mesh);
    json contact = document;
    contact["contact"]["enabled"] = true;
    EXPECT_EQ(error_of(contact), "no error"); // ipc, bal and al take shells and rods into contact
    contact["solver"]["type"] = "al";
    EXPECT_EQ(error_of(contact), "no error");
    json descent = document;
    descent["solver"] = {{"type", "stencil_descent"}};
    EXPECT_EQ(error_of(descent), "no error"); // every method takes shells and rods
    json rod_poisson = document;
    rod_poisson["bodies"][0]["type"] = "rod";
    rod_poisson["bodies"][0]["mesh"] = {{"rod", {{"start", {0, 0, 0}}, {"end", {1, 0, 0}}, {"segments", 4}}}};
    rod_poisson["bodies"][0]["material"] = {
        {"youngs_modulus", 1e9}, {"density", 1000.0}, {"radius", 1e-3}, {"poisson_ratio", 0.3}};
    EXPECT_NE(error_of(rod_poisson).find("poisson_ratio"), std::string::npos) << error_of(rod_poisson);
    rod_poisson["bodies"][0]["material"].erase("poisson_ratio");
    EXPECT_EQ(error_of(rod_poisson), "no error");
    rod_poisson["bodies"][0]["material"]["model"] = "neo_hookean";
    EXPECT_NE(error_of(rod_poisson).find("material.model': a rod has no such key"), std::string::npos)
        << error_of(rod_poisson);
}

// δ = q L'⁴ / (8 E I) with q = ρ g h b, E I = k_b b (ν = 0). The two held columns clamp the strip at the
// middle of the held cell, L' = L − dx/2 (the discrete beam of the hinges gives that to O(dx²)); against
// the full length L the error falls as O(dx) under refinement. The cells are 4 times longer than wide:
// on square cells the hinge energy lets the strip twist locally and bends it about 25% too easily
// (docs/codim.md).
TEST(CodimBodies, CantileverStripMatchesEulerBernoulliAndConverges) {
    const double E = 1e11, h = 0.01, b = 0.1, rho = 1000.0, g = 9.81;
    const double EI = E * h * h * h / 12.0 * b;
    const double q = rho * g * h * b;
    double previous_error = 1.0;
    for (int cells : {10, 20, 40}) {
        Simulation simulation =
            make_simulation(cantilever_scene(cells, cells * 2 / 5, E), "cantilever_" + std::to_string(cells));
        simulation.run();
        const double deflection = tip_deflection(simulation);
        const double clamped_length = 1.0 - 0.5 / cells;
        const double expected = q * std::pow(clamped_length, 4) / (8.0 * EI);
        const double full_length_error = std::abs(deflection / (q / (8.0 * EI)) - 1.0);
        if (world_rank() == 0) {
            std::printf(
                "shell cantilever, %d x %d cells: tip deflection %.6e m, Euler-Bernoulli %.6e m (L - dx/2), "
                "ratio %.4f; against L: error %.4f\n",
                cells, cells * 2 / 5, deflection, expected, deflection / expected, full_length_error);
        }
        EXPECT_NEAR(deflection / expected, 1.0, 0.05) << cells << " cells";
        EXPECT_LT(full_length_error, 0.6 * previous_error) << "refinement to " << cells << " cells";
        previous_error = full_length_error;
    }
}

// The catenary through (±S/2, 0) with length L: z = a (cosh(x/a) − cosh(S/(2a))), 2a sinh(S/(2a)) = L.
double catenary_sag(double span, double length) {
    double lo = 1e-3, hi = 1e3; // 2a sinh(S/2a) decreases in a
    for (int k = 0; k < 200; ++k) {
        const double a = std::sqrt(lo * hi);
        (2.0 * a * std::sinh(span / (2.0 * a)) > length ? lo : hi) = a;
    }
    const double a = std::sqrt(lo * hi);
    return a * (std::cosh(span / (2.0 * a)) - 1.0);
}

// A nearly inextensible rod of length L = 1 with negligible bending stiffness, pinned at both ends at span
// S = 0.8, starting as a V (its rest shape), settles under gravity and implicit Euler's damping into the
// catenary of its length.
TEST(CodimBodies, RodPinnedAtBothEndsSagsLikeTheCatenary) {
    const double span = 0.8, length = 1.0;
    const int segments = 40;
    const std::string dir = output_dir("catenary_mesh", MPI_COMM_WORLD);
    const std::string file = dir + "/v_rod.obj";
    if (world_rank() == 0) {
        std::filesystem::create_directories(dir);
        std::ofstream out(file);
        const double depth = std::sqrt(0.25 * length * length - 0.25 * span * span);
        for (int k = 0; k <= segments; ++k) {
            const double s = static_cast<double>(k) / segments; // arc parameter, 0..1
            const double x = -0.5 * span + span * s;
            const double z = -depth * (1.0 - std::abs(2.0 * s - 1.0));
            out << "v " << x << " 0 " << z << "\n";
        }
        out << "l";
        for (int k = 1; k <= segments + 1; ++k) {
            out << " " << k;
        }
        out << "\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    json body;
    body["type"] = "rod";
    body["mesh"]["file"] = file;
    body["material"] = {
        {"youngs_modulus", 1e9}, {"density", 1000.0}, {"radius", 1e-3}, {"bending_stiffness", 1e-9}};
    body["fixed"] = json::array({test::box_selector({-1, -1, -1}, {-0.5 * span + 1e-9, 1, 1}),
                                 test::box_selector({0.5 * span - 1e-9, -1, -1}, {1, 1, 1})});
    json document;
    document["time"] = {{"dt", 0.1}, {"steps", 150}};
    document["gravity"] = {0.0, 0.0, -9.81};
    document["bodies"] = json::array({body});
    document["contact"] = {{"enabled", false}};
    document["solver"] = {
        {"newton_tolerance", 1e-6}, {"linear_tolerance", 1e-10}, {"max_linear_iterations", 20000}};
    Simulation simulation = make_simulation(document, "catenary");
    simulation.run();
    const auto positions = gather_positions(simulation, MPI_COMM_WORLD);
    double lowest = 0.0;
    for (const auto& [id, x] : positions) {
        lowest = std::min(lowest, x[2]);
    }
    const double expected = catenary_sag(span, length);
    if (world_rank() == 0) {
        std::printf("rod catenary: sag %.6f m, catenary %.6f m, ratio %.4f\n", -lowest, expected,
                    -lowest / expected);
    }
    EXPECT_NEAR(-lowest / expected, 1.0, 0.02);
}

TEST(CodimBodies, SameTrajectoryOnEveryRankCount) {
    // A shell strip and a rod in one scene, 10 dynamic steps.
    json document = cantilever_scene(12, 2, 1e9);
    document["time"] = {{"dt", 0.01}, {"steps", 10}};
    json rod;
    rod["type"] = "rod";
    rod["mesh"]["rod"] = {{"start", {0.0, 0.5, 0.0}}, {"end", {1.0, 0.5, 0.0}}, {"segments", 16}};
    rod["material"] = {{"youngs_modulus", 1e8}, {"density", 1000.0}, {"radius", 5e-3}};
    rod["fixed"] = json::array({test::box_selector({-1, 0.4, -1}, {1e-9, 0.6, 1})});
    document["bodies"].push_back(rod);
    document["solver"] = {{"linear_tolerance", 1e-12}, {"max_linear_iterations", 20000}};
    const auto deviation = test::rank_count_deviation(document, "codim_bodies", "equivalence");
    ASSERT_TRUE(deviation.same_nodes);
    if (world_rank() == 0) {
        std::printf("codim rank-count equivalence: max |x_P - x_1| = %.3e m on %d ranks\n", deviation.worst,
                    world_size());
    }
    EXPECT_LT(deviation.worst, 1e-7);
}

} // namespace
