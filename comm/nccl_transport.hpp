#pragma once
/// @file nccl_transport.hpp
/// @brief Halo transport over NCCL point-to-point calls between GPUs (CUDA builds with NCCL only).

#include "comm/halo_transport.hpp"

#include <mpi.h>
#include <nccl.h>

namespace intact::comm {

/// One NCCL communicator per transport, created from `comm` (rank 0 makes the unique id, MPI broadcasts
/// it, every rank calls ncclCommInitRank). Every neighbour's ncclSend / ncclRecv goes in one
/// ncclGroupStart / ncclGroupEnd on the default execution space's CUDA stream, so pack, transfer and
/// unpack stay stream-ordered with no host round trip. Requires one GPU per rank.
class NcclTransport final : public HaloTransport {
public:
    explicit NcclTransport(MPI_Comm comm);
    ~NcclTransport() override;
    NcclTransport(const NcclTransport&) = delete;
    NcclTransport& operator=(const NcclTransport&) = delete;

    const char* name() const override { return "nccl"; }

    /// Same contract as MpiTransport::exchange; buffers are device memory. Collective among neighbours.
    void exchange(const HaloPlan& plan,
                  const Kokkos::View<double*, MemSpace>& send,
                  const Kokkos::View<double*, MemSpace>& recv,
                  int width);

private:
    ncclComm_t m_comm = nullptr;
};

} // namespace intact::comm

/// Check the result of an NCCL call; end the job with NCCL's own description on failure.
#define INTACT_CHECK_NCCL(call)                                                                              \
    do {                                                                                                     \
        const ncclResult_t intact_nccl_result = (call);                                                      \
        if (intact_nccl_result != ncclSuccess) {                                                             \
            ::intact::abort_job(std::string(#call " failed: ") + ncclGetErrorString(intact_nccl_result),     \
                                __FILE__, __LINE__);                                                         \
        }                                                                                                    \
    } while (false)
