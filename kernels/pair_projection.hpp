#pragma once
/// @file pair_projection.hpp
/// @brief PSD projection of a contact pair's 12×12 barrier Hessian restricted to the stencil vertices its
/// closest-feature case involves. Device-callable, allocation-free.
///
/// A point–point or point–edge case of a point–triangle or edge–edge pair (without an active edge–edge
/// mollifier) has a Hessian whose rows and columns are zero outside 2 or 3 of the 4 vertices. The
/// eigenvalues of such a matrix are those of the nonzero block plus zeros, so projecting the block alone
/// is exact: point–edge cases project a 9×9 block, and the point–point case uses the closed form
///   H = b″ ∇s ∇sᵀ + b′ ∇²s = [[A, −A], [−A, A]],  A = 4 b″ d dᵀ + 2 b′ I,  d = x_a − x_b, s = |d|²,
/// whose eigenvalues are 2 (4 s b″ + 2 b′) along (d, −d), 4 b′ across it and 0 on (u, u); b′ ≤ 0 below ŝ,
/// so the PSD part is [[A⁺, −A⁺], [−A⁺, A⁺]], A⁺ = max(0, 4 s b″ + 2 b′) d dᵀ / s (the point–plane form).
/// Interior cases and mollified edge pairs involve all four vertices and keep project_psd<12>.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Replace H (zero outside the vertex slots `slots`) by its PSD projection, projecting only the
/// 3 NS × 3 NS block of those slots.
template <int NS> KOKKOS_INLINE_FUNCTION void project_psd_on_slots(Mat12& H, const int (&slots)[NS]) {
    MatN<3 * NS> block;
    for (int a = 0; a < NS; ++a) {
        for (int b = 0; b < NS; ++b) {
            block.template block<3, 3>(3 * a, 3 * b) = H.template block<3, 3>(3 * slots[a], 3 * slots[b]);
        }
    }
    project_psd<3 * NS>(block);
    H.setZero();
    for (int a = 0; a < NS; ++a) {
        for (int b = 0; b < NS; ++b) {
            H.template block<3, 3>(3 * slots[a], 3 * slots[b]) = block.template block<3, 3>(3 * a, 3 * b);
        }
    }
}

/// The projected barrier Hessian of a point–point distance between slots a and b of a 4-vertex stencil,
/// from d = x_a − x_b, b′(s) and b″(s) (s = |d|² > 0): [[A⁺, −A⁺], [−A⁺, A⁺]] on (a, b), zero elsewhere.
KOKKOS_INLINE_FUNCTION Mat12
point_point_barrier_hessian_psd(const Vec3& d, int a, int b, double db, double ddb) {
    const double s = d.squaredNorm();
    Mat12 H = Mat12::Zero();
    const double curvature = 4.0 * s * ddb + 2.0 * db;
    if (!(curvature > 0.0)) {
        return H;
    }
    const Mat3 A = (curvature / s) * d * d.transpose();
    H.block<3, 3>(3 * a, 3 * a) = A;
    H.block<3, 3>(3 * b, 3 * b) = A;
    H.block<3, 3>(3 * a, 3 * b) = -A;
    H.block<3, 3>(3 * b, 3 * a) = -A;
    return H;
}

} // namespace intact::kernels
