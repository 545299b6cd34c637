#include "src/contact/contact_surface.hpp"

#include "src/core/error.hpp"
#include "src/mesh/surface.hpp"

#include <algorithm>
#include <unordered_map>

namespace intact::contact {

namespace {

template <class T> void broadcast(MPI_Comm comm, std::vector<T>& values) {
    unsigned long long count = values.size();
    INTACT_CHECK_MPI(MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
    values.resize(count);
    INTACT_CHECK_MPI(MPI_Bcast(values.data(), static_cast<int>(count * sizeof(T)), MPI_BYTE, 0, comm));
}

} // namespace

ContactSurface::ContactSurface(MPI_Comm comm, const SceneMesh& scene_mesh, const LocalMesh& local)
    : m_comm(comm) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    // 1. Owner of every global node, gathered from the ranks' owned lists.
    std::vector<GlobalId> owned(local.node_global_id.begin(),
                                local.node_global_id.begin() + local.num_owned_nodes);
    const int owned_count = static_cast<int>(owned.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size), 0);
    INTACT_CHECK_MPI(MPI_Allgather(&owned_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
    for (int r = 1; r < size; ++r) {
        offsets[static_cast<std::size_t>(r)] =
            offsets[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<GlobalId> all_owned(rank == 0 ? static_cast<std::size_t>(offsets.back() + counts.back()) : 0);
    INTACT_CHECK_MPI(MPI_Gatherv(owned.data(), owned_count, MPI_INT64_T, all_owned.data(), counts.data(),
                                 offsets.data(), MPI_INT64_T, 0, comm));

    // 2. Rank 0: boundary of the scene mesh, vertices ordered by (owner, global id).
    if (rank == 0) {
        std::vector<int> owner(scene_mesh.mesh.nodes.size(), -1);
        for (int r = 0; r < size; ++r) {
            for (int k = 0; k < counts[static_cast<std::size_t>(r)]; ++k) {
                owner[static_cast<std::size_t>(
                    all_owned[static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)] + k)])] = r;
            }
        }
        const Surface surface = extract_surface(scene_mesh.mesh);
        std::vector<int> vertices = surface.vertices;
        std::sort(vertices.begin(), vertices.end(), [&](int a, int b) {
            return std::make_pair(owner[static_cast<std::size_t>(a)], a) <
                   std::make_pair(owner[static_cast<std::size_t>(b)], b);
        });
        std::unordered_map<int, int> index;
        for (std::size_t i = 0; i < vertices.size(); ++i) {
            const auto n = static_cast<std::size_t>(vertices[i]);
            index[vertices[i]] = static_cast<int>(i);
            m_vertex_gid.push_back(vertices[i]);
            m_vertex_body.push_back(scene_mesh.node_body[n]);
            m_vertex_constrained.push_back(scene_mesh.constraint[n] != NodeConstraint::free ? 1 : 0);
            m_rest.push_back(scene_mesh.mesh.nodes[n]);
        }
        for (const auto& t : surface.triangles) {
            m_triangles.push_back({index[t[0]], index[t[1]], index[t[2]]});
        }
        for (const auto& e : surface.edges) {
            m_edges.push_back({index[e[0]], index[e[1]]});
        }
    }
    broadcast(comm, m_vertex_gid);
    broadcast(comm, m_vertex_body);
    broadcast(comm, m_vertex_constrained);
    broadcast(comm, m_rest);
    broadcast(comm, m_triangles);
    broadcast(comm, m_edges);

    // 3. This rank's owned surface vertices (contiguous in surface order) and the gather layout.
    std::unordered_map<GlobalId, int> local_of;
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        local_of[local.node_global_id[static_cast<std::size_t>(i)]] = i;
    }
    m_surface_of_local.assign(static_cast<std::size_t>(local.num_local_nodes()), -1);
    m_local_of_surface.assign(static_cast<std::size_t>(num_vertices()), -1);
    for (int s = 0; s < num_vertices(); ++s) {
        const auto it = local_of.find(m_vertex_gid[static_cast<std::size_t>(s)]);
        if (it == local_of.end()) {
            continue;
        }
        m_surface_of_local[static_cast<std::size_t>(it->second)] = s;
        m_local_of_surface[static_cast<std::size_t>(s)] = it->second;
        if (it->second < local.num_owned_nodes) {
            m_owned_surface.push_back(s);
            m_owned_local.push_back(it->second);
        }
    }
    const int mine = 3 * static_cast<int>(m_owned_surface.size());
    m_counts.assign(static_cast<std::size_t>(size), 0);
    m_offsets.assign(static_cast<std::size_t>(size), 0);
    INTACT_CHECK_MPI(MPI_Allgather(&mine, 1, MPI_INT, m_counts.data(), 1, MPI_INT, comm));
    for (int r = 1; r < size; ++r) {
        m_offsets[static_cast<std::size_t>(r)] =
            m_offsets[static_cast<std::size_t>(r - 1)] + m_counts[static_cast<std::size_t>(r - 1)];
    }
    INTACT_REQUIRE(m_offsets.back() + m_counts.back() == 3 * num_vertices(),
                   "surface vertices are not all owned");
    INTACT_REQUIRE(m_owned_surface.empty() ||
                       m_offsets[static_cast<std::size_t>(rank)] == 3 * m_owned_surface.front(),
                   "surface vertices are not ordered by owner");
}

void ContactSurface::gather(const NodeField& field, std::vector<Vec3>& out) const {
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    m_send.resize(3 * m_owned_local.size());
    for (std::size_t k = 0; k < m_owned_local.size(); ++k) {
        for (int c = 0; c < 3; ++c) {
            m_send[3 * k + static_cast<std::size_t>(c)] = host(m_owned_local[k], c);
        }
    }
    m_receive.resize(static_cast<std::size_t>(3 * num_vertices()));
    INTACT_CHECK_MPI(MPI_Allgatherv(m_send.data(), static_cast<int>(m_send.size()), MPI_DOUBLE,
                                    m_receive.data(), m_counts.data(), m_offsets.data(), MPI_DOUBLE, m_comm));
    out.resize(static_cast<std::size_t>(num_vertices()));
    for (std::size_t s = 0; s < out.size(); ++s) {
        out[s] = {m_receive[3 * s], m_receive[3 * s + 1], m_receive[3 * s + 2]};
    }
}

} // namespace intact::contact
