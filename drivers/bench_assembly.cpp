// bench_assembly: element throughput of the elastic term (energy, gradient and PSD-projected Hessian of
// every local element), per material, per rank.
//
// Sample runs:
//   OMP_NUM_THREADS=1 mpirun -n 1 bench_assembly --cells 24 --repeats 10     (≈ 83k tets, one core)
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_assembly --cells 24                   (every rank its own mesh)
//
// Steps: 1. build a box of cells³ hexahedra (6 tets each) on every rank; 2. for each material, time
// ElasticTerm::evaluate over all elements (the kernel computes V ψ, its gradient and the projected
// Hessian and stores both); 3. print min / median / max time and tets/s per rank (the slowest rank's).
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "src/solver/elastic_term.hpp"

#include <cstdio>

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int cells = intact::bench::option(argc, argv, "--cells", 24);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 10);

    if (runtime.rank() == 0) {
        std::printf("bench_assembly: %d rank(s), %s with %d thread(s) per rank, %d^3 cells, %d repeats\n",
                    runtime.size(), Kokkos::DefaultExecutionSpace::name(),
                    static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()), cells, repeats);
        std::printf("%-20s %10s %12s %12s %12s %16s\n", "material", "tets", "min s", "median s", "max s",
                    "Mtets/s/rank");
    }
    for (const std::string model :
         {"neo_hookean", "stable_neo_hookean", "fixed_corotated", "stvk", "linear"}) {
        // 1. A box mesh, all on this rank.
        nlohmann::json document = intact::bench::box_scene(cells, model);
        const auto scene = intact::io::parse_scene(document, "bench_assembly");
        const auto scene_mesh = intact::build_scene_mesh(scene);
        const auto local = intact::distribute_mesh(MPI_COMM_SELF, scene_mesh,
                                                   std::vector<int>(scene_mesh.mesh.tets.size(), 0));
        intact::solver::ElasticTerm elastic(local, scene);

        // A deformed state (stretch, shear, a twist) so projections have real work to do.
        intact::NodeField x("x", local.rest_position.size());
        auto host = Kokkos::create_mirror_view(x);
        for (std::size_t i = 0; i < local.rest_position.size(); ++i) {
            const auto& X = local.rest_position[i];
            host(i, 0) = 1.3 * X[0] + 0.2 * X[1];
            host(i, 1) = 0.8 * X[1] + 0.1 * X[2] * X[0];
            host(i, 2) = 1.1 * X[2] - 0.15 * X[0];
        }
        Kokkos::deep_copy(x, host);

        // 2. Time the element pass.
        const auto stats =
            intact::bench::time_repeated(MPI_COMM_WORLD, repeats, [&] { elastic.evaluate(x); });
        const double tets = static_cast<double>(local.tets.size());
        if (runtime.rank() == 0) {
            std::printf("%-20s %10.0f %12.5f %12.5f %12.5f %8.3f (min %.3f, max %.3f)\n", model.c_str(), tets,
                        stats.min, stats.median, stats.max, tets / stats.median * 1e-6,
                        tets / stats.max * 1e-6, tets / stats.min * 1e-6);
        }
    }
    return 0;
}
