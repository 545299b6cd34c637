#pragma once
/// @file metis_partitioner.hpp
/// @brief Split a graph into parts with METIS (k-way, minimum edge cut).

#include "partition/dual_graph.hpp"

#include <array>
#include <vector>

namespace intact::partition {

/// Work of one element per Newton iteration relative to a tetrahedron's, so that METIS gives ranks equal
/// work rather than equal element counts. Measured with `bench_step --scene` on one rank, one thread,
/// without contact (a 30 720-tet neo-Hookean bar, the 7 200-triangle cloth pile of `bench_step --cloth 4
/// --sheet-cells 30`, 40 rods of 500 segments; noisy to about ±30 % on a shared 2-core machine):
/// - assembly per Newton iteration: 3.8 µs a tet, 66 µs a triangle with its hinges (the hinge's 12 × 12
///   Hessian through second-order dual numbers and a PSD projection), 18 µs a segment with its bending
///   vertex;
/// - PCG per node and iteration: 0.15 µs (tet rows), 0.18 µs (shell), 0.09 µs (rod); with about 60
///   iterations per Newton iteration and 0.21, 0.53 and 1.0 nodes per tet, triangle and segment: 2, 6 and
///   5 µs;
/// so 6 : 72 : 23 µs, or 1 : 12 : 4. Contact work (every shell and rod vertex is on the surface) comes on
/// top and is not weighted: it depends on the motion.
struct ElementWork {
    static constexpr int tet = 1;
    static constexpr int triangle = 12;
    static constexpr int segment = 4;
};

/// Per element of `elements` (as build_element_dual_graph takes them: a triangle has one −1 corner, a
/// segment two), its ElementWork weight.
std::vector<int> element_work(const std::vector<std::array<int, 4>>& elements);

/// Part of every vertex, in [0, num_parts), no part empty, parts of about equal total `weights` (one per
/// vertex, >= 1; empty: all 1). Deterministic (fixed METIS seed). One part: all zeros, no METIS call.
/// Contiguous parts are asked for when the graph is connected (several bodies are not). Requires
/// 1 <= num_parts <= graph.num_vertices(); METIS failures end the job.
std::vector<int> partition_graph(const CsrGraph& graph, int num_parts, const std::vector<int>& weights = {});

/// Give every empty part one vertex, taken from the largest part (METIS can leave a part empty on tiny
/// or awkward graphs, and every rank must own at least one element). Requires num_parts <= parts.size().
void fill_empty_parts(std::vector<int>& parts, int num_parts);

/// True when every vertex can reach every other one.
bool is_connected(const CsrGraph& graph);

} // namespace intact::partition
