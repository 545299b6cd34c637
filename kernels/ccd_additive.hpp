#pragma once
/// @file ccd_additive.hpp
/// @brief Conservative continuous collision detection by additive CCD (ACCD; Li, Kaufman, Jiang,
/// "Codimensional Incremental Potential Contact", SIGGRAPH 2021, §4 and Alg. 1) for point–point,
/// point–edge, point–triangle and edge–edge pairs moving on linear trajectories x(t) = x0 + t (x1 − x0).
/// Device-callable (host and CUDA), allocation-free and exception-free.
///
/// Algorithm (per pair, ξ = min_distance ≥ 0, s = conservative_rescaling ∈ (0, 1)):
/// 1. Subtract the mean displacement from every vertex's displacement. All vertices then move by the same
///    extra translation, which leaves every distance unchanged but makes the speed bound below smaller.
/// 2. l_p = ‖Δp‖ + max_j ‖Δt_j‖ (PT), max ‖Δa_i‖ + max ‖Δb_j‖ (EE), ‖Δa‖ + max ‖Δe_j‖ (PE), ‖Δa‖ + ‖Δb‖ (PP).
///    Every point of a primitive moves by a convex combination of its vertices' displacements, so the
///    pair distance d(t) is l_p-Lipschitz: |d(t) − d(t')| ≤ l_p |t − t'|.
/// 3. d_0 = d(0). If d_0 ≤ ξ the pair already touches: toi = 0, hit. Otherwise the target gap is
///    g = (1 − s)(d_0 − ξ) (spec §8.2 [D]: 0.1 (d_0 − ξ) for s = 0.9).
/// 4. Conservative advancement from t = 0: step τ = s (d(t) − ξ)/l_p. On [t, t + τ] the distance stays
///    ≥ d(t) − l_p τ = ξ + (1 − s)(d(t) − ξ) > ξ, so no contact happens there. If t + τ ≥ t_max the pair
///    is collision-free on [0, t_max]: no hit. Otherwise evaluate d(t + τ); if it is below ξ + g (and
///    t > 0) stop and report a hit at toi = t, the last time whose distance was still ≥ ξ + g, as in
///    the paper. Else t ← t + τ and repeat.
/// 5. After max_iterations steps, report a hit at the current t (conservative fallback: [0, t] is free).
///
/// Guarantees: in exact arithmetic no contact closer than ξ happens in [0, toi) when the result is true,
/// and none in [0, t_max] when it is false: the test never misses a collision. It may report a hit for a
/// pair that only comes within ξ + g (a false positive by design; the gap keeps IPC's line search away
/// from contact). Degenerate input is handled by the distance itself: parallel edges, a point moving
/// inside the triangle's plane, zero-area triangles and zero-length edges all have a well-defined
/// closest-point distance, and zero relative motion (l_p = 0) keeps the distance constant.
/// Floating point: each computed distance is lowered by δ = k_accd_round_off · S, where S bounds the
/// coordinate magnitudes along the trajectories, before it is used (the closest-point formulas below are
/// accurate to a few ulps of S, with a second-order error from the closest-point weights). A pair whose
/// initial distance is within δ of ξ therefore reports toi = 0. Non-finite input reports toi = 0, hit.
///
/// Results: true with toi ∈ [0, t_max] when the pair may come within ξ before t_max; false with
/// toi = t_max when it certainly does not.

#include "kernels/small_matrix.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>

namespace intact::kernels {

/// Paper value of the conservative rescaling s: each step closes at most 90% of the remaining gap.
constexpr double k_accd_conservative_rescaling = 0.9;
/// Most advancement steps before the conservative fallback (hit at the current t). Only grazing motion
/// (fast tangential sliding at a distance far below l_p) comes near it: the step count is roughly
/// l_p t_max / (s (d − ξ)). No query of the scenes in inputs/ needs more than 10⁴; pairs left 1e-12 m
/// apart by a crushed block and sliding 1e-5 m need 10⁷, and at the former cap of 10⁶ each query took
/// 0.1 s and a step bound of many such pairs stalled `al` for minutes.
constexpr int k_accd_max_iterations = 10000;
/// Relative round-off allowance on computed distances (times the coordinate scale S): 64 ulp.
constexpr double k_accd_round_off = 64.0 * 2.220446049250313e-16;

namespace accd {

/// Squared distance from p to the segment [e0, e1] and the closest point's weight eta
/// (closest point (1 − eta) e0 + eta e1, eta ∈ [0, 1]). A zero-length segment is the point e0.
KOKKOS_INLINE_FUNCTION double point_edge_closest(const Vec3& p, const Vec3& e0, const Vec3& e1, double& eta) {
    const Vec3 e = e1 - e0;
    const Vec3 w = p - e0;
    const double ee = e.squaredNorm();
    eta = 0.0;
    if (ee > 0.0) {
        eta = w.dot(e) / ee;
        eta = eta < 0.0 ? 0.0 : (eta > 1.0 ? 1.0 : eta);
    }
    return (w - eta * e).squaredNorm();
}

/// Squared distance from p to the triangle (t0, t1, t2) and the closest point's barycentric weights:
/// closest point (1 − b1 − b2) t0 + b1 t1 + b2 t2. Cases: the interior (projection inside, weights
/// b1 = ((w × e2)·n)/‖n‖², b2 = ((e1 × w)·n)/‖n‖² with w = p − t0, e_k = t_k − t0, n = e1 × e2) or the
/// nearest of the three edges (which covers the vertices). Every candidate is the distance to an actual
/// point of the triangle, so a degenerate (zero-area) triangle falls back to its edges.
KOKKOS_INLINE_FUNCTION double point_triangle_closest(
    const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, double& b1, double& b2) {
    double eta;
    double best = point_edge_closest(p, t0, t1, eta);
    b1 = eta;
    b2 = 0.0;
    double s = point_edge_closest(p, t1, t2, eta);
    if (s < best) {
        best = s;
        b1 = 1.0 - eta;
        b2 = eta;
    }
    s = point_edge_closest(p, t2, t0, eta);
    if (s < best) {
        best = s;
        b1 = 0.0;
        b2 = 1.0 - eta;
    }
    const Vec3 e1 = t1 - t0;
    const Vec3 e2 = t2 - t0;
    const Vec3 w = p - t0;
    const Vec3 n = cross(e1, e2);
    const double nn = n.squaredNorm();
    if (nn > 0.0) {
        const double c1 = cross(w, e2).dot(n) / nn;
        const double c2 = cross(e1, w).dot(n) / nn;
        if (c1 >= 0.0 && c2 >= 0.0 && c1 + c2 <= 1.0) {
            s = (w - c1 * e1 - c2 * e2).squaredNorm();
            if (s < best) {
                best = s;
                b1 = c1;
                b2 = c2;
            }
        }
    }
    return best;
}

/// Squared distance between the segments [a0, a1] and [b0, b1] and the closest points' weights:
/// closest points (1 − ga) a0 + ga a1 and (1 − gb) b0 + gb b1. Cases: the interior (line–line closest
/// points ga = ((w × v)·n)/‖n‖², gb = ((w × u)·n)/‖n‖² with u = a1 − a0, v = b1 − b0, w = b0 − a0,
/// n = u × v, used when both lie in [0, 1]) or the nearest of the four point–segment distances (which
/// covers all boundary cases, including parallel and zero-length edges).
KOKKOS_INLINE_FUNCTION double
edge_edge_closest(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, double& ga, double& gb) {
    double eta;
    double best = point_edge_closest(a0, b0, b1, eta);
    ga = 0.0;
    gb = eta;
    double s = point_edge_closest(a1, b0, b1, eta);
    if (s < best) {
        best = s;
        ga = 1.0;
        gb = eta;
    }
    s = point_edge_closest(b0, a0, a1, eta);
    if (s < best) {
        best = s;
        ga = eta;
        gb = 0.0;
    }
    s = point_edge_closest(b1, a0, a1, eta);
    if (s < best) {
        best = s;
        ga = eta;
        gb = 1.0;
    }
    const Vec3 u = a1 - a0;
    const Vec3 v = b1 - b0;
    const Vec3 w = b0 - a0;
    const Vec3 n = cross(u, v);
    const double nn = n.squaredNorm();
    if (nn > 0.0) {
        const double sa = cross(w, v).dot(n) / nn;
        const double sb = cross(w, u).dot(n) / nn;
        if (sa >= 0.0 && sa <= 1.0 && sb >= 0.0 && sb <= 1.0) {
            s = (sa * u - sb * v - w).squaredNorm();
            if (s < best) {
                best = s;
                ga = sa;
                gb = sb;
            }
        }
    }
    return best;
}

/// The primitive pairs ACCD handles; x[0..3] hold, in order: PP (a, b), PE (p, e0, e1), PT (p, t0, t1,
/// t2), EE (a0, a1, b0, b1).
enum class PairKind { point_point, point_edge, point_triangle, edge_edge };

template <PairKind K> KOKKOS_INLINE_FUNCTION constexpr int vertex_count() {
    return K == PairKind::point_point ? 2 : (K == PairKind::point_edge ? 3 : 4);
}

/// Squared pair distance of the configuration x (layout as in PairKind).
template <PairKind K> KOKKOS_INLINE_FUNCTION double pair_distance_squared(const Vec3 x[4]) {
    if constexpr (K == PairKind::point_point) {
        return (x[0] - x[1]).squaredNorm();
    } else if constexpr (K == PairKind::point_edge) {
        double eta;
        return point_edge_closest(x[0], x[1], x[2], eta);
    } else if constexpr (K == PairKind::point_triangle) {
        double b1;
        double b2;
        return point_triangle_closest(x[0], x[1], x[2], x[3], b1, b2);
    } else {
        double ga;
        double gb;
        return edge_edge_closest(x[0], x[1], x[2], x[3], ga, gb);
    }
}

/// Bound l_p on the speed of the pair distance for the displacements dx (see the file comment, step 2).
template <PairKind K> KOKKOS_INLINE_FUNCTION double max_relative_displacement(const Vec3 dx[4]) {
    if constexpr (K == PairKind::point_point) {
        return dx[0].norm() + dx[1].norm();
    } else if constexpr (K == PairKind::point_edge) {
        return dx[0].norm() + ::fmax(dx[1].norm(), dx[2].norm());
    } else if constexpr (K == PairKind::point_triangle) {
        return dx[0].norm() + ::fmax(dx[1].norm(), ::fmax(dx[2].norm(), dx[3].norm()));
    } else {
        return ::fmax(dx[0].norm(), dx[1].norm()) + ::fmax(dx[2].norm(), dx[3].norm());
    }
}

/// The ACCD loop of the file comment for the pair kind K: x0, x1 are the vertex positions at t = 0 and
/// t = 1 (only the first vertex_count<K>() entries are read).
template <PairKind K>
KOKKOS_INLINE_FUNCTION bool additive_ccd(const Vec3 x0[4],
                                         const Vec3 x1[4],
                                         double min_distance,
                                         double t_max,
                                         double& toi,
                                         double conservative_rescaling,
                                         int max_iterations) {
    constexpr int n = vertex_count<K>();
    Vec3 dx[4];
    Vec3 mean = Vec3::Zero();
    for (int i = 0; i < n; ++i) {
        dx[i] = x1[i] - x0[i];
        mean += dx[i];
    }
    mean /= double(n);
    double scale = 0.0;
    for (int i = 0; i < n; ++i) {
        dx[i] -= mean;
        scale = ::fmax(scale, x0[i].norm() + ::fabs(t_max) * dx[i].norm());
    }
    const double round_off = k_accd_round_off * scale;
    // The norms inside l_p are rounded; a few ulps up keeps it an upper bound.
    const double speed = max_relative_displacement<K>(dx) * (1.0 + 8.0 * 2.220446049250313e-16);
    const double d0 = ::sqrt(pair_distance_squared<K>(x0)) - round_off;
    if (!is_finite(d0) || !is_finite(speed)) {
        toi = 0.0;
        return true;
    }
    if (d0 <= min_distance) {
        toi = 0.0;
        return true;
    }
    // No relative motion (the distance is constant), or too far to close the gap before t_max.
    if (speed == 0.0 || d0 - min_distance > t_max * speed) {
        toi = t_max;
        return false;
    }
    const double gap = (1.0 - conservative_rescaling) * (d0 - min_distance);
    double d = d0;
    toi = 0.0;
    Vec3 x[4];
    for (int iteration = 0; iteration < max_iterations; ++iteration) {
        const double t_next = toi + conservative_rescaling * (d - min_distance) / speed;
        if (t_next >= t_max) {
            toi = t_max;
            return false;
        }
        for (int i = 0; i < n; ++i) {
            x[i] = x0[i] + t_next * dx[i];
        }
        const double d_next = ::sqrt(pair_distance_squared<K>(x)) - round_off;
        if (toi > 0.0 && d_next - min_distance < gap) {
            return true;
        }
        toi = t_next;
        if (d_next <= min_distance) {
            return true;
        }
        d = d_next;
    }
    return true;
}

} // namespace accd

/// ACCD for a point p against the triangle (t0, t1, t2), positions at t = 0 (`_t0`) and t = 1 (`_t1`).
/// @param min_distance ξ ≥ 0, the separation that counts as contact.
/// @param t_max the end of the tested interval (usually 1, or the line search's largest step).
/// @param toi out: when true, a time in [0, t_max] before which no contact closer than ξ happens;
///        when false, t_max.
/// @param conservative_rescaling s ∈ (0, 1), the paper's 0.9; the reported gap is (1 − s)(d_0 − ξ).
/// @param max_iterations advancement steps before the conservative fallback (hit at the current time).
/// @return true when the pair may come within ξ before t_max (never false for a real contact).
/// Runs on host and device.
KOKKOS_INLINE_FUNCTION bool point_triangle_ccd(const Vec3& p_t0,
                                               const Vec3& t0_t0,
                                               const Vec3& t1_t0,
                                               const Vec3& t2_t0,
                                               const Vec3& p_t1,
                                               const Vec3& t0_t1,
                                               const Vec3& t1_t1,
                                               const Vec3& t2_t1,
                                               double min_distance,
                                               double t_max,
                                               double& toi,
                                               double conservative_rescaling = k_accd_conservative_rescaling,
                                               int max_iterations = k_accd_max_iterations) {
    const Vec3 x0[4] = {p_t0, t0_t0, t1_t0, t2_t0};
    const Vec3 x1[4] = {p_t1, t0_t1, t1_t1, t2_t1};
    return accd::additive_ccd<accd::PairKind::point_triangle>(x0, x1, min_distance, t_max, toi,
                                                              conservative_rescaling, max_iterations);
}

/// ACCD for the edges (a0, a1) and (b0, b1); parameters and result as for point_triangle_ccd.
KOKKOS_INLINE_FUNCTION bool edge_edge_ccd(const Vec3& a0_t0,
                                          const Vec3& a1_t0,
                                          const Vec3& b0_t0,
                                          const Vec3& b1_t0,
                                          const Vec3& a0_t1,
                                          const Vec3& a1_t1,
                                          const Vec3& b0_t1,
                                          const Vec3& b1_t1,
                                          double min_distance,
                                          double t_max,
                                          double& toi,
                                          double conservative_rescaling = k_accd_conservative_rescaling,
                                          int max_iterations = k_accd_max_iterations) {
    const Vec3 x0[4] = {a0_t0, a1_t0, b0_t0, b1_t0};
    const Vec3 x1[4] = {a0_t1, a1_t1, b0_t1, b1_t1};
    return accd::additive_ccd<accd::PairKind::edge_edge>(x0, x1, min_distance, t_max, toi,
                                                         conservative_rescaling, max_iterations);
}

/// ACCD for a point p against the edge (e0, e1) (codimensional points and segments); as point_triangle_ccd.
KOKKOS_INLINE_FUNCTION bool point_edge_ccd(const Vec3& p_t0,
                                           const Vec3& e0_t0,
                                           const Vec3& e1_t0,
                                           const Vec3& p_t1,
                                           const Vec3& e0_t1,
                                           const Vec3& e1_t1,
                                           double min_distance,
                                           double t_max,
                                           double& toi,
                                           double conservative_rescaling = k_accd_conservative_rescaling,
                                           int max_iterations = k_accd_max_iterations) {
    const Vec3 x0[4] = {p_t0, e0_t0, e1_t0, Vec3::Zero()};
    const Vec3 x1[4] = {p_t1, e0_t1, e1_t1, Vec3::Zero()};
    return accd::additive_ccd<accd::PairKind::point_edge>(x0, x1, min_distance, t_max, toi,
                                                          conservative_rescaling, max_iterations);
}

/// ACCD for two points a and b; as point_triangle_ccd.
KOKKOS_INLINE_FUNCTION bool point_point_ccd(const Vec3& a_t0,
                                            const Vec3& b_t0,
                                            const Vec3& a_t1,
                                            const Vec3& b_t1,
                                            double min_distance,
                                            double t_max,
                                            double& toi,
                                            double conservative_rescaling = k_accd_conservative_rescaling,
                                            int max_iterations = k_accd_max_iterations) {
    const Vec3 x0[4] = {a_t0, b_t0, Vec3::Zero(), Vec3::Zero()};
    const Vec3 x1[4] = {a_t1, b_t1, Vec3::Zero(), Vec3::Zero()};
    return accd::additive_ccd<accd::PairKind::point_point>(x0, x1, min_distance, t_max, toi,
                                                           conservative_rescaling, max_iterations);
}

} // namespace intact::kernels
