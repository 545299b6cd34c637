#include "src/solver/stencil_coloring.hpp"

#include "src/core/error.hpp"

#include <algorithm>
#include <numeric>

namespace intact::solver {

double StencilColoring::grey_fraction() const {
    if (color.empty()) {
        return 0.0;
    }
    const auto grey = std::count(color.begin(), color.end(), k_grey);
    return static_cast<double>(grey) / static_cast<double>(color.size());
}

namespace {

// Elements around each node (CSR over dense node indices).
struct NodeElements {
    std::vector<int> offsets, elements;
};

NodeElements node_elements(const std::vector<std::array<int, 4>>& tets, int num_nodes) {
    NodeElements out;
    out.offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
    for (const auto& tet : tets) {
        for (int n : tet) {
            ++out.offsets[static_cast<std::size_t>(n) + 1];
        }
    }
    std::partial_sum(out.offsets.begin(), out.offsets.end(), out.offsets.begin());
    out.elements.resize(static_cast<std::size_t>(out.offsets.back()));
    std::vector<int> fill(out.offsets.begin(), out.offsets.end() - 1);
    for (std::size_t e = 0; e < tets.size(); ++e) {
        for (int n : tets[e]) {
            out.elements[static_cast<std::size_t>(fill[static_cast<std::size_t>(n)]++)] = static_cast<int>(e);
        }
    }
    return out;
}

} // namespace

StencilColoring
color_stencils(const std::vector<std::array<GlobalId, 4>>& global_tets, int colors, int schemes) {
    INTACT_REQUIRE(colors >= 1 && colors < k_grey, "stencil coloring: " << colors << " colors (1 to 254)");
    const int num_elements = static_cast<int>(global_tets.size());
    // Dense node numbering.
    std::vector<GlobalId> ids;
    for (const auto& tet : global_tets) {
        ids.insert(ids.end(), tet.begin(), tet.end());
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<std::array<int, 4>> tets(global_tets.size());
    for (std::size_t e = 0; e < tets.size(); ++e) {
        for (int a = 0; a < 4; ++a) {
            tets[e][static_cast<std::size_t>(a)] = static_cast<int>(
                std::lower_bound(ids.begin(), ids.end(), global_tets[e][static_cast<std::size_t>(a)]) -
                ids.begin());
        }
    }
    const NodeElements around = node_elements(tets, static_cast<int>(ids.size()));
    // Conflict neighbours of e (each once): the elements sharing a node, e excluded.
    auto neighbours = [&](int e, std::vector<int>& out) {
        out.clear();
        for (int n : tets[static_cast<std::size_t>(e)]) {
            for (int k = around.offsets[static_cast<std::size_t>(n)];
                 k < around.offsets[static_cast<std::size_t>(n) + 1]; ++k) {
                const int f = around.elements[static_cast<std::size_t>(k)];
                if (f != e) {
                    out.push_back(f);
                }
            }
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    };

    StencilColoring result;
    result.colors = colors;
    result.num_elements = num_elements;
    std::vector<long long> rank(static_cast<std::size_t>(num_elements));
    std::vector<int> nbrs;
    for (int e = 0; e < num_elements; ++e) {
        neighbours(e, nbrs);
        rank[static_cast<std::size_t>(e)] = static_cast<long long>(nbrs.size());
    }
    std::vector<char> covered(static_cast<std::size_t>(num_elements), 0);
    std::vector<int> order(static_cast<std::size_t>(num_elements));
    std::vector<char> used(static_cast<std::size_t>(colors));
    for (int s = 0; s < k_max_schemes; ++s) {
        const bool all_covered = std::all_of(covered.begin(), covered.end(), [](char c) { return c != 0; });
        if (s >= schemes && all_covered) {
            break;
        }
        // Welsh–Powell order: rank descending, ties by element index.
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return rank[static_cast<std::size_t>(a)] > rank[static_cast<std::size_t>(b)];
        });
        const std::size_t base = result.color.size();
        result.color.resize(base + static_cast<std::size_t>(num_elements), k_grey);
        std::uint8_t* color = result.color.data() + base;
        std::vector<char> colored(static_cast<std::size_t>(num_elements), 0);
        for (int e : order) {
            std::fill(used.begin(), used.end(), 0);
            neighbours(e, nbrs);
            for (int f : nbrs) {
                if (colored[static_cast<std::size_t>(f)] && color[f] != k_grey) {
                    used[color[f]] = 1;
                }
            }
            const auto free = std::find(used.begin(), used.end(), 0);
            colored[static_cast<std::size_t>(e)] = 1;
            if (free != used.end()) {
                color[e] = static_cast<std::uint8_t>(free - used.begin());
                covered[static_cast<std::size_t>(e)] = 1;
            }
        }
        for (int e = 0; e < num_elements; ++e) {
            rank[static_cast<std::size_t>(e)] += color[e] == k_grey ? 2LL * colors : color[e];
        }
        ++result.schemes;
    }
    return result;
}

StencilColoring global_stencil_coloring(MPI_Comm comm, const LocalMesh& mesh, int colors, int schemes) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // 1. Owned elements (each element is owned once) to rank 0: gid and 4 node gids.
    std::vector<GlobalId> mine;
    for (int e = 0; e < mesh.num_owned_elements; ++e) {
        mine.push_back(mesh.element_global_id[static_cast<std::size_t>(e)]);
        for (int n : mesh.tets[static_cast<std::size_t>(e)]) {
            mine.push_back(mesh.node_global_id[static_cast<std::size_t>(n)]);
        }
    }
    const int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size), 0);
    INTACT_CHECK_MPI(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
    for (int r = 1; r < size; ++r) {
        displs[static_cast<std::size_t>(r)] =
            displs[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<GlobalId> all(rank == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
    INTACT_CHECK_MPI(MPI_Gatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                                 MPI_INT64_T, 0, comm));

    // 2. Rank 0 colors in global element order and broadcasts the element ids and colors.
    std::vector<GlobalId> gids;
    StencilColoring global;
    int header[2] = {0, 0};
    if (rank == 0) {
        const std::size_t n = all.size() / 5;
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::sort(order.begin(), order.end(),
                  [&](std::size_t a, std::size_t b) { return all[5 * a] < all[5 * b]; });
        std::vector<std::array<GlobalId, 4>> tets(n);
        gids.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            gids[k] = all[5 * order[k]];
            for (std::size_t a = 0; a < 4; ++a) {
                tets[k][a] = all[5 * order[k] + 1 + a];
            }
        }
        global = color_stencils(tets, colors, schemes);
        header[0] = static_cast<int>(n);
        header[1] = global.schemes;
    }
    INTACT_CHECK_MPI(MPI_Bcast(header, 2, MPI_INT, 0, comm));
    gids.resize(static_cast<std::size_t>(header[0]));
    global.color.resize(static_cast<std::size_t>(header[0]) * static_cast<std::size_t>(header[1]));
    INTACT_CHECK_MPI(MPI_Bcast(gids.data(), header[0], MPI_INT64_T, 0, comm));
    INTACT_CHECK_MPI(
        MPI_Bcast(global.color.data(), static_cast<int>(global.color.size()), MPI_UINT8_T, 0, comm));

    // 3. The colors of this rank's local elements.
    StencilColoring local;
    local.schemes = header[1];
    local.colors = colors;
    local.num_elements = mesh.num_local_elements();
    local.color.resize(static_cast<std::size_t>(local.schemes) *
                       static_cast<std::size_t>(local.num_elements));
    for (int e = 0; e < local.num_elements; ++e) {
        const auto it =
            std::lower_bound(gids.begin(), gids.end(), mesh.element_global_id[static_cast<std::size_t>(e)]);
        INTACT_REQUIRE(it != gids.end() && *it == mesh.element_global_id[static_cast<std::size_t>(e)],
                       "stencil coloring: element " << mesh.element_global_id[static_cast<std::size_t>(e)]
                                                    << " has no color");
        const auto k = static_cast<std::size_t>(it - gids.begin());
        for (int s = 0; s < local.schemes; ++s) {
            local.color[static_cast<std::size_t>(s) * static_cast<std::size_t>(local.num_elements) +
                        static_cast<std::size_t>(e)] =
                global.color[static_cast<std::size_t>(s) * gids.size() + k];
        }
    }
    return local;
}

} // namespace intact::solver
