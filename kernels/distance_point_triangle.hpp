#pragma once
/// @file distance_point_triangle.hpp
/// @brief Squared distance of a point to the plane of a triangle (the interior case of point-triangle
/// pairs), with its gradient and Hessian in the 12 stencil coordinates (p, t0, t1, t2), vertex-major.
/// Device-callable, allocation-free. The triangle must be non-degenerate. The other point-triangle
/// cases and the dispatch on the case are in pair_distance.hpp.

#include "kernels/distance_stencil.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

namespace detail {

/// The point-triangle stencil in difference vectors: d0 = p - t0, d1 = t1 - t0, d2 = t2 - t0.
KOKKOS_INLINE_FUNCTION Eigen::Matrix<double, 3, 4> point_triangle_differences() {
    Eigen::Matrix<double, 3, 4> A;
    A << 1.0, -1.0, 0.0, 0.0, 0.0, -1.0, 1.0, 0.0, 0.0, -1.0, 0.0, 1.0;
    return A;
}

} // namespace detail

/// Squared distance of p to the plane of (t0, t1, t2) (m^2), spec §5.2 (P eq.22):
/// n = (t1 - t0) x (t2 - t0), s = ((p - t0).n)^2 / |n|^2.
/// Case: p projects into the interior of the triangle (point_triangle_case gives interior).
KOKKOS_INLINE_FUNCTION double
point_plane_distance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
    return detail::plane_distance(p - t0, t1 - t0, t2 - t0);
}

/// Gradient of point_plane_distance in (p, t0, t1, t2) (m): with q = (p - t0).n and sigma = q / |n|^2,
/// ds = 2 sigma dq - sigma^2 d|n|^2, lifted from (p - t0, t1 - t0, t2 - t0) (see distance_stencil.hpp).
/// ds/dp = 2 sigma n: twice the offset from the plane times the unit normal, as for any closest point.
KOKKOS_INLINE_FUNCTION Vec12 point_plane_distance_gradient(const Vec3& p,
                                                           const Vec3& t0,
                                                           const Vec3& t1,
                                                           const Vec3& t2) {
    return detail::lift_gradient(detail::point_triangle_differences(),
                                 detail::plane_distance_gradient(p - t0, t1 - t0, t2 - t0));
}

/// Hessian of point_plane_distance in (p, t0, t1, t2) (dimensionless):
/// (2 / |n|^2) g g^T + 2 sigma d2q - sigma^2 d2|n|^2 with g = dq - sigma d|n|^2
/// (detail::plane_distance_hessian).
KOKKOS_INLINE_FUNCTION Mat12 point_plane_distance_hessian(const Vec3& p,
                                                          const Vec3& t0,
                                                          const Vec3& t1,
                                                          const Vec3& t2) {
    return detail::lift_hessian(detail::point_triangle_differences(),
                                detail::plane_distance_hessian(p - t0, t1 - t0, t2 - t0));
}

} // namespace intact::kernels
