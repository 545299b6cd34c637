// Global reductions and the agreement on errors.
#include "comm/collectives.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

namespace {

using namespace intact;

TEST(Collectives, SumMinMaxAgreeOnEveryRank) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const double x = 1.5 * (rank + 1);
    EXPECT_DOUBLE_EQ(comm::allreduce_sum(MPI_COMM_WORLD, x), 1.5 * size * (size + 1) / 2);
    EXPECT_DOUBLE_EQ(comm::allreduce_min(MPI_COMM_WORLD, x), 1.5);
    EXPECT_DOUBLE_EQ(comm::allreduce_max(MPI_COMM_WORLD, x), 1.5 * size);
    const std::int64_t big = (std::int64_t{1} << 40) + rank;
    EXPECT_EQ(comm::allreduce_sum(MPI_COMM_WORLD, big),
              size * (std::int64_t{1} << 40) + size * (size - 1) / 2);
    EXPECT_EQ(comm::allreduce_min(MPI_COMM_WORLD, big), std::int64_t{1} << 40);
    EXPECT_EQ(comm::allreduce_max(MPI_COMM_WORLD, big), (std::int64_t{1} << 40) + size - 1);
}

TEST(Collectives, AgreeOnErrorTakesTheLowestFailingRank) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_EQ(comm::agree_on_error(MPI_COMM_WORLD, ""), "");
    // The last rank and, when there are several, rank 1 fail; everyone gets rank 1's (or the only) text.
    const bool fails = rank == size - 1 || rank == 1;
    const std::string mine = fails ? "failure on rank " + std::to_string(rank) : "";
    const int first = size > 1 ? 1 : 0;
    EXPECT_EQ(comm::agree_on_error(MPI_COMM_WORLD, mine), "failure on rank " + std::to_string(first));
}

} // namespace
