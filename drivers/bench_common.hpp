#pragma once
// Shared helpers of the benchmark drivers: repeated timing with min / median / max over repetitions
// (each repetition's time is the slowest rank's), and a small command-line reader.
#include <Kokkos_Core.hpp>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace intact::bench {

struct Stats {
    double min = 0.0;
    double median = 0.0;
    double max = 0.0;
};

/// Run `work` `repeats` times after one warm-up; each time is the maximum over the ranks of `comm`.
/// Collective.
template <class Work> Stats time_repeated(MPI_Comm comm, int repeats, Work&& work) {
    work();
    Kokkos::fence();
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        MPI_Barrier(comm);
        Kokkos::Timer timer;
        work();
        Kokkos::fence();
        double t = timer.seconds();
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        times.push_back(t);
    }
    std::sort(times.begin(), times.end());
    return {times.front(), times[times.size() / 2], times.back()};
}

/// A scene with one box body of cells³ hexahedra (6 tets each) on [0, 1]³ with the given material model.
inline nlohmann::json box_scene(int cells, const std::string& model) {
    nlohmann::json body;
    body["mesh"]["box"] = {
        {"min", {0.0, 0.0, 0.0}}, {"max", {1.0, 1.0, 1.0}}, {"cells", {cells, cells, cells}}};
    body["material"] = {
        {"model", model}, {"youngs_modulus", 1e6}, {"poisson_ratio", 0.4}, {"density", 1000.0}};
    nlohmann::json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 1}};
    scene["bodies"] = nlohmann::json::array({body});
    scene["contact"] = {{"enabled", false}};
    return scene;
}

/// Integer option `--name value` from argv, or `fallback`.
inline int option(int argc, char** argv, const std::string& name, int fallback) {
    for (int i = 1; i + 1 < argc; ++i) {
        if (argv[i] == name) {
            return std::atoi(argv[i + 1]);
        }
    }
    return fallback;
}

/// String option `--name value` from argv, or `fallback`.
inline std::string text_option(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i) {
        if (argv[i] == name) {
            return argv[i + 1];
        }
    }
    return fallback;
}

} // namespace intact::bench
