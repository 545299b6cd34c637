#pragma once
/// @file partition_stats.hpp
/// @brief Quality of a partition: balance and the size of the interface between parts.

#include "partition/dual_graph.hpp"

#include <array>
#include <string>
#include <vector>

namespace intact::partition {

struct PartitionStats {
    int num_parts = 1;
    long long num_elements = 0;
    long long num_nodes = 0;
    long long min_elements = 0, max_elements = 0; ///< elements per part
    long long min_nodes = 0, max_nodes = 0;       ///< owned nodes per part
    double element_imbalance = 1.0;               ///< max / mean elements per part
    double node_imbalance = 1.0;                  ///< max / mean owned nodes per part
    long long min_work = 0, max_work = 0;         ///< element_work summed per part
    double work_imbalance = 1.0;                  ///< max / mean work per part
    long long interface_nodes = 0;                ///< nodes whose elements lie in more than one part
    long long edge_cut = 0;                       ///< dual-graph edges (shared faces) between parts
    int empty_parts = 0;                          ///< parts with no element
};

PartitionStats compute_partition_stats(const CsrGraph& graph,
                                       const std::vector<std::array<int, 4>>& tets,
                                       const std::vector<int>& parts,
                                       const std::vector<int>& owners,
                                       int num_parts);

/// Human-readable multi-line summary (printed by rank 0 at start-up).
std::string describe(const PartitionStats& stats);

} // namespace intact::partition
