#pragma once
/// @file collectives.hpp
/// @brief Global reductions that every rank needs to take the same decision. All calls are collective
/// over `comm` and return the same value on every rank.

#include <mpi.h>

#include <cstdint>
#include <string>

namespace intact::comm {

double allreduce_sum(MPI_Comm comm, double value);
double allreduce_min(MPI_Comm comm, double value);
double allreduce_max(MPI_Comm comm, double value);
std::int64_t allreduce_sum(MPI_Comm comm, std::int64_t value);
std::int64_t allreduce_min(MPI_Comm comm, std::int64_t value);
std::int64_t allreduce_max(MPI_Comm comm, std::int64_t value);

/// Agree on a failure seen by some ranks. Each rank passes its own error message (empty: no error);
/// every rank gets the message of the lowest failing rank, or an empty string when no rank failed.
/// This turns rank-local input errors into a job-wide, orderly stop (no rank left waiting).
std::string agree_on_error(MPI_Comm comm, const std::string& local_error);

} // namespace intact::comm
