#pragma once
/// @file broad_phase.hpp
/// @brief Contact broad phase on the device: axis-aligned boxes of surface primitives and a spatial hash
/// that returns every pair of overlapping boxes, for proximity (boxes inflated by d̂/2) and for CCD (boxes
/// swept over a step). Not collective: each rank queries its own boxes.

#include "src/core/types.hpp"

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace intact::contact {

/// Closed axis-aligned boxes, one per primitive (row i = primitive i), on the device. Units: metres.
/// A box with lo > hi (or a NaN) on some axis is empty and overlaps nothing. Coordinates beyond 2^40 cells
/// from the origin are clamped for hashing only (the overlap test stays exact).
/// The builders below keep the Views' capacity and set `count` to the rows in use; a list made by hand
/// leaves `count` at −1 and uses every row.
struct BoxList {
    Kokkos::View<double*[3], MemSpace> lo, hi;
    int count = -1; ///< rows in use; −1: all rows of `lo` and `hi`

    int size() const { return count >= 0 ? count : static_cast<int>(lo.extent(0)); }
};

/// Positions (or steps) per vertex, nv × 3, on the device; NodeField converts to it.
using ConstPointField = Kokkos::View<const double* [3], Kokkos::LayoutRight, MemSpace>;

/// Boxes of all vertices: [min(x, x + step), max(x, x + step)] ± r. `step` may be an empty View (no
/// sweep). Reallocates `boxes` only when it has too few rows (capacity kept). Runs on ExecSpace.
void vertex_boxes(const ConstPointField& x, const ConstPointField& step, double r, BoxList& boxes);

/// Boxes of the vertices `ids` (row k: vertex ids(k) of `x`), swept and inflated as vertex_boxes.
void vertex_boxes(const Kokkos::View<const int*, MemSpace>& ids,
                  const ConstPointField& x,
                  const ConstPointField& step,
                  double r,
                  BoxList& boxes);

/// Boxes of edges (ne × 2 vertex indices into `x`), swept over `step` when it is not empty, ± r.
void edge_boxes(const Kokkos::View<const int* [2], MemSpace>& edges,
                const ConstPointField& x,
                const ConstPointField& step,
                double r,
                BoxList& boxes);

/// Boxes of triangles (nt × 3 vertex indices into `x`), swept over `step` when it is not empty, ± r.
void triangle_boxes(const Kokkos::View<const int* [3], MemSpace>& triangles,
                    const ConstPointField& x,
                    const ConstPointField& step,
                    double r,
                    BoxList& boxes);

/// Boxes of the edges `ids` (row k: edge ids(k) of `edges`, LayoutRight as in SurfaceTopology), swept over
/// `step` when it is not empty, ± r.
void edge_boxes(const Kokkos::View<const int* [2], Kokkos::LayoutRight, MemSpace>& edges,
                const Kokkos::View<const int*, MemSpace>& ids,
                const ConstPointField& x,
                const ConstPointField& step,
                double r,
                BoxList& boxes);

/// Boxes of the triangles `ids` (row k: triangle ids(k) of `triangles`), swept and inflated as above.
void triangle_boxes(const Kokkos::View<const int* [3], Kokkos::LayoutRight, MemSpace>& triangles,
                    const Kokkos::View<const int*, MemSpace>& ids,
                    const ConstPointField& x,
                    const ConstPointField& step,
                    double r,
                    BoxList& boxes);

/// Overlapping pairs on the device: rows [0, count) of `pairs` hold (i, j). The View belongs to the
/// SpatialHash and is overwritten by its next query.
struct DevicePairs {
    Kokkos::View<const int* [2], Kokkos::LayoutRight, MemSpace> pairs;
    int count = 0;
};

namespace detail {
/// One hashed box in one cell: the packed cell coordinates and the box's row.
struct HashEntry {
    std::uint64_t cell;
    int box;
};

/// SpatialHash's table over the second list: bucket offsets (buckets + 1) and entries (packed cell, box)
/// in bucket order; rows covering more than the cap of cells are listed in `big` instead.
struct HashTable {
    Kokkos::View<int*, MemSpace> bucket_offset, bucket_cursor;
    Kokkos::View<HashEntry*, MemSpace> entries;
    Kokkos::View<int*, MemSpace> big;
    int num_buckets = 0;
    int num_big = 0;
};
} // namespace detail

/// Uniform spatial hash over boxes: every pair of overlapping closed boxes (touching counts), found on
/// ExecSpace and returned on the host sorted lexicographically, without duplicates.
///
/// How: each box of the second list is entered once per grid cell it covers, into a bucket table
/// (counting sort by hashed cell: count, scan, fill). Each box of the first list then visits its cells,
/// tests the exact overlap with the entries of the same cell, and reports a pair only in the cell that
/// holds the lower corner of the two boxes' intersection, so a pair is found once without a set.
///
/// `cell` (m) should be about the size of a typical box (e.g. the mean edge length, at least d̂): much
/// smaller and every box covers many cells, much larger and each cell holds many boxes.
/// A box covering more than `max_cells_per_box` cells is not hashed: it is tested against every box of
/// the other list instead (O(n) per such box, by one thread), so a few huge boxes (a long swept step, a
/// large obstacle triangle) stay cheap and memory stays bounded by `max_cells_per_box` entries per box;
/// many of them (a cell far too small) make the query O(n²).
///
/// Allocations are kept and grown between calls; the returned reference stays valid until the next query.
/// `query_on_device` / `query_self_on_device` leave the pairs on the device: the same set, grouped by the
/// first index in ascending order, but in no fixed order within a group (the table is filled with
/// atomics); callers that need an order sort them (CandidateSearch does).
class SpatialHash {
public:
    /// Default cap on the cells a hashed box may cover (8 × 8 × 8).
    static constexpr std::int64_t k_default_max_cells_per_box = 512;

    /// `cell` > 0 (m); 1 <= `max_cells_per_box` < 2^20. Allocates nothing until the first query.
    explicit SpatialHash(double cell, std::int64_t max_cells_per_box = k_default_max_cells_per_box);

    /// Pairs (i, j), i a row of `a`, j a row of `b`, whose boxes overlap. Blocks until done.
    const std::vector<std::array<int, 2>>& query(const BoxList& a, const BoxList& b);

    /// Pairs (i, j), i < j, of rows of `a` whose boxes overlap. Blocks until done.
    const std::vector<std::array<int, 2>>& query_self(const BoxList& a);

    /// As `query`, with the pairs left on the device (only the count reaches the host).
    DevicePairs query_on_device(const BoxList& a, const BoxList& b);
    /// As `query_self`, with the pairs left on the device.
    DevicePairs query_self_on_device(const BoxList& a);

    double cell() const { return m_cell; }
    std::int64_t max_cells_per_box() const { return m_max_cells; }

private:
    const std::vector<std::array<int, 2>>& run(const BoxList& a, const BoxList& b, bool self);
    int run_on_device(const BoxList& a, const BoxList& b, bool self);

    double m_cell;
    std::int64_t m_max_cells;
    detail::HashTable m_table;
    // Per query box: pair count, then its offset into the pair list.
    Kokkos::View<int*, MemSpace> m_pair_offset;
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> m_pairs;
    std::vector<std::array<int, 2>> m_host_pairs;
};

} // namespace intact::contact
