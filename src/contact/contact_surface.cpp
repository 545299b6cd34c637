#include "src/contact/contact_surface.hpp"

#include "kernels/rigid_motion.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"
#include "src/mesh/surface.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
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

// ---- Device helpers (free functions and functors: CUDA lambdas need a public or free enclosing function) --

using IntView = Kokkos::View<int*, MemSpace>;
using RowsView = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;
using ConstRowsView = Kokkos::View<const double* [3], Kokkos::LayoutRight, MemSpace>;

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

KOKKOS_INLINE_FUNCTION double min2(double a, double b) {
    return a < b ? a : b;
}
KOKKOS_INLINE_FUNCTION double max2(double a, double b) {
    return a > b ? a : b;
}

// Anchor boxes of the local rows: reset to x (begin_step) or widened by x (add_anchor).
void anchor_rows(
    const IntView& local_nodes, const NodeField& x, const RowsView& lo, const RowsView& hi, bool reset) {
    Kokkos::parallel_for(
        "intact::contact::anchor_rows", Kokkos::RangePolicy<ExecSpace>(0, local_nodes.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            const int n = local_nodes(i);
            for (int c = 0; c < 3; ++c) {
                const double v = x(n, c);
                lo(i, c) = reset ? v : min2(lo(i, c), v);
                hi(i, c) = reset ? v : max2(hi(i, c), v);
            }
        });
}

// Swept box of every local row over its anchors, x and (when `step` is not empty) x + step.
void swept_row_boxes(const IntView& local_nodes,
                     const NodeField& x,
                     const NodeField& step,
                     const RowsView& anchor_lo,
                     const RowsView& anchor_hi,
                     const RowsView& lo,
                     const RowsView& hi) {
    const bool swept = step.extent(0) > 0;
    Kokkos::parallel_for(
        "intact::contact::swept_row_boxes", Kokkos::RangePolicy<ExecSpace>(0, local_nodes.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            const int n = local_nodes(i);
            for (int c = 0; c < 3; ++c) {
                const double now = x(n, c);
                const double end = swept ? now + step(n, c) : now;
                lo(i, c) = min2(min2(anchor_lo(i, c), now), end);
                hi(i, c) = max2(max2(anchor_hi(i, c), now), end);
            }
        });
}

// Box of every own primitive (own triangles, then own edges): the union of its rows' swept boxes.
void own_primitive_boxes(const IntView& own_triangles,
                         const IntView& own_edges,
                         const SurfaceTopology& topology,
                         const IntView& row_of_local_index,
                         const RowsView& row_lo,
                         const RowsView& row_hi,
                         const RowsView& lo,
                         const RowsView& hi) {
    const int nt = static_cast<int>(own_triangles.extent(0));
    const int n = nt + static_cast<int>(own_edges.extent(0));
    const auto triangles = topology.triangles;
    const auto edges = topology.edges;
    Kokkos::parallel_for(
        "intact::contact::own_primitive_boxes", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k) {
            const bool triangle = k < nt;
            const int item = triangle ? own_triangles(k) : own_edges(k - nt);
            const int count = triangle ? 3 : 2;
            const int first = row_of_local_index(triangle ? triangles(item, 0) : edges(item, 0));
            for (int c = 0; c < 3; ++c) {
                double a = row_lo(first, c);
                double b = row_hi(first, c);
                for (int v = 1; v < count; ++v) {
                    const int i = row_of_local_index(triangle ? triangles(item, v) : edges(item, v));
                    a = min2(a, row_lo(i, c));
                    b = max2(b, row_hi(i, c));
                }
                lo(k, c) = a;
                hi(k, c) = b;
            }
        });
}

// The bounding box (lo, hi) of boxes [0, n): one team per bound. Empty (lo > hi) when n = 0.
std::array<double, 6>
bounding_box(const RowsView& lo, const RowsView& hi, int n, const Kokkos::View<double[6], MemSpace>& out) {
    using Team = Kokkos::TeamPolicy<ExecSpace>::member_type;
    Kokkos::parallel_for(
        "intact::contact::bound_rank_box", Kokkos::TeamPolicy<ExecSpace>(6, Kokkos::AUTO),
        KOKKOS_LAMBDA(const Team& team) {
            const int bound = team.league_rank();
            const int c = bound % 3;
            double value = 0.0;
            if (bound < 3) {
                Kokkos::parallel_reduce(
                    Kokkos::TeamThreadRange(team, n), [&](const int k, double& m) { m = min2(m, lo(k, c)); },
                    Kokkos::Min<double>(value));
            } else {
                Kokkos::parallel_reduce(
                    Kokkos::TeamThreadRange(team, n), [&](const int k, double& m) { m = max2(m, hi(k, c)); },
                    Kokkos::Max<double>(value));
            }
            Kokkos::single(Kokkos::PerTeam(team), [&]() { out(bound) = value; });
        });
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), out);
    return {host(0), host(1), host(2), host(3), host(4), host(5)};
}

// Which owned rows go to which candidate rank: entry k·n_owned + i is 1 when an own primitive incident to
// owned row i overlaps candidate box k. Compacted (rank-major, rows ascending) into rows / local nodes;
// block_start(k) is the first entry of block k. Returns the number of rows to send.
struct SendSelection {
    IntView owned_surface, owned_local, triangle_offsets, triangle_ids, edge_offsets, edge_ids;
    IntView slot_of_triangle, slot_of_edge;
    RowsView own_lo, own_hi;
    Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace> boxes;
    IntView send_rows, send_local, block_start;
    int num_owned;

    KOKKOS_INLINE_FUNCTION bool overlaps(int slot, int k) const {
        for (int c = 0; c < 3; ++c) {
            if (own_hi(slot, c) < boxes(k, c) || boxes(k, 3 + c) < own_lo(slot, c)) {
                return false;
            }
        }
        return true;
    }

    KOKKOS_INLINE_FUNCTION void operator()(const int entry, int& update, const bool final) const {
        const int k = entry / num_owned;
        const int i = entry - k * num_owned;
        if (final && i == 0) {
            block_start(k) = update;
        }
        const int v = owned_surface(i);
        bool send = false;
        for (int j = triangle_offsets(v); j < triangle_offsets(v + 1) && !send; ++j) {
            send = overlaps(slot_of_triangle(triangle_ids(j)), k);
        }
        for (int j = edge_offsets(v); j < edge_offsets(v + 1) && !send; ++j) {
            send = overlaps(slot_of_edge(edge_ids(j)), k);
        }
        if (send) {
            if (final) {
                send_rows(update) = v;
                send_local(update) = owned_local(i);
            }
            ++update;
        }
    }
};

// Rows known after a plan: owned rows, obstacle mesh rows (not the plane rows, which are no primitive's
// vertex) and the received rows.
void mark_known(const SurfaceTopology& topology,
                int first_plane_row,
                const IntView& recv_rows,
                int num_recv,
                const Kokkos::View<char*, MemSpace>& known) {
    const auto owned = topology.owned;
    const int nb = topology.num_body_vertices;
    Kokkos::parallel_for(
        "intact::contact::mark_known_rows", Kokkos::RangePolicy<ExecSpace>(0, known.extent(0)),
        KOKKOS_LAMBDA(const int s) {
            known(s) = (owned(s) != 0 || (s >= nb && s < first_plane_row)) ? 1 : 0;
        });
    Kokkos::parallel_for(
        "intact::contact::mark_received_rows", Kokkos::RangePolicy<ExecSpace>(0, num_recv),
        KOKKOS_LAMBDA(const int k) { known(recv_rows(k)) = 1; });
}

// Items of K rows: bit 0 when all rows are known and one is owned, bit 1 when all are known and (Split)
// none is owned or (!Split) any.
template <int K, bool Split> struct PickItems {
    Kokkos::View<const int* [K], Kokkos::LayoutRight, MemSpace> rows;
    Kokkos::View<const char*, MemSpace> known, owned;
    KOKKOS_INLINE_FUNCTION int operator()(int item) const {
        bool all_known = true;
        bool any_owned = false;
        for (int k = 0; k < K; ++k) {
            all_known = all_known && known(rows(item, k)) != 0;
            any_owned = any_owned || owned(rows(item, k)) != 0;
        }
        if (!all_known) {
            return 0;
        }
        return (any_owned ? 1 : 0) | ((Split ? !any_owned : true) ? 2 : 0);
    }
};
// Rows that are known and not owned (bit 0).
struct PickOtherRows {
    Kokkos::View<const char*, MemSpace> known, owned;
    KOKKOS_INLINE_FUNCTION int operator()(int s) const { return known(s) != 0 && owned(s) == 0 ? 1 : 0; }
};

// Stable compaction of [0, n) into two lists (bit 0 of pick(i): list a, bit 1: list b), by one scan whose
// 64-bit value counts list a in the low and list b in the high 32 bits.
template <class Pick> struct CompactTwo {
    Pick pick;
    IntView a, b;
    KOKKOS_INLINE_FUNCTION void operator()(const int i, std::int64_t& update, const bool final) const {
        const int which = pick(i);
        if (final) {
            if (which & 1) {
                a(static_cast<int>(update & 0xFFFFFFFF)) = i;
            }
            if (which & 2) {
                b(static_cast<int>(update >> 32)) = i;
            }
        }
        update += (which & 1 ? 1 : 0) + (which & 2 ? (std::int64_t{1} << 32) : 0);
    }
};

template <class Pick>
std::array<int, 2> compact_two(const char* label, int n, const Pick& pick, IntView& a, IntView* b) {
    grow(a, static_cast<std::size_t>(n), "intact::contact::known_list");
    if (b) {
        grow(*b, static_cast<std::size_t>(n), "intact::contact::known_list");
    }
    std::int64_t total = 0;
    Kokkos::parallel_scan(label, Kokkos::RangePolicy<ExecSpace>(0, n),
                          CompactTwo<Pick>{pick, a, b ? *b : IntView()}, total);
    return {static_cast<int>(total & 0xFFFFFFFF), static_cast<int>(total >> 32)};
}

Kokkos::View<const int*, MemSpace> head_of(const IntView& view, int n) {
    return Kokkos::subview(view, std::make_pair(0, n));
}

void copy_owned_rows(const IntView& owned_surface,
                     const IntView& owned_local,
                     const NodeField& field,
                     const SurfaceField& out) {
    Kokkos::parallel_for(
        "intact::contact::gather_owned_rows", Kokkos::RangePolicy<ExecSpace>(0, owned_surface.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(owned_surface(k), c) = field(owned_local(k), c);
            }
        });
}

void pack_rows(const Kokkos::View<const int*, MemSpace>& ids,
               int n,
               const NodeField& field,
               const Kokkos::View<double*, MemSpace>& buffer) {
    Kokkos::parallel_for(
        "intact::contact::pack_ghost_rows", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                buffer(3 * k + c) = field(ids(k), c);
            }
        });
}

void unpack_rows(const Kokkos::View<const int*, MemSpace>& ids,
                 int n,
                 const Kokkos::View<double*, MemSpace>& buffer,
                 const SurfaceField& out) {
    Kokkos::parallel_for(
        "intact::contact::unpack_ghost_rows", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(ids(k), c) = buffer(3 * k + c);
            }
        });
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
            m_vertex_motion.push_back(scene_mesh.motion[n]);
            m_vertex_friction.push_back(-1.0);
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

std::vector<Vec3> ContactSurface::obstacle_positions(double time) const {
    std::vector<Vec3> rows(static_cast<std::size_t>(num_obstacle_rows()));
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Vec3& x = m_rest[static_cast<std::size_t>(m_num_body_vertices) + k];
        const io::RigidMotion& m = m_obstacle_motion[k];
        const auto vec = [](const Vec3& v) { return kernels::Vec3(v[0], v[1], v[2]); };
        const kernels::Vec3 y = kernels::rigid_motion_position(vec(x), vec(m.velocity),
                                                               vec(m.angular_velocity), vec(m.center), time);
        rows[k] = {y(0), y(1), y(2)};
    }
    return rows;
}

void ContactSurface::obstacle_positions(double time, const SurfaceField& xs) const {
    INTACT_REQUIRE(static_cast<int>(xs.extent(0)) == num_vertices(),
                   "ContactSurface::obstacle_positions: field has " << xs.extent(0) << " rows, not "
                                                                    << num_vertices());
    const int first = m_num_body_vertices;
    const auto rest = m_topology.rest;
    const auto motion = m_obstacle_motion_d;
    Kokkos::parallel_for(
        "intact::contact::obstacle_positions", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k) {
            const kernels::Vec3 x0(rest(first + k, 0), rest(first + k, 1), rest(first + k, 2));
            const kernels::Vec3 v(motion(k, 0), motion(k, 1), motion(k, 2));
            const kernels::Vec3 w(motion(k, 3), motion(k, 4), motion(k, 5));
            const kernels::Vec3 c(motion(k, 6), motion(k, 7), motion(k, 8));
            const kernels::Vec3 y = kernels::rigid_motion_position(x0, v, w, c, time);
            for (int d = 0; d < 3; ++d) {
                xs(first + k, d) = y(d);
            }
        });
}

void ContactSurface::release_motion(int motion) {
    for (int s = 0; s < m_num_body_vertices; ++s) {
        if (m_vertex_motion[static_cast<std::size_t>(s)] == motion) {
            m_vertex_constrained[static_cast<std::size_t>(s)] = 0;
        }
    }
    Kokkos::deep_copy(m_topology.constrained,
                      Kokkos::View<const char*, HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          m_vertex_constrained.data(), m_vertex_constrained.size()));
}

void ContactSurface::combine_obstacle_rows(double a,
                                           const ConstSurfaceField& x,
                                           double b,
                                           const ConstSurfaceField& y,
                                           const SurfaceField& out) const {
    const int first = m_num_body_vertices;
    const bool zero = a == 0.0 && b == 0.0;
    Kokkos::parallel_for(
        "intact::contact::combine_obstacle_rows", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                out(first + k, c) = zero ? 0.0 : a * x(first + k, c) + b * y(first + k, c);
            }
        });
}

double ContactSurface::obstacle_max_abs(const ConstSurfaceField& field) const {
    const int first = m_num_body_vertices;
    double largest = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::obstacle_max_abs", Kokkos::RangePolicy<ExecSpace>(0, num_obstacle_rows()),
        KOKKOS_LAMBDA(const int k, double& m) {
            for (int c = 0; c < 3; ++c) {
                const double v = field(first + k, c) < 0.0 ? -field(first + k, c) : field(first + k, c);
                m = max2(m, v);
            }
        },
        Kokkos::Max<double>(largest));
    return num_obstacle_rows() == 0 ? 0.0 : largest;
}

void ContactSurface::begin_step(const NodeField& x) {
    anchor_rows(m_local_nodes_d, x, m_anchor_lo, m_anchor_hi, true);
}

void ContactSurface::add_anchor(const NodeField& x) {
    anchor_rows(m_local_nodes_d, x, m_anchor_lo, m_anchor_hi, false);
}

void ContactSurface::update_ghosts(const NodeField& x, const NodeField* step, double inflation) {
    // 1. Swept box of every local row over {anchors, x, x + step}; of every own primitive; of this rank.
    swept_row_boxes(m_local_nodes_d, x, step ? *step : NodeField(), m_anchor_lo, m_anchor_hi, m_row_lo,
                    m_row_hi);
    own_primitive_boxes(m_own_triangles_d, m_own_edges_d, m_topology, m_row_of_local_index_d, m_row_lo,
                        m_row_hi, m_own_lo, m_own_hi);
    const auto bound = bounding_box(m_own_lo, m_own_hi, static_cast<int>(m_own_lo.extent(0)), m_bound_d);
    Box mine;
    for (int c = 0; c < 3; ++c) {
        mine.lo[c] = bound[static_cast<std::size_t>(c)] - inflation;
        mine.hi[c] = bound[static_cast<std::size_t>(3 + c)] + inflation;
    }

    // 2. Every rank's inflated box; on the device, the owned rows of own primitives that overlap the box of
    // each rank whose box overlaps mine (rank-major, rows ascending); to the host for the MPI set-up.
    std::vector<Box> boxes(static_cast<std::size_t>(m_size));
    INTACT_CHECK_MPI(MPI_Allgather(&mine, 6, MPI_DOUBLE, boxes.data(), 6, MPI_DOUBLE, m_comm));
    std::vector<int> candidates;
    const auto neighbour_boxes = m_neighbour_boxes_host;
    for (int r = 0; r < m_size; ++r) {
        if (r != m_rank && boxes[static_cast<std::size_t>(r)].overlaps(mine)) {
            for (int c = 0; c < 3; ++c) {
                neighbour_boxes(candidates.size(), c) = boxes[static_cast<std::size_t>(r)].lo[c];
                neighbour_boxes(candidates.size(), 3 + c) = boxes[static_cast<std::size_t>(r)].hi[c];
            }
            candidates.push_back(r);
        }
    }
    const int num_owned = static_cast<int>(m_owned_surface.size());
    const int entries = static_cast<int>(candidates.size()) * num_owned;
    int total = 0;
    std::vector<int> block_start(candidates.size() + 1, 0);
    if (entries > 0) {
        Kokkos::deep_copy(m_neighbour_boxes_d, neighbour_boxes);
        grow(m_send_rows_d, static_cast<std::size_t>(entries), "intact::contact::send_rows");
        grow(m_send_local_d, static_cast<std::size_t>(entries), "intact::contact::send_local");
        SendSelection select{m_owned_surface_d,
                             m_owned_local_d,
                             m_triangle_offsets_d,
                             m_triangle_ids_d,
                             m_edge_offsets_d,
                             m_edge_ids_d,
                             m_own_slot_of_triangle_d,
                             m_own_slot_of_edge_d,
                             m_own_lo,
                             m_own_hi,
                             m_neighbour_boxes_d,
                             m_send_rows_d,
                             m_send_local_d,
                             m_block_offsets_d,
                             num_owned};
        Kokkos::parallel_scan("intact::contact::select_ghost_rows",
                              Kokkos::RangePolicy<ExecSpace>(0, entries), select, total);
        Kokkos::deep_copy(
            Kokkos::View<int*, HostSpace, Kokkos::MemoryUnmanaged>(block_start.data(), candidates.size()),
            Kokkos::subview(m_block_offsets_d, std::make_pair(0, static_cast<int>(candidates.size()))));
    }
    block_start.back() = total;
    std::vector<int> sent(static_cast<std::size_t>(total));
    if (total > 0) {
        Kokkos::deep_copy(Kokkos::View<int*, HostSpace, Kokkos::MemoryUnmanaged>(sent.data(), sent.size()),
                          Kokkos::subview(m_send_rows_d, std::make_pair(0, total)));
    }
    if (m_required && m_required->count > 0) {
        add_required_rows(candidates, block_start, sent);
        total = block_start.back();
    }

    // 3. Counts to everyone, then the row ids point to point.
    std::vector<int> send_counts(static_cast<std::size_t>(m_size), 0),
        recv_counts(static_cast<std::size_t>(m_size));
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        send_counts[static_cast<std::size_t>(candidates[k])] = block_start[k + 1] - block_start[k];
    }
    INTACT_CHECK_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, m_comm));
    m_send_ranks.clear();
    m_send_offsets.assign(1, 0);
    m_send_rows.clear();
    m_recv_ranks.clear();
    m_recv_offsets.assign(1, 0);
    for (std::size_t k = 0; k < candidates.size(); ++k) {
        if (block_start[k + 1] > block_start[k]) { // blocks are contiguous: m_send_rows is `sent` in order
            m_send_ranks.push_back(candidates[k]);
            m_send_offsets.push_back(block_start[k + 1]);
        }
    }
    m_send_rows = std::move(sent);
    for (int r = 0; r < m_size; ++r) {
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
    const int num_recv = static_cast<int>(m_recv_rows.size());
    grow(m_recv_rows_d, static_cast<std::size_t>(num_recv), "intact::contact::recv_rows");
    if (num_recv > 0) {
        Kokkos::deep_copy(Kokkos::subview(m_recv_rows_d, std::make_pair(0, num_recv)),
                          Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>(m_recv_rows.data(),
                                                                                       m_recv_rows.size()));
    }

    // 4. Known rows and the primitives all of whose rows are known, on the device.
    mark_known(m_topology, num_vertices() - static_cast<int>(m_planes.size()), m_recv_rows_d, num_recv,
               m_known_d);
    const auto other = compact_two("intact::contact::known_other_rows", num_vertices(),
                                   PickOtherRows{m_known_d, m_topology.owned}, m_other_points_d, nullptr);
    const auto tris = compact_two("intact::contact::known_triangles", static_cast<int>(m_triangles.size()),
                                  PickItems<3, false>{m_topology.triangles, m_known_d, m_topology.owned},
                                  m_owned_triangles_d, &m_triangles_d);
    const auto edges = compact_two("intact::contact::known_edges", static_cast<int>(m_edges.size()),
                                   PickItems<2, true>{m_topology.edges, m_known_d, m_topology.owned},
                                   m_owned_edges_d, &m_other_edges_d);
    m_known_device.owned_points = m_owned_surface_d;
    m_known_device.other_points = head_of(m_other_points_d, other[0]);
    m_known_device.triangles = head_of(m_triangles_d, tris[1]);
    m_known_device.owned_triangles = head_of(m_owned_triangles_d, tris[0]);
    m_known_device.owned_edges = head_of(m_owned_edges_d, edges[0]);
    m_known_device.other_edges = head_of(m_other_edges_d, edges[1]);
    m_known_on_host = false;

    // 5. The ghost plan for the device gather (send ids: local nodes; receive ids: rows) and its buffers.
    m_ghost_plan =
        std::make_unique<comm::HaloPlan>(m_comm, m_send_ranks, m_send_offsets, head_of(m_send_local_d, total),
                                         m_recv_ranks, m_recv_offsets, head_of(m_recv_rows_d, num_recv));
    grow(m_gather_send, 3 * static_cast<std::size_t>(total), "intact::contact::gather_send");
    grow(m_gather_recv, 3 * static_cast<std::size_t>(num_recv), "intact::contact::gather_recv");

    // 6. What the host gather packs: owned rows, then sent rows.
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

void ContactSurface::gather(const NodeField& field, const SurfaceField& out) const {
    INTACT_REQUIRE(m_has_plan, "ContactSurface::gather before update_ghosts");
    INTACT_REQUIRE(static_cast<int>(out.extent(0)) == num_vertices(),
                   "ContactSurface::gather: field has " << out.extent(0) << " rows, not " << num_vertices());
    const comm::HaloPlan& plan = *m_ghost_plan;
    copy_owned_rows(m_owned_surface_d, m_owned_local_d, field, out);
    if (!plan.has_neighbours()) {
        return;
    }
    pack_rows(plan.send_ids(), plan.num_send(), field, m_gather_send);
    Kokkos::fence();
    // Only the plan's part of the kept buffers: a transport that stages through the host copies what it
    // is given, every PCG iteration. The unpack needs no fence: later kernels run on the same space.
    const auto send = Kokkos::subview(m_gather_send, std::make_pair(0, 3 * plan.num_send()));
    const auto recv = Kokkos::subview(m_gather_recv, std::make_pair(0, 3 * plan.num_recv()));
    m_transport->exchange(plan, send, recv, 3);
    unpack_rows(plan.recv_ids(), plan.num_recv(), m_gather_recv, out);
}

int ContactSurface::owner_of(int s) const {
    const auto next = std::upper_bound(m_row_owner_offsets.begin(), m_row_owner_offsets.end(), s);
    return static_cast<int>(next - m_row_owner_offsets.begin()) - 1;
}

void ContactSurface::add_required_rows(std::vector<int>& ranks,
                                       std::vector<int>& block_start,
                                       std::vector<int>& sent) {
    // The required pairs to the host: plan set-up, once per update, like the send lists themselves.
    const int n = m_required->count;
    const auto kinds = Kokkos::create_mirror_view_and_copy(
        HostSpace(), Kokkos::subview(m_required->kind, std::make_pair(0, n)));
    const auto rows = Kokkos::create_mirror_view_and_copy(
        HostSpace(), Kokkos::subview(m_required->rows, std::make_pair(0, n), Kokkos::ALL));

    // Rows per destination: the box-selected blocks, plus the owned rows of every required pair for the
    // owners of its other body rows.
    std::map<int, std::vector<int>> by_rank;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
        by_rank[ranks[k]].assign(sent.begin() + block_start[k], sent.begin() + block_start[k + 1]);
    }
    for (int i = 0; i < n; ++i) {
        const int used = kinds(i) == k_point_plane ? 1 : 4;
        for (int a = 0; a < used; ++a) {
            const int mine = rows(i, a);
            if (!owns(mine)) {
                continue;
            }
            for (int b = 0; b < used; ++b) {
                const int other = rows(i, b);
                if (other < m_num_body_vertices && !owns(other)) {
                    by_rank[owner_of(other)].push_back(mine);
                }
            }
        }
    }
    ranks.clear();
    block_start.assign(1, 0);
    sent.clear();
    for (auto& [rank, list] : by_rank) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
        if (list.empty()) {
            continue;
        }
        ranks.push_back(rank);
        sent.insert(sent.end(), list.begin(), list.end());
        block_start.push_back(static_cast<int>(sent.size()));
    }

    // The device copies of the send lists: rows and their local nodes.
    const auto total = sent.size();
    std::vector<int> local(total);
    for (std::size_t k = 0; k < total; ++k) {
        local[k] = m_local_of_surface[static_cast<std::size_t>(sent[k])];
    }
    grow(m_send_rows_d, total, "intact::contact::send_rows");
    grow(m_send_local_d, total, "intact::contact::send_local");
    using HostInts = Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>;
    const auto head = std::make_pair(std::size_t{0}, total);
    Kokkos::deep_copy(Kokkos::subview(m_send_rows_d, head), HostInts(sent.data(), total));
    Kokkos::deep_copy(Kokkos::subview(m_send_local_d, head), HostInts(local.data(), total));
}

namespace {
// Host copy of the first n entries of a device list.
std::vector<int> to_host(const Kokkos::View<const int*, MemSpace>& view) {
    std::vector<int> values(view.extent(0));
    Kokkos::deep_copy(Kokkos::View<int*, HostSpace, Kokkos::MemoryUnmanaged>(values.data(), values.size()),
                      view);
    return values;
}
} // namespace

const std::vector<int>& ContactSurface::known_vertices() const {
    if (!m_known_on_host) {
        const auto other = to_host(m_known_device.other_points);
        m_known_vertices.clear();
        std::merge(m_owned_surface.begin(), m_owned_surface.end(), other.begin(), other.end(),
                   std::back_inserter(m_known_vertices));
        m_known_triangles = to_host(m_known_device.triangles);
        const auto owned_edges = to_host(m_known_device.owned_edges);
        const auto other_edges = to_host(m_known_device.other_edges);
        m_known_edges.clear();
        std::merge(owned_edges.begin(), owned_edges.end(), other_edges.begin(), other_edges.end(),
                   std::back_inserter(m_known_edges));
        m_known_on_host = true;
    }
    return m_known_vertices;
}

const std::vector<int>& ContactSurface::known_triangles() const {
    known_vertices();
    return m_known_triangles;
}

const std::vector<int>& ContactSurface::known_edges() const {
    known_vertices();
    return m_known_edges;
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
