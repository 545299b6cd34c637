#pragma once
/// @file rod_energy.hpp
/// @brief Elasticity of a rod discretised as a polyline: stretching of each segment and bending at each
/// interior vertex, with gradients and PSD-projected Hessians. Device-callable, allocation-free.
///
/// Stretching of segment x0 x1 with rest length L̄ and stiffness k_s = E A (N):
///     E_s = ½ k_s L̄ (l/L̄ − 1)²,  l = |x1 − x0|  (Hooke's law on the engineering strain).
/// Bending at vertex x1 between e0 = x1 − x0 and e1 = x2 − x1 (after the discrete elastic rods of
/// Bergou et al. 2008, without twist): the curvature binormal κb = 2 e0 × e1 / (|e0||e1| + e0·e1) has
/// |κb| = 2 tan(φ/2) for the turning angle φ, and
///     E_b = k_b (|κb| − |κ̄b|)² / (2 l̄),  l̄ = (|ē0| + |ē1|)/2,
/// with k_b = E I (N m²): since φ ≈ κ l̄ for a smooth curve, this is ½ E I κ² over the vertex's share of
/// the rod. Without material frames the rod is isotropic and only the magnitude of a rest curvature is
/// kept (a rest-curved rod may bend either way). For a straight rest state (|κ̄b| = 0) E_b is smooth;
/// otherwise it has a cone at the straight state, where its derivatives are taken from the smooth part
/// |κb|² alone (the cone's subgradient 0). A folded-back vertex (φ = π) has infinite energy.

#include "kernels/second_order_dual.hpp"

namespace intact::kernels {

/// Stretching energy E_s (J) and optionally its gradient (6; N) and Hessian (6×6; N/m). On the edge
/// vector, ∇²E_s = (k_s/L̄) t tᵀ + k_s (l/L̄ − 1)/l (I − t tᵀ), t = (x1 − x0)/l; `project` clamps the
/// second coefficient at 0 (a compressed segment), which is exactly the nearest PSD matrix. A zero-length
/// segment gives the energy and zero derivatives.
KOKKOS_INLINE_FUNCTION double rod_stretch_element(const Vec3 x[2],
                                                  double rest_length,
                                                  double stiffness,
                                                  Vec6* gradient,
                                                  Mat6* hessian,
                                                  bool project = true) {
    const Vec3 e = x[1] - x[0];
    const double l = e.norm();
    const double strain = l / rest_length - 1.0;
    const double energy = 0.5 * stiffness * rest_length * strain * strain;
    if (!(l > 0.0)) {
        if (gradient) {
            gradient->setZero();
        }
        if (hessian) {
            hessian->setZero();
        }
        return energy;
    }
    const Vec3 t = e / l;
    if (gradient) {
        const Vec3 f = stiffness * strain * t;
        gradient->segment<3>(0) = -f;
        gradient->segment<3>(3) = f;
    }
    if (hessian) {
        double transverse = stiffness * strain / l;
        if (project && transverse < 0.0) {
            transverse = 0.0;
        }
        const Mat3 tt = t * t.transpose();
        const Mat3 K = (stiffness / rest_length) * tt + transverse * (Mat3::Identity() - tt);
        hessian->block<3, 3>(0, 0) = K;
        hessian->block<3, 3>(3, 3) = K;
        hessian->block<3, 3>(0, 3) = -K;
        hessian->block<3, 3>(3, 0) = -K;
    }
    return energy;
}

/// |κb| = 2 tan(φ/2) at the middle vertex of x[0..2] (1, dimensionless); +∞ when folded back.
KOKKOS_INLINE_FUNCTION double rod_curvature(const Vec3 x[3]) {
    const Vec3 e0 = x[1] - x[0];
    const Vec3 e1 = x[2] - x[1];
    const double denominator = e0.norm() * e1.norm() + e0.dot(e1);
    if (!(denominator > 0.0)) {
        return infinity();
    }
    return 2.0 * cross(e0, e1).norm() / denominator;
}

/// Bending weight k_b / (2 l̄) of a rest vertex stencil X[0..2] (N m).
KOKKOS_INLINE_FUNCTION double rod_bend_weight(const Vec3 X[3], double bending_stiffness) {
    const double voronoi = 0.5 * (Vec3(X[1] - X[0]).norm() + Vec3(X[2] - X[1]).norm());
    return bending_stiffness / (2.0 * voronoi);
}

/// Bending energy E_b = w (|κb| − κ̄)² (J), w = rod_bend_weight, κ̄ = |κ̄b| ≥ 0, and optionally its
/// gradient (9; N) and Hessian (9×9; N/m, projected to PSD when `project`). Null pointers skip work.
KOKKOS_INLINE_FUNCTION double rod_bend_element(const Vec3 x[3],
                                               double rest_curvature,
                                               double weight,
                                               Vec9* gradient,
                                               Mat9* hessian,
                                               bool project = true) {
    const double kappa = rod_curvature(x);
    if (!is_finite(kappa)) {
        if (gradient) {
            gradient->setZero();
        }
        if (hessian) {
            hessian->setZero();
        }
        return infinity();
    }
    const double energy = weight * (kappa - rest_curvature) * (kappa - rest_curvature);
    if (!gradient && !hessian) {
        return energy;
    }
    const DualVec3<9> p0 = stencil_point<9>(x[0], 0);
    const DualVec3<9> p1 = stencil_point<9>(x[1], 1);
    const DualVec3<9> p2 = stencil_point<9>(x[2], 2);
    const DualVec3<9> e0 = p1 - p0;
    const DualVec3<9> e1 = p2 - p1;
    const Dual2<9> denominator = dual_sqrt(dot(e0, e0) * dot(e1, e1)) + dot(e0, e1);
    const DualVec3<9> b = cross(e0, e1);
    // |κb|² = 4 |e0 × e1|² / (|e0||e1| + e0·e1)².
    const Dual2<9> kappa2 = 4.0 * (dot(b, b) / (denominator * denominator));
    Dual2<9> e = weight * kappa2;
    if (rest_curvature > 0.0 && kappa2.v > 1e-24) {
        // w (κ² − 2 κ̄ κ + κ̄²); the constant does not change derivatives.
        e = e - (2.0 * weight * rest_curvature) * dual_sqrt(kappa2);
    }
    if (gradient) {
        *gradient = e.g;
    }
    if (hessian) {
        *hessian = e.h;
        if (project) {
            project_psd<9>(*hessian);
        }
    }
    return energy;
}

} // namespace intact::kernels
