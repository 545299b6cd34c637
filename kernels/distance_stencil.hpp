#pragma once
/// @file distance_stencil.hpp
/// @brief Shared pieces of the distance kernels: derivatives written in a few difference vectors
/// d_k = sum_a A(k, a) x_a and lifted to the stencil vertices x_a, the squared norm of a cross product,
/// and the squared distance to a plane given by a triple product. Device-callable, allocation-free.
///
/// Conventions: a function of K difference vectors has its gradient as a 3K-vector (entry 3k + i is
/// component i of d_k) and its Hessian as a 3K x 3K matrix; stencil vectors are vertex-major (entry
/// 3a + i is component i of vertex a).

#include "kernels/small_matrix.hpp"

namespace intact::kernels::detail {

/// Gradient in the stencil vertices of f(d_0..d_{K-1}), d_k = sum_a A(k, a) x_a:
/// df/dx_a = sum_k A(k, a) df/dd_k.
template <int K, int NV>
KOKKOS_INLINE_FUNCTION VecN<3 * NV> lift_gradient(const Eigen::Matrix<double, K, NV>& A,
                                                  const VecN<3 * K>& g) {
    VecN<3 * NV> out = VecN<3 * NV>::Zero();
    for (int a = 0; a < NV; ++a) {
        for (int k = 0; k < K; ++k) {
            if (A(k, a) != 0.0) {
                out.template segment<3>(3 * a) += A(k, a) * g.template segment<3>(3 * k);
            }
        }
    }
    return out;
}

/// Hessian in the stencil vertices: d2f/dx_a dx_b = sum_{k,l} A(k, a) A(l, b) d2f/dd_k dd_l.
template <int K, int NV>
KOKKOS_INLINE_FUNCTION MatN<3 * NV> lift_hessian(const Eigen::Matrix<double, K, NV>& A,
                                                 const MatN<3 * K>& H) {
    MatN<3 * NV> out = MatN<3 * NV>::Zero();
    for (int a = 0; a < NV; ++a) {
        for (int b = 0; b < NV; ++b) {
            for (int k = 0; k < K; ++k) {
                for (int l = 0; l < K; ++l) {
                    const double w = A(k, a) * A(l, b);
                    if (w != 0.0) {
                        out.template block<3, 3>(3 * a, 3 * b) += w * H.template block<3, 3>(3 * k, 3 * l);
                    }
                }
            }
        }
    }
    return out;
}

/// Adds the gradient g of a sub-stencil of NS vertices into the full stencil gradient at the vertex
/// positions index[0..NS-1].
template <int NS, int NV>
KOKKOS_INLINE_FUNCTION void
scatter_gradient(const VecN<3 * NS>& g, const int (&index)[NS], VecN<3 * NV>& out) {
    for (int a = 0; a < NS; ++a) {
        out.template segment<3>(3 * index[a]) += g.template segment<3>(3 * a);
    }
}

/// Adds the Hessian H of a sub-stencil of NS vertices into the full stencil Hessian (see scatter_gradient).
template <int NS, int NV>
KOKKOS_INLINE_FUNCTION void
scatter_hessian(const MatN<3 * NS>& H, const int (&index)[NS], MatN<3 * NV>& out) {
    for (int a = 0; a < NS; ++a) {
        for (int b = 0; b < NS; ++b) {
            out.template block<3, 3>(3 * index[a], 3 * index[b]) += H.template block<3, 3>(3 * a, 3 * b);
        }
    }
}

/// Gradient of c = |d1 x d2|^2 in (d1, d2): with n = d1 x d2, dc/dd1 = 2 d2 x n, dc/dd2 = 2 n x d1
/// (the cross-product forms stay accurate for nearly parallel d1, d2).
KOKKOS_INLINE_FUNCTION VecN<6> cross_squared_norm_gradient(const Vec3& d1, const Vec3& d2) {
    const Vec3 n = cross(d1, d2);
    VecN<6> g;
    g.segment<3>(0) = 2.0 * cross(d2, n);
    g.segment<3>(3) = 2.0 * cross(n, d1);
    return g;
}

/// Hessian of c = |d1 x d2|^2 = |d1|^2 |d2|^2 - (d1.d2)^2 in (d1, d2):
/// H11 = 2|d2|^2 I - 2 d2 d2^T, H22 = 2|d1|^2 I - 2 d1 d1^T, H12 = 4 d1 d2^T - 2 d2 d1^T - 2 (d1.d2) I.
KOKKOS_INLINE_FUNCTION MatN<6> cross_squared_norm_hessian(const Vec3& d1, const Vec3& d2) {
    const Mat3 I = Mat3::Identity();
    const double d12 = d1.dot(d2);
    const Mat3 H12 = 4.0 * d1 * d2.transpose() - 2.0 * d2 * d1.transpose() - 2.0 * d12 * I;
    MatN<6> H;
    H.block<3, 3>(0, 0) = 2.0 * d2.squaredNorm() * I - 2.0 * d2 * d2.transpose();
    H.block<3, 3>(3, 3) = 2.0 * d1.squaredNorm() * I - 2.0 * d1 * d1.transpose();
    H.block<3, 3>(0, 3) = H12;
    H.block<3, 3>(3, 0) = H12.transpose();
    return H;
}

/// s = q^2 / c with q = d0.(d1 x d2) and c = |d1 x d2|^2: the squared distance of the point d0 from the
/// plane through the origin spanned by d1, d2. Requires d1 x d2 != 0.
KOKKOS_INLINE_FUNCTION double plane_distance(const Vec3& d0, const Vec3& d1, const Vec3& d2) {
    const Vec3 n = cross(d1, d2);
    const double q = d0.dot(n);
    return q * q / n.squaredNorm();
}

/// Gradient of plane_distance in (d0, d1, d2): with sigma = q / c,
/// ds = 2 sigma dq - sigma^2 dc, dq/dd0 = d1 x d2, dq/dd1 = d2 x d0, dq/dd2 = d0 x d1.
KOKKOS_INLINE_FUNCTION Vec9 plane_distance_gradient(const Vec3& d0, const Vec3& d1, const Vec3& d2) {
    const Vec3 n = cross(d1, d2);
    const double c = n.squaredNorm();
    const double sigma = d0.dot(n) / c;
    Vec9 gq;
    gq.segment<3>(0) = n;
    gq.segment<3>(3) = cross(d2, d0);
    gq.segment<3>(6) = cross(d0, d1);
    Vec9 gc = Vec9::Zero();
    gc.segment<6>(3) = cross_squared_norm_gradient(d1, d2);
    return 2.0 * sigma * gq - sigma * sigma * gc;
}

/// Hessian of plane_distance in (d0, d1, d2):
/// H = (2 / c) (dq - sigma dc)(dq - sigma dc)^T + 2 sigma d2q - sigma^2 d2c,
/// where d2q has the off-diagonal blocks (0,1) = -[d2]x, (1,2) = -[d0]x, (2,0) = -[d1]x (and their
/// transposes) and d2c is cross_squared_norm_hessian on the (d1, d2) blocks.
KOKKOS_INLINE_FUNCTION Mat9 plane_distance_hessian(const Vec3& d0, const Vec3& d1, const Vec3& d2) {
    const Vec3 n = cross(d1, d2);
    const double c = n.squaredNorm();
    const double sigma = d0.dot(n) / c;
    Vec9 gq;
    gq.segment<3>(0) = n;
    gq.segment<3>(3) = cross(d2, d0);
    gq.segment<3>(6) = cross(d0, d1);
    Vec9 gc = Vec9::Zero();
    gc.segment<6>(3) = cross_squared_norm_gradient(d1, d2);
    Mat9 Hq = Mat9::Zero();
    Hq.block<3, 3>(0, 3) = -cross_matrix(d2);
    Hq.block<3, 3>(3, 0) = cross_matrix(d2);
    Hq.block<3, 3>(3, 6) = -cross_matrix(d0);
    Hq.block<3, 3>(6, 3) = cross_matrix(d0);
    Hq.block<3, 3>(6, 0) = -cross_matrix(d1);
    Hq.block<3, 3>(0, 6) = cross_matrix(d1);
    const Vec9 g = gq - sigma * gc;
    Mat9 H = (2.0 / c) * g * g.transpose() + 2.0 * sigma * Hq;
    H.block<6, 6>(3, 3) -= sigma * sigma * cross_squared_norm_hessian(d1, d2);
    return H;
}

} // namespace intact::kernels::detail
