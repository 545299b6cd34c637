#pragma once
/// @file distribute.hpp
/// @brief One rank's share of the scene, and how rank 0 hands the shares out.

#include "src/core/ids.hpp"
#include "src/mesh/codim_elements.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <mpi.h>

#include <array>
#include <vector>

namespace intact {

/// One rank's part of the mesh, on the host. Nodes: owned first (ascending global id), then ghosts
/// (ascending global id). Elements: owned (this rank's METIS part) first, then the ghost ring (every
/// other element touching an owned node). See partition/ownership.hpp for the rule.
struct LocalMesh {
    long long global_num_nodes = 0;
    long long global_num_elements = 0;

    int num_owned_nodes = 0;
    std::vector<GlobalId> node_global_id;   ///< per local node
    std::vector<int> ghost_owner;           ///< per ghost node (index - num_owned_nodes)
    std::vector<Vec3> rest_position;        ///< per local node, metres
    std::vector<Vec3> velocity;             ///< per local node, initial, m/s
    std::vector<NodeConstraint> constraint; ///< per local node
    std::vector<int> motion;                ///< per local node: moving selector (SceneMesh::motion), or −1
    std::vector<int> node_body;             ///< per local node: body index

    int num_owned_elements = 0;
    std::vector<GlobalId> element_global_id; ///< per local element
    std::vector<std::array<int, 4>> tets;    ///< per local element, local node indices
    std::vector<int> element_body;           ///< per local element

    /// Shell and rod elements (local node indices, owned first in each list); empty without such bodies.
    CodimElements codim;

    int num_local_nodes() const { return static_cast<int>(node_global_id.size()); }
    int num_local_elements() const { return static_cast<int>(tets.size()); }
};

/// Rank 0 cuts `scene_mesh` by `parts` (one part per element, in [0, size)) and sends every rank its
/// LocalMesh; rank 0 keeps its own. Collective over `comm`; `scene_mesh` and `parts` are read on rank 0
/// only (other ranks may pass empty objects).
LocalMesh distribute_mesh(MPI_Comm comm, const SceneMesh& scene_mesh, const std::vector<int>& parts);

} // namespace intact
