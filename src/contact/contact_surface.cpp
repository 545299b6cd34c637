#include "src/contact/contact_surface.hpp"

#include "src/core/error.hpp"
#include "src/mesh/surface.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace intact::contact {

namespace {

constexpr int ghost_ids_tag = 7401;
constexpr int ghost_rows_tag = 7402;

template <class T> void broadcast(MPI_Comm comm, std::vector<T>& values) {
    unsigned long long count = values.size();
    INTACT_CHECK_MPI(MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
    values.resize(count);
    INTACT_CHECK_MPI(MPI_Bcast(values.data(), static_cast<int>(count * sizeof(T)), MPI_BYTE, 0, comm));
}

struct Box {
    double lo[3] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::infinity()};
    double hi[3] = {-std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
    void add(const double p[3]) {
        for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], p[c]);
            hi[c] = std::max(hi[c], p[c]);
        }
    }
    void add(const Box& b) {
        add(b.lo);
        add(b.hi);
    }
    bool overlaps(const Box& b) const {
        for (int c = 0; c < 3; ++c) {
            if (hi[c] < b.lo[c] || b.hi[c] < lo[c]) {
                return false;
            }
        }
        return true;
    }
};

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

        // Obstacles: mesh vertices (triangles and their unique edges), then one row per plane.
        GlobalId next_gid = static_cast<GlobalId>(scene_mesh.mesh.nodes.size());
        auto add_row = [&](const Vec3& x, int k) {
            m_vertex_gid.push_back(next_gid++);
            m_vertex_body.push_back(-1 - k);
            m_vertex_constrained.push_back(1);
            m_rest.push_back(x);
            m_obstacle_velocity.push_back(obstacles[static_cast<std::size_t>(k)].velocity);
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
            std::sort(edges.begin(), edges.end());
            edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
            m_edges.insert(m_edges.end(), edges.begin(), edges.end());
        }
        for (std::size_t k = 0; k < obstacles.size(); ++k) {
            if (obstacles[k].kind == io::Obstacle::Kind::plane) {
                const int row = add_row(obstacles[k].point, static_cast<int>(k));
                m_planes.push_back({row, obstacles[k].normal, static_cast<int>(k)});
            }
        }
        m_num_body_vertices = static_cast<int>(vertices.size());
    }
    INTACT_CHECK_MPI(MPI_Bcast(&m_num_body_vertices, 1, MPI_INT, 0, comm));
    broadcast(comm, m_vertex_gid);
    broadcast(comm, m_vertex_body);
    broadcast(comm, m_vertex_constrained);
    broadcast(comm, m_rest);
    broadcast(comm, m_obstacle_velocity);
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
    m_known.assign(static_cast<std::size_t>(num_vertices()), 0);
}

std::vector<Vec3> ContactSurface::obstacle_positions(double time) const {
    std::vector<Vec3> rows(static_cast<std::size_t>(num_obstacle_rows()));
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Vec3& x = m_rest[static_cast<std::size_t>(m_num_body_vertices) + k];
        const Vec3& v = m_obstacle_velocity[k];
        rows[k] = {x[0] + time * v[0], x[1] + time * v[1], x[2] + time * v[2]};
    }
    return rows;
}

void ContactSurface::begin_step(const NodeField& x) {
    m_anchors.clear();
    add_anchor(x);
}

void ContactSurface::add_anchor(const NodeField& x) {
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), x);
    std::vector<Vec3> rows(m_local_rows.size());
    for (std::size_t i = 0; i < m_local_rows.size(); ++i) {
        const int n = m_local_of_surface[static_cast<std::size_t>(m_local_rows[i])];
        rows[i] = {host(n, 0), host(n, 1), host(n, 2)};
    }
    m_anchors.push_back(std::move(rows));
}

void ContactSurface::update_ghosts(const NodeField& x, const NodeField* step, double inflation) {
    // 1. Swept box of every local row over {xᵗ, x, x + step}; of every own primitive; of this rank.
    const auto hx = Kokkos::create_mirror_view_and_copy(HostSpace(), x);
    const auto hp = Kokkos::create_mirror_view_and_copy(HostSpace(), step ? *step : x); // unused without step
    std::vector<Box> row_box(m_local_rows.size());
    for (std::size_t i = 0; i < m_local_rows.size(); ++i) {
        const int n = m_local_of_surface[static_cast<std::size_t>(m_local_rows[i])];
        const double now[3] = {hx(n, 0), hx(n, 1), hx(n, 2)};
        for (const auto& anchor : m_anchors) {
            row_box[i].add(anchor[i].data());
        }
        row_box[i].add(now);
        if (step) {
            const double end[3] = {now[0] + hp(n, 0), now[1] + hp(n, 1), now[2] + hp(n, 2)};
            row_box[i].add(end);
        }
    }
    auto primitive_box = [&](const auto& rows) {
        Box box;
        for (const int v : rows) {
            box.add(row_box[static_cast<std::size_t>(m_row_of_local_index[static_cast<std::size_t>(v)])]);
        }
        return box;
    };
    std::vector<Box> own_box;
    own_box.reserve(m_own_triangles.size() + m_own_edges.size());
    Box mine;
    for (const int t : m_own_triangles) {
        own_box.push_back(primitive_box(m_triangles[static_cast<std::size_t>(t)]));
        mine.add(own_box.back());
    }
    for (const int e : m_own_edges) {
        own_box.push_back(primitive_box(m_edges[static_cast<std::size_t>(e)]));
        mine.add(own_box.back());
    }
    for (int c = 0; c < 3; ++c) {
        mine.lo[c] -= inflation;
        mine.hi[c] += inflation;
    }

    // 2. Every rank's inflated box; rows to send to each rank whose box one of my primitives overlaps.
    std::vector<Box> boxes(static_cast<std::size_t>(m_size));
    INTACT_CHECK_MPI(MPI_Allgather(&mine, 6, MPI_DOUBLE, boxes.data(), 6, MPI_DOUBLE, m_comm));
    std::vector<std::vector<int>> send(static_cast<std::size_t>(m_size));
    for (int r = 0; r < m_size; ++r) {
        if (r == m_rank || !boxes[static_cast<std::size_t>(r)].overlaps(mine)) {
            continue;
        }
        auto& rows = send[static_cast<std::size_t>(r)];
        auto add_owned = [&](const auto& item) {
            for (const int v : item) {
                if (owns(v)) {
                    rows.push_back(v);
                }
            }
        };
        std::size_t k = 0;
        for (const int t : m_own_triangles) {
            if (own_box[k++].overlaps(boxes[static_cast<std::size_t>(r)])) {
                add_owned(m_triangles[static_cast<std::size_t>(t)]);
            }
        }
        for (const int e : m_own_edges) {
            if (own_box[k++].overlaps(boxes[static_cast<std::size_t>(r)])) {
                add_owned(m_edges[static_cast<std::size_t>(e)]);
            }
        }
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }

    // 3. Counts to everyone, then the row ids point to point.
    std::vector<int> send_counts(static_cast<std::size_t>(m_size)),
        recv_counts(static_cast<std::size_t>(m_size));
    for (int r = 0; r < m_size; ++r) {
        send_counts[static_cast<std::size_t>(r)] = static_cast<int>(send[static_cast<std::size_t>(r)].size());
    }
    INTACT_CHECK_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, m_comm));
    m_send_ranks.clear();
    m_send_offsets.assign(1, 0);
    m_send_rows.clear();
    m_recv_ranks.clear();
    m_recv_offsets.assign(1, 0);
    for (int r = 0; r < m_size; ++r) {
        if (send_counts[static_cast<std::size_t>(r)] > 0) {
            m_send_ranks.push_back(r);
            const auto& rows = send[static_cast<std::size_t>(r)];
            m_send_rows.insert(m_send_rows.end(), rows.begin(), rows.end());
            m_send_offsets.push_back(static_cast<int>(m_send_rows.size()));
        }
        if (recv_counts[static_cast<std::size_t>(r)] > 0) {
            m_recv_ranks.push_back(r);
            m_recv_offsets.push_back(m_recv_offsets.back() + recv_counts[static_cast<std::size_t>(r)]);
        }
    }
    m_recv_rows.assign(static_cast<std::size_t>(m_recv_offsets.back()), 0);
    m_requests.resize(m_send_ranks.size() + m_recv_ranks.size());
    std::size_t q = 0;
    for (std::size_t k = 0; k < m_recv_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Irecv(m_recv_rows.data() + m_recv_offsets[k],
                                   m_recv_offsets[k + 1] - m_recv_offsets[k], MPI_INT, m_recv_ranks[k],
                                   ghost_ids_tag, m_comm, &m_requests[q++]));
    }
    for (std::size_t k = 0; k < m_send_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Isend(m_send_rows.data() + m_send_offsets[k],
                                   m_send_offsets[k + 1] - m_send_offsets[k], MPI_INT, m_send_ranks[k],
                                   ghost_ids_tag, m_comm, &m_requests[q++]));
    }
    INTACT_CHECK_MPI(MPI_Waitall(static_cast<int>(q), m_requests.data(), MPI_STATUSES_IGNORE));

    // 4. Known rows and the primitives all of whose rows are known.
    for (const int v : m_known_vertices) {
        m_known[static_cast<std::size_t>(v)] = 0;
    }
    m_known_vertices = m_owned_surface;
    m_known_vertices.insert(m_known_vertices.end(), m_recv_rows.begin(), m_recv_rows.end());
    const int first_plane_row = num_vertices() - static_cast<int>(m_planes.size());
    for (int s = m_num_body_vertices; s < first_plane_row; ++s) {
        m_known_vertices.push_back(s); // obstacle mesh rows; plane rows are no primitive's vertex
    }
    std::sort(m_known_vertices.begin(), m_known_vertices.end());
    m_known_vertices.erase(std::unique(m_known_vertices.begin(), m_known_vertices.end()),
                           m_known_vertices.end());
    for (const int v : m_known_vertices) {
        m_known[static_cast<std::size_t>(v)] = 1;
    }
    auto collect = [&](const std::vector<int>& offsets, const std::vector<int>& ids, const auto& items,
                       std::vector<int>& out) {
        out.clear();
        for (const int v : m_known_vertices) {
            for (int j = offsets[static_cast<std::size_t>(v)]; j < offsets[static_cast<std::size_t>(v) + 1];
                 ++j) {
                const int item = ids[static_cast<std::size_t>(j)];
                const auto& rows = items[static_cast<std::size_t>(item)];
                if (std::all_of(rows.begin(), rows.end(),
                                [&](int w) { return m_known[static_cast<std::size_t>(w)] != 0; })) {
                    out.push_back(item);
                }
            }
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    };
    collect(m_triangle_offsets, m_triangle_ids, m_triangles, m_known_triangles);
    collect(m_edge_offsets, m_edge_ids, m_edges, m_known_edges);

    // 5. What gather packs: owned rows, then sent rows.
    std::vector<int> pack = m_owned_local;
    for (const int s : m_send_rows) {
        pack.push_back(m_local_of_surface[static_cast<std::size_t>(s)]);
    }
    if (m_pack_local.extent(0) != pack.size()) {
        m_pack_local = Kokkos::View<int*, MemSpace>("intact::contact::pack_rows", pack.size());
        m_pack =
            Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>("intact::contact::pack", pack.size());
        m_pack_host = Kokkos::create_mirror_view(m_pack);
    }
    Kokkos::deep_copy(m_pack_local,
                      Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>(pack.data(), pack.size()));
    m_has_plan = true;
}

void ContactSurface::gather(const NodeField& field,
                            const std::vector<Vec3>& obstacle_rows,
                            std::vector<Vec3>& out) const {
    INTACT_REQUIRE(m_has_plan, "ContactSurface::gather before update_ghosts");
    INTACT_REQUIRE(static_cast<int>(obstacle_rows.size()) == num_obstacle_rows(),
                   "ContactSurface::gather: wrong number of obstacle rows");
    out.resize(static_cast<std::size_t>(num_vertices()));
    const auto rows = m_pack_local;
    const auto pack = m_pack;
    Kokkos::parallel_for(
        "intact::contact::pack_surface_rows", Kokkos::RangePolicy<ExecSpace>(0, rows.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                pack(k, c) = field(rows(k), c);
            }
        });
    Kokkos::deep_copy(m_pack_host, m_pack);
    const std::size_t owned = m_owned_local.size();
    for (std::size_t k = 0; k < owned; ++k) {
        out[static_cast<std::size_t>(m_owned_surface[k])] = {m_pack_host(k, 0), m_pack_host(k, 1),
                                                             m_pack_host(k, 2)};
    }
    const double* send = m_pack_host.data() + 3 * owned; // the sent rows, in plan order
    m_recv_buffer.resize(3 * m_recv_rows.size());
    std::size_t q = 0;
    for (std::size_t k = 0; k < m_recv_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Irecv(m_recv_buffer.data() + 3 * m_recv_offsets[k],
                                   3 * (m_recv_offsets[k + 1] - m_recv_offsets[k]), MPI_DOUBLE,
                                   m_recv_ranks[k], ghost_rows_tag, m_comm, &m_requests[q++]));
    }
    for (std::size_t k = 0; k < m_send_ranks.size(); ++k) {
        INTACT_CHECK_MPI(MPI_Isend(send + 3 * m_send_offsets[k],
                                   3 * (m_send_offsets[k + 1] - m_send_offsets[k]), MPI_DOUBLE,
                                   m_send_ranks[k], ghost_rows_tag, m_comm, &m_requests[q++]));
    }
    INTACT_CHECK_MPI(MPI_Waitall(static_cast<int>(q), m_requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t k = 0; k < m_recv_rows.size(); ++k) {
        out[static_cast<std::size_t>(m_recv_rows[k])] = {m_recv_buffer[3 * k], m_recv_buffer[3 * k + 1],
                                                         m_recv_buffer[3 * k + 2]};
    }
    std::copy(obstacle_rows.begin(), obstacle_rows.end(), out.begin() + m_num_body_vertices);
}

} // namespace intact::contact
