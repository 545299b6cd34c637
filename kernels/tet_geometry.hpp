#pragma once
/// @file tet_geometry.hpp
/// @brief Linear tetrahedron geometry: rest shape, volume, deformation gradient F = Ds Dm^{-1}, the
/// structure of dF/dx, lumped mass, and the inversion-aware step bound of the line search.
///
/// Conventions: a tet has nodes x[0..3]; Ds(x) = [x1 - x0, x2 - x0, x3 - x0] (3x3, columns are edges);
/// Dm = Ds(X) at rest. Nodal 12-vectors are node-major: entry 3a + i is component i of node a.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Ds = [x1 - x0, x2 - x0, x3 - x0] (m).
KOKKOS_INLINE_FUNCTION Mat3 shape_matrix(const Vec3 x[4]) {
    Mat3 D;
    D.col(0) = x[1] - x[0];
    D.col(1) = x[2] - x[0];
    D.col(2) = x[3] - x[0];
    return D;
}

/// Signed volume det(Ds) / 6 (m^3); positive when x1 - x0, x2 - x0, x3 - x0 form a right-handed frame.
KOKKOS_INLINE_FUNCTION double signed_volume(const Vec3 x[4]) {
    return det(shape_matrix(x)) / 6.0;
}

/// Rest volume V = |det Dm| / 6 (m^3) of the rest points X (either orientation).
KOKKOS_INLINE_FUNCTION double rest_volume(const Vec3 X[4]) {
    return ::fabs(signed_volume(X));
}

/// Dm^{-1} (1/m) for the rest points X (either orientation: F = I at rest holds for both). A degenerate
/// rest tet (det Dm = 0) gives a zero matrix; mesh set-up must reject such tets.
KOKKOS_INLINE_FUNCTION Mat3 rest_shape_inverse(const Vec3 X[4]) {
    const Mat3 Dm = shape_matrix(X);
    const double det_m = det(Dm);
    if (det_m == 0.0) {
        return Mat3::Zero();
    }
    return cofactor(Dm).transpose() / det_m;
}

/// Deformation gradient F = Ds(x) Dm^{-1} (dimensionless).
KOKKOS_INLINE_FUNCTION Mat3 deformation_gradient(const Vec3 x[4], const Mat3& Dm_inv) {
    return shape_matrix(x) * Dm_inv;
}

/// Gradients of the linear shape functions w.r.t. rest coordinates, one per row (1/m):
/// G(a, j) = d F_ij / d x_{a,i} for every i. Rows 1..3 are the rows of Dm^{-1}; row 0 is minus their sum.
/// So F = sum_a x_a G(a, :) and dF/dx is the 9x12 matrix with dvec(F)_{i+3j}/dx_{3a+k} = delta_ik G(a,j):
/// each column touches 3 entries, which gradient_from_pk1 and hessian_from_dpdf exploit.
KOKKOS_INLINE_FUNCTION Mat43 shape_function_gradients(const Mat3& Dm_inv) {
    Mat43 G;
    G.row(1) = Dm_inv.row(0);
    G.row(2) = Dm_inv.row(1);
    G.row(3) = Dm_inv.row(2);
    G.row(0) = -(Dm_inv.row(0) + Dm_inv.row(1) + Dm_inv.row(2));
    return G;
}

/// The dense 9x12 matrix d vec(F) / d x (vec column-major, x node-major). For tests and reference; the
/// element kernels use the sparse contractions below instead.
KOKKOS_INLINE_FUNCTION Eigen::Matrix<double, 9, 12> deformation_gradient_jacobian(const Mat3& Dm_inv) {
    const Mat43 G = shape_function_gradients(Dm_inv);
    Eigen::Matrix<double, 9, 12> B = Eigen::Matrix<double, 9, 12>::Zero();
    for (int a = 0; a < 4; ++a) {
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
                B(i + 3 * j, 3 * a + i) = G(a, j);
            }
        }
    }
    return B;
}

/// (dF/dx)^T vec(P): the nodal 12-vector of a 3x3 stress-like matrix P, node a gets P G(a, :)^T.
KOKKOS_INLINE_FUNCTION Vec12 gradient_from_pk1(const Mat43& G, const Mat3& P) {
    Vec12 g;
    for (int a = 0; a < 4; ++a) {
        for (int i = 0; i < 3; ++i) {
            g(3 * a + i) = P(i, 0) * G(a, 0) + P(i, 1) * G(a, 1) + P(i, 2) * G(a, 2);
        }
    }
    return g;
}

/// (dF/dx)^T A (dF/dx) for a 9x9 A (vec column-major): 12x12, entry (3a+i, 3b+k) =
/// sum_{j,l} G(a,j) A(i+3j, k+3l) G(b,l). About 750 multiply-adds instead of 2600 for the dense product.
/// A symmetric gives a symmetric result; A PSD gives a PSD result.
KOKKOS_INLINE_FUNCTION Mat12 hessian_from_dpdf(const Mat43& G, const Mat9& A) {
    // T = A (dF/dx): T(r, 3b+k) = sum_l A(r, k+3l) G(b, l).
    Eigen::Matrix<double, 9, 12> T;
    for (int b = 0; b < 4; ++b) {
        for (int k = 0; k < 3; ++k) {
            for (int r = 0; r < 9; ++r) {
                T(r, 3 * b + k) = A(r, k) * G(b, 0) + A(r, k + 3) * G(b, 1) + A(r, k + 6) * G(b, 2);
            }
        }
    }
    // H = (dF/dx)^T T, lower triangle then mirrored.
    Mat12 H;
    for (int c = 0; c < 12; ++c) {
        for (int a = 0; a < 4; ++a) {
            for (int i = 0; i < 3; ++i) {
                const int row = 3 * a + i;
                if (row < c) {
                    continue;
                }
                H(row, c) = G(a, 0) * T(i, c) + G(a, 1) * T(i + 3, c) + G(a, 2) * T(i + 6, c);
            }
        }
    }
    for (int c = 0; c < 12; ++c) {
        for (int row = 0; row < c; ++row) {
            H(row, c) = H(c, row);
        }
    }
    return H;
}

/// Lumped (diagonal) mass of each of the 4 nodes: rho V / 4 (kg) for density rho (kg/m^3), rest volume V.
KOKKOS_INLINE_FUNCTION double lumped_nodal_mass(double density, double rest_volume) {
    return 0.25 * density * rest_volume;
}

namespace detail {

/// Value and derivative of c3 a^3 + c2 a^2 + c1 a + c0.
KOKKOS_INLINE_FUNCTION void cubic_eval(const double c[4], double a, double& value, double& slope) {
    value = ((c[3] * a + c[2]) * a + c[1]) * a + c[0];
    slope = (3.0 * c[3] * a + 2.0 * c[2]) * a + c[1];
}

/// The root of the cubic in [lo, hi] given value(lo) > 0 >= value(hi) and the cubic monotone there:
/// Newton steps safeguarded by bisection. Returns the lower end of the final bracket, so value > 0 on
/// [lo, result) is kept (the bound errs on the safe side).
KOKKOS_INLINE_FUNCTION double cubic_bracketed_root(const double c[4], double lo, double hi) {
    double x = 0.5 * (lo + hi);
    for (int it = 0; it < 200; ++it) {
        double f;
        double df;
        cubic_eval(c, x, f, df);
        if (f > 0.0) {
            lo = x;
        } else {
            hi = x;
        }
        if (hi - lo <= 1e-15 * hi) {
            break;
        }
        double next = df != 0.0 ? x - f / df : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) {
            next = 0.5 * (lo + hi);
        }
        if (next == x) {
            break;
        }
        x = next;
    }
    return lo;
}

} // namespace detail

/// Inversion-aware step bound (Smith & Schaefer 2015; IPC spec section 7.4): the smallest alpha > 0 with
/// det Ds(x + alpha p) = fraction * det Ds(x), i.e. the largest step along p over which the signed volume
/// keeps at least `fraction` (in (0, 1)) of its current value. The volume ratio is a cubic in alpha,
///   r(alpha) = 1 + (c1/c0) alpha + (c2/c0) alpha^2 + (c3/c0) alpha^3,  c0 = det Ds(x),
/// so the bound holds for either orientation of the tet. The cubic is split at its turning points into
/// monotone pieces and the first piece that crosses r = fraction is solved by safeguarded Newton; the
/// returned alpha never exceeds the true root by more than round-off (it is the bracket's lower end).
/// `limit`: the caller takes min(limit, alpha), so a root beyond it need not be found: when a cheap bound
/// shows the volume keeps more than `fraction` on all of [0, limit] (r(alpha) ≥ 1 − |c1/c0| limit −
/// |c2/c0| limit² − |c3/c0| limit³), `limit` is returned without solving the cubic. A stencil's local
/// search calls this for some 80 elements per stencil and sweep, and nearly all of them pass the bound.
/// @return alpha > 0; +infinity when the volume never falls to fraction * det Ds(x) for alpha > 0
///         (roots beyond 1e30 count as none); `limit` when no root lies in [0, limit] by the bound above;
///         0 when det Ds(x) = 0 (a degenerate tet allows no step). Callers take min(1, alpha, ...).
KOKKOS_INLINE_FUNCTION double
max_step_keeping_volume(const Vec3 x[4], const Vec3 p[4], double fraction = 0.2, double limit = infinity()) {
    const Mat3 A = shape_matrix(x);
    const Mat3 B = shape_matrix(p);
    const double det_a = det(A);
    if (det_a == 0.0) {
        return 0.0;
    }
    // det(A + alpha B) = det A + alpha c1 + alpha^2 c2 + alpha^3 det B, expanded column by column.
    const Vec3 a0 = A.col(0), a1 = A.col(1), a2 = A.col(2);
    const Vec3 b0 = B.col(0), b1 = B.col(1), b2 = B.col(2);
    const double c1 = b0.dot(cross(a1, a2)) + a0.dot(cross(b1, a2)) + a0.dot(cross(a1, b2));
    const double c2 = a0.dot(cross(b1, b2)) + b0.dot(cross(a1, b2)) + b0.dot(cross(b1, a2));
    const double c3 = det(B);
    // g(alpha) = r(alpha) - fraction, g(0) = 1 - fraction > 0.
    const double c[4] = {1.0 - fraction, c1 / det_a, c2 / det_a, c3 / det_a};
    if (limit < infinity() &&
        c[0] - ((::fabs(c[3]) * limit + ::fabs(c[2])) * limit + ::fabs(c[1])) * limit > 0.0) {
        return limit;
    }

    // Upper bound on positive roots (Cauchy's bound for the leading non-zero coefficient).
    int degree = 3;
    while (degree > 0 && c[degree] == 0.0) {
        --degree;
    }
    if (degree == 0) {
        return infinity();
    }
    double bound = 0.0;
    for (int k = 0; k < degree; ++k) {
        const double ratio = ::fabs(c[k] / c[degree]);
        bound = ratio > bound ? ratio : bound;
    }
    bound += 1.0;
    // Roots beyond 1e30 count as none (and a tiny leading coefficient cannot overflow the search).
    bound = bound < 1e30 ? bound : 1e30;

    // Turning points: roots of g' = 3 c3 a^2 + 2 c2 a + c1 in (0, bound), sorted.
    double ends[4] = {0.0, bound, bound, bound};
    int n_ends = 1;
    {
        const double qa = 3.0 * c[3];
        const double qb = 2.0 * c[2];
        const double qc = c[1];
        double r0 = -1.0;
        double r1 = -1.0;
        if (qa == 0.0) {
            if (qb != 0.0) {
                r0 = -qc / qb;
            }
        } else {
            const double disc = qb * qb - 4.0 * qa * qc;
            if (disc >= 0.0) {
                // Stable quadratic roots: q = -(b + sign(b) sqrt(disc)) / 2, roots q/a and c/q.
                const double q = -0.5 * (qb + (qb >= 0.0 ? 1.0 : -1.0) * ::sqrt(disc));
                r0 = q / qa;
                r1 = q != 0.0 ? qc / q : r0;
                if (r1 < r0) {
                    const double t = r0;
                    r0 = r1;
                    r1 = t;
                }
            }
        }
        if (r0 > 0.0 && r0 < bound) {
            ends[n_ends++] = r0;
        }
        if (r1 > 0.0 && r1 < bound && r1 != r0) {
            ends[n_ends++] = r1;
        }
        ends[n_ends++] = bound;
    }

    double lo = 0.0;
    double g_lo = c[0];
    for (int e = 1; e < n_ends; ++e) {
        const double hi = ends[e];
        double g_hi;
        double unused;
        detail::cubic_eval(c, hi, g_hi, unused);
        if (g_lo > 0.0 && g_hi <= 0.0) {
            return detail::cubic_bracketed_root(c, lo, hi);
        }
        lo = hi;
        g_lo = g_hi;
    }
    return infinity();
}

} // namespace intact::kernels
