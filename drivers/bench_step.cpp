// bench_step: whole implicit steps of a contact-rich pile, on rank 0 alone and on all ranks of the job.
//
// Sample runs (one thread per rank, then two threads on one rank):
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_step --cubes 8 --cells 6 --steps 20 --repeats 3
//   OMP_NUM_THREADS=2 mpirun -n 1 bench_step --cubes 8 --cells 6 --steps 20 --repeats 3
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_step --cubes 8 --cells 28 --steps 5 --repeats 1 --alone 0   (≈ 1 M
//   tets)
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_step --cloth 4 --sheet-cells 40 --steps 10 --repeats 1   (cloth pile
//   of 12 800 triangles, then the tet pile with as many surface vertices, and the ratio)
//
// Options: --solver NAME[,NAME...] (ipc, al, bal, stencil_descent; both = ipc,al; all = ipc,al,bal: the
// same scene with each, and the ratios to the first), --preconditioner NAME[,NAME...] (block_jacobi,
// decade_warm_start, rigid_coarse; both = the first two; all = the three: each Newton solver with each;
// without it, the scene's own),
// --scene FILE (run that scene for `steps` steps instead of the pile), e.g. the contact-free beam of
// inputs/beam_stencil_descent.json with --solver ipc,stencil_descent, and
// --set key.path=value (repeatable) to change a key of the scene, as `intact run` does, and
// --memory-labels N to list the N (at most 24) largest view labels alive at the view-memory peak
// (rank 0's), --cloth SHEETS --sheet-cells K to time a cloth pile instead (SHEETS sheets of 2 K² triangles)
// and, unless --compare 0, after it the tet pile of SHEETS cubes whose surfaces have about as many
// vertices, with the ratio of the two.
//
// Steps: 1. build the pile: `cubes` soft cubes (0.1 m, cells³ hexahedra of 6 tets each) in layers of 2 × 2,
// odd layers shifted so each cube falls across four below, each slightly turned, dropped with friction 0.3
// onto a plane (or the cloth pile: sheets stacked over a fixed block, see cloth_pile_scene); 2. unless
// `--alone 0`, take `steps` steps on rank 0 alone, `repeats` times; 3. the same on all ranks; 4. print per
// run s/step (min / median / max over repeats), Newton and PCG iterations, contact pairs at the end, where
// the time of the slowest rank went (contact, assembly, PCG, step bound, line search, halo exchange),
// peak resident memory per rank and bytes per tetrahedron (the process's peak so far: a later solver's
// figure is at least an earlier one's; also per vertex, the figure that compares cloth to tets), the peak of
// Kokkos view memory of that run alone (the device's on a GPU build; the figure to compare solvers by), and
// the speed-up of all ranks over one.
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/json_reader.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>
#include <type_traits>

namespace {

using nlohmann::json;

// The piles' common frame: `bodies` under gravity on the plane z = 0, dt = 0.01 s for `steps` steps, contact
// with d̂ = 1 mm and friction 0.3, no output during the benchmark.
json pile_frame(const json& bodies, int steps) {
    json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = bodies;
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.3}};
    scene["output"] = {{"every", 1000000}};
    return scene;
}
json pile_scene(int cubes, int cells, int steps) {
    json bodies = json::array();
    for (int k = 0; k < cubes; ++k) {
        // Layers of 2 × 2 cubes 6 cm apart; odd layers shifted by half a pitch so each cube lands across
        // the four below it; every cube turned a little about all three axes.
        const int layer = k / 4, slot = k % 4;
        const double shift = (layer % 2) * 0.08;
        const double x = (slot % 2) * 0.16 + shift, y = (slot / 2) * 0.16 + shift, z = 0.065 + 0.14 * layer;
        json body;
        body["name"] = "cube" + std::to_string(k);
        body["mesh"]["box"] = {
            {"min", {-0.05, -0.05, -0.05}}, {"max", {0.05, 0.05, 0.05}}, {"cells", {cells, cells, cells}}};
        body["rotate_deg"] = {3.0 * ((k * 7) % 5) - 6.0, 2.0 * ((k * 3) % 5) - 4.0, 10.0 * (k % 3)};
        body["translate"] = {x, y, z};
        body["material"] = {
            {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
        bodies.push_back(body);
    }
    return pile_frame(bodies, steps);
}

// A cloth pile: `sheets` square sheets of 0.3 m (cells × cells cells, 2 cells² triangles each, 1 mm thick)
// stacked 6 mm apart, each turned 17° further about z than the one below, dropped with friction 0.3 onto a
// fixed 0.2 × 0.2 × 0.1 m block standing on a plane, so each sheet drapes over the block's edges and lands on
// the sheet below.
json cloth_pile_scene(int sheets, int cells, int steps) {
    json bodies = json::array();
    json table;
    table["name"] = "table";
    table["mesh"]["box"] = {{"min", {-0.1, -0.1, 0.0}}, {"max", {0.1, 0.1, 0.1}}, {"cells", {4, 4, 2}}};
    table["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e6}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    table["fixed"] = json::array({{{"box", {{"min", {-1, -1, -1}}, {"max", {1, 1, 1}}}}}});
    bodies.push_back(table);
    for (int k = 0; k < sheets; ++k) {
        json sheet;
        sheet["name"] = "sheet" + std::to_string(k);
        sheet["type"] = "shell";
        sheet["mesh"]["sheet"] = {{"length", 0.3}, {"width", 0.3}, {"cells_x", cells}, {"cells_y", cells}};
        sheet["material"] = {{"model", "neo_hookean"},
                             {"youngs_modulus", 1e5},
                             {"poisson_ratio", 0.3},
                             {"density", 200.0},
                             {"thickness", 1e-3}};
        // Centred on the block's axis: the sheet [0, 0.3]² is shifted to [-0.15, 0.15]², then turned about z.
        const double angle = 17.0 * k * 3.14159265358979323846 / 180.0;
        const double c = std::cos(angle), s = std::sin(angle);
        sheet["rotate_deg"] = {0.0, 0.0, 17.0 * k};
        sheet["translate"] = {-0.15 * c + 0.15 * s, -0.15 * s - 0.15 * c, 0.106 + 0.006 * k};
        bodies.push_back(sheet);
    }
    return pile_frame(bodies, steps);
}

/// The cube edge (cells) of a tet pile whose cubes have about as many surface vertices, 6 c² + 2, as a
/// sheet of `sheet_cells`² cells has vertices, (sheet_cells + 1)².
int cube_cells_matching_sheet(int sheet_cells) {
    const double vertices = (sheet_cells + 1.0) * (sheet_cells + 1.0);
    return std::max(1, static_cast<int>(std::lround(std::sqrt((vertices - 2.0) / 6.0))));
}

struct PileRun {
    intact::bench::Stats per_step;
    long long newton = 0, pcg = 0, pairs = 0, tets = 0, nodes = 0;
    long long warm = 0, converged = 0;   ///< warm-start group-CG iterations; converged steps (last repeat)
    long long outer = 0, active_set = 0; ///< AL: outer iterations, constraints held at the end
    double mean_toi = 0.0;               ///< AL: mean α over the steps
    double phases[6] = {0, 0, 0,
                        0, 0, 0}; ///< per step, slowest rank: contact, assembly, PCG, bound, search, halo
    double peak_bytes = 0.0;      ///< largest peak RSS over ranks (of the process so far)
    double view_bytes = 0.0;      ///< largest peak of Kokkos view memory over ranks, this run alone
    /// This rank's largest views at its peak, per label (plain arrays: a PileRun is broadcast as bytes).
    static constexpr int k_labels = 24;
    int num_labels = 0;
    char label[k_labels][64] = {};
    double label_bytes[k_labels] = {};
};
static_assert(std::is_trivially_copyable_v<PileRun>, "PileRun is broadcast as bytes");

// `scene_name`: the file a scene came from (mesh paths are resolved next to it).
PileRun run_pile(MPI_Comm comm,
                 const json& scene,
                 const std::string& scene_name,
                 int steps,
                 int repeats,
                 const std::string& dir) {
    PileRun run;
    std::vector<double> per_step;
    intact::bench::ViewMemory::reset_peak();
    for (int r = 0; r < repeats; ++r) {
        intact::Simulation simulation(comm, intact::io::parse_scene(scene, scene_name), dir);
        run.tets = simulation.local_mesh().global_num_elements;
        run.nodes = simulation.local_mesh().global_num_nodes;
        run.newton = run.pcg = run.outer = run.warm = run.converged = 0;
        run.mean_toi = 0.0;
        std::fill(std::begin(run.phases), std::end(run.phases), 0.0);
        const double halo_before = simulation.halo_seconds();
        MPI_Barrier(comm);
        Kokkos::Timer timer;
        for (int n = 0; n < steps; ++n) {
            const auto result = simulation.step();
            run.newton += result.iterations;
            run.pcg += result.linear_iterations;
            run.warm += result.warm_start_iterations;
            run.converged += result.converged ? 1 : 0;
            run.pairs = result.contact_pairs;
            run.outer += std::max(result.outer_iterations, 0);
            run.mean_toi += result.mean_toi / steps;
            run.active_set = result.active_set_size;
            const auto& s = result.seconds;
            const double parts[5] = {s.contact, s.assembly, s.linear_solve, s.step_bound, s.line_search};
            for (int p = 0; p < 5; ++p) {
                run.phases[p] += parts[p] / steps;
            }
        }
        double t = timer.seconds() / steps;
        run.phases[5] = (simulation.halo_seconds() - halo_before) / steps;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        MPI_Allreduce(MPI_IN_PLACE, run.phases, 6, MPI_DOUBLE, MPI_MAX, comm);
        per_step.push_back(t);
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    run.peak_bytes = 1024.0 * static_cast<double>(usage.ru_maxrss);
    MPI_Allreduce(MPI_IN_PLACE, &run.peak_bytes, 1, MPI_DOUBLE, MPI_MAX, comm);
    run.view_bytes = intact::bench::ViewMemory::peak_bytes();
    const auto labels = intact::bench::ViewMemory::labels_at_peak();
    run.num_labels = std::min(PileRun::k_labels, static_cast<int>(labels.size()));
    for (int k = 0; k < run.num_labels; ++k) {
        std::snprintf(run.label[k], sizeof(run.label[k]), "%s",
                      labels[static_cast<std::size_t>(k)].first.c_str());
        run.label_bytes[k] = labels[static_cast<std::size_t>(k)].second;
    }
    MPI_Allreduce(MPI_IN_PLACE, &run.view_bytes, 1, MPI_DOUBLE, MPI_MAX, comm);
    std::sort(per_step.begin(), per_step.end());
    run.per_step = {per_step.front(), per_step[per_step.size() / 2], per_step.back()};
    return run;
}

// `labels`: how many of the largest view labels at the peak to list (rank 0's).
void print_run(const char* label, int ranks, int steps, const PileRun& run, int labels) {
    std::printf(
        "%-10s ranks %d: %.4f / %.4f / %.4f s/step (min/median/max), Newton %lld, PCG %lld in %d steps, "
        "%lld contact pairs at the end\n",
        label, ranks, run.per_step.min, run.per_step.median, run.per_step.max, run.newton, run.pcg, steps,
        run.pairs);
    std::printf(
        "%-10s   converged %lld of %d steps, PCG per Newton iteration %.1f, warm-start iterations %lld\n", "",
        run.converged, steps, static_cast<double>(run.pcg) / static_cast<double>(std::max(run.newton, 1LL)),
        run.warm);
    if (run.outer > 0) {
        std::printf("%-10s   AL: %lld outer iterations, mean α %.3f, %lld constraints held at the end\n", "",
                    run.outer, run.mean_toi, run.active_set);
    }
    std::printf("%-10s   per step (slowest rank): contact %.4f  assembly %.4f  PCG %.4f  step bound %.4f  "
                "line search %.4f  (node halo %.4f) s\n",
                "", run.phases[0], run.phases[1], run.phases[2], run.phases[3], run.phases[4], run.phases[5]);
    const double tets = static_cast<double>(std::max(run.tets, 1LL));
    const double nodes = static_cast<double>(std::max(run.nodes, 1LL));
    std::printf("%-10s   peak memory %.1f MB per rank (largest), %.0f bytes per tetrahedron, %.0f bytes per "
                "vertex over all ranks\n",
                "", run.peak_bytes / 1e6, run.peak_bytes * ranks / tets, run.peak_bytes * ranks / nodes);
    std::printf("%-10s   peak view memory (%s, this run) %.1f MB per rank (largest), %.0f bytes per "
                "tetrahedron, %.0f bytes per vertex over all ranks\n",
                "", intact::MemSpace::name(), run.view_bytes / 1e6, run.view_bytes * ranks / tets,
                run.view_bytes * ranks / nodes);
    const double tets_per_rank = static_cast<double>(run.tets) / ranks;
    for (int k = 0; k < labels && k < run.num_labels; ++k) {
        std::printf("%-10s     %-48s %9.1f MB  %7.0f bytes per tetrahedron (rank 0)\n", "", run.label[k],
                    run.label_bytes[k] / 1e6, run.label_bytes[k] / tets_per_rank);
    }
}

/// One scene the driver times: what it prints as its title, the name mesh paths are resolved from, the
/// document, and the cloth pile's triangle count (0: no cloth).
struct Case {
    std::string title, name;
    json scene;
    long long triangles = 0;
};

/// Each solver of `list` (comma-separated) with each preconditioner of `preconditioners` on `scene`:
/// the documents and their labels (solver, or solver/preconditioner).
void add_documents(const json& scene,
                   const std::string& list,
                   const std::vector<std::string>& preconditioners,
                   std::vector<std::string>& labels,
                   std::vector<json>& documents) {
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        const std::string solver = list.substr(start, end - start);
        start = end + 1;
        json base = scene;
        base["solver"]["type"] = solver;
        for (const char* section : {"al", "bal", "stencil_descent"}) {
            if (solver != section) {
                base["solver"].erase(section); // another method's settings
            }
        }
        if (solver == "stencil_descent") { // no global system, so no preconditioner
            documents.push_back(base);
            labels.push_back(solver);
            continue;
        }
        for (const std::string& p : preconditioners) {
            json document = base;
            if (!p.empty()) {
                document["solver"]["preconditioner"] = p;
            }
            documents.push_back(document);
            labels.push_back(preconditioners.size() > 1 || !p.empty()
                                 ? solver + (p == "block_jacobi"   ? "/bj"
                                             : p == "rigid_coarse" ? "/rc"
                                                                   : "/dws")
                                 : solver);
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    intact::bench::ViewMemory::install();
    const int cubes = intact::bench::option(argc, argv, "--cubes", 8);
    const int cells = intact::bench::option(argc, argv, "--cells", 6);
    const int sheets = intact::bench::option(argc, argv, "--cloth", 0);
    const int sheet_cells = intact::bench::option(argc, argv, "--sheet-cells", 20);
    const bool compare = intact::bench::option(argc, argv, "--compare", 1) != 0;
    const int steps = intact::bench::option(argc, argv, "--steps", 20);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 3);
    const bool alone = intact::bench::option(argc, argv, "--alone", 1) != 0;
    const int memory_labels = intact::bench::option(argc, argv, "--memory-labels", 0);

    // 1. The scenes: the tet pile, or the cloth pile (--cloth) and, unless --compare 0, the tet pile of as
    //    many cubes whose surfaces have about as many vertices as the sheets, or a scene file run for
    //    `steps` steps (--scene FILE). With --scene-out the first is written out instead of run (e.g. to
    //    time other builds on it).
    const std::string scene_file = intact::bench::text_option(argc, argv, "--scene", "");
    std::vector<Case> cases;
    if (!scene_file.empty()) {
        std::ifstream in(scene_file);
        json scene = json::parse(in);
        scene["time"].erase("end");
        scene["time"]["steps"] = steps;
        scene["output"] = {{"every", 1000000}};
        cases.push_back({scene_file, scene_file, scene, 0});
    } else if (sheets > 0) {
        const long long triangles = 2LL * sheets * sheet_cells * sheet_cells;
        cases.push_back({"cloth pile of " + std::to_string(sheets) + " sheets of " +
                             std::to_string(triangles / sheets) + " triangles on a block, friction 0.3",
                         "bench_step_cloth", cloth_pile_scene(sheets, sheet_cells, steps), triangles});
        if (compare) {
            const int matching = cube_cells_matching_sheet(sheet_cells);
            cases.push_back({"pile of " + std::to_string(sheets) + " cubes of " + std::to_string(matching) +
                                 "^3 cells (as many surface vertices as the cloth), friction 0.3",
                             "bench_step_pile", pile_scene(sheets, matching, steps), 0});
        }
    } else {
        cases.push_back({"pile of " + std::to_string(cubes) + " cubes, friction 0.3", "bench_step_pile",
                         pile_scene(cubes, cells, steps), 0});
    }
    for (Case& c : cases) {
        for (int a = 1; a + 1 < argc; ++a) { // --set key.path=value, applied in order (as `intact run` does)
            if (std::string(argv[a]) == "--set") {
                intact::io::apply_override(c.scene, argv[a + 1],
                                           scene_file.empty() ? "the pile" : scene_file);
                c.title += std::string(", ") + argv[a + 1];
            }
        }
    }
    const std::string scene_out = intact::bench::text_option(argc, argv, "--scene-out", "");
    if (!scene_out.empty()) {
        if (runtime.rank() == 0) {
            std::ofstream(scene_out) << cases.front().scene.dump(2) << '\n';
        }
        return 0;
    }

    // 2. For each scene and solver: rank 0 alone (unless --alone 0), then all ranks.
    const std::string which = intact::bench::text_option(argc, argv, "--solver", "ipc");
    const std::string list = which == "both" ? "ipc,al" : which == "all" ? "ipc,al,bal" : which;
    const std::string preconditioner =
        intact::bench::text_option(argc, argv, "--preconditioner", ""); // empty: the scene's own
    const std::string preconditioner_list = preconditioner == "both" ? "block_jacobi,decade_warm_start"
                                            : preconditioner == "all"
                                                ? "block_jacobi,decade_warm_start,rigid_coarse"
                                                : preconditioner;
    std::vector<std::string> preconditioners;
    for (std::size_t start = 0; start <= preconditioner_list.size();) {
        const std::size_t end = std::min(preconditioner_list.find(',', start), preconditioner_list.size());
        preconditioners.push_back(preconditioner_list.substr(start, end - start));
        start = end + 1;
    }
    std::vector<std::vector<std::string>> solvers(cases.size()); // per case, labels
    std::vector<std::vector<std::pair<PileRun, PileRun>>> runs(cases.size());
    for (std::size_t c = 0; c < cases.size(); ++c) {
        std::vector<json> documents;
        add_documents(cases[c].scene, list, preconditioners, solvers[c], documents);
        for (const json& document : documents) {
            PileRun one;
            if (alone && runtime.size() > 1) {
                MPI_Comm single;
                MPI_Comm_split(MPI_COMM_WORLD, runtime.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &single);
                if (runtime.rank() == 0) {
                    one = run_pile(single, document, cases[c].name, steps, repeats,
                                   "/tmp/intact_bench_step/np1");
                    MPI_Comm_free(&single);
                }
                // The other ranks wait without spinning (Open MPI polls in blocking calls), so rank 0 runs
                // alone.
                MPI_Request done;
                MPI_Ibcast(&one, sizeof(PileRun), MPI_BYTE, 0, MPI_COMM_WORLD, &done);
                for (int finished = 0; !finished;) {
                    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
                    if (!finished) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    }
                }
            }
            const PileRun all = run_pile(MPI_COMM_WORLD, document, cases[c].name, steps, repeats,
                                         "/tmp/intact_bench_step/np" + std::to_string(runtime.size()));
            runs[c].emplace_back(one, all);
        }
    }

    // 3. Figures: per scene each solver's runs and its ratios to the first solver; then, for the cloth, the
    //    ratio of its s/step to the tet pile's.
    if (runtime.rank() != 0) {
        return 0;
    }
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const PileRun& head = runs[c].front().second;
        std::printf("bench_step: %s (%lld tets", cases[c].title.c_str(), head.tets);
        if (cases[c].triangles > 0) {
            std::printf(", %lld triangles", cases[c].triangles);
        }
        std::printf(", %lld vertices), %d steps, %s, %d thread(s) per rank\n", head.nodes, steps,
                    Kokkos::DefaultExecutionSpace::name(),
                    static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
        for (std::size_t k = 0; k < solvers[c].size(); ++k) {
            const auto& [one, all] = runs[c][k];
            const std::string label = solvers[c][k] + (alone && runtime.size() > 1 ? " 1 rank" : "");
            if (alone && runtime.size() > 1) {
                print_run(label.c_str(), 1, steps, one, memory_labels);
            }
            print_run((solvers[c][k] + " all").c_str(), runtime.size(), steps, all, memory_labels);
            if (alone && runtime.size() > 1) {
                std::printf("%s: speed-up of %d ranks over 1 (medians): %.2fx\n", solvers[c][k].c_str(),
                            runtime.size(), one.per_step.median / all.per_step.median);
            }
        }
        for (std::size_t k = 1; k < solvers[c].size(); ++k) {
            const PileRun& other = runs[c][k].second;
            std::printf("%s / %s on %d ranks: Newton (or sweeps) %.3f, PCG %.3f, PCG per Newton %.3f, wall "
                        "per simulated second (medians) %.3f, peak view memory %.3f\n",
                        solvers[c][k].c_str(), solvers[c][0].c_str(), runtime.size(),
                        static_cast<double>(other.newton) / static_cast<double>(head.newton),
                        head.pcg > 0 ? static_cast<double>(other.pcg) / static_cast<double>(head.pcg) : 0.0,
                        head.pcg > 0 && other.newton > 0
                            ? (static_cast<double>(other.pcg) / static_cast<double>(other.newton)) /
                                  (static_cast<double>(head.pcg) / static_cast<double>(head.newton))
                            : 0.0,
                        other.per_step.median / head.per_step.median, other.view_bytes / head.view_bytes);
        }
    }
    if (cases.size() == 2 && cases[0].triangles > 0) {
        for (std::size_t k = 0; k < solvers[0].size(); ++k) {
            const PileRun& cloth = runs[0][k].second;
            const PileRun& tets = runs[1][k].second;
            const long long matching = cube_cells_matching_sheet(sheet_cells);
            std::printf(
                "%s: cloth / tet pile (%lld sheet vertices vs %lld cube surface vertices) on %d ranks: "
                "s/step (medians) %.2fx, Newton %.2fx, PCG %.2fx, peak view memory %.2fx\n",
                solvers[0][k].c_str(), sheets * (sheet_cells + 1LL) * (sheet_cells + 1LL),
                sheets * (6 * matching * matching + 2), runtime.size(),
                cloth.per_step.median / tets.per_step.median,
                static_cast<double>(cloth.newton) / static_cast<double>(std::max(tets.newton, 1LL)),
                static_cast<double>(cloth.pcg) / static_cast<double>(std::max(tets.pcg, 1LL)),
                cloth.view_bytes / tets.view_bytes);
        }
    }
    return 0;
}
