// Shells and rods under the other methods and integrators, and through a checkpoint: `bal` reaches the
// cantilever strip's deflection that `ipc` reaches, every integrator takes certified steps of a swinging
// rod that keeps its length, and a restart continues a shell-and-rod scene bit for bit.
#include "src/io/checkpoint.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

namespace {

using namespace intact;
using nlohmann::json;
using test::gather_positions;
using test::world_rank;
namespace fs = std::filesystem;

std::string dir_of(const std::string& name) {
    return test::output_dir("codim_methods", name, MPI_COMM_WORLD);
}

json box(const Vec3& lo, const Vec3& hi) {
    return json{{"box", {{"min", lo}, {"max", hi}}}};
}

json scene_with(const json& bodies, double dt, int steps) {
    json scene;
    scene["time"] = {{"dt", dt}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = bodies;
    scene["contact"] = {{"enabled", false}};
    return scene;
}

json strip(int cells_x, int cells_y) {
    json body;
    body["type"] = "shell";
    body["mesh"]["sheet"] = {{"length", 1.0}, {"width", 0.1}, {"cells_x", cells_x}, {"cells_y", cells_y}};
    body["material"] = {{"model", "stvk"},
                        {"youngs_modulus", 1e11},
                        {"poisson_ratio", 0.0},
                        {"density", 1000.0},
                        {"thickness", 0.01}};
    body["fixed"] = json::array({box({-1, -1, -1}, {1.0 / cells_x + 1e-9, 1, 1})});
    return body;
}

// A horizontal rod pinned at x = 0, swinging down.
json swinging_rod() {
    json rod;
    rod["type"] = "rod";
    rod["mesh"]["rod"] = {{"start", {0.0, 0.0, 0.0}}, {"end", {0.5, 0.0, 0.0}}, {"segments", 10}};
    rod["material"] = {{"youngs_modulus", 1e8}, {"density", 1000.0}, {"radius", 5e-3}};
    rod["fixed"] = json::array({box({-1, -1, -1}, {1e-9, 1, 1})});
    return rod;
}

double mean_tip_deflection(const std::map<GlobalId, Vec3>& positions) {
    double sum = 0.0;
    int count = 0;
    for (const auto& [id, x] : positions) {
        if (std::abs(x[0] - 1.0) < 1e-3) { // the tip column moves by ~1e-6 m along x
            sum -= x[2];
            ++count;
        }
    }
    return sum / count;
}

TEST(CodimMethods, BalReachesTheDeflectionIpcReaches) {
    std::map<std::string, double> deflection;
    for (const std::string solver : {"ipc", "bal"}) {
        json document = scene_with(json::array({strip(20, 8)}), 100.0, 1);
        document["solver"] = {{"type", solver}, {"newton_tolerance", 1e-12}};
        if (solver == "ipc") {
            document["solver"]["linear_tolerance"] = 1e-10;
            document["solver"]["max_linear_iterations"] = 20000;
        }
        Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "test.json"),
                              dir_of("strip_" + solver));
        int certified = 0;
        simulation.run([&](const solver::StepResult& result) { certified += result.converged ? 1 : 0; });
        EXPECT_EQ(certified, 1) << solver;
        deflection[solver] = mean_tip_deflection(gather_positions(simulation, MPI_COMM_WORLD));
    }
    if (world_rank() == 0) {
        std::printf("strip tip deflection: ipc %.6e m, bal %.6e m\n", deflection["ipc"], deflection["bal"]);
    }
    EXPECT_NEAR(deflection["bal"] / deflection["ipc"], 1.0, 1e-3);
}

TEST(CodimMethods, EveryIntegratorSwingsARodThatKeepsItsLength) {
    for (const std::string& integrator : io::integrator_types()) {
        json document = scene_with(json::array({swinging_rod()}), 0.01, 20);
        document["integrator"] = {{"type", integrator}};
        Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "test.json"),
                              dir_of("rod_" + integrator));
        int certified = 0;
        simulation.run([&](const solver::StepResult& result) { certified += result.converged ? 1 : 0; });
        EXPECT_EQ(certified, 20) << integrator;
        const auto positions = gather_positions(simulation, MPI_COMM_WORLD);
        // Node ids follow the rod: consecutive ids are consecutive vertices.
        double length = 0.0;
        double lowest = 0.0;
        const Vec3* previous = nullptr;
        for (const auto& [id, x] : positions) {
            if (previous) {
                length += std::sqrt((x[0] - (*previous)[0]) * (x[0] - (*previous)[0]) +
                                    (x[1] - (*previous)[1]) * (x[1] - (*previous)[1]) +
                                    (x[2] - (*previous)[2]) * (x[2] - (*previous)[2]));
            }
            previous = &x;
            lowest = std::min(lowest, x[2]);
        }
        EXPECT_NEAR(length, 0.5, 5e-3) << integrator;
        EXPECT_LT(lowest, -0.05) << integrator << ": the rod swings down";
    }
}

TEST(CodimMethods, RestartContinuesAShellAndRodSceneBitForBit) {
    json document = scene_with(json::array({strip(8, 2), swinging_rod()}), 0.01, 10);
    document["bodies"][1]["translate"] = {0.0, 0.5, 0.0};
    document["output"] = {{"checkpoint_every", 4}};
    const auto run = [&](const json& scene, const std::string& dir, bool restart) {
        Simulation simulation(MPI_COMM_WORLD, io::parse_scene(scene, "test.json"), dir, restart);
        simulation.run();
        return gather_positions(simulation, MPI_COMM_WORLD);
    };
    const auto reference = run(document, dir_of("reference"), false);
    const std::string dir = dir_of("interrupted");
    json first = document;
    first["time"]["steps"] = 7;
    run(first, dir, false);
    if (world_rank() == 0) {
        fs::remove_all(fs::path(dir) / io::checkpoint_folder(7)); // as if killed before it
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const auto restarted = run(document, dir, true);
    ASSERT_EQ(reference.size(), restarted.size());
    std::size_t differing = 0;
    for (const auto& [id, x] : reference) {
        differing += x != restarted.at(id) ? 1 : 0;
    }
    EXPECT_EQ(differing, 0u);
}

} // namespace
