#include "src/core/runtime.hpp"

#include "src/core/error.hpp"
#include "src/core/log.hpp"

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace intact {

namespace {

/// While alive, whatever is written to standard output goes to standard error. Kokkos prints its start-up
/// notices (e.g. OpenMP's OMP_PROC_BIND advice) with printf; standard output belongs to the program's
/// answers (`intact geometry`, `check`, `ccd-bench` are read by scripts), so the notices go to stderr.
class StdoutToStderr {
public:
    StdoutToStderr() {
        std::fflush(stdout);
        m_saved = dup(STDOUT_FILENO);
        if (m_saved >= 0) {
            dup2(STDERR_FILENO, STDOUT_FILENO);
        }
    }
    ~StdoutToStderr() {
        std::fflush(stdout);
        if (m_saved >= 0) {
            dup2(m_saved, STDOUT_FILENO);
            close(m_saved);
        }
    }
    StdoutToStderr(const StdoutToStderr&) = delete;
    StdoutToStderr& operator=(const StdoutToStderr&) = delete;

private:
    int m_saved = -1;
};

} // namespace

Runtime::Runtime(int& argc, char**& argv) {
    int provided = 0;
    INTACT_CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    log::set_rank(m_rank);

    // Node-local rank: picks the GPU on CUDA builds.
    MPI_Comm node_comm;
    INTACT_CHECK_MPI(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &node_comm));
    MPI_Comm_rank(node_comm, &m_local_rank);
    MPI_Comm_free(&node_comm);
    char host[MPI_MAX_PROCESSOR_NAME];
    int length = 0;
    MPI_Get_processor_name(host, &length);
    m_host.assign(host, static_cast<std::size_t>(length));

    // Kokkos's OpenMP back end prints four lines of advice when OMP_PROC_BIND is unset. With no binding
    // asked for at all (no OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY or KMP_AFFINITY), threads are not
    // bound (libgomp's default, read before main), so naming that default changes nothing but the notice.
    // Ranks are placed by mpirun's --bind-to; to bind each rank's threads as well, set
    // OMP_PROC_BIND=spread and OMP_PLACES=threads yourself (docs/benchmarks.md).
    const bool binding_asked = std::getenv("OMP_PROC_BIND") || std::getenv("OMP_PLACES") ||
                               std::getenv("GOMP_CPU_AFFINITY") || std::getenv("KMP_AFFINITY");
    if (!binding_asked) {
        setenv("OMP_PROC_BIND", "false", 0);
    }
    const StdoutToStderr notices_to_stderr;
#if KOKKOS_VERSION >= 30700
    Kokkos::InitializationSettings settings;
#ifdef KOKKOS_ENABLE_CUDA
    settings.set_map_device_id_by("mpi_rank");
#endif
    Kokkos::initialize(settings);
#else
    Kokkos::InitArguments arguments;
#ifdef KOKKOS_ENABLE_CUDA
    int devices = 0;
    cudaGetDeviceCount(&devices);
    arguments.device_id = devices > 0 ? m_local_rank % devices : 0;
#endif
    Kokkos::initialize(arguments);
#endif
}

Runtime::~Runtime() {
    {
        std::fflush(stdout); // the program's answers first
        const StdoutToStderr notices_to_stderr;
        Kokkos::finalize();
    }
    MPI_Finalize();
}

std::string Runtime::placement_report() const {
    std::ostringstream mine;
    mine << "rank " << m_rank << " -> host " << m_host << " (node-local rank " << m_local_rank << "), "
         << Kokkos::DefaultExecutionSpace::name();
#ifdef KOKKOS_ENABLE_CUDA
    int device = -1;
    cudaGetDevice(&device);
    mine << " device " << device;
#else
    mine << " with " << Kokkos::DefaultExecutionSpace().concurrency() << " threads";
#endif
    const std::string text = mine.str();
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<std::size_t>(m_size));
    INTACT_CHECK_MPI(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
    std::vector<int> offsets(lengths.size(), 0);
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
        offsets[r] = total;
        total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(m_rank == 0 ? total : 0), ' ');
    INTACT_CHECK_MPI(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                                 MPI_CHAR, 0, MPI_COMM_WORLD));
    std::string report;
    if (m_rank == 0) {
        for (std::size_t r = 0; r < lengths.size(); ++r) {
            report += all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]));
            report += '\n';
        }
    }
    return report;
}

} // namespace intact
