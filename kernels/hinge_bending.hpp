#pragma once
/// @file hinge_bending.hpp
/// @brief Discrete hinge bending of a shell: the dihedral angle of two triangles sharing an edge, and the
/// hinge energy with its gradient and its exact or PSD (Gauss–Newton) Hessian. Device-callable,
/// allocation-free.
///
/// Stencil order: x0, x1 the shared edge; x2 the third corner of triangle A; x3 the third corner of
/// triangle B. With e = x1 − x0, n_A = e × (x2 − x0), n_B = (x3 − x0) × e the bend angle is
///     θ = atan2((n_A × n_B)·e, |e| n_A·n_B) ∈ (−π, π],
/// zero for a flat pair, signed by the side to which the pair folds (n_A × n_B is parallel to e, so the
/// atan2 arguments are |e||n_A||n_B| (sin θ, cos θ)). The normals come from the stencil order, not from
/// the triangles' own orientations, so inconsistently oriented input meshes bend correctly too.
///
/// Energy (after the discrete-shells bending energy of Grinspun et al. 2003, calibrated here):
///     E = w (θ − θ̄)²,  w = k_b |ē|² / (2 (Ā_A + Ā_B)),
/// with k_b the bending stiffness (J; Eh³/(12(1 − ν²)) for a plate) and bars the rest values. Calibration:
/// for a grid of cells dx × dy bent into a cylinder of curvature κ about the y axis, the hinges on
/// the y-edges fold by θ = κ dx (the others stay flat), so each cell stores k_b dy² / (2 dx dy) (κ dx)²
/// = ½ k_b κ² dx dy, the plate's energy ½ D κ² per area. The energy depends on the mesh: a hinge's
/// two opposite corners are offset along its edge, so on right-triangle grids local twisting can undo part
/// of a fold, and a strip on square cells bends about 25% too easily (docs/codim.md, measured); cells
/// longer along the bending direction than across it bend correctly.
///
/// The angle's gradient and Hessian are closed forms; second-order forward differentiation
/// (second_order_dual.hpp) gives the kernel test's reference.

#include "kernels/second_order_dual.hpp"

namespace intact::kernels {

/// θ of the hinge x[0..3] (radians); 0 when a triangle is collapsed (no normal).
KOKKOS_INLINE_FUNCTION double dihedral_angle(const Vec3 x[4]) {
    const Vec3 e = x[1] - x[0];
    const Vec3 na = cross(e, Vec3(x[2] - x[0]));
    const Vec3 nb = cross(Vec3(x[3] - x[0]), e);
    return ::atan2(cross(na, nb).dot(e), e.norm() * na.dot(nb));
}

/// Weight w = k_b |ē|² / (2 (Ā_A + Ā_B)) of a rest hinge X[0..3] (J).
KOKKOS_INLINE_FUNCTION double hinge_weight(const Vec3 X[4], double bending_stiffness) {
    const Vec3 e = X[1] - X[0];
    const double areas = 0.5 * (cross(e, Vec3(X[2] - X[0])).norm() + cross(Vec3(X[3] - X[0]), e).norm());
    return bending_stiffness * e.squaredNorm() / (2.0 * areas);
}

/// ∇θ of the hinge x[0..3] (12, vertex-major; 1/m) in closed form (Bridson et al. 2003, in this file's
/// stencil order and sign): with a = n_A/|n_A|², b = n_B/|n_B|²,
///     ∇₂θ = −|e| a,   ∇₃θ = −|e| b,
///     ∇₀θ = −((x2 − x1)·ê a + (x3 − x1)·ê b),   ∇₁θ = (x2 − x0)·ê a + (x3 − x0)·ê b,
/// the same as dihedral_angle_dual's gradient (kernel test) at a fraction of its cost. Both triangles must
/// have a normal (hinge_element checks).
KOKKOS_INLINE_FUNCTION Vec12 dihedral_angle_gradient(const Vec3 x[4]) {
    const Vec3 e = x[1] - x[0];
    const double length = e.norm();
    const Vec3 unit = e / length;
    const Vec3 na = cross(e, Vec3(x[2] - x[0]));
    const Vec3 nb = cross(Vec3(x[3] - x[0]), e);
    const Vec3 a = na / na.squaredNorm();
    const Vec3 b = nb / nb.squaredNorm();
    Vec12 g;
    g.segment<3>(0) = -(Vec3(x[2] - x[1]).dot(unit) * a + Vec3(x[3] - x[1]).dot(unit) * b);
    g.segment<3>(3) = Vec3(x[2] - x[0]).dot(unit) * a + Vec3(x[3] - x[0]).dot(unit) * b;
    g.segment<3>(6) = -length * a;
    g.segment<3>(9) = -length * b;
    return g;
}

/// ∇²θ of the hinge x[0..3] (12×12, vertex-major; 1/m²) in closed form: the derivative of
/// dihedral_angle_gradient's formula. With f = x2 − x0, g = x3 − x0, L = |e|, Q = (I − ê êᵀ)/L (so
/// dê = Q de), P_A = (I − 2 â âᵀ)/|n_A|² (so da = P_A dn_A, â = n_A/|n_A|; P_B likewise), and each
/// vertex j moving e, f, g by c_e, c_f, c_g times dx_j (c_e = −1, 1, 0, 0; c_f = −1, 0, 1, 0;
/// c_g = −1, 0, 0, 1):
///     dn_A = −c_e [f]× + c_f [e]×,   dn_B = −c_g [e]× + c_e [g]×,   dL = c_e êᵀ,
///     ds₁ = c_f êᵀ + c_e fᵀQ,  dt₁ = c_g êᵀ + c_e gᵀQ,  ds₀ = ds₁ − c_e êᵀ,  dt₀ = dt₁ − c_e êᵀ,
/// for s₁ = f·ê, t₁ = g·ê, s₀ = s₁ − L, t₀ = t₁ − L, the coefficients of the gradient's blocks
/// ∇₀θ = −(s₀ a + t₀ b), ∇₁θ = s₁ a + t₁ b, ∇₂θ = −L a, ∇₃θ = −L b; the product rule gives each block
/// column. Symmetric up to round-off, and symmetrised. Matches dihedral_angle_dual's Hessian to round-off
/// (kernel test) at a fifteenth of its cost (0.25–0.46 µs against 4.0–6.0 µs per hinge, measured on one
/// core). Both triangles must have a normal (hinge_element checks).
KOKKOS_INLINE_FUNCTION Mat12 dihedral_angle_hessian(const Vec3 x[4]) {
    const Vec3 e = x[1] - x[0];
    const Vec3 f = x[2] - x[0];
    const Vec3 g = x[3] - x[0];
    const double length = e.norm();
    const Vec3 unit = e / length;
    const Vec3 na = cross(e, f);
    const Vec3 nb = cross(g, e);
    const double na2 = na.squaredNorm();
    const double nb2 = nb.squaredNorm();
    const Vec3 a = na / na2;
    const Vec3 b = nb / nb2;
    const Mat3 project_a = (Mat3::Identity() - 2.0 * na * na.transpose() / na2) / na2;
    const Mat3 project_b = (Mat3::Identity() - 2.0 * nb * nb.transpose() / nb2) / nb2;
    const Mat3 q = (Mat3::Identity() - unit * unit.transpose()) / length;
    const Mat3 cross_e = cross_matrix(e);
    const Mat3 cross_f = cross_matrix(f);
    const Mat3 cross_g = cross_matrix(g);
    const Eigen::Matrix<double, 1, 3> f_q = f.transpose() * q;
    const Eigen::Matrix<double, 1, 3> g_q = g.transpose() * q;
    const double s1 = f.dot(unit);
    const double t1 = g.dot(unit);
    const double s0 = s1 - length;
    const double t0 = t1 - length;
    const double ce[4] = {-1.0, 1.0, 0.0, 0.0};
    const double cf[4] = {-1.0, 0.0, 1.0, 0.0};
    const double cg[4] = {-1.0, 0.0, 0.0, 1.0};
    Mat12 h;
    for (int j = 0; j < 4; ++j) {
        const Mat3 da = project_a * (-ce[j] * cross_f + cf[j] * cross_e);
        const Mat3 db = project_b * (-cg[j] * cross_e + ce[j] * cross_g);
        const Eigen::Matrix<double, 1, 3> dl = ce[j] * unit.transpose();
        const Eigen::Matrix<double, 1, 3> ds1 = cf[j] * unit.transpose() + ce[j] * f_q;
        const Eigen::Matrix<double, 1, 3> dt1 = cg[j] * unit.transpose() + ce[j] * g_q;
        const Eigen::Matrix<double, 1, 3> ds0 = ds1 - dl;
        const Eigen::Matrix<double, 1, 3> dt0 = dt1 - dl;
        h.block<3, 3>(0, 3 * j) = -(a * ds0 + s0 * da + b * dt0 + t0 * db);
        h.block<3, 3>(3, 3 * j) = a * ds1 + s1 * da + b * dt1 + t1 * db;
        h.block<3, 3>(6, 3 * j) = -(a * dl + length * da);
        h.block<3, 3>(9, 3 * j) = -(b * dl + length * db);
    }
    return 0.5 * (h + h.transpose());
}

/// θ with its gradient and Hessian (12 inputs, vertex-major) by forward differentiation (the kernel test's
/// reference for the closed forms).
KOKKOS_INLINE_FUNCTION Dual2<12> dihedral_angle_dual(const Vec3 x[4]) {
    const DualVec3<12> p0 = stencil_point<12>(x[0], 0);
    const DualVec3<12> p1 = stencil_point<12>(x[1], 1);
    const DualVec3<12> p2 = stencil_point<12>(x[2], 2);
    const DualVec3<12> p3 = stencil_point<12>(x[3], 3);
    const DualVec3<12> e = p1 - p0;
    const DualVec3<12> na = cross(e, p2 - p0);
    const DualVec3<12> nb = cross(p3 - p0, e);
    return dual_atan2(dot(cross(na, nb), e), dual_sqrt(dot(e, e)) * dot(na, nb));
}

/// Hinge energy w (θ − θ̄)² (J) and optionally its gradient (12; N) and Hessian (12×12; N/m),
///     ∇E = 2w (θ − θ̄) ∇θ,  ∇²E = 2w (∇θ ∇θᵀ + (θ − θ̄) ∇²θ).
/// With `project` the Hessian is the Gauss–Newton term 2w ∇θ ∇θᵀ, PSD by construction, instead of the
/// nearest PSD matrix of ∇²E: it drops the curvature of the angle, (θ − θ̄) ∇²θ, which vanishes at the rest
/// angle, and costs one closed-form gradient instead of forward differentiation and a 12×12 eigensolve
/// (0.1 µs against 46 µs per hinge, measured; on the cloth pile of bench_step the hinges' projected Hessians
/// were most of the assembly). Newton's basin uses the exact Hessian (`project` false; the closed form
/// dihedral_angle_hessian, 15 times cheaper than forward differentiation). A collapsed triangle
/// (no normal, so no angle) gives the energy at θ = 0 and zero derivatives. Null pointers skip work.
KOKKOS_INLINE_FUNCTION double hinge_element(
    const Vec3 x[4], double rest_angle, double weight, Vec12* gradient, Mat12* hessian, bool project = true) {
    const Vec3 e = x[1] - x[0];
    const double na2 = cross(e, Vec3(x[2] - x[0])).squaredNorm();
    const double nb2 = cross(Vec3(x[3] - x[0]), e).squaredNorm();
    const bool degenerate = !(na2 > 0.0 && nb2 > 0.0);
    if (!gradient && !hessian) {
        const double d = (degenerate ? 0.0 : dihedral_angle(x)) - rest_angle;
        return weight * d * d;
    }
    if (degenerate) {
        if (gradient) {
            gradient->setZero();
        }
        if (hessian) {
            hessian->setZero();
        }
        return weight * rest_angle * rest_angle;
    }
    const Vec12 g = dihedral_angle_gradient(x);
    const double d = dihedral_angle(x) - rest_angle;
    if (gradient) {
        *gradient = 2.0 * weight * d * g;
    }
    if (hessian) {
        *hessian = 2.0 * weight * (g * g.transpose());
        if (!project) {
            *hessian += (2.0 * weight * d) * dihedral_angle_hessian(x);
        }
    }
    return weight * d * d;
}

} // namespace intact::kernels
