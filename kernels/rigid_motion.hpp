#pragma once
/// @file rigid_motion.hpp
/// @brief Rigid motion of prescribed points (moving boxes of bodies, obstacles): a turn at a constant
/// angular velocity ω (rad/s) about an axis through a centre c, while c moves at a constant velocity v.
///
///     x(τ) = c + v τ + R(ω τ) (x(0) − c),   R(θ) = I + sin|θ| K + (1 − cos|θ|) K²   (Rodrigues)
///
/// with K the cross-product matrix of the unit axis θ / |θ|, τ the time the motion has acted. Over an
/// interval the motion is the affine map x ↦ R x + b. Device-callable (host and CUDA), allocation-free.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// R(θ) for the rotation vector θ (rad; its direction is the axis, right-handed). θ = 0 gives I.
KOKKOS_INLINE_FUNCTION Mat3 rotation_matrix(const Vec3& theta) {
    const double angle = theta.norm();
    Mat3 R = Mat3::Identity();
    if (angle == 0.0) {
        return R;
    }
    const Vec3 k = theta / angle;
    Mat3 K = Mat3::Zero(); // [k]×
    K(0, 1) = -k(2);
    K(0, 2) = k(1);
    K(1, 0) = k(2);
    K(1, 2) = -k(0);
    K(2, 0) = -k(1);
    K(2, 1) = k(0);
    R += ::sin(angle) * K + (1.0 - ::cos(angle)) * (K * K);
    return R;
}

/// Where the rigid motion (v, ω about c) takes the point `x0` after acting for τ seconds. Without
/// rotation this is x0 + τ v exactly (as rounded once per coordinate), whatever c.
KOKKOS_INLINE_FUNCTION Vec3 rigid_motion_position(
    const Vec3& x0, const Vec3& velocity, const Vec3& omega, const Vec3& center, double tau) {
    if (omega.squaredNorm() == 0.0) {
        return x0 + tau * velocity;
    }
    return center + tau * velocity + rotation_matrix(tau * omega) * (x0 - center);
}

/// The affine map x ↦ R x + b by which the motion moves points over Δτ seconds from the moment its
/// centre is at `center_now`: R = R(ω Δτ), b = Δτ v + (I − R) c_now. Without rotation b = Δτ v exactly.
KOKKOS_INLINE_FUNCTION void rigid_motion_increment(
    const Vec3& velocity, const Vec3& omega, const Vec3& center_now, double dtau, Mat3& R, Vec3& b) {
    R = rotation_matrix(dtau * omega);
    b = dtau * velocity;
    if (omega.squaredNorm() != 0.0) {
        b += center_now - R * center_now;
    }
}

} // namespace intact::kernels
