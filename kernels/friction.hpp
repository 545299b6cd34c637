#pragma once
/// @file friction.hpp
/// @brief Smoothed lagged friction of IPC (spec §6): the mollifiers f0 / f1 of the static-friction
/// transition, the closest-point coefficients and tangent bases of point-triangle, edge-edge, point-edge
/// and point-point pairs, and the per-pair friction potential with its gradient and projected Hessian.
/// Device-callable, allocation-free.
///
/// Conventions: eps_v_h = ε_v h (m) is the tangential displacement over one step below which friction
/// is static-like. For a pair with stencil vertices j = 0..NV-1, closest-point coefficients c_j and a
/// 3 x 2 orthonormal tangent basis P (both lagged), the tangential relative displacement is
/// u = P^T sum_j c_j Δx_j (m, 2-vector), Δx_j = x_j - x_j^t the displacement since the start of the step.
/// T_k^T Δx = u defines the 3NV x 2 lifting T_k (block j = c_j P). Stencil vectors are vertex-major.

#include "kernels/small_matrix.hpp"

#include <cmath>

namespace intact::kernels {

/// A 3 x 2 tangent basis (orthonormal columns spanning the contact tangent plane).
using Mat32 = Eigen::Matrix<double, 3, 2>;

// ---- Static-friction mollifiers (spec §6.2-6.3), y = |u| >= 0, eps = eps_v_h > 0 ----------------------

/// f0(y) = -y^3 / (3 eps^2) + y^2 / eps + eps / 3 for y < eps; y otherwise (m). f0' = f1, f0(eps) = eps.
KOKKOS_INLINE_FUNCTION double friction_f0(double y, double eps_v_h) {
    if (y >= eps_v_h) {
        return y;
    }
    return y * y * (1.0 / eps_v_h - y / (3.0 * eps_v_h * eps_v_h)) + eps_v_h / 3.0;
}

/// f1(y) = -y^2 / eps^2 + 2 y / eps for y < eps; 1 otherwise (dimensionless). C^1, rises from 0 to 1.
KOKKOS_INLINE_FUNCTION double friction_f1(double y, double eps_v_h) {
    if (y >= eps_v_h) {
        return 1.0;
    }
    const double r = y / eps_v_h;
    return (2.0 - r) * r;
}

/// f1'(y) = 2 (eps - y) / eps^2 for y < eps; 0 otherwise (1/m).
KOKKOS_INLINE_FUNCTION double friction_f1_derivative(double y, double eps_v_h) {
    if (y >= eps_v_h) {
        return 0.0;
    }
    return 2.0 * (eps_v_h - y) / (eps_v_h * eps_v_h);
}

/// f1(y) / y = 2 / eps - y / eps^2 for y < eps (finite limit 2 / eps at y = 0); 1 / y otherwise (1/m).
KOKKOS_INLINE_FUNCTION double friction_f1_over_y(double y, double eps_v_h) {
    if (y >= eps_v_h) {
        return 1.0 / y;
    }
    return (2.0 - y / eps_v_h) / eps_v_h;
}

/// (f1'(y) y - f1(y)) / y^3 = -1 / (eps^2 y) for y < eps; -1 / y^3 otherwise (1/m^3). It multiplies
/// u u^T (norm y^2) in the Hessian, and that product tends to 0 as y -> 0; at y = 0 this returns 0, the
/// value that gives the product its limit (friction_pair_gradient_hessian uses the unit direction
/// instead, so it never forms the divergent factor).
KOKKOS_INLINE_FUNCTION double friction_df1_y_minus_f1_over_y3(double y, double eps_v_h) {
    if (y <= 0.0) {
        return 0.0;
    }
    if (y >= eps_v_h) {
        return -1.0 / (y * y * y);
    }
    return -1.0 / (eps_v_h * eps_v_h * y);
}

// ---- Closest-point coefficients and tangent bases (spec §6.4), evaluated at the lagging point -------

namespace detail {

/// v / |v| when |v| > tiny * scale, else a unit vector orthogonal to the unit vector fallback_axis
/// (keeps the basis finite in degenerate, invalid contact states).
KOKKOS_INLINE_FUNCTION Vec3 normalize_or_orthogonal(const Vec3& v, double scale, const Vec3& fallback_axis) {
    const double n = v.norm();
    if (n > 1e-300 && n > 1e-15 * scale) {
        return v / n;
    }
    const double ax = ::fabs(fallback_axis(0));
    const double ay = ::fabs(fallback_axis(1));
    const double az = ::fabs(fallback_axis(2));
    Vec3 e = Vec3::Zero();
    if (ax <= ay && ax <= az) {
        e(0) = 1.0;
    } else if (ay <= az) {
        e(1) = 1.0;
    } else {
        e(2) = 1.0;
    }
    const Vec3 w = cross(fallback_axis, e);
    return w / w.norm();
}

} // namespace detail

/// Closest-point coefficients of point p and the plane of (t0, t1, t2): c = (1, -(1 - b1 - b2), -b1, -b2)
/// with (b1, b2) the least-squares barycentrics of p (p - t0 ≈ b1 (t1 - t0) + b2 (t2 - t0)), so that
/// sum_j c_j x_j = p - (closest point on the plane). Requires a non-degenerate triangle.
KOKKOS_INLINE_FUNCTION VecN<4>
point_triangle_closest_point_coefficients(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
    const Vec3 e1 = t1 - t0;
    const Vec3 e2 = t2 - t0;
    const Vec3 d = p - t0;
    const double a11 = e1.dot(e1);
    const double a12 = e1.dot(e2);
    const double a22 = e2.dot(e2);
    const double r1 = e1.dot(d);
    const double r2 = e2.dot(d);
    const double det_a = a11 * a22 - a12 * a12;
    const double b1 = (a22 * r1 - a12 * r2) / det_a;
    const double b2 = (a11 * r2 - a12 * r1) / det_a;
    VecN<4> c;
    c << 1.0, -(1.0 - b1 - b2), -b1, -b2;
    return c;
}

/// Tangent basis of a point-triangle pair: P = [ê, normalize((e x (t2 - t0)) x e)], e = t1 - t0 (both
/// columns in the triangle plane, orthonormal).
KOKKOS_INLINE_FUNCTION Mat32 point_triangle_tangent_basis(const Vec3& /*p*/,
                                                          const Vec3& t0,
                                                          const Vec3& t1,
                                                          const Vec3& t2) {
    const Vec3 e = t1 - t0;
    const Vec3 e_hat = e / e.norm();
    const Vec3 w = cross(cross(e, t2 - t0), e);
    Mat32 P;
    P.col(0) = e_hat;
    P.col(1) = detail::normalize_or_orthogonal(w, e.squaredNorm() * (t2 - t0).norm(), e_hat);
    return P;
}

/// Closest-point coefficients of the lines through (a0, a1) and (b0, b1):
/// c = (1 - ga, ga, -(1 - gb), -gb) with ga = (B E - C D) / Delta and gb = (A E - B D) / Delta the
/// closest-point parameters (u = a1 - a0, v = b1 - b0, w = a0 - b0, A = u.u, B = u.v, C = v.v,
/// D = u.w, E = v.w, Delta = A C - B^2). sum_j c_j x_j is the vector between the closest points.
/// Requires non-parallel edges (Delta > 0), as for the interior edge-edge case.
KOKKOS_INLINE_FUNCTION VecN<4>
edge_edge_closest_point_coefficients(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1) {
    const Vec3 u = a1 - a0;
    const Vec3 v = b1 - b0;
    const Vec3 w = a0 - b0;
    const double A = u.dot(u);
    const double B = u.dot(v);
    const double C = v.dot(v);
    const double D = u.dot(w);
    const double E = v.dot(w);
    // Delta = |u x v|^2, evaluated without the cancellation of A C - B^2.
    const double delta = cross(u, v).squaredNorm();
    const double ga = (B * E - C * D) / delta;
    const double gb = (A * E - B * D) / delta;
    VecN<4> c;
    c << 1.0 - ga, ga, -(1.0 - gb), -gb;
    return c;
}

/// Tangent basis of an edge-edge pair: P = [ê_a, normalize((e_a x e_b) x e_a)], e_a = a1 - a0,
/// e_b = b1 - b0 (both columns orthogonal to the common normal e_a x e_b).
KOKKOS_INLINE_FUNCTION Mat32 edge_edge_tangent_basis(const Vec3& a0,
                                                     const Vec3& a1,
                                                     const Vec3& b0,
                                                     const Vec3& b1) {
    const Vec3 ea = a1 - a0;
    const Vec3 eb = b1 - b0;
    const Vec3 ea_hat = ea / ea.norm();
    const Vec3 w = cross(cross(ea, eb), ea);
    Mat32 P;
    P.col(0) = ea_hat;
    P.col(1) = detail::normalize_or_orthogonal(w, ea.squaredNorm() * eb.norm(), ea_hat);
    return P;
}

/// Closest-point coefficients of point p and the line through (e0, e1): c = (1, -(1 - eta), -eta),
/// eta = (p - e0).e / |e|^2, e = e1 - e0; sum_j c_j x_j = p - (closest point on the line).
KOKKOS_INLINE_FUNCTION VecN<3>
point_edge_closest_point_coefficients(const Vec3& p, const Vec3& e0, const Vec3& e1) {
    const Vec3 e = e1 - e0;
    const double eta = (p - e0).dot(e) / e.squaredNorm();
    VecN<3> c;
    c << 1.0, -(1.0 - eta), -eta;
    return c;
}

/// Tangent basis of a point-edge pair: P = [ê, normalize(e x (p - e0))], e = e1 - e0 (both columns
/// orthogonal to the normal p - closest point). A point on the line (an invalid contact state) gets an
/// arbitrary second column orthogonal to ê.
KOKKOS_INLINE_FUNCTION Mat32 point_edge_tangent_basis(const Vec3& p, const Vec3& e0, const Vec3& e1) {
    const Vec3 e = e1 - e0;
    const Vec3 e_hat = e / e.norm();
    Mat32 P;
    P.col(0) = e_hat;
    P.col(1) = detail::normalize_or_orthogonal(cross(e, p - e0), e.norm() * (p - e0).norm(), e_hat);
    return P;
}

/// Closest-point coefficients of a point-point pair (p0, p1): c = (1, -1).
KOKKOS_INLINE_FUNCTION VecN<2> point_point_closest_point_coefficients(const Vec3& /*p0*/,
                                                                      const Vec3& /*p1*/) {
    return VecN<2>(1.0, -1.0);
}

/// Tangent basis of a point-point pair: with r = p1 - p0, the first column is X̂ x r or Ŷ x r (whichever
/// is longer) normalized, the second r x (first column) normalized; both orthogonal to r. Coincident
/// points (an invalid contact state) get the x-y plane.
KOKKOS_INLINE_FUNCTION Mat32 point_point_tangent_basis(const Vec3& p0, const Vec3& p1) {
    const Vec3 r = p1 - p0;
    const Vec3 x_cross = cross(Vec3(1.0, 0.0, 0.0), r);
    const Vec3 y_cross = cross(Vec3(0.0, 1.0, 0.0), r);
    const Vec3 t = x_cross.squaredNorm() > y_cross.squaredNorm() ? x_cross : y_cross;
    Mat32 P;
    if (!(t.squaredNorm() > 0.0)) {
        P << 1.0, 0.0, 0.0, 1.0, 0.0, 0.0;
        return P;
    }
    P.col(0) = t / t.norm();
    const Vec3 s = cross(r, P.col(0));
    P.col(1) = s / s.norm();
    return P;
}

// ---- Per-pair lagged friction potential (spec §6.3) ------------------------------------------------

/// Tangential relative displacement u = P^T sum_j c_j Δx_j (m) of a stencil of NV vertices; row j of
/// dx is Δx_j.
template <int NV>
KOKKOS_INLINE_FUNCTION VecN<2>
friction_tangent_displacement(const VecN<NV>& c, const Mat32& P, const Eigen::Matrix<double, NV, 3>& dx) {
    Vec3 r = Vec3::Zero();
    for (int j = 0; j < NV; ++j) {
        r += c(j) * dx.row(j).transpose();
    }
    return P.transpose() * r;
}

/// Lagged friction potential of one pair, D_k = mu N f0(|u|) (J), with mu the friction coefficient,
/// normal_force N = h^2 λ_k >= 0 the lagged normal force in IP units (J/m; spec §6.3, N = -2 κ d b'(s)),
/// c, P the lagged coefficients and basis, and dx the stencil displacements since the start of the step
/// (NV x 3, m).
template <int NV>
KOKKOS_INLINE_FUNCTION double friction_pair_potential(double mu,
                                                      double normal_force,
                                                      const VecN<NV>& c,
                                                      const Mat32& P,
                                                      const Eigen::Matrix<double, NV, 3>& dx,
                                                      double eps_v_h) {
    const VecN<2> u = friction_tangent_displacement<NV>(c, P, dx);
    return mu * normal_force * friction_f0(u.norm(), eps_v_h);
}

/// Gradient and PSD Hessian of friction_pair_potential in the stencil coordinates (vertex-major,
/// 3 NV entries), for NV = 2 (PP), 3 (PE) or 4 (PT, EE):
///   grad = mu N T (f1(y) / y) u,
///   hess = mu N T M T^T,  M = PSD part of [ (f1'(y) y - f1(y)) / y^3 u u^T + (f1(y) / y) I_2 ],
/// with y = |u| and T the lifting (block j = c_j P). M is formed with the unit direction û = u / y:
/// for y < eps_v_h, M = (2 / eps - y / eps^2) I - (y / eps^2) û û^T (limit (2 / eps) I at y = 0); for
/// y >= eps_v_h, M = (I - û û^T) / y. It is PSD analytically (eigenvalues f1' >= 0 along û and f1 / y
/// across); the 2 x 2 projection only removes round-off. Requires mu N >= 0 for the lifted Hessian to
/// be PSD.
template <int NV>
KOKKOS_INLINE_FUNCTION void friction_pair_gradient_hessian(double mu,
                                                           double normal_force,
                                                           const VecN<NV>& c,
                                                           const Mat32& P,
                                                           const Eigen::Matrix<double, NV, 3>& dx,
                                                           double eps_v_h,
                                                           VecN<3 * NV>& gradient,
                                                           MatN<3 * NV>& hessian) {
    const VecN<2> u = friction_tangent_displacement<NV>(c, P, dx);
    const double y = u.norm();
    const double scale = mu * normal_force;
    const double f1_over_y = friction_f1_over_y(y, eps_v_h);

    MatN<2> M = f1_over_y * MatN<2>::Identity();
    if (y > 0.0) {
        const VecN<2> u_hat = u / y;
        // (f1' y - f1) / y^3 u u^T = (f1' - f1 / y) / y^2 * y^2 û û^T.
        M += (friction_f1_derivative(y, eps_v_h) - f1_over_y) * u_hat * u_hat.transpose();
    }
    project_psd<2>(M);

    // T^T block j = c_j P^T: the force direction in 3D is P (f1 / y) u, the Hessian kernel P M P^T.
    const Vec3 force = scale * f1_over_y * (P * u);
    Mat3 K = scale * P * M * P.transpose();
    K = 0.5 * (K + K.transpose()).eval(); // exactly symmetric, so the lifted blocks are too
    for (int i = 0; i < NV; ++i) {
        gradient.template segment<3>(3 * i) = c(i) * force;
        for (int j = 0; j < NV; ++j) {
            hessian.template block<3, 3>(3 * i, 3 * j) = (c(i) * c(j)) * K;
        }
    }
}

} // namespace intact::kernels
