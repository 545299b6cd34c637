#pragma once
// Helpers shared by the tests that run whole simulations on MPI_COMM_WORLD or a sub-communicator: output
// folders, `intact check`, positions by global id, scene pieces (box selectors, box bodies) and the
// rank-count comparison.
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "src/tools/check_output.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace intact::test {

inline int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

inline int world_size() {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/// A fresh output folder per test group, case, job size and communicator size.
inline std::string output_dir(const std::string& group, const std::string& name, MPI_Comm comm) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    return (std::filesystem::path(INTACT_BINARY_DIR) / "test_output" / group /
            (name + "_np" + std::to_string(world_size()) + "_on" + std::to_string(size)))
        .string();
}

/// A simulation of `document` (its messages name "test.json") on `comm`, writing to output_dir(group, name).
inline Simulation make_simulation(const nlohmann::json& document,
                                  const std::string& group,
                                  const std::string& name,
                                  MPI_Comm comm = MPI_COMM_WORLD) {
    return Simulation(comm, io::parse_scene(document, "test.json"), output_dir(group, name, comm));
}

/// `intact check` of an output folder, run on rank 0 (its report printed when not clean); the verdict on
/// every rank of MPI_COMM_WORLD. Collective.
inline bool output_is_clean(const std::string& dir) {
    int clean = 1;
    if (world_rank() == 0) {
        std::ostringstream log;
        clean = tools::check_output(dir, log).clean() ? 1 : 0;
        if (!clean) {
            std::printf("%s\n", log.str().c_str());
        }
    }
    MPI_Bcast(&clean, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return clean != 0;
}

/// Positions of all nodes by global id, gathered on every rank of `comm`. Collective.
inline std::map<GlobalId, Vec3> gather_positions(const Simulation& simulation, MPI_Comm comm) {
    const auto& local = simulation.local_mesh();
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
    std::vector<double> mine;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        mine.insert(mine.end(), {static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)]),
                                 x(i, 0), x(i, 1), x(i, 2)});
    }
    int size = 1;
    MPI_Comm_size(comm, &size);
    const int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size), 0);
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    for (int r = 1; r < size; ++r) {
        offsets[static_cast<std::size_t>(r)] =
            offsets[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                   comm);
    std::map<GlobalId, Vec3> positions;
    for (std::size_t k = 0; k < all.size(); k += 4) {
        positions[static_cast<GlobalId>(all[k])] = {all[k + 1], all[k + 2], all[k + 3]};
    }
    return positions;
}

/// A box selector {"box": {"min": lo, "max": hi}} (for `fixed`, `moving`, `forces`).
inline nlohmann::json box_selector(const Vec3& lo, const Vec3& hi) {
    return nlohmann::json{{"box", {{"min", lo}, {"max", hi}}}};
}

/// A solid body: the box [lo, hi] of `cells` hexahedra (6 tets each), material `model` with Young's
/// modulus `youngs_modulus` (Pa), ν = 0.3, ρ = 1000 kg/m³.
inline nlohmann::json box_body(const std::string& model,
                               const Vec3& lo,
                               const Vec3& hi,
                               std::array<int, 3> cells,
                               double youngs_modulus) {
    nlohmann::json body;
    body["mesh"]["box"] = {{"min", lo}, {"max", hi}, {"cells", cells}};
    body["material"] = {
        {"model", model}, {"youngs_modulus", youngs_modulus}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    return body;
}

/// How far a run on all ranks of MPI_COMM_WORLD ends from the same run on rank 0 alone.
struct RankCountDeviation {
    bool same_nodes = true; ///< both runs have the same global node ids
    double worst = 0.0;     ///< max over nodes and components of |x_P − x_1|, m
    double scale = 0.0;     ///< max |x_1| over nodes and components, m
};

/// Runs `document` to its end on rank 0 alone, then on all ranks (output in `group`/`name` per
/// output_dir), and compares the final positions by global id. The result on every rank. Collective over
/// MPI_COMM_WORLD.
inline RankCountDeviation
rank_count_deviation(const nlohmann::json& document, const std::string& group, const std::string& name) {
    std::map<GlobalId, Vec3> reference;
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    if (world_rank() == 0) {
        {
            Simulation serial = make_simulation(document, group, name, alone);
            serial.run();
            reference = gather_positions(serial, alone);
        }
        MPI_Comm_free(&alone);
    }
    Simulation parallel = make_simulation(document, group, name);
    parallel.run();
    const auto positions = gather_positions(parallel, MPI_COMM_WORLD);
    double figures[3] = {1.0, 0.0, 0.0}; // same nodes, worst, scale
    if (world_rank() == 0) {
        figures[0] = reference.size() == positions.size() ? 1.0 : 0.0;
        for (const auto& [id, x] : reference) {
            const auto found = positions.find(id);
            if (found == positions.end()) {
                figures[0] = 0.0;
                continue;
            }
            for (int c = 0; c < 3; ++c) {
                figures[1] = std::max(figures[1], std::abs(found->second[c] - x[c]));
                figures[2] = std::max(figures[2], std::abs(x[c]));
            }
        }
    }
    MPI_Bcast(figures, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return {figures[0] != 0.0, figures[1], figures[2]};
}

} // namespace intact::test
