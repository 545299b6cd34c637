// Shells and rods under the other methods and integrators, and through a checkpoint: `bal` reaches the
// cantilever strip's deflection that `ipc` reaches, stencil descent ends a hanging sheet and a swinging rod
// where `ipc` does on every rank count and lands a sheet on a block at its contact offset, `ipc`, `al` and
// `bal` land that sheet alike on every rank count, every integrator
// takes certified steps of a swinging rod that keeps its length, and a restart continues a shell-and-rod
// scene bit for bit.
#include "src/io/checkpoint.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
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

// A square neo-Hookean sheet of 4 × 4 cells, 1 mm thick (contact offset 0.5 mm), at the origin.
json soft_sheet(double size, double youngs_modulus) {
    json sheet;
    sheet["type"] = "shell";
    sheet["mesh"]["sheet"] = {{"length", size}, {"width", size}, {"cells_x", 4}, {"cells_y", 4}};
    sheet["material"] = {{"model", "neo_hookean"},
                         {"youngs_modulus", youngs_modulus},
                         {"poisson_ratio", 0.3},
                         {"density", 200.0},
                         {"thickness", 1e-3}};
    return sheet;
}

// A soft sheet pinned along its edge x = 0 and a rod pinned at x = 0, both falling from the horizontal.
json hanging_sheet_and_rod() {
    json sheet = soft_sheet(0.2, 2e4);
    sheet["fixed"] = json::array({box({-1, -1, -1}, {1e-9, 1, 1})});
    json rod;
    rod["type"] = "rod";
    rod["mesh"]["rod"] = {{"start", {0.0, 0.3, 0.0}}, {"end", {0.3, 0.3, 0.0}}, {"segments", 6}};
    rod["material"] = {{"youngs_modulus", 1e7}, {"density", 1000.0}, {"radius", 3e-3}};
    rod["fixed"] = json::array({box({-1, -1, -1}, {1e-9, 1, 1})});
    return scene_with(json::array({sheet, rod}), 0.01, 10);
}

struct MethodFigures {
    int certified = 0; ///< steps the scene's own method certified (no other method's repair)
    double worst_energy_excess = -1e300; ///< max over steps of ΔE − W − allowance (J; ≤ 0 is consistent)
};

MethodFigures run_counting(Simulation& simulation) {
    MethodFigures figures;
    simulation.run([&](const solver::StepResult&) {
        const auto& verdict = simulation.last_verdict();
        figures.certified += verdict.certified() && !verdict.fell_back() ? 1 : 0;
        if (verdict.energy_consistent.has_value()) {
            figures.worst_energy_excess = std::max(figures.worst_energy_excess,
                                                   verdict.energy_change - verdict.work - verdict.allowance);
        }
    });
    return figures;
}

TEST(CodimMethods, StencilDescentEndsAHangingSheetAndRodWhereIpcDoes) {
    std::map<std::string, std::map<GlobalId, Vec3>> positions;
    for (const std::string solver : {"ipc", "stencil_descent"}) {
        json document = hanging_sheet_and_rod();
        document["solver"] = {{"type", solver}};
        Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "test.json"),
                              dir_of("hang_" + solver));
        EXPECT_EQ(run_counting(simulation).certified, 10) << solver;
        positions[solver] = gather_positions(simulation, MPI_COMM_WORLD);
    }
    double worst = 0.0;
    for (const auto& [id, x] : positions["ipc"]) {
        const Vec3& y = positions["stencil_descent"].at(id);
        worst = std::max({worst, std::abs(x[0] - y[0]), std::abs(x[1] - y[1]), std::abs(x[2] - y[2])});
    }
    if (world_rank() == 0) {
        std::printf("hanging sheet and rod: stencil descent ends %.3e m from ipc\n", worst);
    }
    // Both end with every node within ε_a of balance; the sheet's tip has fallen 6 cm.
    EXPECT_LT(worst, 2e-6);
}

TEST(CodimMethods, StencilDescentIsTheSameOnEveryRankCount) {
    json document = hanging_sheet_and_rod();
    document["solver"] = {{"type", "stencil_descent"}};
    const auto deviation = test::rank_count_deviation(document, "codim_methods", "descent_equivalence");
    ASSERT_TRUE(deviation.same_nodes);
    if (world_rank() == 0) {
        std::printf("stencil descent on shells and rods: max |x_P - x_1| = %.3e m on %d ranks\n",
                    deviation.worst, test::world_size());
    }
    EXPECT_LT(deviation.worst, 1e-7);
}

// A 4 × 4-cell sheet (offset 0.5 mm) released 3 mm above a fixed block, with friction, `steps` steps.
json sheet_landing_on_block(int steps) {
    json block = test::box_body("neo_hookean", {-0.1, -0.1, 0.0}, {0.1, 0.1, 0.1}, {2, 2, 2}, 1e6);
    block["fixed"] = json::array({box({-1, -1, -1}, {1, 1, 1})});
    json sheet = soft_sheet(0.12, 1e4);
    sheet["translate"] = {-0.06, -0.06, 0.103};
    json document = scene_with(json::array({block, sheet}), 0.01, steps);
    document["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.3}};
    return document;
}

TEST(CodimMethods, IpcAlAndBalLandASheetAlikeOnEveryRankCount) {
    for (const std::string solver : {"ipc", "al", "bal"}) {
        json document = sheet_landing_on_block(8);
        document["solver"] = {{"type", solver},
                              {"newton_tolerance", 1e-9},
                              {"linear_tolerance", 1e-12},
                              {"max_linear_iterations", 20000}};
        const auto deviation = test::rank_count_deviation(document, "codim_methods", "landing_" + solver);
        ASSERT_TRUE(deviation.same_nodes) << solver;
        if (world_rank() == 0) {
            std::printf("sheet landing with %s: max |x_P - x_1| = %.3e m on %d ranks\n", solver.c_str(),
                        deviation.worst, test::world_size());
        }
        EXPECT_LT(deviation.worst, 1e-7) << solver;
    }
}

TEST(CodimMethods, StencilDescentLandsASheetOnABlockAtItsOffset) {
    json document = sheet_landing_on_block(12);
    document["solver"] = {{"type", "stencil_descent"}};
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(document, "test.json"), dir_of("land"));
    const MethodFigures figures = run_counting(simulation);
    EXPECT_EQ(figures.certified, 12);
    EXPECT_LE(figures.worst_energy_excess, 0.0) << "the energy rose in a step";
    double lowest = 1e300;
    for (const auto& [id, x] : gather_positions(simulation, MPI_COMM_WORLD)) {
        if (x[2] > 0.1 + 1e-9) { // the sheet's nodes (the block's top is at 0.1 m)
            lowest = std::min(lowest, x[2]);
        }
    }
    if (world_rank() == 0) {
        std::printf("sheet on block with stencil descent: lowest node %.3e m above the block\n",
                    lowest - 0.1);
    }
    // Resting on its offset surface: more than the offset above the block, within a few d̂ of it.
    EXPECT_GT(lowest - 0.1, 0.5e-3);
    EXPECT_LT(lowest - 0.1, 0.5e-3 + 3e-3);
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
