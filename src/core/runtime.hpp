#pragma once
/// @file runtime.hpp
/// @brief RAII start and end of MPI and Kokkos, in that order, with one device per rank.

#include <string>

namespace intact {

/// Starts MPI (MPI_THREAD_FUNNELED) and Kokkos; finalizes both in reverse order on destruction.
/// On CUDA builds each rank takes device (node-local rank mod device count), so one rank per GPU is the
/// default layout under `srun` or `mpirun`. Collective over MPI_COMM_WORLD.
class Runtime {
public:
    Runtime(int& argc, char**& argv);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    /// One "rank r -> host h, backend/device" line per rank, gathered on rank 0 (empty elsewhere).
    /// Collective.
    std::string placement_report() const;

private:
    int m_rank = 0;
    int m_size = 1;
    int m_local_rank = 0;
    std::string m_host;
};

} // namespace intact
