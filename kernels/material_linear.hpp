#pragma once
/// @file material_linear.hpp
/// @brief Small-strain linear elasticity (a reference model; not rotation-invariant).

#include "kernels/lame_parameters.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// psi(F) = mu eps:eps + lambda/2 (tr eps)^2,  eps = (F + F^T)/2 - I. Quadratic in F, so the Hessian is
/// constant: mu (I + K) + lambda vec(I) vec(I)^T (K: vec(A) -> vec(A^T)) = 2 mu P_dev + (2 mu + 3 lambda)
/// P_vol plus a zero block on skew-symmetric F. It is PSD for mu >= 0, 2 mu + 3 lambda >= 0 (every nu in
/// (-1, 0.5)); projected_hessian clamps the two coefficients, so it is exact for any parameters.
/// Build with lame_from_youngs<LinearElastic>(E, nu). All members are device-callable.
struct LinearElastic {
    double mu;     ///< Lamé mu (Pa)
    double lambda; ///< Lamé lambda (Pa)

    static constexpr bool is_invertible = true;

    /// Energy density per unit rest volume (Pa).
    KOKKOS_INLINE_FUNCTION double energy(const Mat3& F) const {
        const Mat3 eps = 0.5 * (F + F.transpose()) - Mat3::Identity();
        const double tr = eps.trace();
        return mu * eps.squaredNorm() + 0.5 * lambda * tr * tr;
    }

    /// P = 2 mu eps + lambda tr(eps) I (Pa).
    KOKKOS_INLINE_FUNCTION Mat3 pk1(const Mat3& F) const {
        const Mat3 eps = 0.5 * (F + F.transpose()) - Mat3::Identity();
        return 2.0 * mu * eps + lambda * eps.trace() * Mat3::Identity();
    }

    /// Constant d vec(P) / d vec(F) = deviatoric * P_dev + volumetric * P_vol (9x9; Pa).
    KOKKOS_INLINE_FUNCTION static Mat9 hessian_from_moduli(double deviatoric, double volumetric) {
        Mat9 H = Mat9::Zero();
        for (int j = 0; j < 3; ++j) {
            for (int i = 0; i < 3; ++i) {
                // P_sym = (I + K)/2: vec(A) -> vec(sym A).
                H(i + 3 * j, i + 3 * j) += 0.5 * deviatoric;
                H(i + 3 * j, j + 3 * i) += 0.5 * deviatoric;
            }
        }
        // P_vol = vec(I) vec(I)^T / 3; P_dev = P_sym - P_vol.
        const double c = (volumetric - deviatoric) / 3.0;
        for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
                H(4 * a, 4 * b) += c;
            }
        }
        return H;
    }

    /// d vec(P) / d vec(F) (9x9, vec column-major; Pa), independent of F.
    KOKKOS_INLINE_FUNCTION Mat9 hessian(const Mat3& /*F*/) const {
        return hessian_from_moduli(2.0 * mu, 2.0 * mu + 3.0 * lambda);
    }

    /// The PSD projection of hessian(): the deviatoric and volumetric eigenvalues clamped at 0.
    KOKKOS_INLINE_FUNCTION Mat9 projected_hessian(const Mat3& /*F*/) const {
        const double deviatoric = 2.0 * mu;
        const double volumetric = 2.0 * mu + 3.0 * lambda;
        return hessian_from_moduli(deviatoric > 0.0 ? deviatoric : 0.0, volumetric > 0.0 ? volumetric : 0.0);
    }
};

} // namespace intact::kernels
