#pragma once
/// @file material_neo_hookean.hpp
/// @brief Compressible neo-Hookean elasticity in the form IPC uses (the default model, spec section 1.4).

#include "kernels/isotropic_hessian.hpp"
#include "kernels/lame_parameters.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// psi(F) = mu/2 (tr(F^T F) - 3) - mu ln J + lambda/2 (ln J)^2,  J = det F   (J/m^3 = Pa).
/// Non-invertible: psi -> +infinity as J -> 0+, and energy() returns +infinity for J <= 0; pk1, hessian
/// and projected_hessian need J > 0 (the inversion-aware step bound keeps the solver there).
/// Build with lame_from_youngs<NeoHookean>(E, nu). All members are device-callable.
struct NeoHookean {
    double mu;     ///< Lamé mu (Pa)
    double lambda; ///< Lamé lambda (Pa)

    /// Whether the model is defined for det F <= 0.
    static constexpr bool is_invertible = false;

    /// Energy density per unit rest volume (Pa); +infinity for J <= 0.
    KOKKOS_INLINE_FUNCTION double energy(const Mat3& F) const {
        const double J = det(F);
        if (!(J > 0.0)) {
            return infinity();
        }
        const double log_J = ::log(J);
        return 0.5 * mu * (F.squaredNorm() - 3.0) - mu * log_J + 0.5 * lambda * log_J * log_J;
    }

    /// First Piola-Kirchhoff stress P = d psi / dF = mu (F - F^{-T}) + lambda ln J F^{-T} (Pa). J > 0.
    KOKKOS_INLINE_FUNCTION Mat3 pk1(const Mat3& F) const {
        const Mat3 C = cofactor(F);
        const double J = F.col(0).dot(C.col(0));
        const Mat3 F_inv_t = C / J;
        return mu * F + (lambda * ::log(J) - mu) * F_inv_t;
    }

    /// d vec(P) / d vec(F) (9x9, vec column-major; Pa), from the closed form
    /// H_(ij)(kl) = mu delta + lambda A_ij A_kl + (mu - lambda ln J) A_il A_kj,  A = F^{-T}. J > 0.
    KOKKOS_INLINE_FUNCTION Mat9 hessian(const Mat3& F) const {
        const Mat3 C = cofactor(F);
        const double J = F.col(0).dot(C.col(0));
        const Mat3 A = C / J;
        const double twist_coef = mu - lambda * ::log(J);
        Mat9 H;
        for (int l = 0; l < 3; ++l) {
            for (int k = 0; k < 3; ++k) {
                for (int j = 0; j < 3; ++j) {
                    for (int i = 0; i < 3; ++i) {
                        H(i + 3 * j, k + 3 * l) = lambda * A(i, j) * A(k, l) + twist_coef * A(i, l) * A(k, j);
                    }
                }
            }
        }
        for (int r = 0; r < 9; ++r) {
            H(r, r) += mu;
        }
        return H;
    }

    /// Derivatives in the singular values sigma (all > 0). With c = lambda ln J - mu:
    /// psi_i = mu sigma_i + c / sigma_i; d2psi_ii = mu + (lambda - c) / sigma_i^2,
    /// d2psi_ij = lambda / (sigma_i sigma_j); twist = mu + c / (sigma_i sigma_j), flip = mu - c / (sigma_i
    /// sigma_j).
    KOKKOS_INLINE_FUNCTION SingularValueHessian singular_value_hessian(const Vec3& sigma) const {
        const double J = sigma(0) * sigma(1) * sigma(2);
        const double c = lambda * ::log(J) - mu;
        const Vec3 inv(1.0 / sigma(0), 1.0 / sigma(1), 1.0 / sigma(2));
        SingularValueHessian h;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                h.d2psi(i, j) = lambda * inv(i) * inv(j);
            }
            h.d2psi(i, i) += mu - c * inv(i) * inv(i);
        }
        for (int k = 0; k < 3; ++k) {
            // 1 / (sigma_i sigma_j) for the pair that leaves out k.
            const double inv_pair = sigma(k) / J;
            h.twist(k) = mu + c * inv_pair;
            h.flip(k) = mu - c * inv_pair;
        }
        return h;
    }

    /// hessian(F) with its negative eigenvalues clamped to 0 (PSD), via the analytic eigensystem.
    /// For J <= 0 (outside the model) returns mu I, the PSD part that is still defined.
    KOKKOS_INLINE_FUNCTION Mat9 projected_hessian(const Mat3& F) const {
        const Svd3 svd = svd3(F);
        if (!(svd.sigma(2) > 0.0)) {
            return mu * Mat9::Identity();
        }
        return isotropic_hessian(svd, singular_value_hessian(svd.sigma), true);
    }
};

} // namespace intact::kernels
