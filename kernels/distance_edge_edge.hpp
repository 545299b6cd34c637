#pragma once
/// @file distance_edge_edge.hpp
/// @brief Squared distance between the infinite lines through two edges (the interior case of edge-edge
/// pairs), with its gradient and Hessian in the 12 stencil coordinates (a0, a1, b0, b1), vertex-major.
/// Device-callable, allocation-free. The edges must not be parallel (edge_edge_case never selects this
/// case for parallel or nearly parallel edges; their EE terms carry the mollifier of
/// edge_edge_mollifier.hpp). The other edge-edge cases and the dispatch are in pair_distance.hpp.

#include "kernels/distance_stencil.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

namespace detail {

/// The edge-edge stencil in difference vectors: d0 = a0 - b0, d1 = a1 - a0, d2 = b1 - b0.
KOKKOS_INLINE_FUNCTION Eigen::Matrix<double, 3, 4> edge_edge_differences() {
    Eigen::Matrix<double, 3, 4> A;
    A << 1.0, 0.0, -1.0, 0.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 1.0;
    return A;
}

} // namespace detail

/// Squared distance between the lines through (a0, a1) and (b0, b1) (m^2), spec §5.2 (P eq.23):
/// n = (a1 - a0) x (b1 - b0), s = ((a0 - b0).n)^2 / |n|^2.
/// Case: both closest points lie strictly inside their edges (edge_edge_case gives interior).
KOKKOS_INLINE_FUNCTION double
line_line_distance(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
    return detail::plane_distance(a0 - b0, a1 - a0, b1 - b0);
}

/// Gradient of line_line_distance in (a0, a1, b0, b1) (m): with q = (a0 - b0).n and sigma = q / |n|^2,
/// ds = 2 sigma dq - sigma^2 d|n|^2, lifted from (a0 - b0, a1 - a0, b1 - b0) (see distance_stencil.hpp).
KOKKOS_INLINE_FUNCTION Vec12 line_line_distance_gradient(const Vec3& a0,
                                                         const Vec3& a1,
                                                         const Vec3& b0,
                                                         const Vec3& b1) {
    return detail::lift_gradient(detail::edge_edge_differences(),
                                 detail::plane_distance_gradient(a0 - b0, a1 - a0, b1 - b0));
}

/// Hessian of line_line_distance in (a0, a1, b0, b1) (dimensionless):
/// (2 / |n|^2) g g^T + 2 sigma d2q - sigma^2 d2|n|^2 with g = dq - sigma d|n|^2
/// (detail::plane_distance_hessian).
KOKKOS_INLINE_FUNCTION Mat12 line_line_distance_hessian(const Vec3& a0,
                                                        const Vec3& a1,
                                                        const Vec3& b0,
                                                        const Vec3& b1) {
    return detail::lift_hessian(detail::edge_edge_differences(),
                                detail::plane_distance_hessian(a0 - b0, a1 - a0, b1 - b0));
}

} // namespace intact::kernels
