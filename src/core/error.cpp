#include "src/core/error.hpp"

#include <mpi.h>

#include <cstdio>

namespace intact {

void abort_job(const std::string& message, const char* file, int line) {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    int rank = 0;
    if (initialized && !finalized) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    std::fprintf(stderr, "intact: error on rank %d: %s (%s:%d)\n", rank, message.c_str(), file, line);
    std::fflush(stderr);
    if (initialized && !finalized) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::exit(1);
}

std::string mpi_error_string(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    return std::string(text, static_cast<std::size_t>(length));
}

} // namespace intact
