#include "partition/dual_graph.hpp"

#include <algorithm>
#include <tuple>

namespace intact::partition {

CsrGraph build_element_dual_graph(const std::vector<std::array<int, 4>>& tets) {
    // Every face as (sorted node triple, element); equal triples next to each other after a sort. An
    // element with k < 4 corners (a shell triangle, a rod segment; absent corners are < 0) has the
    // (k − 1)-subsets of its corners as faces, padded with −1: triangles meet at edges, segments at
    // nodes, and neither shares a face with a tet.
    struct Face {
        std::array<int, 3> nodes;
        int element;
    };
    std::vector<Face> faces;
    faces.reserve(tets.size() * 4);
    for (std::size_t e = 0; e < tets.size(); ++e) {
        int corners[4];
        int k = 0;
        for (const int n : tets[e]) {
            if (n >= 0) {
                corners[k++] = n;
            }
        }
        for (int skip = 0; skip < k && k > 1; ++skip) {
            std::array<int, 3> f{-1, -1, -1};
            for (int i = 0, m = 0; i < k; ++i) {
                if (i != skip) {
                    f[static_cast<std::size_t>(m++)] = corners[i];
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
