#include "partition/metis_partitioner.hpp"

#include "src/core/error.hpp"

#include <metis.h>

#include <algorithm>

namespace intact::partition {

bool is_connected(const CsrGraph& graph) {
    const int n = graph.num_vertices();
    if (n == 0) {
        return true;
    }
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    std::vector<int> stack{0};
    seen[0] = 1;
    int reached = 1;
    while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        for (int k = graph.offsets[static_cast<std::size_t>(v)];
             k < graph.offsets[static_cast<std::size_t>(v) + 1]; ++k) {
            const int w = graph.neighbors[static_cast<std::size_t>(k)];
            if (!seen[static_cast<std::size_t>(w)]) {
                seen[static_cast<std::size_t>(w)] = 1;
                ++reached;
                stack.push_back(w);
            }
        }
    }
    return reached == n;
}

void fill_empty_parts(std::vector<int>& parts, int num_parts) {
    std::vector<int> count(static_cast<std::size_t>(num_parts), 0);
    for (const int p : parts) {
        ++count[static_cast<std::size_t>(p)];
    }
    for (int empty = 0; empty < num_parts; ++empty) {
        if (count[static_cast<std::size_t>(empty)] > 0) {
            continue;
        }
        const auto largest = static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
        // The last element of the largest part moves over (deterministic; keeps the rest of METIS' cut).
        for (std::size_t e = parts.size(); e-- > 0;) {
            if (parts[e] == largest) {
                parts[e] = empty;
                --count[static_cast<std::size_t>(largest)];
                ++count[static_cast<std::size_t>(empty)];
                break;
            }
        }
    }
}

std::vector<int> element_work(const std::vector<std::array<int, 4>>& elements) {
    std::vector<int> work;
    work.reserve(elements.size());
    for (const auto& e : elements) {
        const int corners = static_cast<int>(std::count_if(e.begin(), e.end(), [](int n) { return n >= 0; }));
        work.push_back(corners == 4   ? ElementWork::tet
                       : corners == 3 ? ElementWork::triangle
                                      : ElementWork::segment);
    }
    return work;
}

std::vector<int> partition_graph(const CsrGraph& graph, int num_parts, const std::vector<int>& weights) {
    const int n = graph.num_vertices();
    INTACT_REQUIRE(num_parts >= 1 && num_parts <= n,
                   "cannot split " << n << " elements into " << num_parts << " parts");
    INTACT_REQUIRE(weights.empty() || static_cast<int>(weights.size()) == n,
                   "partition_graph: " << weights.size() << " weights for " << n << " elements");
    if (num_parts == 1) {
        return std::vector<int>(static_cast<std::size_t>(n), 0);
    }
    // METIS may be built with 64-bit idx_t: copy into its index type.
    std::vector<idx_t> xadj(graph.offsets.begin(), graph.offsets.end());
    std::vector<idx_t> adjncy(graph.neighbors.begin(), graph.neighbors.end());
    idx_t nvtxs = n;
    idx_t ncon = 1;
    idx_t nparts = num_parts;
    idx_t objval = 0;
    std::vector<idx_t> part(static_cast<std::size_t>(n), 0);
    std::vector<idx_t> vwgt(weights.begin(), weights.end()); // empty: METIS weighs every vertex 1

    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 7;
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_CONTIG] = is_connected(graph) ? 1 : 0;

    const int status =
        METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.empty() ? nullptr : vwgt.data(),
                            nullptr, nullptr, &nparts, nullptr, nullptr, options, &objval, part.data());
    INTACT_REQUIRE(status == METIS_OK, "METIS_PartGraphKway failed with status " << status);
    std::vector<int> parts(part.begin(), part.end());
    fill_empty_parts(parts, num_parts);
    return parts;
}

} // namespace intact::partition
