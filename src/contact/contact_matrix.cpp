#include "src/contact/contact_matrix.hpp"

#include "src/core/error.hpp"
#include "src/core/grow.hpp"

namespace intact::contact {

namespace {

using Codes = Kokkos::View<std::int64_t*, MemSpace>;

constexpr std::int64_t k_pair_bits = 31; // pair index < 2³¹ (an int)

KOKKOS_INLINE_FUNCTION std::int64_t touch_code(int list, int pair, int a) {
    return (((static_cast<std::int64_t>(list) << k_pair_bits) + pair) << 2) | a;
}

KOKKOS_INLINE_FUNCTION void decode_touch(std::int64_t code, int& list, int& pair, int& a) {
    a = static_cast<int>(code & 3);
    pair = static_cast<int>((code >> 2) & ((std::int64_t{1} << k_pair_bits) - 1));
    list = static_cast<int>(code >> (k_pair_bits + 2));
}

// Sort v[begin, end) ascending. Rows hold a few to a few hundred entries, where insertion sort is the
// fastest and needs no scratch memory.
KOKKOS_INLINE_FUNCTION void insertion_sort(const Codes& v, int begin, int end) {
    for (int j = begin + 1; j < end; ++j) {
        const std::int64_t key = v(j);
        int k = j - 1;
        while (k >= begin && v(k) > key) {
            v(k + 1) = v(k);
            --k;
        }
        v(k + 1) = key;
    }
}

} // namespace

namespace detail {

// Exclusive scan of `count(slot_row(s))` (or of count(s) when slot_row is empty) into offsets(0..n];
// returns the total.
int scan_offsets(const char* label,
                 int n,
                 const Kokkos::View<int*, MemSpace>& count,
                 const Kokkos::View<int*, MemSpace>& slot_row,
                 const Kokkos::View<int*, MemSpace>& offsets) {
    int total = 0;
    const bool by_row = slot_row.data() != nullptr;
    Kokkos::parallel_scan(
        label, Kokkos::RangePolicy<ExecSpace>(0, n + 1),
        KOKKOS_LAMBDA(const int s, int& offset, const bool final) {
            if (final) {
                offsets(s) = offset;
            }
            if (s < n) {
                offset += count(by_row ? slot_row(s) : s);
            }
        },
        total);
    return total;
}

} // namespace detail

namespace {} // namespace

ContactMatrix::ContactMatrix(int num_owned)
    : m_num_owned(num_owned), m_touch_count("intact::contact::row_touches", num_owned),
      m_entry_count("intact::contact::row_entries", num_owned),
      m_slot_of_row("intact::contact::slot_of_row", num_owned),
      m_cursor("intact::contact::slot_cursor", num_owned + 1),
      m_slot_row("intact::contact::slot_row", num_owned + 1),
      m_touch_offsets("intact::contact::touch_offsets", num_owned + 1),
      m_entry_offsets("intact::contact::entry_offsets", num_owned + 1),
      m_block_offsets("intact::contact::block_offsets", num_owned + 1) {}

void ContactMatrix::assemble(const std::vector<const PairStencils*>& lists,
                             const SurfaceTopology& topology,
                             const NodeField& gradient,
                             solver::BlockMatrix* matrix) {
    INTACT_REQUIRE(static_cast<int>(lists.size()) <= k_max_lists, "ContactMatrix::assemble takes at most "
                                                                      << k_max_lists << " stencil lists, got "
                                                                      << lists.size());
    const bool with_blocks = matrix != nullptr;
    Lists views;
    views.num = static_cast<int>(lists.size());
    for (int l = 0; l < views.num; ++l) {
        const PairStencils& list = *lists[static_cast<std::size_t>(l)];
        INTACT_REQUIRE(!with_blocks || list.has_hessian || list.size == 0,
                       "ContactMatrix::assemble: stencil list " << l << " has no Hessians");
        views.rows[l] = list.rows;
        views.count[l] = list.count;
        views.gradient[l] = list.gradient;
        views.hessian[l] = list.hessian;
        views.size[l] = list.size;
    }

    // 1. Per owned row: how many stencil slots touch it, and how many off-diagonal entries they bring.
    count_entries(views, topology);
    // 2. Slots for the touched rows; offsets of their touches and entries.
    number_slots();
    INTACT_REQUIRE(m_num_touches < (1 << 30),
                   "ContactMatrix: " << m_num_touches << " row touches (limit 2^30)");
    grow(m_touches, static_cast<std::size_t>(m_num_touches), "intact::contact::touches");
    grow(m_entries, static_cast<std::size_t>(with_blocks ? m_num_entries : 0), "intact::contact::entries");
    // 3. Touches into their rows (any order), 4. then each row sorted by a unique key, entries listed and
    // sorted by (column, touch); the count of distinct columns per slot is left in m_cursor.
    fill_touches(views, topology);
    sort_rows(views, with_blocks);
    m_num_blocks = with_blocks ? detail::scan_offsets("intact::contact::block_offsets", m_num_slots, m_cursor,
                                                      Kokkos::View<int*, MemSpace>(), m_block_offsets)
                               : 0;
    grow(m_block_col, static_cast<std::size_t>(m_num_blocks), "intact::contact::block_cols");
    grow(m_block_values, static_cast<std::size_t>(m_num_blocks), "intact::contact::block_values");
    if (!with_blocks) {
        Kokkos::deep_copy(m_block_offsets, 0);
    }
    // 5. Per slot, in the sorted order: gradient row, diagonal block, kept blocks.
    INTACT_ASSERT(
        !with_blocks || static_cast<int>(matrix->values().extent(0)) == matrix->num_blocks(),
        "ContactMatrix::assemble: the block matrix has no values yet (BlockMatrix::allocate_values)");
    sum_rows(views, gradient, with_blocks ? matrix->values() : solver::BlockMatrix::BlockValues(),
             with_blocks ? matrix->diagonal() : Kokkos::View<const int*, MemSpace>(), with_blocks);
}

void ContactMatrix::count_entries(const Lists& lists, const SurfaceTopology& topology) {
    Kokkos::deep_copy(m_touch_count, 0);
    Kokkos::deep_copy(m_entry_count, 0);
    const auto touch_count = m_touch_count;
    const auto entry_count = m_entry_count;
    const int num_owned = m_num_owned;
    for (int l = 0; l < lists.num; ++l) {
        const auto rows = lists.rows[l];
        const auto count = lists.count[l];
        Kokkos::parallel_for(
            "intact::contact::count_row_entries", Kokkos::RangePolicy<ExecSpace>(0, lists.size[l]),
            KOKKOS_LAMBDA(const int i) {
                const int n = count(i);
                for (int a = 0; a < n; ++a) {
                    const int row = rows(i, a);
                    if (row < 0 || !topology.owned(row)) {
                        continue; // another rank adds this row
                    }
                    const int r = topology.local_of_surface(row);
                    if (r >= 0 && r < num_owned) {
                        Kokkos::atomic_fetch_add(&touch_count(r), 1);
                        Kokkos::atomic_fetch_add(&entry_count(r), n - 1);
                    }
                }
            });
    }
}

void ContactMatrix::number_slots() {
    const auto touch_count = m_touch_count;
    const auto slot_of_row = m_slot_of_row;
    const auto slot_row = m_slot_row;
    int slots = 0;
    Kokkos::parallel_scan(
        "intact::contact::number_slots", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int r, int& offset, const bool final) {
            const bool touched = touch_count(r) > 0;
            if (final) {
                slot_of_row(r) = touched ? offset : -1;
                if (touched) {
                    slot_row(offset) = r;
                }
            }
            offset += touched ? 1 : 0;
        },
        slots);
    m_num_slots = slots;
    m_num_touches = detail::scan_offsets("intact::contact::touch_offsets", m_num_slots, m_touch_count,
                                         m_slot_row, m_touch_offsets);
    m_num_entries = detail::scan_offsets("intact::contact::entry_offsets", m_num_slots, m_entry_count,
                                         m_slot_row, m_entry_offsets);
}

void ContactMatrix::fill_touches(const Lists& lists, const SurfaceTopology& topology) {
    Kokkos::deep_copy(m_cursor, 0);
    const auto cursor = m_cursor;
    const auto slot_of_row = m_slot_of_row;
    const auto offsets = m_touch_offsets;
    const auto touches = m_touches;
    const int num_owned = m_num_owned;
    for (int l = 0; l < lists.num; ++l) {
        const auto rows = lists.rows[l];
        const auto count = lists.count[l];
        Kokkos::parallel_for(
            "intact::contact::fill_touches", Kokkos::RangePolicy<ExecSpace>(0, lists.size[l]),
            KOKKOS_LAMBDA(const int i) {
                for (int a = 0; a < count(i); ++a) {
                    const int row = rows(i, a);
                    if (row < 0 || !topology.owned(row)) {
                        continue;
                    }
                    const int r = topology.local_of_surface(row);
                    if (r >= 0 && r < num_owned) {
                        const int s = slot_of_row(r);
                        const int k = Kokkos::atomic_fetch_add(&cursor(s), 1);
                        touches(offsets(s) + k) = touch_code(l, i, a);
                    }
                }
            });
    }
}

void ContactMatrix::sort_rows(const Lists& lists, bool with_blocks) {
    const auto touch_offsets = m_touch_offsets;
    const auto entry_offsets = m_entry_offsets;
    const auto touches = m_touches;
    const auto entries = m_entries;
    const auto distinct = m_cursor;
    Kokkos::parallel_for(
        "intact::contact::sort_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_slots),
        KOKKOS_LAMBDA(const int s) {
            const int t0 = touch_offsets(s);
            const int t1 = touch_offsets(s + 1);
            insertion_sort(touches, t0, t1);
            if (!with_blocks) {
                distinct(s) = 0;
                return;
            }
            // Off-diagonal entries: (column, touch, b), keyed by column then touch (both unique per row).
            int e = entry_offsets(s);
            for (int t = t0; t < t1; ++t) {
                int l, i, a;
                decode_touch(touches(t), l, i, a);
                const int n = lists.count[l](i);
                for (int b = 0; b < n; ++b) {
                    if (b != a) {
                        entries(e++) = (static_cast<std::int64_t>(lists.rows[l](i, b)) << 32) |
                                       (static_cast<std::int64_t>(t) << 2) | b;
                    }
                }
            }
            const int e0 = entry_offsets(s);
            insertion_sort(entries, e0, e);
            int columns = 0;
            for (int k = e0; k < e; ++k) {
                if (k == e0 || (entries(k) >> 32) != (entries(k - 1) >> 32)) {
                    ++columns;
                }
            }
            distinct(s) = columns;
        });
}

void ContactMatrix::sum_rows(const Lists& lists,
                             const NodeField& gradient,
                             const solver::BlockMatrix::BlockValues& values,
                             const Kokkos::View<const int*, MemSpace>& diagonal,
                             bool with_blocks) {
    const auto slot_row = m_slot_row;
    const auto touch_offsets = m_touch_offsets;
    const auto entry_offsets = m_entry_offsets;
    const auto block_offsets = m_block_offsets;
    const auto touches = m_touches;
    const auto entries = m_entries;
    const auto block_col = m_block_col;
    const auto block_values = m_block_values;
    Kokkos::parallel_for(
        "intact::contact::sum_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_slots),
        KOKKOS_LAMBDA(const int s) {
            const int r = slot_row(s);
            double g[3] = {0.0, 0.0, 0.0};
            double d[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
            for (int t = touch_offsets(s); t < touch_offsets(s + 1); ++t) {
                int l, i, a;
                decode_touch(touches(t), l, i, a);
                for (int p = 0; p < 3; ++p) {
                    g[p] += lists.gradient[l](i, 3 * a + p);
                    if (with_blocks) {
                        for (int q = 0; q < 3; ++q) {
                            d[p][q] += lists.hessian[l](i, 3 * a + p, 3 * a + q);
                        }
                    }
                }
            }
            for (int p = 0; p < 3; ++p) {
                gradient(r, p) += g[p];
            }
            if (!with_blocks) {
                return;
            }
            const int k_diagonal = diagonal(r);
            if (k_diagonal >= 0) {
                for (int p = 0; p < 3; ++p) {
                    for (int q = 0; q < 3; ++q) {
                        values(k_diagonal, p, q) += d[p][q];
                    }
                }
            }
            // Kept blocks: runs of equal column in the sorted entries, each summed in entry order.
            int k = block_offsets(s);
            const int e1 = entry_offsets(s + 1);
            for (int e = entry_offsets(s); e < e1;) {
                const std::int64_t col = entries(e) >> 32;
                double block[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
                for (; e < e1 && (entries(e) >> 32) == col; ++e) {
                    const int t = static_cast<int>((entries(e) & 0xffffffff) >> 2);
                    const int b = static_cast<int>(entries(e) & 3);
                    int l, i, a;
                    decode_touch(touches(t), l, i, a);
                    for (int p = 0; p < 3; ++p) {
                        for (int q = 0; q < 3; ++q) {
                            block[p][q] += lists.hessian[l](i, 3 * a + p, 3 * b + q);
                        }
                    }
                }
                block_col(k) = static_cast<int>(col);
                for (int p = 0; p < 3; ++p) {
                    for (int q = 0; q < 3; ++q) {
                        block_values(k, p, q) = block[p][q];
                    }
                }
                ++k;
            }
        });
}

void ContactMatrix::apply(const ConstSurfaceField& p,
                          const NodeField& y,
                          const Kokkos::View<const double*, MemSpace>& mask) const {
    const auto slot_row = m_slot_row;
    const auto block_offsets = m_block_offsets;
    const auto block_col = m_block_col;
    const auto block_values = m_block_values;
    Kokkos::parallel_for(
        "intact::contact::apply_blocks", Kokkos::RangePolicy<ExecSpace>(0, m_num_slots),
        KOKKOS_LAMBDA(const int s) {
            double sum[3] = {0.0, 0.0, 0.0};
            for (int k = block_offsets(s); k < block_offsets(s + 1); ++k) {
                const int col = block_col(k);
                for (int r = 0; r < 3; ++r) {
                    sum[r] += block_values(k, r, 0) * p(col, 0) + block_values(k, r, 1) * p(col, 1) +
                              block_values(k, r, 2) * p(col, 2);
                }
            }
            const int row = slot_row(s);
            for (int c = 0; c < 3; ++c) {
                y(row, c) += mask(row) * sum[c];
            }
        });
}

} // namespace intact::contact
