#pragma once
/// @file edge_edge_mollifier.hpp
/// @brief The parallel-edge mollifier of edge-edge barrier terms (IPC spec §5.5, P eq.24), with its
/// gradient and Hessian in the 12 stencil coordinates (a0, a1, b0, b1), vertex-major.
/// Device-callable, allocation-free.
///
/// c = |(a1 - a0) x (b1 - b0)|^2 (m^4) vanishes for parallel edges; the EE barrier term is multiplied by
/// e(c) = -c^2 / eps_x^2 + 2 c / eps_x for c < eps_x and 1 otherwise, which is C^1 in c (e = 1, e' = 0 at
/// c = eps_x) and makes the EE barrier C^1 where the edges pass through parallel. eps_x is fixed per pair
/// from the rest lengths (edge_edge_mollifier_threshold).

#include "kernels/distance_stencil.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// eps_x = 1e-3 |a1_rest - a0_rest|^2 |b1_rest - b0_rest|^2 (m^4) from the rest positions of the edge
/// vertices (for obstacle edges: the obstacle's own positions, spec §12.9).
KOKKOS_INLINE_FUNCTION double edge_edge_mollifier_threshold(const Vec3& a0_rest,
                                                            const Vec3& a1_rest,
                                                            const Vec3& b0_rest,
                                                            const Vec3& b1_rest) {
    return 1e-3 * (a1_rest - a0_rest).squaredNorm() * (b1_rest - b0_rest).squaredNorm();
}

/// c = |(a1 - a0) x (b1 - b0)|^2 (m^4).
KOKKOS_INLINE_FUNCTION double
edge_edge_cross_squared_norm(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
    return cross(a1 - a0, b1 - b0).squaredNorm();
}

/// Gradient of c in (a0, a1, b0, b1) (m^3): with u = a1 - a0, v = b1 - b0, n = u x v:
/// dc/du = 2 v x n, dc/dv = 2 n x u; dc/da0 = -dc/du, dc/da1 = dc/du, dc/db0 = -dc/dv, dc/db1 = dc/dv.
KOKKOS_INLINE_FUNCTION Vec12 edge_edge_cross_squared_norm_gradient(const Vec3& a0,
                                                                   const Vec3& a1,
                                                                   const Vec3& b0,
                                                                   const Vec3& b1) {
    Eigen::Matrix<double, 2, 4> A;
    A << -1.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 1.0;
    return detail::lift_gradient(A, detail::cross_squared_norm_gradient(a1 - a0, b1 - b0));
}

/// Hessian of c in (a0, a1, b0, b1) (m^2): detail::cross_squared_norm_hessian in (u, v), lifted.
KOKKOS_INLINE_FUNCTION Mat12 edge_edge_cross_squared_norm_hessian(const Vec3& a0,
                                                                  const Vec3& a1,
                                                                  const Vec3& b0,
                                                                  const Vec3& b1) {
    Eigen::Matrix<double, 2, 4> A;
    A << -1.0, 1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 1.0;
    return detail::lift_hessian(A, detail::cross_squared_norm_hessian(a1 - a0, b1 - b0));
}

/// e(c) = -c^2 / eps_x^2 + 2 c / eps_x for c < eps_x, 1 otherwise (dimensionless; eps_x > 0).
KOKKOS_INLINE_FUNCTION double mollifier(double c, double eps_x) {
    if (c >= eps_x) {
        return 1.0;
    }
    const double r = c / eps_x;
    return (2.0 - r) * r;
}

/// de/dc = (2 / eps_x)(1 - c / eps_x) for c < eps_x, 0 otherwise (1/m^4).
KOKKOS_INLINE_FUNCTION double mollifier_first_derivative(double c, double eps_x) {
    if (c >= eps_x) {
        return 0.0;
    }
    return 2.0 / eps_x * (1.0 - c / eps_x);
}

/// d2e/dc2 = -2 / eps_x^2 for c < eps_x, 0 otherwise (1/m^8).
KOKKOS_INLINE_FUNCTION double mollifier_second_derivative(double c, double eps_x) {
    if (c >= eps_x) {
        return 0.0;
    }
    return -2.0 / (eps_x * eps_x);
}

/// Mollifier e(c(x)) of the edge pair (a0, a1), (b0, b1) for the threshold eps_x (dimensionless).
KOKKOS_INLINE_FUNCTION double
edge_edge_mollifier(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, double eps_x) {
    return mollifier(edge_edge_cross_squared_norm(a0, a1, b0, b1), eps_x);
}

/// Gradient of edge_edge_mollifier in (a0, a1, b0, b1) (1/m): e'(c) dc; zero for c >= eps_x.
KOKKOS_INLINE_FUNCTION Vec12
edge_edge_mollifier_gradient(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, double eps_x) {
    const double c = edge_edge_cross_squared_norm(a0, a1, b0, b1);
    if (c >= eps_x) {
        return Vec12::Zero();
    }
    return mollifier_first_derivative(c, eps_x) * edge_edge_cross_squared_norm_gradient(a0, a1, b0, b1);
}

/// Hessian of edge_edge_mollifier in (a0, a1, b0, b1) (1/m^2): e''(c) dc dc^T + e'(c) d2c; zero for
/// c >= eps_x. Not PSD in general; the caller projects the whole mollified barrier block.
KOKKOS_INLINE_FUNCTION Mat12
edge_edge_mollifier_hessian(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, double eps_x) {
    const double c = edge_edge_cross_squared_norm(a0, a1, b0, b1);
    if (c >= eps_x) {
        return Mat12::Zero();
    }
    const Vec12 g = edge_edge_cross_squared_norm_gradient(a0, a1, b0, b1);
    return mollifier_second_derivative(c, eps_x) * g * g.transpose() +
           mollifier_first_derivative(c, eps_x) * edge_edge_cross_squared_norm_hessian(a0, a1, b0, b1);
}

} // namespace intact::kernels
