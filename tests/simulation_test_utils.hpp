#pragma once
// Helpers shared by the tests that run whole simulations on MPI_COMM_WORLD or a sub-communicator.
#include "src/simulation.hpp"
#include "src/tools/check_output.hpp"

#include <mpi.h>

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

} // namespace intact::test
