// bench_broad_phase: the contact broad phase (contact::SpatialHash) on random boxes, against the host
// hash grid it replaces (std::unordered_map of cells, each box's hits sorted and deduplicated).
//
// Sample run:
//   OMP_NUM_THREADS=1 mpirun -n 1 bench_broad_phase --boxes 100000 --repeats 7
//
// Steps: 1. `boxes` random boxes in a cube, edges uniform in [0, 1] cell, about one box per cell (a dense
// surface with its d̂ inflation); 2. time SpatialHash::query_self and SpatialHash::query (points against
// the boxes, the point–triangle shape), which return sorted pairs on the host, and their device-result
// forms (query_self_on_device, query_on_device: pairs stay on the device, as the candidate search uses
// them), and print min / median / max and candidate pairs per second; 3. time the host hash grid on the
// same self query and check it finds the same pairs (and the device forms the same number).
// Every rank runs its own copy; times are the slowest rank's.
#include "bench_common.hpp"
#include "src/contact/broad_phase.hpp"
#include "src/core/runtime.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

struct HostBoxes {
    std::vector<std::array<double, 3>> lo, hi;
};

HostBoxes random_boxes(int n, double cell, double size, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double extent = std::cbrt(static_cast<double>(n)) * cell;
    HostBoxes boxes;
    for (int i = 0; i < n; ++i) {
        std::array<double, 3> lo{}, hi{};
        for (std::size_t d = 0; d < 3; ++d) {
            lo[d] = extent * unit(rng);
            hi[d] = lo[d] + size * cell * unit(rng);
        }
        boxes.lo.push_back(lo);
        boxes.hi.push_back(hi);
    }
    return boxes;
}

intact::contact::BoxList to_device(const HostBoxes& boxes) {
    const auto n = boxes.lo.size();
    intact::contact::BoxList list{Kokkos::View<double* [3], intact::MemSpace>("lo", n),
                                  Kokkos::View<double* [3], intact::MemSpace>("hi", n)};
    auto lo = Kokkos::create_mirror_view(list.lo);
    auto hi = Kokkos::create_mirror_view(list.hi);
    for (std::size_t i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
            lo(i, d) = boxes.lo[i][static_cast<std::size_t>(d)];
            hi(i, d) = boxes.hi[i][static_cast<std::size_t>(d)];
        }
    }
    Kokkos::deep_copy(list.lo, lo);
    Kokkos::deep_copy(list.hi, hi);
    return list;
}

// The previous broad phase's structure: cells in a std::unordered_map, per box the hits of all its cells
// sorted and deduplicated, then the exact overlap test. Pairs i < j.
std::vector<std::array<int, 2>> host_grid_self(const HostBoxes& boxes, double cell) {
    const auto for_cells = [cell](const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                                  auto&& f) {
        long long c0[3], c1[3];
        for (std::size_t d = 0; d < 3; ++d) {
            c0[d] = static_cast<long long>(std::floor(lo[d] / cell));
            c1[d] = static_cast<long long>(std::floor(hi[d] / cell));
        }
        for (long long i = c0[0]; i <= c1[0]; ++i) {
            for (long long j = c0[1]; j <= c1[1]; ++j) {
                for (long long k = c0[2]; k <= c1[2]; ++k) {
                    f(((i & 0x1FFFFF) << 42) | ((j & 0x1FFFFF) << 21) | (k & 0x1FFFFF));
                }
            }
        }
    };
    const int n = static_cast<int>(boxes.lo.size());
    std::unordered_map<long long, std::vector<int>> cells;
    for (int b = 0; b < n; ++b) {
        for_cells(boxes.lo[static_cast<std::size_t>(b)], boxes.hi[static_cast<std::size_t>(b)],
                  [&](long long key) { cells[key].push_back(b); });
    }
    std::vector<std::array<int, 2>> pairs;
    std::vector<int> found;
    for (int a = 0; a < n; ++a) {
        const auto& lo = boxes.lo[static_cast<std::size_t>(a)];
        const auto& hi = boxes.hi[static_cast<std::size_t>(a)];
        found.clear();
        for_cells(lo, hi, [&](long long key) {
            const auto it = cells.find(key);
            if (it != cells.end()) {
                found.insert(found.end(), it->second.begin(), it->second.end());
            }
        });
        std::sort(found.begin(), found.end());
        found.erase(std::unique(found.begin(), found.end()), found.end());
        for (const int b : found) {
            bool overlap = b > a;
            for (std::size_t d = 0; d < 3 && overlap; ++d) {
                overlap = lo[d] <= boxes.hi[static_cast<std::size_t>(b)][d] &&
                          boxes.lo[static_cast<std::size_t>(b)][d] <= hi[d];
            }
            if (overlap) {
                pairs.push_back({a, b});
            }
        }
    }
    return pairs;
}

void print(const char* what, const intact::bench::Stats& s, std::size_t pairs) {
    std::printf("%-34s %10.4f %10.4f %10.4f s   %9zu pairs  %8.2f Mpairs/s (median)\n", what, s.min, s.median,
                s.max, pairs, 1e-6 * static_cast<double>(pairs) / s.median);
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int n = intact::bench::option(argc, argv, "--boxes", 100000);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 5);
    const double cell = 1.0;

    // 1. Boxes, and points (zero-size boxes) for the point–box query.
    const HostBoxes boxes = random_boxes(n, cell, 1.0, 1u);
    const HostBoxes points = random_boxes(n, cell, 0.0, 2u);
    const auto device_boxes = to_device(boxes);
    const auto device_points = to_device(points);
    if (runtime.rank() == 0) {
        std::printf("bench_broad_phase: %d boxes (edges U[0, 1] cell), %d ranks, %s, %d repeats\n", n,
                    runtime.size(), Kokkos::DefaultExecutionSpace::name(), repeats);
        std::printf("%-34s %10s %10s %10s\n", "", "min", "median", "max");
    }

    // 2. The spatial hash (buffers kept between calls, as in a simulation).
    intact::contact::SpatialHash hash(cell);
    std::size_t self_pairs = 0, point_pairs = 0;
    const auto self = intact::bench::time_repeated(
        MPI_COMM_WORLD, repeats, [&] { self_pairs = hash.query_self(device_boxes).size(); });
    const auto cross = intact::bench::time_repeated(
        MPI_COMM_WORLD, repeats, [&] { point_pairs = hash.query(device_points, device_boxes).size(); });
    int self_device = 0, point_device = 0;
    const auto self_on_device = intact::bench::time_repeated(
        MPI_COMM_WORLD, repeats, [&] { self_device = hash.query_self_on_device(device_boxes).count; });
    const auto cross_on_device = intact::bench::time_repeated(MPI_COMM_WORLD, repeats, [&] {
        point_device = hash.query_on_device(device_points, device_boxes).count;
    });

    // 3. The host hash grid on the same self query.
    std::vector<std::array<int, 2>> host_pairs;
    const auto host = intact::bench::time_repeated(MPI_COMM_WORLD, repeats,
                                                   [&] { host_pairs = host_grid_self(boxes, cell); });
    const bool same = host_pairs == hash.query_self(device_boxes) &&
                      static_cast<std::size_t>(self_device) == self_pairs &&
                      static_cast<std::size_t>(point_device) == point_pairs;
    if (runtime.rank() == 0) {
        print("SpatialHash::query_self", self, self_pairs);
        print("SpatialHash::query (points, boxes)", cross, point_pairs);
        print("SpatialHash::query_self_on_device", self_on_device, static_cast<std::size_t>(self_device));
        print("SpatialHash::query_on_device (points)", cross_on_device,
              static_cast<std::size_t>(point_device));
        print("host hash grid, self", host, host_pairs.size());
        std::printf("host grid and SpatialHash agree: %s; speed-up (median) %.2fx\n", same ? "yes" : "NO",
                    host.median / self.median);
    }
    return same ? 0 : 1;
}
