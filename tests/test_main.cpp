// One GoogleTest main for every test binary: MPI, then Kokkos, then the tests; output on rank 0 only,
// with each rank's failures reported so a failure on rank 2 is not silent.
#include "src/core/runtime.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

// Prints failed assertions of non-root ranks (GoogleTest's own printer is removed there).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
public:
    explicit RankFailurePrinter(int rank) : m_rank(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult& result) override {
        if (result.failed()) {
            std::fprintf(stderr, "[rank %d] %s:%d: %s\n", m_rank,
                         result.file_name() ? result.file_name() : "?", result.line_number(),
                         result.summary());
        }
    }

private:
    int m_rank;
};

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    if (runtime.rank() != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new RankFailurePrinter(runtime.rank()));
    }
    const int local = RUN_ALL_TESTS();
    int global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return global;
}
