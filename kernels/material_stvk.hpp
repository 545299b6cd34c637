#pragma once
/// @file material_stvk.hpp
/// @brief Saint Venant-Kirchhoff elasticity.

#include "kernels/isotropic_hessian.hpp"
#include "kernels/lame_parameters.hpp"
#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// psi(F) = mu E:E + lambda/2 (tr E)^2,  E = (F^T F - I) / 2 (Green strain). Polynomial in F, so defined
/// for inverted F too (it resists compression only weakly: psi stays finite as J -> 0).
/// Build with lame_from_youngs<StVK>(E, nu). All members are device-callable.
struct StVK {
    double mu;     ///< Lamé mu (Pa)
    double lambda; ///< Lamé lambda (Pa)

    static constexpr bool is_invertible = true;

    /// Energy density per unit rest volume (Pa).
    KOKKOS_INLINE_FUNCTION double energy(const Mat3& F) const {
        const Mat3 E = 0.5 * (F.transpose() * F - Mat3::Identity());
        const double tr = E.trace();
        return mu * E.squaredNorm() + 0.5 * lambda * tr * tr;
    }

    /// P = F S, S = 2 mu E + lambda tr(E) I (Pa).
    KOKKOS_INLINE_FUNCTION Mat3 pk1(const Mat3& F) const {
        const Mat3 E = 0.5 * (F.transpose() * F - Mat3::Identity());
        const Mat3 S = 2.0 * mu * E + lambda * E.trace() * Mat3::Identity();
        return F * S;
    }

    /// d vec(P) / d vec(F) (9x9, vec column-major; Pa):
    /// H_(ij)(kl) = delta_ik S_lj + mu F_il F_kj + mu delta_jl (F F^T)_ik + lambda F_ij F_kl.
    KOKKOS_INLINE_FUNCTION Mat9 hessian(const Mat3& F) const {
        const Mat3 E = 0.5 * (F.transpose() * F - Mat3::Identity());
        const Mat3 S = 2.0 * mu * E + lambda * E.trace() * Mat3::Identity();
        const Mat3 FFt = F * F.transpose();
        Mat9 H;
        for (int l = 0; l < 3; ++l) {
            for (int k = 0; k < 3; ++k) {
                for (int j = 0; j < 3; ++j) {
                    for (int i = 0; i < 3; ++i) {
                        double h = mu * F(i, l) * F(k, j) + lambda * F(i, j) * F(k, l);
                        if (i == k) {
                            h += S(l, j);
                        }
                        if (j == l) {
                            h += mu * FFt(i, k);
                        }
                        H(i + 3 * j, k + 3 * l) = h;
                    }
                }
            }
        }
        return H;
    }

    /// Derivatives in the signed singular values, I = sum sigma^2:
    /// psi_i = mu (sigma_i^2 - 1) sigma_i + lambda/2 (I - 3) sigma_i;
    /// d2psi_ii = mu (3 sigma_i^2 - 1) + lambda/2 (I - 3) + lambda sigma_i^2, d2psi_ij = lambda sigma_i
    /// sigma_j; twist = mu (s_i^2 - s_i s_j + s_j^2 - 1) + lambda/2 (I - 3), flip = mu (s_i^2 + s_i s_j +
    /// s_j^2 - 1) + ...
    KOKKOS_INLINE_FUNCTION SingularValueHessian singular_value_hessian(const Vec3& sigma) const {
        const double volumetric = 0.5 * lambda * (sigma.squaredNorm() - 3.0);
        SingularValueHessian h;
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                h.d2psi(i, j) = lambda * sigma(i) * sigma(j);
            }
            h.d2psi(i, i) += mu * (3.0 * sigma(i) * sigma(i) - 1.0) + volumetric;
        }
        for (int k = 0; k < 3; ++k) {
            const double si = sigma(k == 0 ? 1 : 0);
            const double sj = sigma(k == 2 ? 1 : 2);
            const double squares = si * si + sj * sj - 1.0;
            h.twist(k) = mu * (squares - si * sj) + volumetric;
            h.flip(k) = mu * (squares + si * sj) + volumetric;
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
