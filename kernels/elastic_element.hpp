#pragma once
/// @file elastic_element.hpp
/// @brief Elastic energy of one linear tet with its gradient and (PSD-projected or exact) Hessian,
/// templated on the material (any of the material_*.hpp structs).

#include "kernels/small_matrix.hpp"
#include "kernels/tet_geometry.hpp"

namespace intact::kernels {

/// Elastic energy V psi(F) of one tet (J), F = Ds(x) Dm^{-1}, and optionally
/// - gradient: d(V psi)/dx = V (dF/dx)^T vec(P) (N; 12-vector, node-major: entry 3a + i);
/// - hessian: V (dF/dx)^T A (dF/dx) (N/m, 12x12 symmetric). With `project` (the default) A =
///   material.projected_hessian(F) and the result is PSD (IPC spec section 7.2); without it A =
///   material.hessian(F), the exact second derivative, indefinite where the material is (compressed or
///   twisted neo-Hookean elements): a Newton iteration near its solution needs that curvature to converge
///   quadratically.
/// x: the 4 current node positions (m); Dm_inv, rest_volume from rest_shape_inverse / rest_volume.
/// Null pointers skip that work. If psi is infinite (neo-Hookean with J <= 0) the energy is +infinity
/// and the gradient and Hessian are set to zero rather than to non-finite values. Device-callable.
template <class Material>
KOKKOS_INLINE_FUNCTION double elastic_element(const Material& material,
                                              const Vec3 x[4],
                                              const Mat3& Dm_inv,
                                              double rest_volume,
                                              Vec12* gradient,
                                              Mat12* hessian,
                                              bool project = true) {
    const Mat3 F = deformation_gradient(x, Dm_inv);
    const double psi = material.energy(F);
    if (!is_finite(psi)) {
        if (gradient) {
            gradient->setZero();
        }
        if (hessian) {
            hessian->setZero();
        }
        return psi;
    }
    if (gradient || hessian) {
        const Mat43 G = shape_function_gradients(Dm_inv);
        if (gradient) {
            *gradient = rest_volume * gradient_from_pk1(G, material.pk1(F));
        }
        if (hessian) {
            const Mat9 dpdf = project ? material.projected_hessian(F) : material.hessian(F);
            *hessian = hessian_from_dpdf(G, rest_volume * dpdf);
        }
    }
    return rest_volume * psi;
}

/// Change of the elastic energy V psi(F) of one tet (J) from corners x to x + step, keeping the digits of
/// small changes: the plain difference V psi(F1) - V psi(F0) carries the rounding of psi (about mu V eps
/// near rest, where tr(F^T F) - 3 cancels), more than a converging Newton step gains on a stiff body. For
/// a small step (||dF||_F <= 1e-3, det F0 >= 0.5, det(F0 + dF) > 0) it integrates the stress along the
/// step, int_0^1 P(F0 + s dF) : dF ds, by 3-point Gauss-Legendre (error O(||dF||^7)), dF from the corner
/// steps; otherwise it takes the difference (+infinity when the trial inverts a neo-Hookean element).
/// Device-callable.
template <class Material>
KOKKOS_INLINE_FUNCTION double elastic_energy_change(
    const Material& material, const Vec3 x[4], const Vec3 step[4], const Mat3& Dm_inv, double rest_volume) {
    const Mat3 F0 = deformation_gradient(x, Dm_inv);
    const Mat3 dF = deformation_gradient(step, Dm_inv);
    if (dF.squaredNorm() <= 1e-6 && det(F0) >= 0.5 && det(Mat3(F0 + dF)) > 0.0) {
        const double half_width = 0.5 * ::sqrt(0.6);
        const double nodes[3] = {0.5 - half_width, 0.5, 0.5 + half_width};
        const double weights[3] = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};
        double change = 0.0;
        for (int k = 0; k < 3; ++k) {
            const Mat3 F = F0 + nodes[k] * dF;
            change += weights[k] * material.pk1(F).cwiseProduct(dF).sum();
        }
        return rest_volume * change;
    }
    Vec3 moved[4];
    for (int a = 0; a < 4; ++a) {
        moved[a] = x[a] + step[a];
    }
    const double after = material.energy(deformation_gradient(moved, Dm_inv));
    if (!is_finite(after)) {
        return after;
    }
    return rest_volume * (after - material.energy(F0));
}

} // namespace intact::kernels
