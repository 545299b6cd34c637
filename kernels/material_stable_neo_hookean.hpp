#pragma once
/// @file material_stable_neo_hookean.hpp
/// @brief Stable neo-Hookean elasticity (Smith, De Goes, Kim 2018, "Stable Neo-Hookean Flesh
/// Simulation"): smooth and finite for every F, inverted ones included.

#include "kernels/isotropic_hessian.hpp"
#include "kernels/lame_parameters.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// The paper's standard form (their eq. 14 with the log term of section 3.4):
///   psi(F) = mu'/2 (I_C - 3) + lambda'/2 (J - alpha)^2 - mu'/2 ln(I_C + 1) - psi_0,
///   I_C = tr(F^T F), J = det F, alpha = 1 + 3 mu' / (4 lambda')  (zero stress at F = I),
/// with the paper's re-parameterisation mu' = 4/3 mu, lambda' = lambda + 5/6 mu, so that the small-strain
/// response equals linear elasticity with the Lamé parameters (mu, lambda) stored here. The constant
/// psi_0 = lambda'/2 (1 - alpha)^2 - mu'/2 ln 4 makes psi(I) = 0 (it changes no derivative).
/// Invertible. Build with lame_from_youngs<StableNeoHookean>(E, nu). All members are device-callable.
struct StableNeoHookean {
    double mu;     ///< Lamé mu (Pa) of the matching linear material
    double lambda; ///< Lamé lambda (Pa) of the matching linear material

    static constexpr bool is_invertible = true;

    KOKKOS_INLINE_FUNCTION double model_mu() const { return 4.0 / 3.0 * mu; }
    KOKKOS_INLINE_FUNCTION double model_lambda() const { return lambda + 5.0 / 6.0 * mu; }
    KOKKOS_INLINE_FUNCTION double alpha() const { return 1.0 + 0.75 * model_mu() / model_lambda(); }

    /// Energy density per unit rest volume (Pa).
    KOKKOS_INLINE_FUNCTION double energy(const Mat3& F) const {
        const double m = model_mu();
        const double l = model_lambda();
        const double a = alpha();
        const double I_C = F.squaredNorm();
        const double J = det(F);
        const double psi_0 = 0.5 * l * (1.0 - a) * (1.0 - a) - 0.5 * m * ::log(4.0);
        return 0.5 * m * (I_C - 3.0) + 0.5 * l * (J - a) * (J - a) - 0.5 * m * ::log(I_C + 1.0) - psi_0;
    }

    /// P = mu' I_C / (I_C + 1) F + lambda' (J - alpha) cof F (Pa).
    KOKKOS_INLINE_FUNCTION Mat3 pk1(const Mat3& F) const {
        const double m = model_mu();
        const double I_C = F.squaredNorm();
        const Mat3 C = cofactor(F);
        const double J = F.col(0).dot(C.col(0));
        return (m * I_C / (I_C + 1.0)) * F + (model_lambda() * (J - alpha())) * C;
    }

    /// d vec(P) / d vec(F) (9x9, vec column-major; Pa):
    /// mu' I_C/(I_C+1) I + 2 mu'/(I_C+1)^2 vec F vec F^T + lambda' g g^T + lambda' (J - alpha) H_J,
    /// g = vec cof F, H_J = d^2 J / dF^2 (blocks of cross-product matrices of the columns of F).
    KOKKOS_INLINE_FUNCTION Mat9 hessian(const Mat3& F) const {
        const double m = model_mu();
        const double l = model_lambda();
        const double I_C = F.squaredNorm();
        const Mat3 C = cofactor(F);
        const double J = F.col(0).dot(C.col(0));
        const Vec9 f = vec(F);
        const Vec9 g = vec(C);
        Mat9 H = (2.0 * m / ((I_C + 1.0) * (I_C + 1.0))) * f * f.transpose() + l * g * g.transpose();
        const double s = l * (J - alpha());
        const Mat3 X0 = s * cross_matrix(F.col(0));
        const Mat3 X1 = s * cross_matrix(F.col(1));
        const Mat3 X2 = s * cross_matrix(F.col(2));
        H.block<3, 3>(0, 3) -= X2;
        H.block<3, 3>(0, 6) += X1;
        H.block<3, 3>(3, 0) += X2;
        H.block<3, 3>(3, 6) -= X0;
        H.block<3, 3>(6, 0) -= X1;
        H.block<3, 3>(6, 3) += X0;
        const double a = m * I_C / (I_C + 1.0);
        for (int r = 0; r < 9; ++r) {
            H(r, r) += a;
        }
        return H;
    }

    /// Derivatives in the signed singular values. With a = mu' I_C / (I_C + 1), pi_i = sigma_j sigma_k:
    /// psi_i = a sigma_i + lambda' (J - alpha) pi_i;
    /// d2psi_ij = a delta_ij + 2 mu' sigma_i sigma_j / (I_C + 1)^2 + lambda' pi_i pi_j
    ///            + lambda' (J - alpha) sigma_k [i != j];
    /// twist_k = a + lambda' (J - alpha) sigma_k, flip_k = a - lambda' (J - alpha) sigma_k.
    KOKKOS_INLINE_FUNCTION SingularValueHessian singular_value_hessian(const Vec3& sigma) const {
        const double m = model_mu();
        const double l = model_lambda();
        const double I_C = sigma.squaredNorm();
        const double J = sigma(0) * sigma(1) * sigma(2);
        const double a = m * I_C / (I_C + 1.0);
        const double b = 2.0 * m / ((I_C + 1.0) * (I_C + 1.0));
        const double s = l * (J - alpha());
        const Vec3 pi(sigma(1) * sigma(2), sigma(0) * sigma(2), sigma(0) * sigma(1));
        SingularValueHessian h;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                h.d2psi(i, j) = b * sigma(i) * sigma(j) + l * pi(i) * pi(j);
                if (i != j) {
                    h.d2psi(i, j) += s * sigma(3 - i - j);
                }
            }
            h.d2psi(i, i) += a;
        }
        for (int k = 0; k < 3; ++k) {
            h.twist(k) = a + s * sigma(k);
            h.flip(k) = a - s * sigma(k);
        }
        return h;
    }

    /// hessian(F) with its negative eigenvalues clamped to 0 (PSD), via the analytic eigensystem.
    KOKKOS_INLINE_FUNCTION Mat9 projected_hessian(const Mat3& F) const {
        const Svd3 svd = svd3(F);
        return isotropic_hessian(svd, singular_value_hessian(svd.sigma), true);
    }
};

} // namespace intact::kernels
