#pragma once
/// @file stencil_coloring.hpp
/// @brief Complementary coloring of the elasticity stencils (stencil descent spec §3.2, the paper's
/// Alg. 2 cleaned up): S schemes of at most T colors over the conflict graph "two tets share a vertex";
/// a tet that finds no free color in a scheme is GREY there (Jacobi only). Each scheme's greedy order is
/// by a rank that starts at the conflict degree and grows by the color a tet got (2T for GREY), so tets
/// that came late or grey go first next time. Schemes are added past S until every tet is non-grey in
/// at least one, up to k_max_schemes.
///
/// The coloring is computed once, on rank 0, over the whole mesh in global element order, so it does not
/// depend on the number of ranks (spec §9); every rank then keeps the colors of its elements.

#include "src/mesh/distribute.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace intact::solver {

constexpr std::uint8_t k_grey = 255;
constexpr int k_max_schemes = 8;

struct StencilColoring {
    int schemes = 0;                 ///< S' ≥ S
    int colors = 0;                  ///< T
    std::vector<std::uint8_t> color; ///< color[s × num_elements + e] ∈ [0, T) or k_grey
    int num_elements = 0;
    std::uint8_t of(int scheme, int element) const {
        return color[static_cast<std::size_t>(scheme) * static_cast<std::size_t>(num_elements) +
                     static_cast<std::size_t>(element)];
    }
    /// Fraction of (scheme, element) entries that are GREY.
    double grey_fraction() const;
};

/// Color elements given by their 4 node ids (any integer ids). Host, serial, O(S · Σ deg).
StencilColoring color_stencils(const std::vector<std::array<GlobalId, 4>>& tets, int colors, int schemes);

/// color_stencils over the whole distributed mesh on rank 0 (in global element id order), then each rank
/// keeps the colors of `elements` (local element indices of `mesh`, which every rank lists for itself).
/// Collective.
StencilColoring global_stencil_coloring(MPI_Comm comm, const LocalMesh& mesh, int colors, int schemes);

} // namespace intact::solver
