#pragma once
/// @file distance_type.hpp
/// @brief Closest-feature case selection for point-triangle and edge-edge pairs (IPC spec §5.3, §5.4).
///
/// Each contact pair's distance is one active-set case of a small constrained minimization: both
/// features interior (plane / line-line distance), one vertex against an edge (point-edge distance to
/// the infinite line), or two vertices (point-point). The case is chosen once per pair at a given x and
/// reused for the value, gradient and Hessian there. Device-callable, allocation-free.

#include "kernels/small_matrix.hpp"

namespace intact::kernels {

/// Closest features of point p and triangle (t0, t1, t2).
enum class PointTriangleCase : int {
    pp0,     ///< p to vertex t0
    pp1,     ///< p to vertex t1
    pp2,     ///< p to vertex t2
    pe01,    ///< p to the line through t0, t1
    pe12,    ///< p to the line through t1, t2
    pe20,    ///< p to the line through t2, t0
    interior ///< p to the plane of the triangle
};

/// Closest features of edges (a0, a1) and (b0, b1).
enum class EdgeEdgeCase : int {
    pp_a0b0, ///< vertex a0 to vertex b0
    pp_a0b1, ///< vertex a0 to vertex b1
    pp_a1b0, ///< vertex a1 to vertex b0
    pp_a1b1, ///< vertex a1 to vertex b1
    pe_a0_b, ///< vertex a0 to the line through b0, b1
    pe_a1_b, ///< vertex a1 to the line through b0, b1
    pe_b0_a, ///< vertex b0 to the line through a0, a1
    pe_b1_a, ///< vertex b1 to the line through a0, a1
    interior ///< line through a0, a1 to line through b0, b1
};

/// Case of point p against triangle (t0, t1, t2) (spec §5.3). With n = (t1 - t0) x (t2 - t0) and, for
/// the edges (t0, t1), (t1, t2), (t2, t0) in that order, e = t_j - t_i, m = e x n (in-plane outward
/// normal of the edge) and a = (p - t_i).e / |e|^2:
/// 1. the first edge with 0 < a < 1 and (p - t_i).m >= 0 gives the point-edge case of that edge;
/// 2. else a_01 <= 0 and a_20 >= 1 gives pp0, a_12 <= 0 and a_01 >= 1 gives pp1, a_20 <= 0 and
///    a_12 >= 1 gives pp2;
/// 3. else interior.
/// The triangle must be non-degenerate (non-zero edges).
KOKKOS_INLINE_FUNCTION PointTriangleCase point_triangle_case(const Vec3& p,
                                                             const Vec3& t0,
                                                             const Vec3& t1,
                                                             const Vec3& t2) {
    const Vec3 n = cross(t1 - t0, t2 - t0);
    const Vec3 t[3] = {t0, t1, t2};
    const PointTriangleCase edge_case[3] = {PointTriangleCase::pe01, PointTriangleCase::pe12,
                                            PointTriangleCase::pe20};
    double a[3];
    for (int i = 0; i < 3; ++i) {
        const Vec3 e = t[(i + 1) % 3] - t[i];
        const Vec3 d = p - t[i];
        a[i] = d.dot(e) / e.squaredNorm();
        // Only the sign of c = (p - t_i).m / |m|^2 matters; testing the numerator avoids dividing by |m|.
        if (a[i] > 0.0 && a[i] < 1.0 && d.dot(cross(e, n)) >= 0.0) {
            return edge_case[i];
        }
    }
    if (a[0] <= 0.0 && a[2] >= 1.0) {
        return PointTriangleCase::pp0;
    }
    if (a[1] <= 0.0 && a[0] >= 1.0) {
        return PointTriangleCase::pp1;
    }
    if (a[2] <= 0.0 && a[1] >= 1.0) {
        return PointTriangleCase::pp2;
    }
    return PointTriangleCase::interior;
}

/// Case of edge (a0, a1) against edge (b0, b1) (spec §5.4, D. Sunday's segment-segment algorithm).
/// With u = a1 - a0, v = b1 - b0, w = a0 - b0, A = u.u, B = u.v, C = v.v, D = u.w, E = v.w,
/// Delta = A C - B^2 and sN = B E - C D (the closest parameter on a is sN / Delta):
/// - sN <= 0: tN = E, tD = C, default pe_a0_b; sN >= Delta: tN = E + B, tD = C, default pe_a1_b;
/// - else tN = A E - B D, tD = Delta, default interior, except that when 0 < tN < tD and the edges are
///   coplanar ((u x v).w == 0) or nearly parallel (|u x v|^2 < 1e-20 A C) the default becomes pe_a0_b
///   (sN < Delta / 2) or pe_a1_b, with tN, tD as in the first two branches;
/// - then tN <= 0 clamps to b0 (pp_a0b0 if -D <= 0, pp_a1b0 if -D >= A, else pe_b0_a) and tN >= tD to
///   b1 (pp_a0b1 if B - D <= 0, pp_a1b1 if B - D >= A, else pe_b1_a); otherwise the default stands.
/// Exactly parallel edges never give interior. Intersecting coplanar edges (an invalid contact state,
/// distance 0) are reported as a point-edge case, as in the reference implementation.
KOKKOS_INLINE_FUNCTION EdgeEdgeCase edge_edge_case(const Vec3& a0,
                                                   const Vec3& a1,
                                                   const Vec3& b0,
                                                   const Vec3& b1) {
    const Vec3 u = a1 - a0;
    const Vec3 v = b1 - b0;
    const Vec3 w = a0 - b0;
    const double A = u.dot(u);
    const double B = u.dot(v);
    const double C = v.dot(v);
    const double D = u.dot(w);
    const double E = v.dot(w);
    const double delta = A * C - B * B;
    const double sN = B * E - C * D;
    double tN;
    double tD;
    EdgeEdgeCase default_case;
    if (sN <= 0.0) {
        tN = E;
        tD = C;
        default_case = EdgeEdgeCase::pe_a0_b;
    } else if (sN >= delta) {
        tN = E + B;
        tD = C;
        default_case = EdgeEdgeCase::pe_a1_b;
    } else {
        tN = A * E - B * D;
        tD = delta;
        default_case = EdgeEdgeCase::interior;
        const Vec3 n = cross(u, v);
        if (tN > 0.0 && tN < tD && (n.dot(w) == 0.0 || n.squaredNorm() < 1e-20 * A * C)) {
            if (sN < 0.5 * delta) {
                tN = E;
                tD = C;
                default_case = EdgeEdgeCase::pe_a0_b;
            } else {
                tN = E + B;
                tD = C;
                default_case = EdgeEdgeCase::pe_a1_b;
            }
        }
    }
    if (tN <= 0.0) {
        if (-D <= 0.0) {
            return EdgeEdgeCase::pp_a0b0;
        }
        if (-D >= A) {
            return EdgeEdgeCase::pp_a1b0;
        }
        return EdgeEdgeCase::pe_b0_a;
    }
    if (tN >= tD) {
        if (B - D <= 0.0) {
            return EdgeEdgeCase::pp_a0b1;
        }
        if (B - D >= A) {
            return EdgeEdgeCase::pp_a1b1;
        }
        return EdgeEdgeCase::pe_b1_a;
    }
    return default_case;
}

} // namespace intact::kernels
