// ContactSurface's ghost plan: anchor and swept boxes on the device, the rank boxes shared, the rows
// each neighbour needs (box-selected, plus the required pairs' rows), the known rows and primitives,
// and the device halo plan and host pack lists that gather uses.

#include "src/contact/contact_surface.hpp"

#include "src/contact/contact_surface/device_helpers.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace intact::contact {

using namespace surface_detail;

namespace {

constexpr int ghost_ids_tag = 7401;

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

// ---- Device helpers (free functions and functors: CUDA lambdas need a public or free enclosing function) --

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

} // namespace

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

} // namespace intact::contact
