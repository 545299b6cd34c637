#pragma once
/// @file barrier.hpp
/// @brief The IPC log barrier on squared distances (spec §2.2) and its first two derivatives.
/// Device-callable, allocation-free.
///
/// Squared convention: the barrier is evaluated on s = d^2 with activation ŝ = d̂^2,
///   b(s, ŝ) = -(s - ŝ)^2 ln(s / ŝ) for 0 < s < ŝ, and 0 for s >= ŝ.
/// This is the formula of P eq.6 with d -> s, d̂ -> ŝ: a different function of d than b(d, d̂), with the
/// same support, sign and convexity; it is what the reference implementation evaluates, and every κ and
/// contact-force constant in the spec is written for it. b is C^2 at s = ŝ (b = b' = b'' = 0 there) and
/// tends to +infinity as s -> 0+. Units: b in m^4, b' in m^2, b'' dimensionless (s, ŝ in m^2).
/// Per pair, the caller forms db = b'(s) ds and d2b = b''(s) ds ds^T + b'(s) d2s.
/// s <= 0 (touching or intersecting primitives) is outside the domain: b = +inf, b' = -inf, b'' = +inf.

#include "kernels/small_matrix.hpp"

#include <cmath>

namespace intact::kernels {

/// b(s, ŝ) = -(s - ŝ)^2 ln(s / ŝ) for 0 < s < ŝ; 0 for s >= ŝ; +inf for s <= 0.
KOKKOS_INLINE_FUNCTION double barrier(double s, double s_hat) {
    if (s >= s_hat) {
        return 0.0;
    }
    if (s <= 0.0) {
        return infinity();
    }
    const double d = s - s_hat;
    return -d * d * ::log(s / s_hat);
}

/// b'(s) = (ŝ - s)(2 ln(s / ŝ) - ŝ / s + 1) for 0 < s < ŝ (negative there); 0 for s >= ŝ; -inf for s <= 0.
KOKKOS_INLINE_FUNCTION double barrier_first_derivative(double s, double s_hat) {
    if (s >= s_hat) {
        return 0.0;
    }
    if (s <= 0.0) {
        return -infinity();
    }
    return (s_hat - s) * (2.0 * ::log(s / s_hat) - s_hat / s + 1.0);
}

/// b''(s) = (ŝ / s + 2)(ŝ / s) - 2 ln(s / ŝ) - 3 for 0 < s < ŝ (positive there); 0 for s >= ŝ;
/// +inf for s <= 0.
KOKKOS_INLINE_FUNCTION double barrier_second_derivative(double s, double s_hat) {
    if (s >= s_hat) {
        return 0.0;
    }
    if (s <= 0.0) {
        return infinity();
    }
    const double r = s_hat / s;
    return (r + 2.0) * r - 2.0 * ::log(s / s_hat) - 3.0;
}

} // namespace intact::kernels
