#pragma once
/// @file pair_projection.hpp
/// @brief Exact, cheaper PSD projections of a contact pair's 12×12 barrier Hessian. Device-callable,
/// allocation-free.
///
/// Every contact Hessian is translation-invariant, so its projection runs in the 3 (NV − 1) coordinates
/// orthogonal to rigid translations (project_psd_translation_free). A point–point or point–edge case of a
/// point–triangle or edge–edge pair (without an active edge–edge mollifier) has a Hessian whose rows and
/// columns are zero outside 2 or 3 of the 4 vertices. The eigenvalues of such a matrix are those of the
/// nonzero block plus zeros, so projecting the block alone is exact: point–edge cases project a 6×6 block (9
/// rows less the translations), and the point–point case uses the closed form
///   H = b″ ∇s ∇sᵀ + b′ ∇²s = [[A, −A], [−A, A]],  A = 4 b″ d dᵀ + 2 b′ I,  d = x_a − x_b, s = |d|²,
/// whose eigenvalues are 2 (4 s b″ + 2 b′) along (d, −d), 4 b′ across it and 0 on (u, u); b′ ≤ 0 below ŝ,
/// so the PSD part is [[A⁺, −A⁺], [−A⁺, A⁺]], A⁺ = max(0, 4 s b″ + 2 b′) d dᵀ / s (the point–plane form).
/// Interior cases and mollified edge pairs involve all four vertices and project a 9×9 block.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Entry a of the k-th Helmert vector of NV vertex weights (k = 0..NV−2): (1, …, 1, −(k + 1), 0, …) with
/// k + 1 ones, divided by sqrt((k + 1)(k + 2)). The NV − 1 vectors are an orthonormal basis of the
/// weights that sum to zero, i.e. of the stencil motions orthogonal to rigid translations (per axis).
KOKKOS_INLINE_FUNCTION double helmert(int k, int a) {
    const double norm = ::sqrt((k + 1.0) * (k + 2.0));
    return a <= k ? 1.0 / norm : (a == k + 1 ? -(k + 1.0) / norm : 0.0);
}

/// Replace the symmetric, translation-invariant H (H (t, …, t) = 0 for every t ∈ R³, as for every
/// contact Hessian: distances and the mollifier depend on differences of positions only) over NV
/// vertices by its PSD projection. With Q = Helmert ⊗ I₃ (3 NV × 3 (NV − 1), orthonormal columns spanning
/// the complement of the translations), H = Q (Qᵀ H Q) Qᵀ exactly, so H⁺ = Q (Qᵀ H Q)⁺ Qᵀ: the eigensolver
/// runs on 3 (NV − 1) instead of 3 NV rows (9×9 instead of 12×12; Jacobi's cost grows as N³).
template <int NV> KOKKOS_INLINE_FUNCTION void project_psd_translation_free(MatN<3 * NV>& H) {
    constexpr int M = NV - 1;
    // T = H Q, then R = Qᵀ T, by 3×3 blocks.
    Eigen::Matrix<double, 3 * NV, 3 * M> T = Eigen::Matrix<double, 3 * NV, 3 * M>::Zero();
    for (int j = 0; j < M; ++j) {
        for (int b = 0; b <= j + 1; ++b) {
            const double w = helmert(j, b);
            for (int a = 0; a < NV; ++a) {
                T.template block<3, 3>(3 * a, 3 * j) += w * H.template block<3, 3>(3 * a, 3 * b);
            }
        }
    }
    MatN<3 * M> R = MatN<3 * M>::Zero();
    for (int i = 0; i < M; ++i) {
        for (int a = 0; a <= i + 1; ++a) {
            const double w = helmert(i, a);
            for (int j = 0; j < M; ++j) {
                R.template block<3, 3>(3 * i, 3 * j) += w * T.template block<3, 3>(3 * a, 3 * j);
            }
        }
    }
    R = (0.5 * (R + R.transpose())).eval();
    project_psd<3 * M>(R);
    // H = Q R Qᵀ: T = Q R, then H = T Qᵀ.
    T.setZero();
    for (int i = 0; i < M; ++i) {
        for (int a = 0; a <= i + 1; ++a) {
            const double w = helmert(i, a);
            for (int j = 0; j < M; ++j) {
                T.template block<3, 3>(3 * a, 3 * j) += w * R.template block<3, 3>(3 * i, 3 * j);
            }
        }
    }
    H.setZero();
    for (int j = 0; j < M; ++j) {
        for (int b = 0; b <= j + 1; ++b) {
            const double w = helmert(j, b);
            for (int a = 0; a < NV; ++a) {
                H.template block<3, 3>(3 * a, 3 * b) += w * T.template block<3, 3>(3 * a, 3 * j);
            }
        }
    }
}

/// Replace H (zero outside the vertex slots `slots`, translation-invariant on them) by its PSD projection,
/// projecting only the block of those slots (project_psd_translation_free<NS>).
template <int NS> KOKKOS_INLINE_FUNCTION void project_psd_on_slots(Mat12& H, const int (&slots)[NS]) {
    MatN<3 * NS> block;
    for (int a = 0; a < NS; ++a) {
        for (int b = 0; b < NS; ++b) {
            block.template block<3, 3>(3 * a, 3 * b) = H.template block<3, 3>(3 * slots[a], 3 * slots[b]);
        }
    }
    project_psd_translation_free<NS>(block);
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
