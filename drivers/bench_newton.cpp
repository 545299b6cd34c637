// bench_newton: one projected-Newton iteration of an implicit step on one rank and on all ranks of the
// job, and the strong-scaling efficiency between the two, measured in the same run.
//
// Sample runs:
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_newton --cells 26 --repeats 5      (≈ 105k tets, 2 ranks)
//
// Steps: 1. a soft box of cells³ hexahedra (6 tets each) falling under gravity, one Newton iteration
// per step and a fixed number of PCG iterations (so both runs do the same work); 2. time steps on rank 0
// alone; 3. time steps on all ranks; 4. print min / median / max seconds and efficiency t1 / (P tP).
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <cstdio>

namespace {

intact::bench::Stats
time_steps(MPI_Comm comm, const nlohmann::json& document, int repeats, const std::string& dir) {
    intact::Simulation simulation(comm, intact::io::parse_scene(document, "bench_newton"), dir);
    return intact::bench::time_repeated(comm, repeats, [&] { simulation.step(); });
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int cells = intact::bench::option(argc, argv, "--cells", 26);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 5);
    const int pcg_iterations = intact::bench::option(argc, argv, "--pcg-iterations", 100);

    // 1. The scene: fixed work per step (1 Newton iteration, exactly pcg_iterations PCG iterations).
    nlohmann::json document = intact::bench::box_scene(cells, "neo_hookean");
    document["bodies"][0]["velocity"] = {0.0, 1.0, 0.0};
    document["bodies"][0]["material"]["youngs_modulus"] = 1e5;
    document["solver"] = {
        {"max_newton_iterations", 1}, {"linear_tolerance", 1e-30}, {"max_linear_iterations", pcg_iterations}};

    // 2. Rank 0 alone.
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, runtime.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    intact::bench::Stats one;
    if (runtime.rank() == 0) {
        one = time_steps(alone, document, repeats, "/tmp/intact_bench_newton/np1");
        MPI_Comm_free(&alone);
    }
    MPI_Bcast(&one, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    // 3. All ranks.
    const intact::bench::Stats all = time_steps(
        MPI_COMM_WORLD, document, repeats, "/tmp/intact_bench_newton/np" + std::to_string(runtime.size()));

    // 4. Report.
    if (runtime.rank() == 0) {
        const double tets = 6.0 * cells * cells * cells;
        std::printf(
            "bench_newton: %.0f tets, 1 Newton iteration with %d PCG iterations per step, %s, %d thread(s) "
            "per rank\n",
            tets, pcg_iterations, Kokkos::DefaultExecutionSpace::name(),
            static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
        std::printf("%-8s %12s %12s %12s\n", "ranks", "min s", "median s", "max s");
        std::printf("%-8d %12.4f %12.4f %12.4f\n", 1, one.min, one.median, one.max);
        std::printf("%-8d %12.4f %12.4f %12.4f\n", runtime.size(), all.min, all.median, all.max);
        std::printf(
            "strong-scaling efficiency on %d ranks (medians): %.1f %% (best %.1f %%, worst %.1f %%)\n",
            runtime.size(), 100.0 * one.median / (runtime.size() * all.median),
            100.0 * one.min / (runtime.size() * all.min), 100.0 * one.max / (runtime.size() * all.max));
    }
    return 0;
}
