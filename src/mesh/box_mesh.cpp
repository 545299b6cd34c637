/// @file box_mesh.cpp
/// @brief Kuhn (Freudenthal) split of a structured hex grid: every cell is cut into the 6 tets that
/// share its main diagonal (0,0,0)-(1,1,1). All cells use the same diagonal direction, so the split
/// faces of neighbouring cells match and the mesh is conforming.

#include "src/mesh/box_mesh.hpp"

#include "src/core/error.hpp"

#include <climits>
#include <cstdint>
#include <string>

namespace intact {
namespace {

/// The 6 Kuhn tets of the unit cube, as corner numbers c = i + 2 j + 4 k. Tet p walks from corner 0 to
/// corner 7 along the axes in the order of permutation p; odd permutations have their two middle
/// corners swapped so that every tet has det[x1-x0, x2-x0, x3-x0] = +1 (volume 1/6 of the cell).
constexpr int k_kuhn_tets[6][4] = {
    {0, 1, 3, 7}, // x, y, z (even)
    {0, 5, 1, 7}, // x, z, y (odd)
    {0, 3, 2, 7}, // y, x, z (odd)
    {0, 2, 6, 7}, // y, z, x (even)
    {0, 4, 5, 7}, // z, x, y (even)
    {0, 6, 4, 7}, // z, y, x (odd)
};

} // namespace

TetMesh make_box_mesh(const Vec3& min, const Vec3& max, const std::array<int, 3>& cells) {
    for (int d = 0; d < 3; ++d) {
        if (cells[d] < 1) {
            throw InputError("box mesh: cells[" + std::to_string(d) + "] = " + std::to_string(cells[d]) +
                             ", expected at least 1; fix: give a positive number of cells along each axis");
        }
        if (!(min[d] < max[d])) {
            throw InputError("box mesh: min[" + std::to_string(d) + "] = " + std::to_string(min[d]) +
                             " is not below max[" + std::to_string(d) + "] = " + std::to_string(max[d]) +
                             "; fix: give min < max along every axis");
        }
    }
    const std::int64_t nx = cells[0];
    const std::int64_t ny = cells[1];
    const std::int64_t nz = cells[2];
    const std::int64_t num_nodes = (nx + 1) * (ny + 1) * (nz + 1);
    const std::int64_t num_tets = 6 * nx * ny * nz;
    if (num_nodes > INT_MAX || num_tets > INT_MAX) {
        throw InputError("box mesh: " + std::to_string(nx) + " x " + std::to_string(ny) + " x " +
                         std::to_string(nz) + " cells give more than " + std::to_string(INT_MAX) +
                         " nodes or tets; fix: use fewer cells");
    }

    TetMesh mesh;
    mesh.nodes.reserve(static_cast<std::size_t>(num_nodes));
    for (std::int64_t k = 0; k <= nz; ++k) {
        for (std::int64_t j = 0; j <= ny; ++j) {
            for (std::int64_t i = 0; i <= nx; ++i) {
                // Multiply before dividing so grid lines at "round" fractions come out exact, and put
                // the last layer exactly on max.
                const std::int64_t index[3] = {i, j, k};
                const std::int64_t count[3] = {nx, ny, nz};
                Vec3 x;
                for (int d = 0; d < 3; ++d) {
                    x[d] = index[d] == count[d] ? max[d]
                                                : min[d] + (max[d] - min[d]) * static_cast<double>(index[d]) /
                                                               static_cast<double>(count[d]);
                }
                mesh.nodes.push_back(x);
            }
        }
    }

    const auto node = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        return static_cast<int>(i + (nx + 1) * (j + (ny + 1) * k));
    };
    mesh.tets.reserve(static_cast<std::size_t>(num_tets));
    for (std::int64_t k = 0; k < nz; ++k) {
        for (std::int64_t j = 0; j < ny; ++j) {
            for (std::int64_t i = 0; i < nx; ++i) {
                int corner[8];
                for (int c = 0; c < 8; ++c) {
                    corner[c] = node(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
                }
                for (const auto& tet : k_kuhn_tets) {
                    mesh.tets.push_back({corner[tet[0]], corner[tet[1]], corner[tet[2]], corner[tet[3]]});
                }
            }
        }
    }
    return mesh;
}

} // namespace intact
