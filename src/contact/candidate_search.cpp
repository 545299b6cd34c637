#include "src/contact/candidate_search.hpp"

#include "src/core/error.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace intact::contact {

namespace {

using IdList = Kokkos::View<const int*, MemSpace>;

// Hash cell: the mean rest length of the bodies' boundary edges (obstacle meshes may be far coarser), at
// least 2 d̂ (as the host BarrierPotential).
double broad_phase_cell(const ContactSurface& surface, double dhat) {
    double total = 0.0;
    int count = 0;
    for (const auto& e : surface.edges()) {
        if (surface.is_obstacle(e[0])) {
            continue;
        }
        const auto& a = surface.rest_positions()[static_cast<std::size_t>(e[0])];
        const auto& b = surface.rest_positions()[static_cast<std::size_t>(e[1])];
        total += std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                           (a[2] - b[2]) * (a[2] - b[2]));
        ++count;
    }
    return std::max(count == 0 ? 1.0 : total / count, 2.0 * dhat);
}

// Grow a pair list to hold n pairs; with `keep` entries preserved (a copy only when it grows).
void reserve(PairList& list, int n, int keep, const char* label) {
    if (static_cast<int>(list.kind.extent(0)) >= n && list.kind.data() != nullptr) {
        return;
    }
    const std::size_t capacity = static_cast<std::size_t>(n) + static_cast<std::size_t>(n) / 4 + 16;
    PairList grown;
    grown.kind =
        decltype(grown.kind)(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), capacity);
    grown.rows =
        decltype(grown.rows)(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), capacity);
    if (keep > 0) {
        Kokkos::deep_copy(Kokkos::subview(grown.kind, std::make_pair(0, keep)),
                          Kokkos::subview(list.kind, std::make_pair(0, keep)));
        Kokkos::deep_copy(Kokkos::subview(grown.rows, std::make_pair(0, keep), Kokkos::ALL),
                          Kokkos::subview(list.rows, std::make_pair(0, keep), Kokkos::ALL));
    }
    grown.count = list.count;
    list = grown;
}

// Whether the pair is kept: no shared row, a row owned here, not every row prescribed.
KOKKOS_INLINE_FUNCTION bool keep_pair(const int rows[4], const SurfaceTopology& topology) {
    bool owned = false;
    bool movable = false;
    for (int a = 0; a < 4; ++a) {
        for (int b = a + 1; b < 4; ++b) {
            if (rows[a] == rows[b]) {
                return false;
            }
        }
        owned = owned || topology.owned(rows[a]) != 0;
        movable = movable || topology.constrained(rows[a]) == 0;
    }
    return owned && movable;
}

// Append the kept pairs of one hash query to `found` (from entry `count` on): point–triangle (first: point
// rows, second: triangles) or edge–edge (first and second: edges; the smaller edge index goes first).
// Returns the new count.
int append_pairs(PairKind kind,
                 const DevicePairs& hits,
                 const IdList& first,
                 const IdList& second,
                 const SurfaceTopology& topology,
                 PairList& found,
                 int count) {
    reserve(found, count + hits.count, count, "intact::contact::found_pairs");
    const auto pairs = hits.pairs;
    const auto out_kind = found.kind;
    const auto out_rows = found.rows;
    const auto triangles = topology.triangles;
    const auto edges = topology.edges;
    int added = 0;
    Kokkos::parallel_scan(
        "intact::contact::filter_candidates", Kokkos::RangePolicy<ExecSpace>(0, hits.count),
        KOKKOS_LAMBDA(const int k, int& update, const bool final) {
            const int i = first(pairs(k, 0));
            const int j = second(pairs(k, 1));
            int rows[4];
            if (kind == k_point_triangle) {
                rows[0] = i;
                for (int c = 0; c < 3; ++c) {
                    rows[1 + c] = triangles(j, c);
                }
            } else {
                const int a = i < j ? i : j;
                const int b = i < j ? j : i;
                rows[0] = edges(a, 0);
                rows[1] = edges(a, 1);
                rows[2] = edges(b, 0);
                rows[3] = edges(b, 1);
            }
            if (keep_pair(rows, topology)) {
                if (final) {
                    out_kind(count + update) = kind;
                    for (int c = 0; c < 4; ++c) {
                        out_rows(count + update, c) = rows[c];
                    }
                }
                ++update;
            }
        },
        added);
    found.count = count + added;
    return found.count;
}

// Append every owned free row against every plane (a plane is prescribed, so a prescribed row makes an
// all-prescribed pair and is left out).
int append_planes(const IdList& owned_points, const SurfaceTopology& topology, PairList& found, int count) {
    const int num_owned = static_cast<int>(owned_points.extent(0));
    const int n = num_owned * static_cast<int>(topology.plane_row.extent(0));
    reserve(found, count + n, count, "intact::contact::found_pairs");
    const auto out_kind = found.kind;
    const auto out_rows = found.rows;
    const auto constrained = topology.constrained;
    const auto plane_row = topology.plane_row;
    int added = 0;
    Kokkos::parallel_scan(
        "intact::contact::point_plane_candidates", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k, int& update, const bool final) {
            const int plane = k / num_owned;
            const int v = owned_points(k - plane * num_owned);
            if (constrained(v) == 0) {
                if (final) {
                    out_kind(count + update) = k_point_plane;
                    out_rows(count + update, 0) = v;
                    out_rows(count + update, 1) = plane;
                    out_rows(count + update, 2) = plane_row(plane);
                    out_rows(count + update, 3) = 0;
                }
                ++update;
            }
        },
        added);
    found.count = count + added;
    return found.count;
}

// (rows[1], rows[2], rows[3]) of entry a before that of entry b (same kind and first row).
KOKKOS_INLINE_FUNCTION bool
tail_less(const Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>& rows, int a, int b) {
    for (int c = 1; c < 4; ++c) {
        if (rows(a, c) != rows(b, c)) {
            return rows(a, c) < rows(b, c);
        }
    }
    return false;
}

// Sort `found` by (kind, rows) into `out`: counting sort by (kind, first row) into `bucketed` (slots taken
// atomically: any order within a bucket), then each entry's place in its bucket is the number of entries
// with a smaller key. `found` has no duplicates (the queries' point and edge sets are disjoint and the
// hash reports a pair once), so keys are unique and the result does not depend on the slots.
void sort_pairs(const PairList& found,
                int num_rows,
                Kokkos::View<int*, MemSpace>& offset,
                Kokkos::View<int*, MemSpace>& cursor,
                PairList& bucketed,
                PairList& out) {
    const int n = found.count;
    const std::int64_t buckets64 = 3 * static_cast<std::int64_t>(num_rows);
    INTACT_REQUIRE(buckets64 < INT_MAX,
                   "candidate search: " << num_rows << " rows overflow the bucket index");
    const int buckets = static_cast<int>(buckets64);
    if (static_cast<int>(offset.extent(0)) < buckets + 1) {
        offset = Kokkos::View<int*, MemSpace>("intact::contact::pair_buckets",
                                              static_cast<std::size_t>(buckets) + 1);
        cursor =
            Kokkos::View<int*, MemSpace>("intact::contact::pair_cursor", static_cast<std::size_t>(buckets));
    }
    reserve(bucketed, n, 0, "intact::contact::bucketed_pairs");
    reserve(out, n, 0, "intact::contact::candidate_pairs");
    const auto off = offset;
    const auto cur = cursor;
    const auto kind = found.kind;
    const auto rows = found.rows;
    const auto b_kind = bucketed.kind;
    const auto b_rows = bucketed.rows;
    const auto o_kind = out.kind;
    const auto o_rows = out.rows;

    Kokkos::deep_copy(Kokkos::subview(off, std::make_pair(0, buckets + 1)), 0);
    Kokkos::parallel_for(
        "intact::contact::count_pair_buckets", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k) { Kokkos::atomic_increment(&off(kind(k) * num_rows + rows(k, 0))); });
    int total = 0;
    Kokkos::parallel_scan(
        "intact::contact::scan_pair_buckets", Kokkos::RangePolicy<ExecSpace>(0, buckets + 1),
        KOKKOS_LAMBDA(const int b, int& update, const bool final) {
            const int c = off(b);
            if (final) {
                off(b) = update;
                if (b < buckets) {
                    cur(b) = update;
                }
            }
            update += c;
        },
        total);
    Kokkos::parallel_for(
        "intact::contact::bucket_pairs", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int k) {
            const int slot = Kokkos::atomic_fetch_add(&cur(kind(k) * num_rows + rows(k, 0)), 1);
            b_kind(slot) = kind(k);
            for (int c = 0; c < 4; ++c) {
                b_rows(slot, c) = rows(k, c);
            }
        });
    Kokkos::parallel_for(
        "intact::contact::rank_pairs", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int e) {
            const int b = b_kind(e) * num_rows + b_rows(e, 0);
            int place = off(b);
            for (int f = off(b); f < off(b + 1); ++f) {
                if (tail_less(b_rows, f, e)) {
                    ++place;
                }
            }
            o_kind(place) = b_kind(e);
            for (int c = 0; c < 4; ++c) {
                o_rows(place, c) = b_rows(e, c);
            }
        });
    out.count = n;
}

} // namespace

namespace {

// The box of rows[first .. first + count) at xs, inflated by r on each side, on axis d: as fill_boxes.
KOKKOS_INLINE_FUNCTION void row_box(const ConstSurfaceField& xs,
                                    const int rows[4],
                                    int first,
                                    int count,
                                    int d,
                                    double r,
                                    double& lo,
                                    double& hi) {
    double a = xs(rows[first], d);
    double b = a;
    for (int k = first; k < first + count; ++k) {
        const double x = xs(rows[k], d);
        a = a < x ? a : x;
        b = b > x ? b : x;
    }
    lo = a - r;
    hi = b + r;
}

} // namespace

void select_overlapping(const PairList& pairs, const ConstSurfaceField& xs, double inflation, PairList& out) {
    const double r = 0.5 * inflation;
    select_pairs(
        "intact::contact::select_overlapping", pairs,
        KOKKOS_LAMBDA(const int k) {
            const int kind = pairs.kind(k);
            if (kind == k_point_plane) {
                return true;
            }
            const int rows[4] = {pairs.rows(k, 0), pairs.rows(k, 1), pairs.rows(k, 2), pairs.rows(k, 3)};
            // Point–triangle: {point} against {t0, t1, t2}; edge–edge: {a0, a1} against {b0, b1}.
            const int split = kind == k_point_triangle ? 1 : 2;
            for (int d = 0; d < 3; ++d) {
                double alo = 0.0, ahi = 0.0, blo = 0.0, bhi = 0.0;
                row_box(xs, rows, 0, split, d, r, alo, ahi);
                row_box(xs, rows, split, 4 - split, d, r, blo, bhi);
                const double lo = alo > blo ? alo : blo;
                const double hi = ahi < bhi ? ahi : bhi;
                if (!(lo <= hi)) {
                    return false;
                }
            }
            return true;
        },
        out);
}

CandidateSearch::CandidateSearch(const ContactSurface& surface, double dhat)
    : m_surface(surface), m_hash(broad_phase_cell(surface, dhat)) {}

void CandidateSearch::find(const ConstSurfaceField& xs,
                           const ConstSurfaceField& ps,
                           double inflation,
                           PairList& out) {
    const int nv = m_surface.num_vertices();
    INTACT_REQUIRE(static_cast<int>(xs.extent(0)) == nv &&
                       (ps.extent(0) == 0 || static_cast<int>(ps.extent(0)) == nv),
                   "CandidateSearch::find: fields of " << xs.extent(0) << " and " << ps.extent(0)
                                                       << " rows for " << nv << " surface rows");
    const KnownPrimitives& known = m_surface.known();
    const SurfaceTopology& topology = m_surface.topology();
    const double r = 0.5 * inflation; // two boxes overlap when their primitives come within `inflation`

    // 1. Point–triangle: owned points × known triangles, other known points × triangles with an owned row.
    int count = 0;
    m_found.count = 0;
    vertex_boxes(known.owned_points, xs, ps, r, m_owned_point_boxes);
    triangle_boxes(topology.triangles, known.triangles, xs, ps, r, m_triangle_boxes);
    count = append_pairs(k_point_triangle, m_hash.query_on_device(m_owned_point_boxes, m_triangle_boxes),
                         known.owned_points, known.triangles, topology, m_found, count);
    vertex_boxes(known.other_points, xs, ps, r, m_other_point_boxes);
    triangle_boxes(topology.triangles, known.owned_triangles, xs, ps, r, m_owned_triangle_boxes);
    count =
        append_pairs(k_point_triangle, m_hash.query_on_device(m_other_point_boxes, m_owned_triangle_boxes),
                     known.other_points, known.owned_triangles, topology, m_found, count);

    // 2. Edge–edge: edges with an owned row among themselves (each pair once) and against the other edges.
    edge_boxes(topology.edges, known.owned_edges, xs, ps, r, m_owned_edge_boxes);
    count = append_pairs(k_edge_edge, m_hash.query_self_on_device(m_owned_edge_boxes), known.owned_edges,
                         known.owned_edges, topology, m_found, count);
    edge_boxes(topology.edges, known.other_edges, xs, ps, r, m_other_edge_boxes);
    count = append_pairs(k_edge_edge, m_hash.query_on_device(m_owned_edge_boxes, m_other_edge_boxes),
                         known.owned_edges, known.other_edges, topology, m_found, count);

    // 3. Point–plane, then the deterministic order.
    append_planes(known.owned_points, topology, m_found, count);
    sort_pairs(m_found, nv, m_bucket_offset, m_bucket_cursor, m_bucketed, out);
}

} // namespace intact::contact
