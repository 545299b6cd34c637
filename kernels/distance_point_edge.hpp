#pragma once
/// @file distance_point_edge.hpp
/// @brief Squared distance of a point to the infinite line through an edge (the point-edge case of
/// point-triangle and edge-edge pairs), with its gradient and Hessian in the 9 stencil coordinates
/// (p, e0, e1), vertex-major. Device-callable, allocation-free. The edge must have e1 != e0.

#include "kernels/distance_stencil.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

namespace detail {

/// The point-edge stencil in difference vectors: d = p - e0, e = e1 - e0.
KOKKOS_INLINE_FUNCTION Eigen::Matrix<double, 2, 3> point_edge_differences() {
    Eigen::Matrix<double, 2, 3> A;
    A << 1.0, -1.0, 0.0, 0.0, -1.0, 1.0;
    return A;
}

} // namespace detail

/// Squared distance of p to the line through e0, e1 (m^2), spec §5.2 (P eq.21):
/// s = |(e0 - p) x (e1 - p)|^2 / |e1 - e0|^2 = |d x e|^2 / |e|^2, d = p - e0, e = e1 - e0.
/// Case: p's closest point on the edge lies strictly between e0 and e1 (the formula itself measures the
/// distance to the whole line).
KOKKOS_INLINE_FUNCTION double point_edge_distance(const Vec3& p, const Vec3& e0, const Vec3& e1) {
    const Vec3 e = e1 - e0;
    return cross(p - e0, e).squaredNorm() / e.squaredNorm();
}

/// Gradient of point_edge_distance in (p, e0, e1) (m). With t = d.e / |e|^2 and r = d - t e (from the
/// closest point on the line to p): ds/dp = 2 r, ds/de0 = -2 (1 - t) r, ds/de1 = -2 t r.
KOKKOS_INLINE_FUNCTION Vec9 point_edge_distance_gradient(const Vec3& p, const Vec3& e0, const Vec3& e1) {
    const Vec3 d = p - e0;
    const Vec3 e = e1 - e0;
    const double t = d.dot(e) / e.squaredNorm();
    const Vec3 r = d - t * e;
    Vec9 g;
    g.segment<3>(0) = 2.0 * r;
    g.segment<3>(3) = -2.0 * (1.0 - t) * r;
    g.segment<3>(6) = -2.0 * t * r;
    return g;
}

/// Hessian of point_edge_distance in (p, e0, e1) (dimensionless). In (d, e), with E = |e|^2,
/// t = d.e / E, r = d - t e and k = r - t e:
/// H_dd = 2 (I - e e^T / E), H_de = -2 t I - 2 e k^T / E, H_ee = 2 t^2 I - 2 k k^T / E;
/// then lifted through d = p - e0, e = e1 - e0.
KOKKOS_INLINE_FUNCTION Mat9 point_edge_distance_hessian(const Vec3& p, const Vec3& e0, const Vec3& e1) {
    const Mat3 I = Mat3::Identity();
    const Vec3 d = p - e0;
    const Vec3 e = e1 - e0;
    const double E = e.squaredNorm();
    const double t = d.dot(e) / E;
    const Vec3 k = d - 2.0 * t * e;
    const Mat3 Hde = -2.0 * t * I - (2.0 / E) * e * k.transpose();
    MatN<6> H;
    H.block<3, 3>(0, 0) = 2.0 * I - (2.0 / E) * e * e.transpose();
    H.block<3, 3>(0, 3) = Hde;
    H.block<3, 3>(3, 0) = Hde.transpose();
    H.block<3, 3>(3, 3) = 2.0 * t * t * I - (2.0 / E) * k * k.transpose();
    return detail::lift_hessian(detail::point_edge_differences(), H);
}

} // namespace intact::kernels
