#pragma once
/// @file material_fixed_corotated.hpp
/// @brief Fixed-corotated elasticity (Stomakhin et al. 2012), IPC's invertible model (spec section 1.4).

#include "kernels/isotropic_hessian.hpp"
#include "kernels/lame_parameters.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// psi(F) = mu ||F - R||_F^2 + lambda/2 (J - 1)^2 = mu sum_i (sigma_i - 1)^2 + lambda/2 (J - 1)^2,
/// R the rotation of the polar decomposition, sigma the signed singular values (svd3's convention: the
/// smallest carries the sign of J). Invertible; smooth except where two signed singular values sum to
/// zero (R jumps there, e.g. F = diag(1, 1, -1)), where the twist eigenvalue is cut off at a finite value.
/// Build with lame_from_youngs<FixedCorotated>(E, nu). All members are device-callable.
struct FixedCorotated {
    double mu;     ///< Lamé mu (Pa)
    double lambda; ///< Lamé lambda (Pa)

    static constexpr bool is_invertible = true;

    /// Energy density per unit rest volume (Pa).
    KOKKOS_INLINE_FUNCTION double energy(const Mat3& F) const {
        const Svd3 svd = svd3(F);
        const double J = det(F);
        return mu * (svd.sigma - Vec3::Ones()).squaredNorm() + 0.5 * lambda * (J - 1.0) * (J - 1.0);
    }

    /// P = 2 mu (F - R) + lambda (J - 1) cof F (Pa).
    KOKKOS_INLINE_FUNCTION Mat3 pk1(const Mat3& F) const {
        const Mat3 R = polar_rotation(F);
        const Mat3 C = cofactor(F);
        const double J = F.col(0).dot(C.col(0));
        return 2.0 * mu * (F - R) + lambda * (J - 1.0) * C;
    }

    /// Derivatives in the signed singular values, pi_i = sigma_j sigma_k:
    /// psi_i = 2 mu (sigma_i - 1) + lambda (J - 1) pi_i;
    /// d2psi_ij = 2 mu delta_ij + lambda pi_i pi_j + lambda (J - 1) sigma_k [i != j];
    /// twist_k = 2 mu - 4 mu / (sigma_i + sigma_j) + lambda (J - 1) sigma_k,
    /// flip_k = 2 mu - lambda (J - 1) sigma_k.
    KOKKOS_INLINE_FUNCTION SingularValueHessian singular_value_hessian(const Vec3& sigma) const {
        const double J = sigma(0) * sigma(1) * sigma(2);
        const double s = lambda * (J - 1.0);
        const Vec3 pi(sigma(1) * sigma(2), sigma(0) * sigma(2), sigma(0) * sigma(1));
        SingularValueHessian h;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                h.d2psi(i, j) = lambda * pi(i) * pi(j);
                if (i != j) {
                    h.d2psi(i, j) += s * sigma(3 - i - j);
                }
            }
            h.d2psi(i, i) += 2.0 * mu;
        }
        for (int k = 0; k < 3; ++k) {
            const int i = k == 0 ? 1 : 0;
            const int j = k == 2 ? 1 : 2;
            // sigma_i + sigma_j >= 0 in svd3's convention; 0 only where R is discontinuous.
            double pair_sum = sigma(i) + sigma(j);
            pair_sum = pair_sum > 1e-12 ? pair_sum : 1e-12;
            h.twist(k) = 2.0 * mu - 4.0 * mu / pair_sum + s * sigma(k);
            h.flip(k) = 2.0 * mu - s * sigma(k);
        }
        return h;
    }

    /// d vec(P) / d vec(F) (9x9, vec column-major; Pa), from the eigensystem (dR/dF has no simpler form).
    KOKKOS_INLINE_FUNCTION Mat9 hessian(const Mat3& F) const {
        const Svd3 svd = svd3(F);
        return isotropic_hessian(svd, singular_value_hessian(svd.sigma), false);
    }

    /// hessian(F) with its negative eigenvalues clamped to 0 (PSD).
    KOKKOS_INLINE_FUNCTION Mat9 projected_hessian(const Mat3& F) const {
        const Svd3 svd = svd3(F);
        return isotropic_hessian(svd, singular_value_hessian(svd.sigma), true);
    }
};

} // namespace intact::kernels
