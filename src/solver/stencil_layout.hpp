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
    /// Nodes: the LocalMesh's (same indices), then the `rings` vertices (ascending global id), then the
    /// outer ring's and the `points` (ascending global id). The first `num_vertices` nodes have every
    /// element around them: they are the stencil vertices. Elements: the LocalMesh's (same indices: the
    /// stencils of this rank), then the others (ascending global id). rest_position, node_global_id,
    /// ghost_owner, tets and element_body are filled for all rows; nodes past the LocalMesh's have no
    /// velocity, constraint or motion of their own (their owners hold them).
    LocalMesh mesh;
    int num_stencils = 0;                     ///< elements whose stencils this rank evaluates
    int num_vertices = 0;                     ///< nodes with their whole element ring here
    std::unique_ptr<comm::HaloExchange> halo; ///< owner → ghosts over every ghost row of `mesh`
};

/// A node this rank does not own that a layout must hold: global id, owner rank, rest position.
struct RemoteNode {
    GlobalId gid = 0;
    int owner = 0;
    Vec3 rest{0.0, 0.0, 0.0};
};

/// Fetch the outer ring from the owners of the LocalMesh's ghost nodes and build its halo (transport by
/// name, comm::make_transport). `rings`: more vertices to hold with their whole element ring (contact
/// partners of owned nodes, for the barrier stencils across partitions); `points`: more nodes whose
/// positions alone are needed (the other rows of barrier pairs). Neither may hold a LocalMesh node.
/// Collective.
StencilLayout build_stencil_layout(MPI_Comm comm,
                                   const LocalMesh& local,
                                   const std::string& transport,
                                   const std::vector<RemoteNode>& rings = {},
                                   const std::vector<RemoteNode>& points = {});

} // namespace intact::solver
