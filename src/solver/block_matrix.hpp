#pragma once
/// @file block_matrix.hpp
/// @brief Distributed 3×3 block-sparse matrix: rows of owned nodes, columns over owned + ghost nodes.
///
/// The pattern couples every owned node with every local node it shares an element with. It is built
/// once per mesh; the values are refilled at every Newton iteration. Assembly is a deterministic
/// per-block gather over element contributions (no atomics): `block_sources` lists, for every block,
/// which (element, corner a, corner b) entries of the per-element Hessians add into it, in a fixed order.
/// Contact (a later issue) adds blocks in a separate, per-iteration part so this pattern stays fixed.

#include "src/core/types.hpp"

#include <array>
#include <vector>

namespace intact::solver {

class BlockMatrix {
public:
    using BlockValues = Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace>;

    /// When the values' storage (72 bytes per block) is made: at construction, or by the first
    /// `allocate_values` (the incremental potential's first assembly), so that a potential whose matrix
    /// is never assembled (under stencil descent) spends no memory on it.
    enum class ValueStorage { now, deferred };

    /// Host, then copied to the device. `tets`: local elements (local node indices); rows are the
    /// first `num_owned` local nodes. `stencils`: the codimensional bodies' stencils (CodimTerm), corners
    /// −1 where unused; they are elements tets.size() + s of the source codes below.
    BlockMatrix(int num_owned,
                int num_local,
                const std::vector<std::array<int, 4>>& tets,
                ValueStorage storage = ValueStorage::now,
                const std::vector<std::array<int, 4>>& stencils = {});
    /// Make the values' storage if it is not there yet (zeros).
    void allocate_values();

    int num_rows() const { return m_num_rows; }
    int num_cols() const { return m_num_cols; }
    int num_blocks() const { return static_cast<int>(m_cols.extent(0)); }
    int num_tets() const { return m_num_tets; }

    /// Row r's blocks are [row_offsets(r), row_offsets(r + 1)); their columns are cols(k).
    Kokkos::View<const int*, MemSpace> row_offsets() const { return m_row_offsets; }
    Kokkos::View<const int*, MemSpace> cols() const { return m_cols; }
    /// Position of the diagonal block of each row.
    Kokkos::View<const int*, MemSpace> diagonal() const { return m_diagonal; }
    /// Empty while a deferred storage has not been made.
    BlockValues values() const { return m_values; }

    /// Block k sums the element-Hessian blocks sources(j) for j in [source_offsets(k), source_offsets(k+1)),
    /// each encoded as element * 16 + a * 4 + b (row corner a, column corner b); elements from
    /// num_tets() on are codimensional stencils (element − num_tets()).
    Kokkos::View<const int*, MemSpace> source_offsets() const { return m_source_offsets; }
    Kokkos::View<const int*, MemSpace> sources() const { return m_sources; }

    /// Gradient gather: owned node r sums element-gradient entries node_sources(j) for j in
    /// [node_source_offsets(r), node_source_offsets(r+1)), each encoded as element * 4 + a.
    Kokkos::View<const int*, MemSpace> node_source_offsets() const { return m_node_source_offsets; }
    Kokkos::View<const int*, MemSpace> node_sources() const { return m_node_sources; }

private:
    int m_num_rows = 0;
    int m_num_cols = 0;
    int m_num_tets = 0;
    Kokkos::View<int*, MemSpace> m_row_offsets, m_cols, m_diagonal;
    Kokkos::View<int*, MemSpace> m_source_offsets, m_sources;
    Kokkos::View<int*, MemSpace> m_node_source_offsets, m_node_sources;
    BlockValues m_values;
};

} // namespace intact::solver
