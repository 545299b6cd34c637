#include "comm/nccl_transport.hpp"

#include "src/core/error.hpp"

#include <cuda_runtime.h>

#include <string>

namespace intact::comm {

NcclTransport::NcclTransport(MPI_Comm comm) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ncclUniqueId id;
    if (rank == 0) {
        INTACT_CHECK_NCCL(ncclGetUniqueId(&id));
    }
    INTACT_CHECK_MPI(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm));
    INTACT_CHECK_NCCL(ncclCommInitRank(&m_comm, size, id, rank));
}

NcclTransport::~NcclTransport() {
    if (m_comm != nullptr) {
        ncclCommDestroy(m_comm);
    }
}

void NcclTransport::exchange(const HaloPlan& plan,
                             const Kokkos::View<double*, MemSpace>& send,
                             const Kokkos::View<double*, MemSpace>& recv,
                             int width) {
    const cudaStream_t stream = ExecSpace().cuda_stream();
    const auto& rr = plan.recv_ranks();
    const auto& ro = plan.recv_offsets();
    const auto& sr = plan.send_ranks();
    const auto& so = plan.send_offsets();
    INTACT_CHECK_NCCL(ncclGroupStart());
    for (std::size_t k = 0; k < rr.size(); ++k) {
        INTACT_CHECK_NCCL(ncclRecv(recv.data() + static_cast<std::size_t>(ro[k]) * width,
                                   static_cast<std::size_t>(ro[k + 1] - ro[k]) * width, ncclDouble, rr[k],
                                   m_comm, stream));
    }
    for (std::size_t k = 0; k < sr.size(); ++k) {
        INTACT_CHECK_NCCL(ncclSend(send.data() + static_cast<std::size_t>(so[k]) * width,
                                   static_cast<std::size_t>(so[k + 1] - so[k]) * width, ncclDouble, sr[k],
                                   m_comm, stream));
    }
    INTACT_CHECK_NCCL(ncclGroupEnd());
}

} // namespace intact::comm
