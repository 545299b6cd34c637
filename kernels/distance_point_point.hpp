#pragma once
/// @file distance_point_point.hpp
/// @brief Squared point-point distance (the two-vertex case of every contact pair) with its gradient and
/// Hessian in the 6 stencil coordinates (a, b), vertex-major. Device-callable, allocation-free.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Squared distance s = |a - b|^2 (m^2). Case: the closest features are the vertices a and b.
KOKKOS_INLINE_FUNCTION double point_point_distance(const Vec3& a, const Vec3& b) {
    return (a - b).squaredNorm();
}

/// ds/d(a, b) = 2 [r; -r] with r = a - b (m).
KOKKOS_INLINE_FUNCTION VecN<6> point_point_distance_gradient(const Vec3& a, const Vec3& b) {
    const Vec3 r = a - b;
    VecN<6> g;
    g.segment<3>(0) = 2.0 * r;
    g.segment<3>(3) = -2.0 * r;
    return g;
}

/// d2s/d(a, b)^2 = 2 [[I, -I], [-I, I]] (constant, dimensionless).
KOKKOS_INLINE_FUNCTION MatN<6> point_point_distance_hessian(const Vec3& /*a*/, const Vec3& /*b*/) {
    const Mat3 I = Mat3::Identity();
    MatN<6> H;
    H.block<3, 3>(0, 0) = 2.0 * I;
    H.block<3, 3>(0, 3) = -2.0 * I;
    H.block<3, 3>(3, 0) = -2.0 * I;
    H.block<3, 3>(3, 3) = 2.0 * I;
    return H;
}

} // namespace intact::kernels
