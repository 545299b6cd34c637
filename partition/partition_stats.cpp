#include "partition/partition_stats.hpp"

#include "partition/metis_partitioner.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace intact::partition {

PartitionStats compute_partition_stats(const CsrGraph& graph,
                                       const std::vector<std::array<int, 4>>& tets,
                                       const std::vector<int>& parts,
                                       const std::vector<int>& owners,
                                       int num_parts) {
    PartitionStats stats;
    stats.num_parts = num_parts;
    stats.num_elements = static_cast<long long>(tets.size());
    stats.num_nodes = static_cast<long long>(owners.size());

    std::vector<long long> elements(static_cast<std::size_t>(num_parts), 0);
    std::vector<long long> nodes(static_cast<std::size_t>(num_parts), 0);
    std::vector<long long> work(static_cast<std::size_t>(num_parts), 0);
    const std::vector<int> weights = element_work(tets);
    long long total_work = 0;
    for (std::size_t e = 0; e < parts.size(); ++e) {
        ++elements[static_cast<std::size_t>(parts[e])];
        work[static_cast<std::size_t>(parts[e])] += weights[e];
        total_work += weights[e];
    }
    const auto [wmin, wmax] = std::minmax_element(work.begin(), work.end());
    stats.min_work = *wmin;
    stats.max_work = *wmax;
    stats.work_imbalance = static_cast<double>(*wmax) * num_parts / std::max(1.0, double(total_work));
    for (const int o : owners) {
        ++nodes[static_cast<std::size_t>(o)];
    }
    const auto [emin, emax] = std::minmax_element(elements.begin(), elements.end());
    const auto [nmin, nmax] = std::minmax_element(nodes.begin(), nodes.end());
    stats.min_elements = *emin;
    stats.max_elements = *emax;
    stats.min_nodes = *nmin;
    stats.max_nodes = *nmax;
    stats.element_imbalance =
        static_cast<double>(*emax) * num_parts / std::max(1.0, double(stats.num_elements));
    stats.node_imbalance = static_cast<double>(*nmax) * num_parts / std::max(1.0, double(stats.num_nodes));
    stats.empty_parts = static_cast<int>(std::count(elements.begin(), elements.end(), 0LL));

    // A node is on the interface when one of its elements lies in a part other than its owner's.
    std::vector<char> interface(owners.size(), 0);
    for (std::size_t e = 0; e < tets.size(); ++e) {
        for (const int n : tets[e]) {
            if (n >= 0 && parts[e] != owners[static_cast<std::size_t>(n)]) {
                interface[static_cast<std::size_t>(n)] = 1;
            }
        }
    }
    stats.interface_nodes = std::count(interface.begin(), interface.end(), 1);

    for (int v = 0; v < graph.num_vertices(); ++v) {
        for (int k = graph.offsets[static_cast<std::size_t>(v)];
             k < graph.offsets[static_cast<std::size_t>(v) + 1]; ++k) {
            const int w = graph.neighbors[static_cast<std::size_t>(k)];
            if (v < w && parts[static_cast<std::size_t>(v)] != parts[static_cast<std::size_t>(w)]) {
                ++stats.edge_cut;
            }
        }
    }
    return stats;
}

std::string describe(const PartitionStats& s) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(3);
    out << "partition: " << s.num_parts << " parts, " << s.num_elements << " elements, " << s.num_nodes
        << " nodes\n";
    out << "  elements per part  " << s.min_elements << " .. " << s.max_elements << "  (imbalance "
        << s.element_imbalance << ")\n";
    out << "  owned nodes / part " << s.min_nodes << " .. " << s.max_nodes << "  (imbalance "
        << s.node_imbalance << ")\n";
    if (s.max_work != s.max_elements) { // shells or rods: elements of unequal work (ElementWork)
        out << "  work per part      " << s.min_work << " .. " << s.max_work << "  (imbalance "
            << s.work_imbalance << "; a tet 1, a triangle " << ElementWork::triangle << ", a segment "
            << ElementWork::segment << ")\n";
    }
    out << "  interface nodes    " << s.interface_nodes << "\n";
    out << "  edge cut (faces)   " << s.edge_cut;
    if (s.empty_parts > 0) {
        out << "\n  warning: " << s.empty_parts << " part(s) have no element";
    }
    return out.str();
}

} // namespace intact::partition
