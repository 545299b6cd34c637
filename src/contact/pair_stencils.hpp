#pragma once
/// @file pair_stencils.hpp
/// @brief Per-pair derivative blocks written by the contact kernels (barrier, friction, later AL / BAL
/// terms) and read by ContactMatrix, which sums them per owned row in a fixed order.
///
/// Pair i has `count(i)` stencil vertices with surface rows `rows(i, 0..count(i))` (−1 past count); its
/// gradient (12, vertex-major, the first 3 count(i) used) and Hessian (12×12, same layout) are already
/// weighted (κ for the barrier). Every rank that evaluates a pair writes all of its rows; ContactMatrix
/// keeps the rows this rank owns. Device Views; capacity is kept between calls and grows only.

#include "src/contact/pair_list.hpp"
#include "src/core/grow.hpp"

#include <string>

namespace intact::contact {

struct PairStencils {
    using Rows = Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>;
    using Counts = Kokkos::View<int*, MemSpace>;
    using Gradients = Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace>;
    using Hessians = Kokkos::View<double* [12][12], Kokkos::LayoutRight, MemSpace>;

    Rows rows;          ///< surface rows of the stencil vertices, −1 unused
    Counts count;       ///< stencil vertices used (1 to 4)
    Gradients gradient; ///< per pair, vertex-major (units of the term's energy per m)
    Hessians hessian;   ///< per pair, PSD; meaningful only when has_hessian
    int size = 0;       ///< pairs written (entries past it are unspecified)
    bool has_hessian = false;

    /// Make room for `n` pairs (Hessians too when `with_hessian`), keeping the capacity when it suffices;
    /// sets `size` and `has_hessian`. Host; allocates only when `n` exceeds the capacity (core/grow.hpp).
    void resize(int n, bool with_hessian) {
        grow(rows, n, "intact::contact::stencil_rows");
        grow(count, n, "intact::contact::stencil_count");
        grow(gradient, n, "intact::contact::stencil_gradient");
        if (with_hessian) {
            grow(hessian, n, "intact::contact::stencil_hessian");
        }
        size = n;
        has_hessian = with_hessian;
    }
};

} // namespace intact::contact
