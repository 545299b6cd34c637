#pragma once
/// @file shell_membrane.hpp
/// @brief Membrane (in-plane) elasticity of a linear triangle of a shell: rest frame, the 3×2
/// deformation gradient, two membrane materials and the element energy with its gradient and
/// PSD-projected Hessian. Device-callable, allocation-free.
///
/// A rest triangle X0, X1, X2 gets an orthonormal frame (t1 along X1 − X0, t2 in its plane), in which its
/// edges are the columns of the 2×2 D_m. The deformation gradient maps that plane to 3D:
///     F = D_s D_m⁻¹ (3×2),  D_s = [x1 − x0, x2 − x0],
/// so F = Σ_a x_a g_aᵀ with g1, g2 the rows of D_m⁻¹ and g0 = −g1 − g2. The membrane energy is
/// A h ψ(F) with A the rest area and h the thickness; ψ sees only C = FᵀF, so it is invariant under
/// rotations of the deformed triangle and indifferent to its normal (bending is the hinges' job).

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

using Mat2 = Eigen::Matrix<double, 2, 2>;
using Mat32 = Eigen::Matrix<double, 3, 2>;

/// Plane-stress λ of a thin sheet, 2μλ/(λ + 2μ) = Eν/(1 − ν²) (Pa): with it, the membrane's uniaxial
/// stress-strain slope is Young's modulus E.
KOKKOS_INLINE_FUNCTION double plane_stress_lambda(double mu, double lambda) {
    return 2.0 * mu * lambda / (lambda + 2.0 * mu);
}

/// det A of a 2×2 matrix (written out: Eigen's determinant() needs the LU module).
KOKKOS_INLINE_FUNCTION double det2(const Mat2& A) {
    return A(0, 0) * A(1, 1) - A(0, 1) * A(1, 0);
}

/// A⁻¹ of a 2×2 matrix (det A ≠ 0).
KOKKOS_INLINE_FUNCTION Mat2 inverse2(const Mat2& A) {
    Mat2 inv;
    inv << A(1, 1), -A(0, 1), -A(1, 0), A(0, 0);
    return inv / det2(A);
}

/// vec of a 3×2 matrix, column-major: v[i + 3j] = F(i, j).
KOKKOS_INLINE_FUNCTION Vec6 vec32(const Mat32& F) {
    Vec6 v;
    for (int j = 0; j < 2; ++j) {
        for (int i = 0; i < 3; ++i) {
            v(i + 3 * j) = F(i, j);
        }
    }
    return v;
}

/// Saint Venant–Kirchhoff membrane: ψ = μ E:E + λ/2 (tr E)², E = (C − I)/2 (2×2 Green strain), with
/// the plane-stress λ (plane_stress_lambda). Polynomial, defined for every F.
struct MembraneStVK {
    double mu;     ///< Lamé μ (Pa)
    double lambda; ///< plane-stress λ (Pa)

    KOKKOS_INLINE_FUNCTION double energy(const Mat32& F) const {
        const Mat2 E = 0.5 * (F.transpose() * F - Mat2::Identity());
        const double tr = E.trace();
        return mu * E.squaredNorm() + 0.5 * lambda * tr * tr;
    }
    /// P = F S, S = 2μE + λ tr(E) I (Pa).
    KOKKOS_INLINE_FUNCTION Mat32 pk1(const Mat32& F) const {
        const Mat2 E = 0.5 * (F.transpose() * F - Mat2::Identity());
        return F * (2.0 * mu * E + lambda * E.trace() * Mat2::Identity());
    }
    /// dP along dF: dF S + F dS, dS = 2μ dE + λ tr(dE) I, dE = (dFᵀF + FᵀdF)/2.
    KOKKOS_INLINE_FUNCTION Mat32 pk1_differential(const Mat32& F, const Mat32& dF) const {
        const Mat2 E = 0.5 * (F.transpose() * F - Mat2::Identity());
        const Mat2 S = 2.0 * mu * E + lambda * E.trace() * Mat2::Identity();
        const Mat2 dE = 0.5 * (dF.transpose() * F + F.transpose() * dF);
        const Mat2 dS = 2.0 * mu * dE + lambda * dE.trace() * Mat2::Identity();
        return dF * S + F * dS;
    }
};

/// Compressible neo-Hookean membrane: ψ = μ/2 (tr C − 2) − μ ln J + λ/2 (ln J)², J = √det C (the area
/// ratio), with the plane-stress λ. +∞ for a triangle collapsed to a line (det C ≤ 0).
struct MembraneNeoHookean {
    double mu;     ///< Lamé μ (Pa)
    double lambda; ///< plane-stress λ (Pa)

    KOKKOS_INLINE_FUNCTION double energy(const Mat32& F) const {
        const Mat2 C = F.transpose() * F;
        const double det_c = det2(C);
        if (!(det_c > 0.0)) {
            return infinity();
        }
        const double log_j = 0.5 * ::log(det_c);
        return 0.5 * mu * (C.trace() - 2.0) - mu * log_j + 0.5 * lambda * log_j * log_j;
    }
    /// P = μF + (λ ln J − μ) F C⁻¹ (Pa); d ln J = F C⁻¹ : dF.
    KOKKOS_INLINE_FUNCTION Mat32 pk1(const Mat32& F) const {
        const Mat2 C = F.transpose() * F;
        const double log_j = 0.5 * ::log(det2(C));
        return mu * F + (lambda * log_j - mu) * (F * inverse2(C));
    }
    /// dP = μ dF + λ (F C⁻¹ : dF) F C⁻¹ + (λ ln J − μ)(dF C⁻¹ − F C⁻¹ dC C⁻¹), dC = dFᵀF + FᵀdF.
    KOKKOS_INLINE_FUNCTION Mat32 pk1_differential(const Mat32& F, const Mat32& dF) const {
        const Mat2 C = F.transpose() * F;
        const Mat2 C_inv = inverse2(C);
        const double log_j = 0.5 * ::log(det2(C));
        const Mat32 B = F * C_inv;
        const Mat2 dC = dF.transpose() * F + F.transpose() * dF;
        return mu * dF + lambda * B.cwiseProduct(dF).sum() * B +
               (lambda * log_j - mu) * (dF * C_inv - B * dC * C_inv);
    }
};

/// D_m⁻¹ (2×2, 1/m) of a rest triangle in its own frame (t1 along X1 − X0); see the file comment.
/// The rest triangle must not be degenerate (the scene reader rejects such meshes).
KOKKOS_INLINE_FUNCTION Mat2 triangle_rest_inverse(const Vec3 X[3]) {
    const Vec3 e1 = X[1] - X[0];
    const Vec3 e2 = X[2] - X[0];
    const Vec3 t1 = e1 / e1.norm();
    const Vec3 n = cross(e1, e2);
    const Vec3 t2 = cross(n / n.norm(), t1);
    Mat2 Dm;
    Dm << e1.dot(t1), e2.dot(t1), e1.dot(t2), e2.dot(t2);
    return inverse2(Dm);
}

/// Area of the triangle X0 X1 X2 (m²).
KOKKOS_INLINE_FUNCTION double triangle_area(const Vec3 X[3]) {
    return 0.5 * cross(Vec3(X[1] - X[0]), Vec3(X[2] - X[0])).norm();
}

/// F = D_s D_m⁻¹ (3×2).
KOKKOS_INLINE_FUNCTION Mat32 membrane_deformation_gradient(const Vec3 x[3], const Mat2& Dm_inv) {
    Mat32 Ds;
    Ds.col(0) = x[1] - x[0];
    Ds.col(1) = x[2] - x[0];
    return Ds * Dm_inv;
}

/// Membrane energy A h ψ(F) of one triangle (J), and optionally
/// - gradient (9, vertex-major 3a + i; N): A h Σ_j P_ij g_a(j);
/// - hessian (9×9; N/m): A h Σ_jl T_(ij)(kl) g_a(j) g_b(l) with T = dP/dF (6×6), built column by column
///   from pk1_differential and, when `project`, replaced by its nearest PSD matrix first; since the map
///   from T to the element Hessian is a congruence, the projected element Hessian is PSD.
/// `weight` = A h (m³). A non-finite ψ gives +∞ with zero derivatives. Null pointers skip work.
template <class Material>
KOKKOS_INLINE_FUNCTION double membrane_element(const Material& material,
                                               const Vec3 x[3],
                                               const Mat2& Dm_inv,
                                               double weight,
                                               Vec9* gradient,
                                               Mat9* hessian,
                                               bool project = true) {
    const Mat32 F = membrane_deformation_gradient(x, Dm_inv);
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
    // g_a as the rows of a 3×2 matrix G.
    Eigen::Matrix<double, 3, 2> G;
    G.row(1) = Dm_inv.row(0);
    G.row(2) = Dm_inv.row(1);
    G.row(0) = -G.row(1) - G.row(2);
    if (gradient) {
        const Mat32 P = material.pk1(F);
        for (int a = 0; a < 3; ++a) {
            const Vec3 f = P * G.row(a).transpose();
            gradient->segment<3>(3 * a) = weight * f;
        }
    }
    if (hessian) {
        Mat6 T;
        for (int l = 0; l < 2; ++l) {
            for (int k = 0; k < 3; ++k) {
                Mat32 dF = Mat32::Zero();
                dF(k, l) = 1.0;
                T.col(k + 3 * l) = vec32(material.pk1_differential(F, dF));
            }
        }
        T = 0.5 * (T + T.transpose());
        if (project) {
            project_psd<6>(T);
        }
        for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
                for (int i = 0; i < 3; ++i) {
                    for (int k = 0; k < 3; ++k) {
                        double sum = 0.0;
                        for (int j = 0; j < 2; ++j) {
                            for (int l = 0; l < 2; ++l) {
                                sum += T(i + 3 * j, k + 3 * l) * G(a, j) * G(b, l);
                            }
                        }
                        (*hessian)(3 * a + i, 3 * b + k) = weight * sum;
                    }
                }
            }
        }
    }
    return weight * psi;
}

} // namespace intact::kernels
