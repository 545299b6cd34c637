#pragma once
// Shared helpers of the benchmark drivers: repeated timing with min / median / max over repetitions
// (each repetition's time is the slowest rank's), a small command-line reader, and a count of the
// memory Kokkos views hold.
#include "src/core/types.hpp"

#include <Kokkos_Core.hpp>
#include <impl/Kokkos_Profiling.hpp>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace intact::bench {

/// Bytes that Kokkos views hold in the solver's memory space (the GPU's on a CUDA build, host memory on
/// a CPU build), counted through the Kokkos tools allocation hooks: the live total and its peak since
/// the last `reset_peak`. Unlike the process's peak resident size it holds device memory, excludes the
/// libraries and the mesh set-up, and can be reset between runs of one process. `install` before any
/// view is made (right after Kokkos starts); installing makes Kokkos consider a tool loaded, which
/// costs each kernel launch a name lookup and nothing else (no extra fences: no kernel callbacks).
class ViewMemory {
public:
    static void install() {
        Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
        Kokkos::Tools::Experimental::set_deallocate_data_callback(&on_deallocate);
    }
    static void reset_peak() {
        state().peak = state().live;
        state().at_peak = state().by_label;
    }
    static double peak_bytes() { return static_cast<double>(state().peak); }
    /// The views alive at the peak, summed per label, largest first.
    static std::vector<std::pair<std::string, double>> labels_at_peak() {
        std::vector<std::pair<std::string, double>> out;
        for (const auto& [label, bytes] : state().at_peak) {
            if (bytes > 0) {
                out.emplace_back(label, static_cast<double>(bytes));
            }
        }
        std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        return out;
    }

private:
    struct State {
        std::int64_t live = 0, peak = 0;
        std::map<std::string, std::int64_t> by_label, at_peak; ///< live bytes per label; a copy at the peak
    };
    static State& state() {
        // Never destroyed: views released during static destruction (after main) still call back.
        static State* s = new State;
        return *s;
    }
    static bool counted(const Kokkos_Profiling_SpaceHandle& space) {
        return std::strcmp(space.name, MemSpace::name()) == 0;
    }
    static void
    on_allocate(Kokkos_Profiling_SpaceHandle space, const char* label, const void*, std::uint64_t bytes) {
        if (counted(space)) {
            State& s = state();
            s.live += static_cast<std::int64_t>(bytes);
            s.by_label[label] += static_cast<std::int64_t>(bytes);
            if (s.live > s.peak) {
                s.peak = s.live;
                s.at_peak = s.by_label;
            }
        }
    }
    static void
    on_deallocate(Kokkos_Profiling_SpaceHandle space, const char* label, const void*, std::uint64_t bytes) {
        if (counted(space)) {
            state().live -= static_cast<std::int64_t>(bytes);
            state().by_label[label] -= static_cast<std::int64_t>(bytes);
        }
    }
};

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
