// ContactSurface's rows and primitives: the constructor (owners, the scene's boundary and obstacles on
// rank 0, broadcast; this rank's owned rows, own primitives and incidence; their device copies), the
// transport, empty fields, and the owner of a row.

#include "src/contact/contact_surface.hpp"

#include "src/core/error.hpp"
#include "src/mesh/surface.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace intact::contact {

namespace {

template <class T> void broadcast(MPI_Comm comm, std::vector<T>& values) {
    unsigned long long count = values.size();
    INTACT_CHECK_MPI(MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
    values.resize(count);
    INTACT_CHECK_MPI(MPI_Bcast(values.data(), static_cast<int>(count * sizeof(T)), MPI_BYTE, 0, comm));
}

// Row → incident items (CSR) for items of `Arity` rows each.
template <std::size_t Arity>
void incidence(int rows,
               const std::vector<std::array<int, Arity>>& items,
               std::vector<int>& offsets,
               std::vector<int>& ids) {
    offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto& item : items) {
        for (const int v : item) {
            ++offsets[static_cast<std::size_t>(v) + 1];
        }
    }
    for (int r = 0; r < rows; ++r) {
        offsets[static_cast<std::size_t>(r) + 1] += offsets[static_cast<std::size_t>(r)];
    }
    ids.assign(static_cast<std::size_t>(offsets.back()), 0);
    std::vector<int> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < items.size(); ++i) {
        for (const int v : items[i]) {
            ids[static_cast<std::size_t>(next[static_cast<std::size_t>(v)]++)] = static_cast<int>(i);
        }
    }
}

template <class T> Kokkos::View<T*, MemSpace> to_device(const char* label, const std::vector<T>& values) {
    Kokkos::View<T*, MemSpace> view(std::string(label), values.size());
    Kokkos::deep_copy(
        view, Kokkos::View<const T*, HostSpace, Kokkos::MemoryUnmanaged>(values.data(), values.size()));
    return view;
}

template <class T, std::size_t K, class Value = T>
Kokkos::View<Value* [K], Kokkos::LayoutRight, MemSpace>
rows_to_device(const char* label, const std::vector<std::array<T, K>>& rows) {
    Kokkos::View<Value* [K], Kokkos::LayoutRight, MemSpace> view(std::string(label), rows.size());
    const auto host = Kokkos::create_mirror_view(view);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t k = 0; k < K; ++k) {
            host(i, k) = rows[i][k];
        }
    }
    Kokkos::deep_copy(view, host);
    return view;
}

} // namespace

ContactSurface::ContactSurface(MPI_Comm comm,
                               const SceneMesh& scene_mesh,
                               const std::vector<io::Obstacle>& obstacles,
                               const LocalMesh& local)
    : m_comm(comm) {
    MPI_Comm_rank(comm, &m_rank);
    MPI_Comm_size(comm, &m_size);

    // 1. Owner of every global node, gathered from the ranks' owned lists.
    std::vector<GlobalId> owned(local.node_global_id.begin(),
                                local.node_global_id.begin() + local.num_owned_nodes);
    const int owned_count = static_cast<int>(owned.size());
    std::vector<int> counts(static_cast<std::size_t>(m_size)), offsets(static_cast<std::size_t>(m_size), 0);
    INTACT_CHECK_MPI(MPI_Allgather(&owned_count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
    for (int r = 1; r < m_size; ++r) {
        offsets[static_cast<std::size_t>(r)] =
            offsets[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<GlobalId> all_owned(m_rank == 0 ? static_cast<std::size_t>(offsets.back() + counts.back())
                                                : 0);
    INTACT_CHECK_MPI(MPI_Gatherv(owned.data(), owned_count, MPI_INT64_T, all_owned.data(), counts.data(),
                                 offsets.data(), MPI_INT64_T, 0, comm));

    // 2. Rank 0: the boundary of the scene mesh, rows ordered by (owner, global id); then the obstacles.
    if (m_rank == 0) {
        std::vector<int> owner(scene_mesh.mesh.nodes.size(), -1);
        for (int r = 0; r < m_size; ++r) {
            for (int k = 0; k < counts[static_cast<std::size_t>(r)]; ++k) {
                owner[static_cast<std::size_t>(
                    all_owned[static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)] + k)])] = r;
            }
        }
        const Surface surface = extract_surface(scene_mesh.mesh, scene_mesh.codim);
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
            m_vertex_motion.push_back(scene_mesh.motion[n]);
            m_vertex_friction.push_back(-1.0);
            const auto body = static_cast<std::size_t>(scene_mesh.node_body[n]);
            m_vertex_offset.push_back(
                body < scene_mesh.body_contact_offset.size() ? scene_mesh.body_contact_offset[body] : 0.0);
            m_rest.push_back(scene_mesh.mesh.nodes[n]);
        }
        for (const auto& t : surface.triangles) {
            m_triangles.push_back({index[t[0]], index[t[1]], index[t[2]]});
        }
        for (const auto& e : surface.edges) {
            m_edges.push_back({index[e[0]], index[e[1]]});
        }

        // Obstacles: mesh vertices (every vertex is a point; triangles, and the unique edges of triangles
        // and segments), then one row per plane, all placed at time 0.
        GlobalId next_gid = static_cast<GlobalId>(scene_mesh.mesh.nodes.size());
        auto add_row = [&](const Vec3& x, int k) {
            const io::Obstacle& obstacle = obstacles[static_cast<std::size_t>(k)];
            m_vertex_gid.push_back(next_gid++);
            m_vertex_body.push_back(-1 - k);
            m_vertex_constrained.push_back(1);
            m_vertex_motion.push_back(-1);
            m_vertex_friction.push_back(obstacle.friction ? *obstacle.friction : -1.0);
            m_vertex_offset.push_back(0.0);
            m_rest.push_back(x);
            m_obstacle_motion.push_back(obstacle.motion);
            return static_cast<int>(m_rest.size()) - 1;
        };
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            if (obstacles[k].kind != io::Obstacle::Kind::mesh) {
                continue;
            }
            const TriMesh& mesh = scene_mesh.obstacle_meshes[k];
            const int first = static_cast<int>(m_rest.size());
            for (const auto& x : mesh.nodes) {
                add_row(x, static_cast<int>(k));
            }
            std::vector<std::array<int, 2>> edges;
            for (const auto& t : mesh.tris) {
                m_triangles.push_back({first + t[0], first + t[1], first + t[2]});
                for (int c = 0; c < 3; ++c) {
                    const int a = first + t[static_cast<std::size_t>(c)];
                    const int b = first + t[static_cast<std::size_t>((c + 1) % 3)];
                    edges.push_back({std::min(a, b), std::max(a, b)});
                }
            }
            for (const auto& e : mesh.segments) {
                edges.push_back({first + std::min(e[0], e[1]), first + std::max(e[0], e[1])});
            }
            std::sort(edges.begin(), edges.end());
            edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
            m_edges.insert(m_edges.end(), edges.begin(), edges.end());
        }
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            if (obstacles[k].kind == io::Obstacle::Kind::plane) {
                Vec3 point, normal;
                place_plane(obstacles[k], point, normal);
                const int row = add_row(point, static_cast<int>(k));
                m_planes.push_back({row, normal, static_cast<int>(k)});
            }
        }
        m_num_body_vertices = static_cast<int>(vertices.size());
    }
    INTACT_CHECK_MPI(MPI_Bcast(&m_num_body_vertices, 1, MPI_INT, 0, comm));
    broadcast(comm, m_vertex_gid);
    broadcast(comm, m_vertex_body);
    broadcast(comm, m_vertex_constrained);
    broadcast(comm, m_rest);
    broadcast(comm, m_vertex_motion);
    broadcast(comm, m_vertex_friction);
    broadcast(comm, m_vertex_offset);
    broadcast(comm, m_obstacle_motion);
    broadcast(comm, m_triangles);
    broadcast(comm, m_edges);
    broadcast(comm, m_planes);

    // 3. This rank's owned rows (contiguous), local rows, own primitives, incidence.
    std::unordered_map<GlobalId, int> local_of;
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        local_of[local.node_global_id[static_cast<std::size_t>(i)]] = i;
    }
    m_local_of_surface.assign(static_cast<std::size_t>(num_vertices()), -1);
    m_row_of_local_index.assign(static_cast<std::size_t>(num_vertices()), -1);
    m_owned.assign(static_cast<std::size_t>(num_vertices()), 0);
    for (int s = 0; s < m_num_body_vertices; ++s) {
        const auto it = local_of.find(m_vertex_gid[static_cast<std::size_t>(s)]);
        if (it == local_of.end()) {
            continue;
        }
        m_local_of_surface[static_cast<std::size_t>(s)] = it->second;
        m_row_of_local_index[static_cast<std::size_t>(s)] = static_cast<int>(m_local_rows.size());
        m_local_rows.push_back(s);
        if (it->second < local.num_owned_nodes) {
            m_owned_surface.push_back(s);
            m_owned_local.push_back(it->second);
            m_owned[static_cast<std::size_t>(s)] = 1;
        }
    }
    // Rows are numbered by owner rank, so each rank's rows are one range.
    const int owned_rows = static_cast<int>(m_owned_surface.size());
    std::vector<int> row_counts(static_cast<std::size_t>(m_size));
    INTACT_CHECK_MPI(MPI_Allgather(&owned_rows, 1, MPI_INT, row_counts.data(), 1, MPI_INT, comm));
    m_row_owner_offsets.assign(1, 0);
    for (const int c : row_counts) {
        m_row_owner_offsets.push_back(m_row_owner_offsets.back() + c);
    }
    auto has_owned = [&](const auto& item) {
        return std::any_of(item.begin(), item.end(), [&](int v) { return owns(v); });
    };
    for (std::size_t t = 0; t < m_triangles.size(); ++t) {
        if (has_owned(m_triangles[t])) {
            m_own_triangles.push_back(static_cast<int>(t));
        }
    }
    for (std::size_t e = 0; e < m_edges.size(); ++e) {
        if (has_owned(m_edges[e])) {
            m_own_edges.push_back(static_cast<int>(e));
        }
    }
    for (const int t : m_own_triangles) {
        for (const int v : m_triangles[static_cast<std::size_t>(t)]) {
            INTACT_REQUIRE(m_local_of_surface[static_cast<std::size_t>(v)] >= 0,
                           "a surface triangle with an owned vertex has a vertex outside the ghost ring");
        }
    }
    incidence(num_vertices(), m_triangles, m_triangle_offsets, m_triangle_ids);
    incidence(num_vertices(), m_edges, m_edge_offsets, m_edge_ids);
    // 4. The same on the device: topology, flags, static lists, empty anchors.
    m_topology.triangles = rows_to_device<int, 3>("intact::contact::triangles", m_triangles);
    m_topology.edges = rows_to_device<int, 2>("intact::contact::edges", m_edges);
    m_topology.gid = to_device("intact::contact::row_gid", m_vertex_gid);
    m_topology.constrained = to_device("intact::contact::row_constrained", m_vertex_constrained);
    m_topology.owned = to_device("intact::contact::row_owned", m_owned);
    m_topology.local_of_surface = to_device("intact::contact::local_of_surface", m_local_of_surface);
    m_topology.rest = rows_to_device<double, 3>("intact::contact::rest", m_rest);
    std::vector<std::array<double, 3>> normals;
    std::vector<int> plane_rows;
    for (const Plane& plane : m_planes) {
        normals.push_back({plane.normal[0], plane.normal[1], plane.normal[2]});
        plane_rows.push_back(plane.row);
    }
    m_topology.plane_normal = rows_to_device<double, 3>("intact::contact::plane_normal", normals);
    m_topology.plane_row = to_device("intact::contact::plane_row", plane_rows);
    m_topology.num_body_vertices = m_num_body_vertices;
    m_topology.friction = to_device("intact::contact::row_friction", m_vertex_friction);
    // Offsets: an empty View when every row's is 0, so that solids-only scenes skip the offset work.
    m_max_offset =
        m_vertex_offset.empty() ? 0.0 : *std::max_element(m_vertex_offset.begin(), m_vertex_offset.end());
    if (m_max_offset > 0.0) {
        m_topology.offset = to_device("intact::contact::row_offset", m_vertex_offset);
    }
    std::vector<std::array<double, 9>> motions;
    for (const io::RigidMotion& m : m_obstacle_motion) {
        motions.push_back({m.velocity[0], m.velocity[1], m.velocity[2], m.angular_velocity[0],
                           m.angular_velocity[1], m.angular_velocity[2], m.center[0], m.center[1],
                           m.center[2]});
    }
    m_obstacle_motion_d = rows_to_device<double, 9>("intact::contact::obstacle_motion", motions);

    m_owned_surface_d = to_device("intact::contact::owned_rows", m_owned_surface);
    m_owned_local_d = to_device("intact::contact::owned_local", m_owned_local);
    std::vector<int> local_nodes;
    for (const int s : m_local_rows) {
        local_nodes.push_back(m_local_of_surface[static_cast<std::size_t>(s)]);
    }
    m_local_nodes_d = to_device("intact::contact::local_row_nodes", local_nodes);
    m_row_of_local_index_d = to_device("intact::contact::row_of_local_index", m_row_of_local_index);
    m_own_triangles_d = to_device("intact::contact::own_triangles", m_own_triangles);
    m_own_edges_d = to_device("intact::contact::own_edges", m_own_edges);
    std::vector<int> slot_of_triangle(m_triangles.size(), -1), slot_of_edge(m_edges.size(), -1);
    for (std::size_t k = 0; k < m_own_triangles.size(); ++k) {
        slot_of_triangle[static_cast<std::size_t>(m_own_triangles[k])] = static_cast<int>(k);
    }
    for (std::size_t k = 0; k < m_own_edges.size(); ++k) {
        slot_of_edge[static_cast<std::size_t>(m_own_edges[k])] = static_cast<int>(m_own_triangles.size() + k);
    }
    m_own_slot_of_triangle_d = to_device("intact::contact::own_slot_of_triangle", slot_of_triangle);
    m_own_slot_of_edge_d = to_device("intact::contact::own_slot_of_edge", slot_of_edge);
    m_triangle_offsets_d = to_device("intact::contact::triangle_offsets", m_triangle_offsets);
    m_triangle_ids_d = to_device("intact::contact::triangle_ids", m_triangle_ids);
    m_edge_offsets_d = to_device("intact::contact::edge_offsets", m_edge_offsets);
    m_edge_ids_d = to_device("intact::contact::edge_ids", m_edge_ids);

    const std::size_t nl = m_local_rows.size();
    m_anchor_lo = RowsView("intact::contact::anchor_lo", nl);
    m_anchor_hi = RowsView("intact::contact::anchor_hi", nl);
    Kokkos::deep_copy(m_anchor_lo, std::numeric_limits<double>::infinity()); // no anchor yet: empty
    Kokkos::deep_copy(m_anchor_hi, -std::numeric_limits<double>::infinity());
    m_row_lo = RowsView("intact::contact::row_lo", nl);
    m_row_hi = RowsView("intact::contact::row_hi", nl);
    const std::size_t no = m_own_triangles.size() + m_own_edges.size();
    m_own_lo = RowsView("intact::contact::own_lo", no);
    m_own_hi = RowsView("intact::contact::own_hi", no);
    m_bound_d = Kokkos::View<double[6], MemSpace>("intact::contact::rank_box");
    m_neighbour_boxes_d =
        Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace>("intact::contact::neighbour_boxes", m_size);
    m_neighbour_boxes_host = Kokkos::create_mirror_view(m_neighbour_boxes_d);
    m_block_offsets_d = IntView("intact::contact::send_block_starts", static_cast<std::size_t>(m_size) + 1);
    m_known_d = Kokkos::View<char*, MemSpace>("intact::contact::known_rows",
                                              static_cast<std::size_t>(num_vertices()));
    m_transport = comm::make_transport(comm, "mpi");
}

void ContactSurface::set_transport(std::shared_ptr<comm::HaloTransport> transport) {
    INTACT_REQUIRE(transport != nullptr, "ContactSurface::set_transport: no transport");
    m_transport = std::move(transport);
}

SurfaceField ContactSurface::make_field(const std::string& label) const {
    return SurfaceField(label, static_cast<std::size_t>(num_vertices()));
}

int ContactSurface::owner_of(int s) const {
    const auto next = std::upper_bound(m_row_owner_offsets.begin(), m_row_owner_offsets.end(), s);
    return static_cast<int>(next - m_row_owner_offsets.begin()) - 1;
}

} // namespace intact::contact
