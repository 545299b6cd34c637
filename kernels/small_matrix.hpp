#pragma once
/// @file small_matrix.hpp
/// @brief Fixed-size dense algebra for element kernels: the Eigen aliases, column-major vec/unvec, the
/// cofactor matrix, a cyclic-Jacobi symmetric eigensolver with PSD projection, and a 3x3 SVD / polar
/// decomposition. Everything is device-callable (host and CUDA), allocation-free and exception-free.

#include <Kokkos_Core.hpp>

#include <Eigen/Core>

#include <array>
#include <cmath>

namespace intact::kernels {

using Vec3 = Eigen::Matrix<double, 3, 1>;
using Mat3 = Eigen::Matrix<double, 3, 3>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;
/// Rows are the gradients of the four linear shape functions of a tet (see tet_geometry.hpp).
using Mat43 = Eigen::Matrix<double, 4, 3>;
template <int N> using VecN = Eigen::Matrix<double, N, 1>;
template <int N> using MatN = Eigen::Matrix<double, N, N>;

/// The Eigen vector of a host point (intact::Vec3 is a std::array). Host function.
inline Vec3 from_array(const std::array<double, 3>& p) {
    return Vec3(p[0], p[1], p[2]);
}

/// +infinity, device-callable (std::numeric_limits is host-only under nvcc without relaxed constexpr).
KOKKOS_INLINE_FUNCTION double infinity() {
    return Eigen::NumTraits<double>::infinity();
}

/// True unless x is +-infinity or NaN.
KOKKOS_INLINE_FUNCTION bool is_finite(double x) {
    return x - x == 0.0;
}

/// vec(A): the 9 entries of A stacked column by column (vec(A)[i + 3j] = A(i, j)).
KOKKOS_INLINE_FUNCTION Vec9 vec(const Mat3& A) {
    Vec9 v;
    for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) {
            v(i + 3 * j) = A(i, j);
        }
    }
    return v;
}

/// Inverse of vec: A(i, j) = v[i + 3j].
KOKKOS_INLINE_FUNCTION Mat3 unvec(const Vec9& v) {
    Mat3 A;
    for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) {
            A(i, j) = v(i + 3 * j);
        }
    }
    return A;
}

/// vec(a b^T) for two 3-vectors.
KOKKOS_INLINE_FUNCTION Vec9 vec_outer(const Vec3& a, const Vec3& b) {
    Vec9 v;
    for (int j = 0; j < 3; ++j) {
        for (int i = 0; i < 3; ++i) {
            v(i + 3 * j) = a(i) * b(j);
        }
    }
    return v;
}

/// a x b (Eigen's cross() lives in the Geometry module; this one is plainly device-callable).
KOKKOS_INLINE_FUNCTION Vec3 cross(const Vec3& a, const Vec3& b) {
    return Vec3(a(1) * b(2) - a(2) * b(1), a(2) * b(0) - a(0) * b(2), a(0) * b(1) - a(1) * b(0));
}

/// det A = a0 . (a1 x a2) for the columns a0, a1, a2.
KOKKOS_INLINE_FUNCTION double det(const Mat3& A) {
    return A(0, 0) * (A(1, 1) * A(2, 2) - A(2, 1) * A(1, 2)) -
           A(0, 1) * (A(1, 0) * A(2, 2) - A(2, 0) * A(1, 2)) +
           A(0, 2) * (A(1, 0) * A(2, 1) - A(2, 0) * A(1, 1));
}

/// Cofactor matrix cof(F) = dJ/dF = det(F) F^{-T}; defined (and exact) for singular F too.
/// Its columns are f1 x f2, f2 x f0, f0 x f1 for the columns f0, f1, f2 of F.
KOKKOS_INLINE_FUNCTION Mat3 cofactor(const Mat3& F) {
    Mat3 C;
    C.col(0) = cross(F.col(1), F.col(2));
    C.col(1) = cross(F.col(2), F.col(0));
    C.col(2) = cross(F.col(0), F.col(1));
    return C;
}

/// The matrix [a]_x with [a]_x b = a x b.
KOKKOS_INLINE_FUNCTION Mat3 cross_matrix(const Vec3& a) {
    Mat3 M;
    M << 0.0, -a(2), a(1), a(2), 0.0, -a(0), -a(1), a(0), 0.0;
    return M;
}

/// Most sweeps the Jacobi eigensolver makes; cyclic Jacobi converges quadratically and needs fewer than
/// 10 sweeps for N <= 12 in practice, so hitting the cap means a non-finite input.
constexpr int k_jacobi_max_sweeps = 32;

namespace detail {

/// Cosine and sine of the Jacobi rotation that zeroes a_pq of the symmetric 2x2 [[a_pp, a_pq], [a_pq, a_qq]]
/// (rotation J with J_pp = J_qq = c, J_pq = s, J_qp = -s; A' = J^T A J). tan = g / (|h| + sqrt(h^2 + g^2))
/// signed by h, with h = a_qq - a_pp, g = 2 a_pq: the smaller of the two angles, free of cancellation,
/// and written with two square roots and one division (the Jacobi loop is latency-bound on this chain).
KOKKOS_INLINE_FUNCTION void jacobi_rotation(double app, double aqq, double apq, double& c, double& s) {
    const double h = aqq - app;
    const double g = 2.0 * apq;
    const double abs_h = ::fabs(h);
    if (::fabs(g) < 1e-8 * abs_h) {
        // Small angle: t = g / (2h) to relative error t^2 < 1e-16, c = 1 to round-off.
        c = 1.0;
        s = g / (2.0 * h);
        return;
    }
    const double d = abs_h + ::sqrt(h * h + g * g);
    const double inv = 1.0 / ::sqrt(d * d + g * g);
    c = d * inv;
    s = (h >= 0.0 ? g : -g) * inv;
}

} // namespace detail

/// Eigen-decomposition of a symmetric N x N matrix by cyclic Jacobi rotations: A = Q diag(w) Q^T with Q
/// orthogonal (columns are eigenvectors). A is assumed symmetric (its upper triangle is what is zeroed).
/// Eigenvalues come unsorted. A rotation is skipped once |a_pq| <= 1e-15 sqrt(|a_pp a_qq|) (the relative
/// criterion, which keeps small eigenvalues of definite matrices accurate) or |a_pq| <= 1e-18 ||A||_F;
/// the solver stops after a sweep without rotations. Accuracy: error ~ 1e-15 ||A||_F or better.
/// @return the number of sweeps made (max_sweeps means the tolerance was not reached).
template <int N>
KOKKOS_INLINE_FUNCTION int
symmetric_eigen(const MatN<N>& A, VecN<N>& w, MatN<N>& Q, int max_sweeps = k_jacobi_max_sweeps) {
    MatN<N> a = A;
    Q.setIdentity();
    const double tiny = 1e-18 * ::sqrt(A.squaredNorm());
    int sweep = 0;
    for (; sweep < max_sweeps; ++sweep) {
        bool rotated = false;
        for (int p = 0; p < N - 1; ++p) {
            for (int q = p + 1; q < N; ++q) {
                const double apq = a(p, q);
                const double abs_apq = ::fabs(apq);
                if (!(abs_apq > tiny) || !(abs_apq > 1e-15 * ::sqrt(::fabs(a(p, p) * a(q, q))))) {
                    continue;
                }
                rotated = true;
                double c;
                double s;
                detail::jacobi_rotation(a(p, p), a(q, q), apq, c, s);
                for (int k = 0; k < N; ++k) {
                    const double akp = a(k, p);
                    const double akq = a(k, q);
                    a(k, p) = c * akp - s * akq;
                    a(k, q) = s * akp + c * akq;
                }
                for (int k = 0; k < N; ++k) {
                    const double apk = a(p, k);
                    const double aqk = a(q, k);
                    a(p, k) = c * apk - s * aqk;
                    a(q, k) = s * apk + c * aqk;
                }
                for (int k = 0; k < N; ++k) {
                    const double qkp = Q(k, p);
                    const double qkq = Q(k, q);
                    Q(k, p) = c * qkp - s * qkq;
                    Q(k, q) = s * qkp + c * qkq;
                }
            }
        }
        if (!rotated) {
            break;
        }
    }
    for (int p = 0; p < N; ++p) {
        w(p) = a(p, p);
    }
    return sweep;
}

/// Whether the symmetric matrix A is positive definite: its Cholesky factorisation (lower triangle read)
/// finds every pivot > 0. About N³/6 multiplications, against the dozens of N³ of a Jacobi eigensolve.
template <int N> KOKKOS_INLINE_FUNCTION bool positive_definite(const MatN<N>& A) {
    MatN<N> L;
    for (int j = 0; j < N; ++j) {
        double pivot = A(j, j);
        for (int k = 0; k < j; ++k) {
            pivot -= L(j, k) * L(j, k);
        }
        if (!(pivot > 0.0)) {
            return false;
        }
        L(j, j) = ::sqrt(pivot);
        for (int i = j + 1; i < N; ++i) {
            double value = A(i, j);
            for (int k = 0; k < j; ++k) {
                value -= L(i, k) * L(j, k);
            }
            L(i, j) = value / L(j, j);
        }
    }
    return true;
}

/// Replaces the symmetric matrix A by its nearest positive semi-definite matrix (in the Frobenius norm):
/// A = Q diag(max(w, 0)) Q^T. A positive definite matrix (positive_definite: stretched membranes, most
/// barrier pairs) is its own projection and comes back exactly, without the eigensolve; one that is PSD
/// but singular comes back unchanged up to round-off.
template <int N> KOKKOS_INLINE_FUNCTION void project_psd(MatN<N>& A) {
    if (positive_definite<N>(A)) {
        return;
    }
    VecN<N> w;
    MatN<N> Q;
    symmetric_eigen<N>(A, w, Q);
    A.setZero();
    for (int m = 0; m < N; ++m) {
        if (w(m) > 0.0) {
            A.noalias() += w(m) * Q.col(m) * Q.col(m).transpose();
        }
    }
}

/// Signed singular value decomposition of a 3x3 matrix: F = U diag(sigma) V^T with U and V proper
/// rotations (det = +1), sigma(0) >= sigma(1) >= |sigma(2)|, and sigma(2) < 0 exactly when det F < 0
/// (the "inversion-aware" convention of Irving et al. 2004 used by fixed-corotated elasticity).
struct Svd3 {
    Mat3 U;
    Vec3 sigma;
    Mat3 V;
};

namespace detail {

/// A unit vector orthogonal to the unit vector u.
KOKKOS_INLINE_FUNCTION Vec3 any_orthogonal(const Vec3& u) {
    const double ax = ::fabs(u(0));
    const double ay = ::fabs(u(1));
    const double az = ::fabs(u(2));
    Vec3 e = Vec3::Zero();
    if (ax <= ay && ax <= az) {
        e(0) = 1.0;
    } else if (ay <= az) {
        e(1) = 1.0;
    } else {
        e(2) = 1.0;
    }
    const Vec3 w = cross(u, e);
    return w / w.norm();
}

KOKKOS_INLINE_FUNCTION void swap_columns(Mat3& A, Mat3& B, Vec3& s, int p, int q) {
    for (int k = 0; k < 3; ++k) {
        double t = A(k, p);
        A(k, p) = A(k, q);
        A(k, q) = t;
        t = B(k, p);
        B(k, p) = B(k, q);
        B(k, q) = t;
    }
    const double t = s(p);
    s(p) = s(q);
    s(q) = t;
}

} // namespace detail

/// 3x3 SVD: Jacobi eigenvectors V of F^T F (with the relative stopping criterion, which is the
/// one-sided Jacobi test |b_p . b_q| <= 1e-15 |b_p| |b_q| on the columns of B = F V), then
/// sigma_k = |b_k| and u_k = b_k / sigma_k from B = F V itself. An error e in v_k is orthogonal to v_k, so
/// |F v_k| is off only by O(e^2): small singular values keep their relative accuracy (J ~ 1e-3 and
/// below). Robust cases:
/// - equal or nearly equal singular values: any orthonormal U, V that reproduce F are returned;
/// - rank-deficient F (even F = 0): missing columns of U are completed to a rotation; u2 = u0 x u1
///   always, and sigma(2) = u2 . b2 carries the sign of det F.
KOKKOS_INLINE_FUNCTION Svd3 svd3(const Mat3& F) {
    const Mat3 S = F.transpose() * F;
    Vec3 eigenvalues;
    Mat3 V;
    symmetric_eigen<3>(S, eigenvalues, V);
    Mat3 B = F * V;
    Vec3 norms(B.col(0).norm(), B.col(1).norm(), B.col(2).norm());
    // Sort by decreasing column norm (three compare-exchanges).
    if (norms(0) < norms(1)) {
        detail::swap_columns(B, V, norms, 0, 1);
    }
    if (norms(1) < norms(2)) {
        detail::swap_columns(B, V, norms, 1, 2);
    }
    if (norms(0) < norms(1)) {
        detail::swap_columns(B, V, norms, 0, 1);
    }
    // Make V a proper rotation; b2 = F v2 flips with v2.
    if (det(V) < 0.0) {
        V.col(2) = -V.col(2);
        B.col(2) = -B.col(2);
    }

    Svd3 r;
    r.V = V;
    Vec3 u0;
    if (norms(0) > 0.0) {
        u0 = B.col(0) / norms(0);
    } else {
        u0 = Vec3(1.0, 0.0, 0.0);
    }
    // Re-orthogonalise b1 against u0 so U is orthonormal to round-off whatever the Jacobi tolerance left.
    const Vec3 b1 = B.col(1) - u0.dot(B.col(1)) * u0;
    const double n1 = b1.norm();
    Vec3 u1;
    if (n1 > 1e-300) {
        u1 = b1 / n1;
        u1 /= u1.norm();
    } else {
        u1 = detail::any_orthogonal(u0);
    }
    const Vec3 u2 = cross(u0, u1);
    r.U.col(0) = u0;
    r.U.col(1) = u1;
    r.U.col(2) = u2;
    r.sigma = Vec3(norms(0), u1.dot(B.col(1)), u2.dot(B.col(2)));
    return r;
}

/// Rotation of the polar decomposition F = R S (R proper rotation; S symmetric, indefinite when
/// det F < 0): R = U V^T from svd3.
KOKKOS_INLINE_FUNCTION Mat3 polar_rotation(const Mat3& F) {
    const Svd3 s = svd3(F);
    return s.U * s.V.transpose();
}

} // namespace intact::kernels
