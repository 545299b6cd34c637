#pragma once
/// @file isotropic_hessian.hpp
/// @brief The analytic eigensystem of d^2 psi / dF^2 for an isotropic energy psi(F) = psi(sigma) of the
/// signed singular values (Smith, De Goes, Kim 2019, "Analytic eigensystems for isotropic distortion
/// energies"; Teran et al. 2005). With F = U diag(sigma) V^T the 9 eigenpairs are:
/// - three "scaling" modes vec(U diag(e) V^T), e an eigenvector of the 3x3 matrix d^2 psi / d sigma^2;
/// - for each pair (i, j) a "twist" mode vec(U (e_i e_j^T - e_j e_i^T) V^T) / sqrt 2 with eigenvalue
///   (psi_i + psi_j) / (sigma_i + sigma_j), and a "flip" mode vec(U (e_i e_j^T + e_j e_i^T) V^T) / sqrt 2
///   with eigenvalue (psi_i - psi_j) / (sigma_i - sigma_j), psi_i = d psi / d sigma_i.
/// Each material writes the twist and flip eigenvalues in a closed form without the removable 0/0 at
/// equal singular values, which keeps the Hessian exact when sigma_i ~ sigma_j.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Second-order data of an isotropic energy in signed singular values. Pairs are indexed by the index
/// they leave out: pair 0 = (1, 2), pair 1 = (0, 2), pair 2 = (0, 1).
struct SingularValueHessian {
    Mat3 d2psi; ///< d^2 psi / d sigma_i d sigma_j (symmetric)
    Vec3 twist; ///< twist eigenvalue of each pair, (psi_i + psi_j) / (sigma_i + sigma_j)
    Vec3 flip;  ///< flip eigenvalue of each pair, (psi_i - psi_j) / (sigma_i - sigma_j)
};

/// d vec(P) / d vec(F) (9x9, vec column-major) assembled from its eigensystem; with project = true every
/// negative eigenvalue is replaced by 0, which gives the nearest PSD matrix (Teran et al. 2005).
KOKKOS_INLINE_FUNCTION Mat9 isotropic_hessian(const Svd3& svd, const SingularValueHessian& h, bool project) {
    const Vec3 u[3] = {svd.U.col(0), svd.U.col(1), svd.U.col(2)};
    const Vec3 v[3] = {svd.V.col(0), svd.V.col(1), svd.V.col(2)};

    // Scaling modes: H += D P D^T with D = [vec(u0 v0^T), vec(u1 v1^T), vec(u2 v2^T)] (9x3) and P the
    // 3x3 block, projected only when it is not positive definite (Sylvester's test on the leading minors
    // skips the eigen-decomposition in the common case).
    Mat3 P = h.d2psi;
    if (project) {
        const double m1 = P(0, 0);
        const double m2 = P(0, 0) * P(1, 1) - P(0, 1) * P(1, 0);
        if (!(m1 > 0.0 && m2 > 0.0 && det(P) > 0.0)) {
            Vec3 w;
            Mat3 Q;
            symmetric_eigen<3>(P, w, Q);
            for (int m = 0; m < 3; ++m) {
                w(m) = w(m) > 0.0 ? w(m) : 0.0;
            }
            P = Q * w.asDiagonal() * Q.transpose();
        }
    }
    Eigen::Matrix<double, 9, 3> D;
    for (int m = 0; m < 3; ++m) {
        D.col(m) = vec_outer(u[m], v[m]);
    }
    const Eigen::Matrix<double, 9, 3> DP = D * P;
    Mat9 H;
    H.noalias() = DP * D.transpose();

    // Twist and flip modes of each pair.
    const double inv_sqrt2 = 0.70710678118654752440;
    for (int k = 0; k < 3; ++k) {
        const int i = k == 0 ? 1 : 0;
        const int j = k == 2 ? 1 : 2;
        const Vec9 a = vec_outer(u[i], v[j]);
        const Vec9 b = vec_outer(u[j], v[i]);
        const double twist = project && h.twist(k) < 0.0 ? 0.0 : h.twist(k);
        const double flip = project && h.flip(k) < 0.0 ? 0.0 : h.flip(k);
        if (twist != 0.0) {
            const Vec9 q = inv_sqrt2 * (a - b);
            H.noalias() += twist * q * q.transpose();
        }
        if (flip != 0.0) {
            const Vec9 q = inv_sqrt2 * (a + b);
            H.noalias() += flip * q * q.transpose();
        }
    }
    return H;
}

} // namespace intact::kernels
