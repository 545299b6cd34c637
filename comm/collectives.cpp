#include "comm/collectives.hpp"

#include "src/core/error.hpp"

#include <climits>

namespace intact::comm {

namespace {

template <class T> T allreduce(MPI_Comm comm, T value, MPI_Datatype type, MPI_Op op) {
    T result{};
    INTACT_CHECK_MPI(MPI_Allreduce(&value, &result, 1, type, op, comm));
    return result;
}

} // namespace

double allreduce_sum(MPI_Comm comm, double value) {
    return allreduce(comm, value, MPI_DOUBLE, MPI_SUM);
}
double allreduce_min(MPI_Comm comm, double value) {
    return allreduce(comm, value, MPI_DOUBLE, MPI_MIN);
}
double allreduce_max(MPI_Comm comm, double value) {
    return allreduce(comm, value, MPI_DOUBLE, MPI_MAX);
}
std::int64_t allreduce_sum(MPI_Comm comm, std::int64_t value) {
    return allreduce(comm, value, MPI_INT64_T, MPI_SUM);
}
std::int64_t allreduce_min(MPI_Comm comm, std::int64_t value) {
    return allreduce(comm, value, MPI_INT64_T, MPI_MIN);
}
std::int64_t allreduce_max(MPI_Comm comm, std::int64_t value) {
    return allreduce(comm, value, MPI_INT64_T, MPI_MAX);
}

std::string agree_on_error(MPI_Comm comm, const std::string& local_error) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const int mine = local_error.empty() ? INT_MAX : rank;
    const int first = allreduce(comm, mine, MPI_INT, MPI_MIN);
    if (first == INT_MAX) {
        return {};
    }
    int length = rank == first ? static_cast<int>(local_error.size()) : 0;
    INTACT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, first, comm));
    std::string message = rank == first ? local_error : std::string(static_cast<std::size_t>(length), ' ');
    INTACT_CHECK_MPI(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm));
    return message;
}

} // namespace intact::comm
