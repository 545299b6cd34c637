#pragma once
/// @file error.hpp
/// @brief Errors that stop the whole job, and the exception used for bad user input.
///
/// Two kinds of failure:
/// - A broken invariant or a failed MPI/CUDA/NCCL call: `INTACT_REQUIRE`, `INTACT_CHECK_*` print the cause
///   with file:line on the rank that saw it and end every rank with `MPI_Abort`. Never a hang.
/// - Bad user input (scene keys, meshes, values): serial code throws `InputError`; the caller turns it
///   into a job-wide, clean exit at a collective point (`comm::agree_on_error`), so every rank stops with
///   the same message and a non-zero status, and output already written stays intact.

#include <sstream>
#include <stdexcept>
#include <string>

namespace intact {

/// A problem with what the user gave us. The message names the file, the key path and the fix.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Print "intact: error: <message> (file:line)" and end every rank of MPI_COMM_WORLD. Not collective.
[[noreturn]] void abort_job(const std::string& message, const char* file, int line);

/// Name of an MPI error code.
std::string mpi_error_string(int code);

} // namespace intact

/// Always on: end the job when `cond` is false. `msg` may use stream syntax: `"n = " << n`.
#define INTACT_REQUIRE(cond, msg)                                                                            \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            std::ostringstream intact_require_stream;                                                        \
            intact_require_stream << "requirement failed: " #cond ": " << msg;                               \
            ::intact::abort_job(intact_require_stream.str(), __FILE__, __LINE__);                            \
        }                                                                                                    \
    } while (false)

/// Debug builds only.
#ifdef NDEBUG
#define INTACT_ASSERT(cond, msg)                                                                             \
    do {                                                                                                     \
    } while (false)
#else
#define INTACT_ASSERT(cond, msg) INTACT_REQUIRE(cond, msg)
#endif

/// Check the return code of an MPI call.
#define INTACT_CHECK_MPI(call)                                                                               \
    do {                                                                                                     \
        const int intact_mpi_code = (call);                                                                  \
        if (intact_mpi_code != MPI_SUCCESS) {                                                                \
            ::intact::abort_job(std::string(#call " failed: ") +                                             \
                                    ::intact::mpi_error_string(intact_mpi_code),                             \
                                __FILE__, __LINE__);                                                         \
        }                                                                                                    \
    } while (false)
