#pragma once
/// @file halo_transport.hpp
/// @brief How packed halo buffers travel between neighbours: the interface and its factory.
///
/// Two transports implement it: MpiTransport (always built) and NcclTransport (built when Kokkos has
/// CUDA and NCCL is found). The choice is made once per run (`parallel.halo_transport` in the scene);
/// a virtual call per exchange costs nothing next to the exchange itself, and kernels never see it.

#include "comm/halo_plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace intact::comm {

class HaloTransport {
public:
    virtual ~HaloTransport() = default;
    virtual const char* name() const = 0;
    /// Send the plan's send blocks of `send` and fill its receive blocks of `recv` (`width` doubles per
    /// entry, device buffers). On return `recv` holds the data. Collective among neighbours.
    virtual void exchange(const HaloPlan& plan,
                          const Kokkos::View<double*, MemSpace>& send,
                          const Kokkos::View<double*, MemSpace>& recv,
                          int width) = 0;
};

/// Transports compiled into this build, e.g. {"mpi"} or {"mpi", "nccl"}.
std::vector<std::string> available_transports();

/// "auto" picks NCCL when it is compiled in, MPI otherwise. Collective over `comm` (NCCL creates its
/// communicator here). Requires a name from available_transports() or "auto".
std::unique_ptr<HaloTransport> make_transport(MPI_Comm comm, const std::string& name);

} // namespace intact::comm
