#pragma once
/// @file device_helpers.hpp
/// @brief Private to src/contact/contact_surface/: the device view types and the min and max of two doubles
/// that the ContactSurface kernels of several files share.

#include "src/contact/contact_surface.hpp"

namespace intact::contact::surface_detail {

using IntView = Kokkos::View<int*, MemSpace>;
using RowsView = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;
using ConstRowsView = Kokkos::View<const double* [3], Kokkos::LayoutRight, MemSpace>;

KOKKOS_INLINE_FUNCTION double min2(double a, double b) {
    return a < b ? a : b;
}
KOKKOS_INLINE_FUNCTION double max2(double a, double b) {
    return a > b ? a : b;
}

} // namespace intact::contact::surface_detail
