#include "partition/dual_graph.hpp"

#include <algorithm>
#include <tuple>

namespace intact::partition {

CsrGraph build_element_dual_graph(const std::vector<std::array<int, 4>>& tets) {
    // Every face as (sorted node triple, element); equal triples next to each other after a sort.
    struct Face {
        std::array<int, 3> nodes;
        int element;
    };
    std::vector<Face> faces;
    faces.reserve(tets.size() * 4);
    for (std::size_t e = 0; e < tets.size(); ++e) {
        for (int skip = 0; skip < 4; ++skip) {
            std::array<int, 3> f{};
            for (int k = 0, n = 0; k < 4; ++k) {
                if (k != skip) {
                    f[static_cast<std::size_t>(n++)] = tets[e][static_cast<std::size_t>(k)];
                }
            }
            std::sort(f.begin(), f.end());
            faces.push_back({f, static_cast<int>(e)});
        }
    }
    std::sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) {
        return std::tie(a.nodes, a.element) < std::tie(b.nodes, b.element);
    });

    std::vector<std::array<int, 2>> pairs;
    for (std::size_t i = 0; i + 1 < faces.size(); ++i) {
        if (faces[i].nodes == faces[i + 1].nodes && faces[i].element != faces[i + 1].element) {
            pairs.push_back({faces[i].element, faces[i + 1].element});
            pairs.push_back({faces[i + 1].element, faces[i].element});
        }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());

    CsrGraph graph;
    graph.offsets.assign(tets.size() + 1, 0);
    for (const auto& p : pairs) {
        ++graph.offsets[static_cast<std::size_t>(p[0]) + 1];
    }
    for (std::size_t v = 0; v < tets.size(); ++v) {
        graph.offsets[v + 1] += graph.offsets[v];
    }
    graph.neighbors.reserve(pairs.size());
    for (const auto& p : pairs) {
        graph.neighbors.push_back(p[1]);
    }
    return graph;
}

} // namespace intact::partition
