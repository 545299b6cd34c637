#pragma once
/// @file second_order_dual.hpp
/// @brief Second-order forward differentiation: a scalar that carries its value, gradient and Hessian
/// with respect to N inputs, for stencil energies whose closed-form Hessian is long and error-prone
/// (the dihedral angle of a hinge, the discrete curvature of a rod vertex). Device-callable,
/// allocation-free.
///
/// Every operation applies the chain rule exactly: for u = f(a, b),
///     ∇u  = f_a ∇a + f_b ∇b,
///     ∇²u = f_a ∇²a + f_b ∇²b + f_aa ∇a∇aᵀ + f_bb ∇b∇bᵀ + f_ab (∇a∇bᵀ + ∇b∇aᵀ),
/// so the results are exact up to round-off (the kernel tests hold them to finite differences).
/// Cost: O(N²) per operation; meant for N ≤ 12 and a few dozen operations per stencil.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

template <int N> struct Dual2 {
    double v;  ///< value
    VecN<N> g; ///< gradient with respect to the N inputs
    MatN<N> h; ///< Hessian (symmetric)

    /// A quantity that does not depend on the inputs.
    KOKKOS_INLINE_FUNCTION static Dual2 constant(double value) {
        Dual2 d;
        d.v = value;
        d.g.setZero();
        d.h.setZero();
        return d;
    }
    /// Input number i with value `value` (∇ = e_i, ∇² = 0).
    KOKKOS_INLINE_FUNCTION static Dual2 variable(double value, int i) {
        Dual2 d = constant(value);
        d.g(i) = 1.0;
        return d;
    }
};

/// u = f(a) with f(a.v) = f0, f'(a.v) = f1, f''(a.v) = f2.
template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> chain(const Dual2<N>& a, double f0, double f1, double f2) {
    Dual2<N> u;
    u.v = f0;
    u.g = f1 * a.g;
    u.h = f1 * a.h + f2 * (a.g * a.g.transpose());
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator+(const Dual2<N>& a, const Dual2<N>& b) {
    Dual2<N> u;
    u.v = a.v + b.v;
    u.g = a.g + b.g;
    u.h = a.h + b.h;
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator-(const Dual2<N>& a, const Dual2<N>& b) {
    Dual2<N> u;
    u.v = a.v - b.v;
    u.g = a.g - b.g;
    u.h = a.h - b.h;
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator-(const Dual2<N>& a) {
    Dual2<N> u;
    u.v = -a.v;
    u.g = -a.g;
    u.h = -a.h;
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator*(double s, const Dual2<N>& a) {
    Dual2<N> u;
    u.v = s * a.v;
    u.g = s * a.g;
    u.h = s * a.h;
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator+(const Dual2<N>& a, double s) {
    Dual2<N> u = a;
    u.v += s;
    return u;
}

/// (ab)'' = a b'' + b a'' + a' b'ᵀ + b' a'ᵀ.
template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator*(const Dual2<N>& a, const Dual2<N>& b) {
    Dual2<N> u;
    u.v = a.v * b.v;
    u.g = a.v * b.g + b.v * a.g;
    const MatN<N> cross_term = a.g * b.g.transpose();
    u.h = a.v * b.h + b.v * a.h + cross_term + cross_term.transpose();
    return u;
}

/// 1/a: f' = −1/a², f'' = 2/a³ (a.v ≠ 0).
template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> reciprocal(const Dual2<N>& a) {
    const double r = 1.0 / a.v;
    return chain(a, r, -r * r, 2.0 * r * r * r);
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> operator/(const Dual2<N>& a, const Dual2<N>& b) {
    return a * reciprocal(b);
}

/// √a: f' = 1/(2√a), f'' = −1/(4 a√a) (a.v > 0).
template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> dual_sqrt(const Dual2<N>& a) {
    const double s = ::sqrt(a.v);
    return chain(a, s, 0.5 / s, -0.25 / (a.v * s));
}

/// atan2(y, x), the angle of (x, y) in (−π, π]; with r² = x² + y²:
/// f_y = x/r², f_x = −y/r², f_yy = −2xy/r⁴, f_xx = 2xy/r⁴, f_xy = (y² − x²)/r⁴ (r > 0).
template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> dual_atan2(const Dual2<N>& y, const Dual2<N>& x) {
    const double r2 = x.v * x.v + y.v * y.v;
    const double r4 = r2 * r2;
    const double fy = x.v / r2;
    const double fx = -y.v / r2;
    const double fyy = -2.0 * x.v * y.v / r4;
    const double fxy = (y.v * y.v - x.v * x.v) / r4;
    Dual2<N> u;
    u.v = ::atan2(y.v, x.v);
    u.g = fy * y.g + fx * x.g;
    const MatN<N> mixed = y.g * x.g.transpose();
    u.h = fy * y.h + fx * x.h + fyy * (y.g * y.g.transpose()) - fyy * (x.g * x.g.transpose()) +
          fxy * (mixed + mixed.transpose());
    return u;
}

/// A 3-vector of duals (a point or an edge of a stencil).
template <int N> struct DualVec3 { Dual2<N> c[3]; };

/// Corner `a` of a stencil of N / 3 points: its coordinates are inputs 3a, 3a + 1, 3a + 2.
template <int N> KOKKOS_INLINE_FUNCTION DualVec3<N> stencil_point(const Vec3& x, int a) {
    DualVec3<N> p;
    for (int i = 0; i < 3; ++i) {
        p.c[i] = Dual2<N>::variable(x(i), 3 * a + i);
    }
    return p;
}

template <int N> KOKKOS_INLINE_FUNCTION DualVec3<N> operator-(const DualVec3<N>& a, const DualVec3<N>& b) {
    DualVec3<N> u;
    for (int i = 0; i < 3; ++i) {
        u.c[i] = a.c[i] - b.c[i];
    }
    return u;
}

template <int N> KOKKOS_INLINE_FUNCTION Dual2<N> dot(const DualVec3<N>& a, const DualVec3<N>& b) {
    return a.c[0] * b.c[0] + a.c[1] * b.c[1] + a.c[2] * b.c[2];
}

template <int N> KOKKOS_INLINE_FUNCTION DualVec3<N> cross(const DualVec3<N>& a, const DualVec3<N>& b) {
    DualVec3<N> u;
    u.c[0] = a.c[1] * b.c[2] - a.c[2] * b.c[1];
    u.c[1] = a.c[2] * b.c[0] - a.c[0] * b.c[2];
    u.c[2] = a.c[0] * b.c[1] - a.c[1] * b.c[0];
    return u;
}

} // namespace intact::kernels
