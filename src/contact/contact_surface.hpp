#pragma once
/// @file contact_surface.hpp
/// @brief The boundary primitives that take part in contact, known to every rank.
///
/// Every rank holds the topology of the whole boundary (vertices, edges, triangles as surface-vertex
/// indices) and, once per Newton iteration, the current positions of all surface vertices, gathered
/// from their owners. Surface vertices are numbered by owner rank, then global id, so one
/// MPI_Allgatherv of the owned rows fills the replicated array in surface order.
///
/// This replicated design keeps contact across ranks exact and simple: every rank sees every pair.
/// Its cost grows with the boundary size (O(n^{2/3}) of the mesh) on every rank; exchanging only the
/// primitives inside neighbours' inflated bounding boxes is the scalable refinement (see README).

#include "src/core/types.hpp"
#include "src/mesh/distribute.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <mpi.h>

#include <array>
#include <vector>

namespace intact::contact {

class ContactSurface {
public:
    /// Collective. `scene_mesh` is read on rank 0 only (boundary extraction), then broadcast.
    ContactSurface(MPI_Comm comm, const SceneMesh& scene_mesh, const LocalMesh& local);

    int num_vertices() const { return static_cast<int>(m_vertex_gid.size()); }
    const std::vector<GlobalId>& vertex_gid() const { return m_vertex_gid; }
    const std::vector<int>& vertex_body() const { return m_vertex_body; }
    const std::vector<char>& vertex_constrained() const { return m_vertex_constrained; }
    const std::vector<Vec3>& rest_positions() const { return m_rest; }
    const std::vector<std::array<int, 3>>& triangles() const { return m_triangles; }
    const std::vector<std::array<int, 2>>& edges() const { return m_edges; }

    /// Surface vertices this rank owns: their surface indices and local node indices (same order).
    const std::vector<int>& owned_surface() const { return m_owned_surface; }
    const std::vector<int>& owned_local() const { return m_owned_local; }
    /// Surface index of a local node, or -1 when the node is not on the surface.
    int surface_index_of_local(int local) const {
        return m_surface_of_local[static_cast<std::size_t>(local)];
    }
    /// Local node index of a surface vertex this rank holds (owned or ghost), or -1.
    int local_of_surface(int surface) const { return m_local_of_surface[static_cast<std::size_t>(surface)]; }

    /// Fill `out` (size num_vertices) with the rows of `field` of all surface vertices, gathered from
    /// their owners. Collective.
    void gather(const NodeField& field, std::vector<Vec3>& out) const;

private:
    MPI_Comm m_comm;
    std::vector<GlobalId> m_vertex_gid;
    std::vector<int> m_vertex_body;
    std::vector<char> m_vertex_constrained;
    std::vector<Vec3> m_rest;
    std::vector<std::array<int, 3>> m_triangles;
    std::vector<std::array<int, 2>> m_edges;
    std::vector<int> m_owned_surface, m_owned_local, m_surface_of_local, m_local_of_surface;
    std::vector<int> m_counts, m_offsets; ///< per rank, in doubles (3 per vertex)
    mutable std::vector<double> m_send, m_receive;
};

} // namespace intact::contact
