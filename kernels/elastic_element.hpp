#pragma once
/// @file elastic_element.hpp
/// @brief Elastic energy of one linear tet with its gradient and PSD-projected Hessian, templated on the
/// material (any of the material_*.hpp structs).

#include "kernels/small_matrix.hpp"
#include "kernels/tet_geometry.hpp"

namespace intact::kernels {

/// Elastic energy V psi(F) of one tet (J), F = Ds(x) Dm^{-1}, and optionally
/// - gradient: d(V psi)/dx = V (dF/dx)^T vec(P) (N; 12-vector, node-major: entry 3a + i);
/// - projected_hessian: V (dF/dx)^T A (dF/dx) with A = material.projected_hessian(F) PSD, so the 12x12
///   result (N/m) is symmetric PSD (IPC spec section 7.2).
/// x: the 4 current node positions (m); Dm_inv, rest_volume from rest_shape_inverse / rest_volume.
/// Null pointers skip that work. If psi is infinite (neo-Hookean with J <= 0) the energy is +infinity
/// and the gradient and Hessian are set to zero rather than to non-finite values. Device-callable.
template <class Material>
KOKKOS_INLINE_FUNCTION double elastic_element(const Material& material,
                                              const Vec3 x[4],
                                              const Mat3& Dm_inv,
                                              double rest_volume,
                                              Vec12* gradient,
                                              Mat12* projected_hessian) {
    const Mat3 F = deformation_gradient(x, Dm_inv);
    const double psi = material.energy(F);
    if (!is_finite(psi)) {
        if (gradient) {
            gradient->setZero();
        }
        if (projected_hessian) {
            projected_hessian->setZero();
        }
        return psi;
    }
    if (gradient || projected_hessian) {
        const Mat43 G = shape_function_gradients(Dm_inv);
        if (gradient) {
            *gradient = rest_volume * gradient_from_pk1(G, material.pk1(F));
        }
        if (projected_hessian) {
            *projected_hessian = hessian_from_dpdf(G, rest_volume * material.projected_hessian(F));
        }
    }
    return rest_volume * psi;
}

} // namespace intact::kernels
