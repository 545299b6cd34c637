#pragma once
/// @file metis_partitioner.hpp
/// @brief Split a graph into parts with METIS (k-way, minimum edge cut).

#include "partition/dual_graph.hpp"

#include <vector>

namespace intact::partition {

/// Part of every vertex, in [0, num_parts), no part empty. Deterministic (fixed METIS seed). One part:
/// all zeros, no METIS call. Contiguous parts are asked for when the graph is connected (several bodies are
/// not). Requires 1 <= num_parts <= graph.num_vertices(); METIS failures end the job.
std::vector<int> partition_graph(const CsrGraph& graph, int num_parts);

/// Give every empty part one vertex, taken from the largest part (METIS can leave a part empty on tiny
/// or awkward graphs, and every rank must own at least one element). Requires num_parts <= parts.size().
void fill_empty_parts(std::vector<int>& parts, int num_parts);

/// True when every vertex can reach every other one.
bool is_connected(const CsrGraph& graph);

} // namespace intact::partition
