#pragma once
/// @file contact_matrix.hpp
/// @brief The contact part of the Newton system, assembled on the device from per-pair stencils
/// (PairStencils of the barrier, friction, later AL / BAL terms) by a deterministic per-row sum.
///
/// For every surface row this rank owns (topology.owned) and that some stencil touches ("a slot"):
/// - its gradient rows are added into a NodeField at the row's local node;
/// - its diagonal block (the row's own column) is added into the element BlockMatrix at diagonal(row), so
///   block Jacobi sees it;
/// - every other block (column: any surface row, obstacle and contact-ghost rows included) is kept here,
///   CSR over the slots with columns in surface rows, for `apply` in every PCG iteration.
///
/// Determinism: each stencil entry of an owned row is listed with an integer count and scan (int atomics
/// for the per-row cursors only), then each row sorts its entries by a unique key (list, pair, slot) and
/// (column, entry) with an insertion sort, and every block and gradient row is summed in that order. The
/// result is bit-identical whatever the thread count or the order in which the kernels ran. The host
/// holds only counts. All buffers are kept and grown, never shrunk.

#include "src/contact/pair_list.hpp"
#include "src/contact/pair_stencils.hpp"
#include "src/solver/block_matrix.hpp"

#include <cstdint>
#include <vector>

namespace intact::contact {

class ContactMatrix {
public:
    /// Most stencil lists one assembly takes (barrier, friction and two more).
    static constexpr int k_max_lists = 4;
    using BlockValues = Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace>;

    /// `num_owned`: the owned local nodes, rows [0, num_owned) of NodeFields and of the BlockMatrix.
    explicit ContactMatrix(int num_owned);

    /// Replace the contact system by the one of `lists` (their pairs in list order, then pair order):
    /// gradient rows of owned surface rows added into `gradient` (rows: local nodes); when `matrix` is
    /// given, diagonal blocks added into matrix->values() and the other blocks kept for `apply` (the
    /// lists must then have Hessians). Without `matrix` only the gradient is added (κ initialisation) and
    /// `apply` adds nothing. Device work; the host reads four counts.
    void assemble(const std::vector<const PairStencils*>& lists,
                  const SurfaceTopology& topology,
                  const NodeField& gradient,
                  solver::BlockMatrix* matrix);

    /// y(row) += mask(row) Σ_blocks B · p(col) over the kept blocks of every slot; p has one row per
    /// surface row (the caller puts the PCG direction in body rows and zeros, or the obstacles' motion, in
    /// obstacle rows). One kernel over the slots, no host sync.
    void apply(const ConstSurfaceField& p,
               const NodeField& y,
               const Kokkos::View<const double*, MemSpace>& mask) const;

    int num_slots() const { return m_num_slots; }
    int num_blocks() const { return m_num_blocks; }
    /// Per slot: its local row; its blocks are [block_offsets(s), block_offsets(s + 1)).
    Kokkos::View<const int*, MemSpace> slot_rows() const { return m_slot_row; }
    Kokkos::View<const int*, MemSpace> block_offsets() const { return m_block_offsets; }
    /// Per kept block: its column (surface row) and value.
    Kokkos::View<const int*, MemSpace> block_cols() const { return m_block_col; }
    BlockValues block_values() const { return m_block_values; }

    /// Steps of `assemble`, public only because CUDA lambdas must live in public member functions.
    struct Lists {
        PairStencils::Rows rows[k_max_lists];
        PairStencils::Counts count[k_max_lists];
        PairStencils::Gradients gradient[k_max_lists];
        PairStencils::Hessians hessian[k_max_lists];
        int size[k_max_lists] = {0, 0, 0, 0};
        int num = 0;
    };
    void count_entries(const Lists& lists, const SurfaceTopology& topology);
    void number_slots();
    void fill_touches(const Lists& lists, const SurfaceTopology& topology);
    void sort_rows(const Lists& lists, bool with_blocks);
    void sum_rows(const Lists& lists,
                  const NodeField& gradient,
                  const solver::BlockMatrix::BlockValues& values,
                  const Kokkos::View<const int*, MemSpace>& diagonal,
                  bool with_blocks);

private:
    int m_num_owned;
    int m_num_slots = 0;
    int m_num_touches = 0;
    int m_num_entries = 0;
    int m_num_blocks = 0;
    // Per owned row: touches (pair stencil slots on the row) and off-diagonal entries, the slot, a cursor.
    Kokkos::View<int*, MemSpace> m_touch_count, m_entry_count, m_slot_of_row, m_cursor;
    // Per slot (capacity num_owned + 1): row, offsets of touches, entries and blocks.
    Kokkos::View<int*, MemSpace> m_slot_row, m_touch_offsets, m_entry_offsets, m_block_offsets;
    // Touch: ((list · 2³¹ + pair) · 4 + a); entry: (column · 2³² + touch · 4 + b). Grown as needed.
    Kokkos::View<std::int64_t*, MemSpace> m_touches, m_entries;
    Kokkos::View<int*, MemSpace> m_block_col;
    BlockValues m_block_values;
};

} // namespace intact::contact
