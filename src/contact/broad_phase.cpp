#include "src/contact/broad_phase.hpp"

#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace intact::contact {

namespace {

using BoxView = Kokkos::View<const double* [3], MemSpace>;

// Cell coordinates are clamped here so that far-away (or huge) coordinates cannot overflow the integer
// conversion; such boxes end up covering more than the cap of cells and are handled without the hash.
constexpr double k_cell_coordinate_limit = 1099511627776.0; // 2^40

KOKKOS_INLINE_FUNCTION std::int64_t cell_of(double x, double inv_cell) {
    double c = ::floor(x * inv_cell);
    c = c < -k_cell_coordinate_limit ? -k_cell_coordinate_limit : c;
    c = c > k_cell_coordinate_limit ? k_cell_coordinate_limit : c;
    return static_cast<std::int64_t>(c);
}

// Cells [c0, c1] (inclusive, per axis) covered by box `i`, and their number saturated at cap + 1
// (0 for an empty box).
KOKKOS_INLINE_FUNCTION std::int64_t cell_range(const BoxView& lo,
                                               const BoxView& hi,
                                               int i,
                                               double inv_cell,
                                               std::int64_t cap,
                                               std::int64_t c0[3],
                                               std::int64_t c1[3]) {
    std::int64_t count = 1;
    for (int d = 0; d < 3; ++d) {
        if (!(lo(i, d) <= hi(i, d))) {
            return 0;
        }
        c0[d] = cell_of(lo(i, d), inv_cell);
        c1[d] = cell_of(hi(i, d), inv_cell);
        const std::int64_t span = c1[d] - c0[d] + 1;
        if (span > cap) {
            return cap + 1;
        }
        count *= span; // count <= cap and span <= cap < 2^20: no overflow
        if (count > cap) {
            return cap + 1;
        }
    }
    return count;
}

// 21 bits per axis. Coordinates wrap every 2^21 cells; a hashed box spans fewer (cap < 2^20), so it never
// holds two cells with the same packed key, and the exact tests below ignore wrapped neighbours.
KOKKOS_INLINE_FUNCTION std::uint64_t pack_cell(std::int64_t x, std::int64_t y, std::int64_t z) {
    const std::uint64_t mask = 0x1FFFFF;
    return ((static_cast<std::uint64_t>(x) & mask) << 42) | ((static_cast<std::uint64_t>(y) & mask) << 21) |
           (static_cast<std::uint64_t>(z) & mask);
}

// Bucket of a cell: linear in z, so that the cells a box visits (z innermost) lie in neighbouring buckets
// and their entries in neighbouring memory; the large odd factors spread x and y over the table.
KOKKOS_INLINE_FUNCTION std::uint64_t
bucket_of(std::int64_t x, std::int64_t y, std::int64_t z, std::uint64_t mask) {
    return (static_cast<std::uint64_t>(z) + static_cast<std::uint64_t>(y) * 0x9E3779B97F4A7C15ULL +
            static_cast<std::uint64_t>(x) * 0xC2B2AE3D27D4EB4FULL) &
           mask;
}

KOKKOS_INLINE_FUNCTION bool
boxes_overlap(const BoxView& alo, const BoxView& ahi, int i, const BoxView& blo, const BoxView& bhi, int j) {
    // The intersection is not empty (which also rules out an empty box, lo > hi).
    for (int d = 0; d < 3; ++d) {
        const double lo = alo(i, d) > blo(j, d) ? alo(i, d) : blo(j, d);
        const double hi = ahi(i, d) < bhi(j, d) ? ahi(i, d) : bhi(j, d);
        if (!(lo <= hi)) {
            return false;
        }
    }
    return true;
}

// In-place exclusive scan of view[0, n); view[n] must be 0 on entry and holds the total on return.
std::int64_t exclusive_scan(const Kokkos::View<int*, MemSpace>& view, int n, const char* label) {
    std::int64_t total = 0;
    Kokkos::parallel_scan(
        label, Kokkos::RangePolicy<ExecSpace>(0, n + 1),
        KOKKOS_LAMBDA(int k, std::int64_t& update, bool final) {
            const int c = view(k);
            if (final) {
                view(k) = static_cast<int>(update);
            }
            update += c;
        },
        total);
    INTACT_REQUIRE(total <= INT_MAX, "broad phase: " << total << " entries overflow the int index");
    return total;
}

// Vertex k of primitive p.
struct AllVertices {
    KOKKOS_INLINE_FUNCTION int operator()(int p, int) const { return p; }
};
template <int K> struct Rows {
    Kokkos::View<const int* [K], MemSpace> ids;
    KOKKOS_INLINE_FUNCTION int operator()(int p, int k) const { return ids(p, k); }
};
// Vertex ids(p) (a subset of the vertices).
struct SomeVertices {
    Kokkos::View<const int*, MemSpace> ids;
    KOKKOS_INLINE_FUNCTION int operator()(int p, int) const { return ids(p); }
};
// Vertex k of primitive ids(p) (a subset of the primitives).
template <int K> struct SomeRows {
    Kokkos::View<const int* [K], Kokkos::LayoutRight, MemSpace> rows;
    Kokkos::View<const int*, MemSpace> ids;
    KOKKOS_INLINE_FUNCTION int operator()(int p, int k) const { return rows(ids(p), k); }
};

template <int K, class Vertices>
void fill_boxes(int n,
                Vertices vertices,
                const ConstPointField& x,
                const ConstPointField& step,
                double r,
                BoxList& boxes) {
    grow(boxes.lo, n, "intact::contact::box_lo");
    grow(boxes.hi, n, "intact::contact::box_hi");
    boxes.count = n;
    const bool swept = step.extent(0) > 0;
    INTACT_REQUIRE(!swept || step.extent(0) == x.extent(0),
                   "broad phase: " << step.extent(0) << " steps for " << x.extent(0) << " positions");
    const auto lo = boxes.lo;
    const auto hi = boxes.hi;
    Kokkos::parallel_for(
        "intact::contact::fill_boxes", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(int p) {
            for (int d = 0; d < 3; ++d) {
                double a = x(vertices(p, 0), d);
                double b = a;
                for (int k = 0; k < K; ++k) {
                    const int v = vertices(p, k);
                    const double x0 = x(v, d);
                    const double x1 = swept ? x0 + step(v, d) : x0;
                    a = a < x0 ? a : x0;
                    a = a < x1 ? a : x1;
                    b = b > x0 ? b : x0;
                    b = b > x1 ? b : x1;
                }
                lo(p, d) = a - r;
                hi(p, d) = b + r;
            }
        });
}

// One thread per query box: the pairs it reports, counted (Fill = false) or written at its offset.
struct PairSearch {
    BoxView alo, ahi, blo, bhi;
    Kokkos::View<const int*, MemSpace> bucket_offset;
    Kokkos::View<const detail::HashEntry*, MemSpace> entries;
    Kokkos::View<const int*, MemSpace> big;
    Kokkos::View<int*, MemSpace> pair_offset;
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> pairs;
    std::uint64_t bucket_mask;
    int num_b;
    int num_big;
    double inv_cell;
    std::int64_t cap;
    bool self;

    template <bool Fill> KOKKOS_INLINE_FUNCTION void emit(int i, int j, int base, int& n) const {
        if (Fill) {
            pairs(base + n, 0) = i;
            pairs(base + n, 1) = j;
        }
        ++n;
    }

    template <bool Fill> KOKKOS_INLINE_FUNCTION int search(int i) const {
        const int base = Fill ? pair_offset(i) : 0;
        int n = 0;
        std::int64_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
        const std::int64_t cells = cell_range(alo, ahi, i, inv_cell, cap, c0, c1);
        if (cells == 0) {
            return 0;
        }
        if (cells > cap) { // a big query box: every box of b
            for (int j = self ? i + 1 : 0; j < num_b; ++j) {
                if (boxes_overlap(alo, ahi, i, blo, bhi, j)) {
                    emit<Fill>(i, j, base, n);
                }
            }
            return n;
        }
        for (int k = 0; k < num_big; ++k) {
            const int j = big(k);
            if ((!self || i < j) && boxes_overlap(alo, ahi, i, blo, bhi, j)) {
                emit<Fill>(i, j, base, n);
            }
        }
        for (std::int64_t x = c0[0]; x <= c1[0]; ++x) {
            for (std::int64_t y = c0[1]; y <= c1[1]; ++y) {
                for (std::int64_t z = c0[2]; z <= c1[2]; ++z) {
                    const std::uint64_t key = pack_cell(x, y, z);
                    const std::uint64_t bucket = bucket_of(x, y, z, bucket_mask);
                    const int end = bucket_offset(bucket + 1);
                    for (int e = bucket_offset(bucket); e < end; ++e) {
                        const detail::HashEntry entry = entries(e);
                        const int j = entry.box;
                        if (entry.cell != key || (self && j <= i) ||
                            !boxes_overlap(alo, ahi, i, blo, bhi, j)) {
                            continue;
                        }
                        // Report in the cell of the intersection's lower corner only (both boxes hold it).
                        const double cx = alo(i, 0) > blo(j, 0) ? alo(i, 0) : blo(j, 0);
                        const double cy = alo(i, 1) > blo(j, 1) ? alo(i, 1) : blo(j, 1);
                        const double cz = alo(i, 2) > blo(j, 2) ? alo(i, 2) : blo(j, 2);
                        if (cell_of(cx, inv_cell) == x && cell_of(cy, inv_cell) == y &&
                            cell_of(cz, inv_cell) == z) {
                            emit<Fill>(i, j, base, n);
                        }
                    }
                }
            }
        }
        return n;
    }
};

void build_table(const BoxList& b, double cell, std::int64_t cap, detail::HashTable& t) {
    const int nb = b.size();
    const BoxView lo = b.lo;
    const BoxView hi = b.hi;
    const double inv_cell = 1.0 / cell;

    // 1. Entries per box: the big boxes (listed apart, in order) and the number of hashed entries.
    grow(t.big, static_cast<std::size_t>(nb) + 1, "intact::contact::big_boxes");
    const auto big = t.big;
    int num_big = 0;
    Kokkos::parallel_scan(
        "intact::contact::list_big_boxes", Kokkos::RangePolicy<ExecSpace>(0, nb),
        KOKKOS_LAMBDA(int j, int& update, bool final) {
            std::int64_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
            if (cell_range(lo, hi, j, inv_cell, cap, c0, c1) > cap) {
                if (final) {
                    big(update) = j;
                }
                ++update;
            }
        },
        num_big);
    t.num_big = num_big;
    std::int64_t num_entries = 0;
    Kokkos::parallel_reduce(
        "intact::contact::count_entries", Kokkos::RangePolicy<ExecSpace>(0, nb),
        KOKKOS_LAMBDA(int j, std::int64_t& sum) {
            std::int64_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
            const std::int64_t cells = cell_range(lo, hi, j, inv_cell, cap, c0, c1);
            sum += cells > cap ? 0 : cells;
        },
        num_entries);
    INTACT_REQUIRE(num_entries <= INT_MAX, "broad phase: " << num_entries << " hash entries overflow int");

    // 2. Buckets: a power of two at least the number of entries (load factor <= 1).
    int buckets = 1;
    while (buckets < num_entries) {
        buckets *= 2;
    }
    t.num_buckets = buckets;
    grow(t.bucket_offset, static_cast<std::size_t>(buckets) + 1, "intact::contact::bucket_offset");
    grow(t.bucket_cursor, static_cast<std::size_t>(buckets), "intact::contact::bucket_cursor");
    grow(t.entries, static_cast<std::size_t>(num_entries), "intact::contact::hash_entries");
    const auto offset = t.bucket_offset;
    const auto cursor = t.bucket_cursor;
    const auto entries = t.entries;
    const std::uint64_t mask = static_cast<std::uint64_t>(buckets) - 1;
    Kokkos::deep_copy(Kokkos::subview(offset, std::make_pair(0, buckets + 1)), 0);

    // 3. Counting sort by bucket: count, scan, fill at atomically taken slots (the order inside a bucket
    // may vary between runs; the pairs are sorted at the end, so the result does not).
    Kokkos::parallel_for(
        "intact::contact::count_bucket_entries", Kokkos::RangePolicy<ExecSpace>(0, nb), KOKKOS_LAMBDA(int j) {
            std::int64_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
            if (cell_range(lo, hi, j, inv_cell, cap, c0, c1) > cap) {
                return;
            }
            for (std::int64_t x = c0[0]; x <= c1[0]; ++x) {
                for (std::int64_t y = c0[1]; y <= c1[1]; ++y) {
                    for (std::int64_t z = c0[2]; z <= c1[2]; ++z) {
                        Kokkos::atomic_increment(&offset(bucket_of(x, y, z, mask)));
                    }
                }
            }
        });
    exclusive_scan(offset, buckets, "intact::contact::scan_buckets");
    Kokkos::deep_copy(Kokkos::subview(cursor, std::make_pair(0, buckets)),
                      Kokkos::subview(offset, std::make_pair(0, buckets)));
    Kokkos::parallel_for(
        "intact::contact::fill_bucket_entries", Kokkos::RangePolicy<ExecSpace>(0, nb), KOKKOS_LAMBDA(int j) {
            std::int64_t c0[3] = {0, 0, 0}, c1[3] = {0, 0, 0};
            if (cell_range(lo, hi, j, inv_cell, cap, c0, c1) > cap) {
                return;
            }
            for (std::int64_t x = c0[0]; x <= c1[0]; ++x) {
                for (std::int64_t y = c0[1]; y <= c1[1]; ++y) {
                    for (std::int64_t z = c0[2]; z <= c1[2]; ++z) {
                        const int slot = Kokkos::atomic_fetch_add(&cursor(bucket_of(x, y, z, mask)), 1);
                        entries(slot).cell = pack_cell(x, y, z);
                        entries(slot).box = j;
                    }
                }
            }
        });
}

struct CountPairs : PairSearch {
    KOKKOS_INLINE_FUNCTION void operator()(int i) const { pair_offset(i) = search<false>(i); }
};
struct FillPairs : PairSearch {
    KOKKOS_INLINE_FUNCTION void operator()(int i) const { search<true>(i); }
};

} // namespace

void vertex_boxes(const ConstPointField& x, const ConstPointField& step, double r, BoxList& boxes) {
    fill_boxes<1>(static_cast<int>(x.extent(0)), AllVertices{}, x, step, r, boxes);
}

void edge_boxes(const Kokkos::View<const int* [2], MemSpace>& edges,
                const ConstPointField& x,
                const ConstPointField& step,
                double r,
                BoxList& boxes) {
    fill_boxes<2>(static_cast<int>(edges.extent(0)), Rows<2>{edges}, x, step, r, boxes);
}

void triangle_boxes(const Kokkos::View<const int* [3], MemSpace>& triangles,
                    const ConstPointField& x,
                    const ConstPointField& step,
                    double r,
                    BoxList& boxes) {
    fill_boxes<3>(static_cast<int>(triangles.extent(0)), Rows<3>{triangles}, x, step, r, boxes);
}

void vertex_boxes(const Kokkos::View<const int*, MemSpace>& ids,
                  const ConstPointField& x,
                  const ConstPointField& step,
                  double r,
                  BoxList& boxes) {
    fill_boxes<1>(static_cast<int>(ids.extent(0)), SomeVertices{ids}, x, step, r, boxes);
}

void edge_boxes(const Kokkos::View<const int* [2], Kokkos::LayoutRight, MemSpace>& edges,
                const Kokkos::View<const int*, MemSpace>& ids,
                const ConstPointField& x,
                const ConstPointField& step,
                double r,
                BoxList& boxes) {
    fill_boxes<2>(static_cast<int>(ids.extent(0)), SomeRows<2>{edges, ids}, x, step, r, boxes);
}

void triangle_boxes(const Kokkos::View<const int* [3], Kokkos::LayoutRight, MemSpace>& triangles,
                    const Kokkos::View<const int*, MemSpace>& ids,
                    const ConstPointField& x,
                    const ConstPointField& step,
                    double r,
                    BoxList& boxes) {
    fill_boxes<3>(static_cast<int>(ids.extent(0)), SomeRows<3>{triangles, ids}, x, step, r, boxes);
}

SpatialHash::SpatialHash(double cell, std::int64_t max_cells_per_box)
    : m_cell(cell), m_max_cells(max_cells_per_box) {
    INTACT_REQUIRE(cell > 0.0 && std::isfinite(cell),
                   "broad phase: cell size " << cell << " is not positive");
    INTACT_REQUIRE(max_cells_per_box >= 1 && max_cells_per_box < (std::int64_t{1} << 20),
                   "broad phase: max_cells_per_box " << max_cells_per_box << " is outside [1, 2^20)");
}

const std::vector<std::array<int, 2>>& SpatialHash::query(const BoxList& a, const BoxList& b) {
    return run(a, b, false);
}

const std::vector<std::array<int, 2>>& SpatialHash::query_self(const BoxList& a) {
    return run(a, a, true);
}

DevicePairs SpatialHash::query_on_device(const BoxList& a, const BoxList& b) {
    const int total = run_on_device(a, b, false);
    return {m_pairs, total};
}

DevicePairs SpatialHash::query_self_on_device(const BoxList& a) {
    const int total = run_on_device(a, a, true);
    return {m_pairs, total};
}

int SpatialHash::run_on_device(const BoxList& a, const BoxList& b, bool self) {
    build_table(b, m_cell, m_max_cells, m_table);
    const int na = a.size();

    // 1. Pairs per query box, scanned into offsets; 2. the pairs written at those offsets.
    PairSearch search;
    search.alo = a.lo;
    search.ahi = a.hi;
    search.blo = b.lo;
    search.bhi = b.hi;
    search.bucket_offset = m_table.bucket_offset;
    search.entries = m_table.entries;
    search.big = m_table.big;
    grow(m_pair_offset, static_cast<std::size_t>(na) + 1, "intact::contact::pair_offset");
    search.pair_offset = m_pair_offset;
    search.bucket_mask = static_cast<std::uint64_t>(m_table.num_buckets) - 1;
    search.num_b = b.size();
    search.num_big = m_table.num_big;
    search.inv_cell = 1.0 / m_cell;
    search.cap = m_max_cells;
    search.self = self;
    Kokkos::deep_copy(Kokkos::subview(m_pair_offset, na), 0);
    Kokkos::parallel_for("intact::contact::count_pairs", Kokkos::RangePolicy<ExecSpace>(0, na),
                         CountPairs{search});
    const int total = static_cast<int>(exclusive_scan(m_pair_offset, na, "intact::contact::scan_pairs"));
    grow(m_pairs, static_cast<std::size_t>(total), "intact::contact::pairs");
    search.pairs = m_pairs;
    Kokkos::parallel_for("intact::contact::fill_pairs", Kokkos::RangePolicy<ExecSpace>(0, na),
                         FillPairs{search});
    return total;
}

const std::vector<std::array<int, 2>>& SpatialHash::run(const BoxList& a, const BoxList& b, bool self) {
    const int total = run_on_device(a, b, self);
    const int na = a.size();

    // 3. To the host, straight into the returned vector; each query box's run sorted by the second index
    // (the runs themselves are in order of the first).
    static_assert(sizeof(std::array<int, 2>) == 2 * sizeof(int), "pairs are copied as int[2] rows");
    m_host_pairs.resize(static_cast<std::size_t>(total));
    std::vector<int> offsets(static_cast<std::size_t>(na) + 1);
    if (total > 0) {
        Kokkos::deep_copy(Kokkos::View<int* [2], Kokkos::LayoutRight, HostSpace, Kokkos::MemoryUnmanaged>(
                              reinterpret_cast<int*>(m_host_pairs.data()), static_cast<std::size_t>(total)),
                          Kokkos::subview(m_pairs, std::make_pair(0, total), Kokkos::ALL));
    }
    Kokkos::deep_copy(Kokkos::View<int*, HostSpace, Kokkos::MemoryUnmanaged>(offsets.data(), offsets.size()),
                      Kokkos::subview(m_pair_offset, std::make_pair(0, na + 1)));
    auto& pairs = m_host_pairs;
    Kokkos::parallel_for("intact::contact::sort_pairs",
                         Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, na), [&](int i) {
                             std::sort(pairs.begin() + offsets[static_cast<std::size_t>(i)],
                                       pairs.begin() + offsets[static_cast<std::size_t>(i) + 1]);
                         });
    return m_host_pairs;
}

} // namespace intact::contact
