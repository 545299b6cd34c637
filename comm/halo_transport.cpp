#include "comm/halo_transport.hpp"

#include "comm/mpi_transport.hpp"
#include "intact/config.hpp"
#include "src/core/error.hpp"
#if INTACT_ENABLE_NCCL
#include "comm/nccl_transport.hpp"
#endif

namespace intact::comm {

std::vector<std::string> available_transports() {
#if INTACT_ENABLE_NCCL
    return {"mpi", "nccl"};
#else
    return {"mpi"};
#endif
}

std::unique_ptr<HaloTransport> make_transport(MPI_Comm comm, const std::string& name) {
#if INTACT_ENABLE_NCCL
    if (name == "nccl" || name == "auto") {
        return std::make_unique<NcclTransport>(comm);
    }
#endif
    INTACT_REQUIRE(name == "mpi" || name == "auto",
                   "halo transport '" << name << "' is not compiled into this build");
    return std::make_unique<MpiTransport>(comm);
}

} // namespace intact::comm
