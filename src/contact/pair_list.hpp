#pragma once
/// @file pair_list.hpp
/// @brief The device data every contact method shares: surface fields, the replicated surface topology on
/// the device, and lists of contact pairs.
///
/// Surface rows are numbered as in contact_surface.hpp (body boundary rows, then obstacle rows). A
/// SurfaceField holds one row per surface row; only the rows a rank knows (owned, received as contact
/// ghosts, obstacles) are meaningful. Pairs are keyed by kind and surface rows, exactly like the host
/// BarrierPotential::Pair, and a PairList keeps them sorted by (kind, rows) so every sum over pairs is
/// deterministic and the same on every rank that holds a pair.

#include "src/core/grow.hpp"
#include "src/core/types.hpp"

#include <cstdint>

namespace intact::contact {

/// One row of 3 values per surface row, on the device (positions in m, or steps in m).
using SurfaceField = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;
using ConstSurfaceField = Kokkos::View<const double* [3], Kokkos::LayoutRight, MemSpace>;

/// Kinds of pair, as stored in PairList::kind (the order of BarrierPotential::Kind).
enum PairKind : int { k_point_triangle = 0, k_edge_edge = 1, k_point_plane = 2 };

/// Contact pairs on the device, sorted by (kind, rows[0..3]) lexicographically, without duplicates.
/// rows: point–triangle {point, t0, t1, t2}; edge–edge {a0, a1, b0, b1} with the smaller edge index
/// first; point–plane {point, plane index, plane row, 0}. The Views may be longer than `count`
/// (capacity kept between calls); entries past `count` are unspecified.
struct PairList {
    Kokkos::View<int*, MemSpace> kind;
    Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace> rows;
    int count = 0;
};

/// rows := the four surface rows of pair i (unused entries as stored). Device function.
KOKKOS_INLINE_FUNCTION void load_pair_rows(const PairList& pairs, int i, int (&rows)[4]) {
    for (int k = 0; k < 4; ++k) {
        rows[k] = pairs.rows(i, k);
    }
}

/// The replicated surface topology and per-row flags of a ContactSurface, on the device (set up once;
/// `owned` and `local_of_surface` are per rank).
struct SurfaceTopology {
    Kokkos::View<int* [3], Kokkos::LayoutRight, MemSpace> triangles; ///< surface rows per triangle
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> edges;     ///< surface rows per edge
    Kokkos::View<std::int64_t*, MemSpace> gid;                       ///< global id per row
    Kokkos::View<char*, MemSpace> constrained;     ///< 1: prescribed row (fixed, moving, obstacle)
    Kokkos::View<char*, MemSpace> owned;           ///< 1: this rank owns the row
    Kokkos::View<int*, MemSpace> local_of_surface; ///< local node of a body row held here, or −1
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> rest;         ///< rest positions per row (m)
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> plane_normal; ///< unit, to the free side
    Kokkos::View<int*, MemSpace> plane_row;                                ///< the row of each plane
    Kokkos::View<double*, MemSpace> friction; ///< per row: an obstacle's own μ, or −1 (contact.friction)
    /// Per row: the contact offset of its body (m); an empty View when every row's is 0 (pair_offset).
    Kokkos::View<double*, MemSpace> offset;
    int num_body_vertices = 0;
};

/// out := the pairs k < in.count of `in` for which the device predicate keep(k) holds, in their order (so
/// still sorted), compacted by one scan; out keeps its capacity (core/grow.hpp). Device work. Local.
template <class Keep>
void select_pairs(const char* label, const PairList& in, const Keep& keep, PairList& out) {
    grow(out.kind, in.count, "intact::contact::selected_kind");
    grow(out.rows, in.count, "intact::contact::selected_rows");
    const auto kind = in.kind;
    const auto rows = in.rows;
    const auto out_kind = out.kind;
    const auto out_rows = out.rows;
    int count = 0;
    Kokkos::parallel_scan(
        label, Kokkos::RangePolicy<ExecSpace>(0, in.count),
        KOKKOS_LAMBDA(const int k, int& offset, const bool final) {
            if (!keep(k)) {
                return;
            }
            if (final) {
                out_kind(offset) = kind(k);
                for (int c = 0; c < 4; ++c) {
                    out_rows(offset, c) = rows(k, c);
                }
            }
            ++offset;
        },
        count);
    out.count = count;
}

} // namespace intact::contact
