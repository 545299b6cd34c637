#include "partition/ownership.hpp"

#include "src/core/error.hpp"

#include <algorithm>

namespace intact::partition {

std::vector<int>
node_owners(const std::vector<std::array<int, 4>>& tets, const std::vector<int>& parts, int num_nodes) {
    INTACT_REQUIRE(parts.size() == tets.size(), parts.size() << " parts for " << tets.size() << " elements");
    std::vector<int> owner(static_cast<std::size_t>(num_nodes), -1);
    for (std::size_t e = 0; e < tets.size(); ++e) {
        for (const int n : tets[e]) {
            if (n < 0) {
                continue; // an unused corner of a triangle or segment
            }
            int& o = owner[static_cast<std::size_t>(n)];
            o = o < 0 ? parts[e] : std::min(o, parts[e]);
        }
    }
    for (int n = 0; n < num_nodes; ++n) {
        INTACT_REQUIRE(owner[static_cast<std::size_t>(n)] >= 0, "node " << n << " belongs to no element");
    }
    return owner;
}

std::vector<RankLayout> build_rank_layouts(const std::vector<std::array<int, 4>>& tets,
                                           const std::vector<int>& parts,
                                           const std::vector<int>& owners,
                                           int num_parts) {
    // Local elements of part p: its own, plus every element touching a node that p owns.
    std::vector<std::vector<GlobalId>> owned_elements(static_cast<std::size_t>(num_parts));
    std::vector<std::vector<GlobalId>> ghost_elements(static_cast<std::size_t>(num_parts));
    for (std::size_t e = 0; e < tets.size(); ++e) {
        const int part = parts[e];
        owned_elements[static_cast<std::size_t>(part)].push_back(static_cast<GlobalId>(e));
        for (const int n : tets[e]) {
            if (n < 0) {
                continue;
            }
            const int owner = owners[static_cast<std::size_t>(n)];
            if (owner != part) {
                ghost_elements[static_cast<std::size_t>(owner)].push_back(static_cast<GlobalId>(e));
            }
        }
    }

    std::vector<RankLayout> layouts(static_cast<std::size_t>(num_parts));
    for (int p = 0; p < num_parts; ++p) {
        RankLayout& layout = layouts[static_cast<std::size_t>(p)];
        auto& ghosts = ghost_elements[static_cast<std::size_t>(p)];
        std::sort(ghosts.begin(), ghosts.end());
        ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
        layout.elements = owned_elements[static_cast<std::size_t>(p)]; // already ascending
        layout.num_owned_elements = static_cast<int>(layout.elements.size());
        layout.elements.insert(layout.elements.end(), ghosts.begin(), ghosts.end());

        std::vector<GlobalId> owned_nodes;
        std::vector<GlobalId> ghost_nodes;
        for (const GlobalId e : layout.elements) {
            for (const int n : tets[static_cast<std::size_t>(e)]) {
                if (n < 0) {
                    continue;
                }
                (owners[static_cast<std::size_t>(n)] == p ? owned_nodes : ghost_nodes).push_back(n);
            }
        }
        for (auto* list : {&owned_nodes, &ghost_nodes}) {
            std::sort(list->begin(), list->end());
            list->erase(std::unique(list->begin(), list->end()), list->end());
        }
        layout.num_owned_nodes = static_cast<int>(owned_nodes.size());
        layout.nodes = std::move(owned_nodes);
        layout.nodes.insert(layout.nodes.end(), ghost_nodes.begin(), ghost_nodes.end());
        layout.ghost_owners.reserve(ghost_nodes.size());
        for (const GlobalId n : ghost_nodes) {
            layout.ghost_owners.push_back(owners[static_cast<std::size_t>(n)]);
        }
    }
    return layouts;
}

} // namespace intact::partition
