// bench_step: whole implicit steps of a contact-rich pile, on rank 0 alone and on all ranks of the job.
//
// Sample runs (one thread per rank, then two threads on one rank):
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_step --cubes 8 --cells 6 --steps 20 --repeats 3
//   OMP_NUM_THREADS=2 mpirun -n 1 bench_step --cubes 8 --cells 6 --steps 20 --repeats 3
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_step --cubes 8 --cells 28 --steps 5 --repeats 1 --alone 0   (≈ 1 M
//   tets)
//
// Options: --solver NAME[,NAME...] (ipc, al, bal, stencil_descent; both = ipc,al; all = ipc,al,bal: the
// same scene with each, and the ratios to the first), --preconditioner NAME[,NAME...] (block_jacobi,
// decade_warm_start, rigid_coarse; both = the first two; all = the three: each Newton solver with each;
// without it, the scene's own),
// --scene FILE (run that scene for `steps` steps instead of the pile), e.g. the contact-free beam of
// inputs/beam_stencil_descent.json with --solver ipc,stencil_descent, and
// --set key.path=value (repeatable) to change a key of the scene, as `intact run` does, and
// --memory-labels N to list the N (at most 24) largest view labels alive at the view-memory peak
// (rank 0's).
//
// Steps: 1. build the pile: `cubes` soft cubes (0.1 m, cells³ hexahedra of 6 tets each) in layers of 2 × 2,
// odd layers shifted so each cube falls across four below, each slightly turned, dropped with friction 0.3
// onto a plane; 2. unless
// `--alone 0`, take `steps` steps on rank 0 alone, `repeats` times; 3. the same on all ranks; 4. print per
// run s/step (min / median / max over repeats), Newton and PCG iterations, contact pairs at the end, where
// the time of the slowest rank went (contact, assembly, PCG, step bound, line search, halo exchange),
// peak resident memory per rank and bytes per tetrahedron (the process's peak so far: a later solver's
// figure is at least an earlier one's), the peak of Kokkos view memory of that run alone (the device's
// on a GPU build; the figure to compare solvers by), and the speed-up of all ranks over one.
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/json_reader.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <type_traits>

namespace {

using nlohmann::json;

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
    json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = bodies;
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.3}};
    scene["output"] = {{"every", 1000000}};
    return scene;
}

struct PileRun {
    intact::bench::Stats per_step;
    long long newton = 0, pcg = 0, pairs = 0, tets = 0;
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
    std::printf("%-10s   peak memory %.1f MB per rank (largest), %.0f bytes per tetrahedron over all ranks\n",
                "", run.peak_bytes / 1e6, run.peak_bytes * ranks / static_cast<double>(run.tets));
    std::printf("%-10s   peak view memory (%s, this run) %.1f MB per rank (largest), %.0f bytes per "
                "tetrahedron over all ranks\n",
                "", intact::MemSpace::name(), run.view_bytes / 1e6,
                run.view_bytes * ranks / static_cast<double>(run.tets));
    const double tets_per_rank = static_cast<double>(run.tets) / ranks;
    for (int k = 0; k < labels && k < run.num_labels; ++k) {
        std::printf("%-10s     %-48s %9.1f MB  %7.0f bytes per tetrahedron (rank 0)\n", "", run.label[k],
                    run.label_bytes[k] / 1e6, run.label_bytes[k] / tets_per_rank);
    }
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    intact::bench::ViewMemory::install();
    const int cubes = intact::bench::option(argc, argv, "--cubes", 8);
    const int cells = intact::bench::option(argc, argv, "--cells", 6);
    const int steps = intact::bench::option(argc, argv, "--steps", 20);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 3);
    const bool alone = intact::bench::option(argc, argv, "--alone", 1) != 0;
    const int memory_labels = intact::bench::option(argc, argv, "--memory-labels", 0);

    // 1. The pile (written out instead of run with --scene-out, e.g. to time other builds on it), or a
    //    scene file run for `steps` steps (--scene FILE).
    const std::string scene_file = intact::bench::text_option(argc, argv, "--scene", "");
    json scene = pile_scene(cubes, cells, steps);
    std::string title = "pile of " + std::to_string(cubes) + " cubes, friction 0.3";
    std::string name = "bench_step_pile";
    if (!scene_file.empty()) {
        std::ifstream in(scene_file);
        scene = json::parse(in);
        scene["time"].erase("end");
        scene["time"]["steps"] = steps;
        scene["output"] = {{"every", 1000000}};
        title = name = scene_file;
    }
    for (int a = 1; a + 1 < argc; ++a) { // --set key.path=value, applied in order (as `intact run` does)
        if (std::string(argv[a]) == "--set") {
            intact::io::apply_override(scene, argv[a + 1], scene_file.empty() ? "the pile" : scene_file);
            title += std::string(", ") + argv[a + 1];
        }
    }
    const std::string scene_out = intact::bench::text_option(argc, argv, "--scene-out", "");
    if (!scene_out.empty()) {
        if (runtime.rank() == 0) {
            std::ofstream(scene_out) << scene.dump(2) << '\n';
        }
        return 0;
    }

    // 2. For each solver: rank 0 alone (unless --alone 0), then all ranks.
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
    std::vector<std::string> solvers; // labels: solver, or solver/preconditioner
    std::vector<json> documents;
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
            solvers.push_back(solver);
            continue;
        }
        for (const std::string& p : preconditioners) {
            json document = base;
            if (!p.empty()) {
                document["solver"]["preconditioner"] = p;
            }
            documents.push_back(document);
            solvers.push_back(preconditioners.size() > 1 || !p.empty()
                                  ? solver + (p == "block_jacobi"   ? "/bj"
                                              : p == "rigid_coarse" ? "/rc"
                                                                    : "/dws")
                                  : solver);
        }
    }
    std::vector<std::pair<PileRun, PileRun>> runs;
    for (const json& document : documents) {
        PileRun one;
        if (alone && runtime.size() > 1) {
            MPI_Comm single;
            MPI_Comm_split(MPI_COMM_WORLD, runtime.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &single);
            if (runtime.rank() == 0) {
                one = run_pile(single, document, name, steps, repeats, "/tmp/intact_bench_step/np1");
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
        const PileRun all = run_pile(MPI_COMM_WORLD, document, name, steps, repeats,
                                     "/tmp/intact_bench_step/np" + std::to_string(runtime.size()));
        runs.emplace_back(one, all);
    }

    // 3. Figures.
    if (runtime.rank() == 0) {
        std::printf("bench_step: %s (%lld tets), %d steps, %s, %d thread(s) per rank\n", title.c_str(),
                    runs.front().second.tets, steps, Kokkos::DefaultExecutionSpace::name(),
                    static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
        for (std::size_t k = 0; k < solvers.size(); ++k) {
            const auto& [one, all] = runs[k];
            const std::string label = solvers[k] + (alone && runtime.size() > 1 ? " 1 rank" : "");
            if (alone && runtime.size() > 1) {
                print_run(label.c_str(), 1, steps, one, memory_labels);
            }
            print_run((solvers[k] + " all").c_str(), runtime.size(), steps, all, memory_labels);
            if (alone && runtime.size() > 1) {
                std::printf("%s: speed-up of %d ranks over 1 (medians): %.2fx\n", solvers[k].c_str(),
                            runtime.size(), one.per_step.median / all.per_step.median);
            }
        }
        const PileRun& first = runs[0].second;
        for (std::size_t k = 1; k < solvers.size(); ++k) {
            const PileRun& other = runs[k].second;
            std::printf("%s / %s on %d ranks: Newton (or sweeps) %.3f, PCG %.3f, PCG per Newton %.3f, wall "
                        "per simulated second (medians) %.3f, peak view memory %.3f\n",
                        solvers[k].c_str(), solvers[0].c_str(), runtime.size(),
                        static_cast<double>(other.newton) / static_cast<double>(first.newton),
                        first.pcg > 0 ? static_cast<double>(other.pcg) / static_cast<double>(first.pcg) : 0.0,
                        first.pcg > 0 && other.newton > 0
                            ? (static_cast<double>(other.pcg) / static_cast<double>(other.newton)) /
                                  (static_cast<double>(first.pcg) / static_cast<double>(first.newton))
                            : 0.0,
                        other.per_step.median / first.per_step.median, other.view_bytes / first.view_bytes);
        }
    }
    return 0;
}
