#pragma once
/// @file stencil_layout.hpp
/// @brief The halo of stencil descent (spec §9): each rank keeps, besides its LocalMesh (owned nodes and
/// the one ring of elements around them), every element touching one of its local nodes, and those
/// elements' nodes.
///
/// Why two rings. A rank evaluates the stencil of every local element (its own and the ghost ring), so
/// every stencil containing an owned node is at hand and the per-node Jacobi sums need no reduction
/// message (spec §9, "one exchange per sweep"). A stencil's local problem E^[k] involves every element
/// touching one of its four nodes; for a ghost-ring element those reach one ring further. With this
/// layout the 12 CG iterations, the local CCD, the inversion search and the line search read only local
/// rows; the only exchange of a sweep is the owner → ghost gather of the new positions (`halo`).
/// Boundary stencils are evaluated on every rank that holds them, from the same inputs, so they agree.

#include "comm/halo_exchange.hpp"
#include "src/mesh/distribute.hpp"

#include <memory>
#include <string>

namespace intact::solver {

struct StencilLayout {
    /// Nodes: the LocalMesh's (same indices), then the outer ring's (ascending global id). Elements: the
    /// LocalMesh's (same indices: the stencils of this rank), then the outer ring's (ascending global id).
    /// rest_position, node_global_id, ghost_owner, tets and element_body are filled for all rows; the
    /// outer nodes have no velocity, constraint or motion (they are never a stencil's free vertex here).
    LocalMesh mesh;
    int num_stencils = 0;                     ///< elements whose stencils this rank evaluates
    std::unique_ptr<comm::HaloExchange> halo; ///< owner → ghosts over every ghost row of `mesh`
};

/// Fetch the outer ring from the owners of the LocalMesh's ghost nodes and build its halo (transport by
/// name, comm::make_transport). Collective.
StencilLayout build_stencil_layout(MPI_Comm comm, const LocalMesh& local, const std::string& transport);

} // namespace intact::solver
