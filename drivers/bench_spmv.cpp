// bench_spmv: block-sparse matrix-vector product bandwidth against a plain copy measured in the same run.
//
// Sample runs:
//   OMP_NUM_THREADS=1 mpirun -n 1 bench_spmv --cells 40 --repeats 20
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_spmv --cells 40      (each rank its own matrix: per-core figures)
//
// Steps: 1. build the 3×3 block pattern of a box mesh of cells³ hexahedra (6 tets each) and fill it;
// 2. time y = A x (no halo exchange: this measures the on-node kernel); 3. time a copy of an array four
// times the matrix size; 4. print both bandwidths (min / median / max) and their ratio.
// SpMV bytes: block values (72 B) and column (4 B) per block, row offsets, x and mask read once per
// row, y written once; a copy moves 2 × its size (read + write).
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "src/solver/pcg.hpp"

#include <cstdio>

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int cells = intact::bench::option(argc, argv, "--cells", 40);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 20);

    // 1. Matrix of a box mesh on every rank.
    nlohmann::json document = intact::bench::box_scene(cells, "linear");
    const auto scene = intact::io::parse_scene(document, "bench_spmv");
    const auto scene_mesh = intact::build_scene_mesh(scene);
    const auto local =
        intact::distribute_mesh(MPI_COMM_SELF, scene_mesh, std::vector<int>(scene_mesh.mesh.tets.size(), 0));
    intact::solver::BlockMatrix matrix(local.num_owned_nodes, local.num_local_nodes(), local.tets);
    const auto values = matrix.values();
    Kokkos::parallel_for(
        "bench::fill", Kokkos::RangePolicy<intact::ExecSpace>(0, matrix.num_blocks()),
        KOKKOS_LAMBDA(const int k) {
            for (int p = 0; p < 3; ++p) {
                for (int q = 0; q < 3; ++q) {
                    values(k, p, q) = 1.0 / (1.0 + k % 7 + p + 2 * q);
                }
            }
        });
    intact::NodeField x("x", matrix.num_cols());
    intact::NodeField y("y", matrix.num_cols());
    Kokkos::deep_copy(x, 1.0);
    Kokkos::View<double*, intact::MemSpace> mask("mask", matrix.num_cols());
    Kokkos::deep_copy(mask, 1.0);

    // 2. SpMV.
    const double n = matrix.num_rows();
    const double blocks = matrix.num_blocks();
    const double spmv_bytes = blocks * (72.0 + 4.0) + (n + 1) * 4.0 + n * (24.0 + 8.0 + 24.0);
    const auto spmv = intact::bench::time_repeated(MPI_COMM_WORLD, repeats,
                                                   [&] { intact::solver::spmv(matrix, x, y, mask); });

    // 3. Copy of an array larger than the matrix.
    const auto copy_length = static_cast<std::size_t>(4.0 * spmv_bytes / 8.0);
    Kokkos::View<double*, intact::MemSpace> source("source", copy_length), target("target", copy_length);
    Kokkos::deep_copy(source, 1.0);
    const auto copy =
        intact::bench::time_repeated(MPI_COMM_WORLD, repeats, [&] { Kokkos::deep_copy(target, source); });
    const double copy_bytes = 2.0 * 8.0 * static_cast<double>(copy_length);

    // 4. Report (GB/s per rank; the slowest rank's time per repetition).
    if (runtime.rank() == 0) {
        std::printf("bench_spmv: %d rank(s), %s with %d thread(s) per rank, %.0f block rows, %.0f blocks\n",
                    runtime.size(), Kokkos::DefaultExecutionSpace::name(),
                    static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()), n, blocks);
        std::printf("%-6s %12s %12s %12s   GB/s per rank: %8s %8s %8s\n", "", "min s", "median s", "max s",
                    "best", "median", "worst");
        std::printf("%-6s %12.6f %12.6f %12.6f   %22.2f %8.2f %8.2f\n", "spmv", spmv.min, spmv.median,
                    spmv.max, spmv_bytes / spmv.min * 1e-9, spmv_bytes / spmv.median * 1e-9,
                    spmv_bytes / spmv.max * 1e-9);
        std::printf("%-6s %12.6f %12.6f %12.6f   %22.2f %8.2f %8.2f\n", "copy", copy.min, copy.median,
                    copy.max, copy_bytes / copy.min * 1e-9, copy_bytes / copy.median * 1e-9,
                    copy_bytes / copy.max * 1e-9);
        std::printf("spmv / copy bandwidth (medians): %.2f\n",
                    (spmv_bytes / spmv.median) / (copy_bytes / copy.median));
    }
    return 0;
}
