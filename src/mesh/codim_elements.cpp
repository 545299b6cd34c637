#include "src/mesh/codim_elements.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace intact {

CodimTopologyReport add_hinges(CodimElements& elements) {
    // 1. Every (undirected edge, body) with the triangles and corners that hold it, in list order.
    struct Side {
        int from; ///< the edge as it runs in this triangle: from → to
        int to;
        int opposite;
    };
    std::map<std::pair<std::pair<int, int>, int>, std::vector<Side>> edges;
    for (std::size_t t = 0; t < elements.triangles.size(); ++t) {
        const auto& tri = elements.triangles[t];
        for (int k = 0; k < 3; ++k) {
            const int a = tri[static_cast<std::size_t>(k)];
            const int b = tri[static_cast<std::size_t>((k + 1) % 3)];
            const int c = tri[static_cast<std::size_t>((k + 2) % 3)];
            edges[{{std::min(a, b), std::max(a, b)}, elements.triangle_body[t]}].push_back({a, b, c});
        }
    }
    // 2. One hinge per edge of exactly two triangles (std::map iterates edges in increasing order).
    CodimTopologyReport report;
    for (const auto& [key, sides] : edges) {
        if (sides.size() > 2) {
            ++report.non_manifold_edges;
        }
        if (sides.size() != 2) {
            continue;
        }
        elements.hinges.push_back({sides[0].from, sides[0].to, sides[0].opposite, sides[1].opposite});
        elements.hinge_body.push_back(key.second);
    }
    return report;
}

CodimTopologyReport add_rod_vertices(CodimElements& elements) {
    // 1. The other ends of every (vertex, body)'s segments, in list order.
    std::map<std::pair<int, int>, std::vector<int>> neighbours;
    for (std::size_t s = 0; s < elements.segments.size(); ++s) {
        const auto& seg = elements.segments[s];
        neighbours[{seg[0], elements.segment_body[s]}].push_back(seg[1]);
        neighbours[{seg[1], elements.segment_body[s]}].push_back(seg[0]);
    }
    // 2. A bending stencil at every vertex of exactly two segments.
    CodimTopologyReport report;
    for (const auto& [key, ends] : neighbours) {
        if (ends.size() > 2) {
            ++report.rod_junctions;
        }
        if (ends.size() != 2) {
            continue;
        }
        elements.rod_vertices.push_back({ends[0], key.first, ends[1]});
        elements.rod_vertex_body.push_back(key.second);
    }
    return report;
}

} // namespace intact
