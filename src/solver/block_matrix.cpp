#include "src/solver/block_matrix.hpp"

#include <algorithm>

namespace intact::solver {

namespace {

Kokkos::View<int*, MemSpace> to_device(const std::string& label, const std::vector<int>& values) {
    Kokkos::View<int*, MemSpace> view(label, values.size());
    auto host = Kokkos::create_mirror_view(view);
    std::copy(values.begin(), values.end(), host.data());
    Kokkos::deep_copy(view, host);
    return view;
}

} // namespace

BlockMatrix::BlockMatrix(int num_owned,
                         int num_local,
                         const std::vector<std::array<int, 4>>& tets,
                         ValueStorage storage,
                         const std::vector<std::array<int, 4>>& stencils)
    : m_num_rows(num_owned), m_num_cols(num_local), m_num_tets(static_cast<int>(tets.size())) {
    // 1. Element entries per owned row, in element order: (column, source code).
    struct Entry {
        int col;
        int source;
    };
    std::vector<std::vector<Entry>> rows(static_cast<std::size_t>(num_owned));
    std::vector<std::vector<int>> node_sources(static_cast<std::size_t>(num_owned));
    const auto add_element = [&](const std::array<int, 4>& nodes, int e) {
        for (int a = 0; a < 4; ++a) {
            const int row = nodes[static_cast<std::size_t>(a)];
            if (row < 0 || row >= num_owned) {
                continue;
            }
            node_sources[static_cast<std::size_t>(row)].push_back(e * 4 + a);
            for (int b = 0; b < 4; ++b) {
                if (nodes[static_cast<std::size_t>(b)] >= 0) {
                    rows[static_cast<std::size_t>(row)].push_back(
                        {nodes[static_cast<std::size_t>(b)], e * 16 + a * 4 + b});
                }
            }
        }
    };
    for (std::size_t e = 0; e < tets.size(); ++e) {
        add_element(tets[e], static_cast<int>(e));
    }
    for (std::size_t s = 0; s < stencils.size(); ++s) {
        add_element(stencils[s], m_num_tets + static_cast<int>(s));
    }

    // 2. Sort each row by column (stable keeps element order within a block), merge into blocks.
    std::vector<int> row_offsets{0}, cols, diagonal, source_offsets{0}, sources;
    for (int r = 0; r < num_owned; ++r) {
        auto& entries = rows[static_cast<std::size_t>(r)];
        std::stable_sort(entries.begin(), entries.end(),
                         [](const Entry& x, const Entry& y) { return x.col < y.col; });
        int diag = -1;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i == 0 || entries[i].col != entries[i - 1].col) {
                if (i > 0) {
                    source_offsets.push_back(static_cast<int>(sources.size()));
                }
                if (entries[i].col == r) {
                    diag = static_cast<int>(cols.size());
                }
                cols.push_back(entries[i].col);
            }
            sources.push_back(entries[i].source);
        }
        if (!entries.empty()) {
            source_offsets.push_back(static_cast<int>(sources.size()));
        }
        diagonal.push_back(diag);
        row_offsets.push_back(static_cast<int>(cols.size()));
    }
    std::vector<int> node_offsets{0}, node_list;
    for (const auto& list : node_sources) {
        node_list.insert(node_list.end(), list.begin(), list.end());
        node_offsets.push_back(static_cast<int>(node_list.size()));
    }

    m_row_offsets = to_device("intact::solver::row_offsets", row_offsets);
    m_cols = to_device("intact::solver::cols", cols);
    m_diagonal = to_device("intact::solver::diagonal", diagonal);
    m_source_offsets = to_device("intact::solver::block_source_offsets", source_offsets);
    m_sources = to_device("intact::solver::block_sources", sources);
    m_node_source_offsets = to_device("intact::solver::node_source_offsets", node_offsets);
    m_node_sources = to_device("intact::solver::node_sources", node_list);
    if (storage == ValueStorage::now) {
        allocate_values();
    }
}

void BlockMatrix::allocate_values() {
    if (m_values.extent(0) != m_cols.extent(0)) {
        m_values = BlockValues("intact::solver::block_values", m_cols.extent(0));
    }
}

} // namespace intact::solver
