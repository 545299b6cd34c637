#pragma once
/// @file pair_distance.hpp
/// @brief Squared distance of a point-triangle or edge-edge pair for a given closest-feature case
/// (distance_type.hpp), with the gradient and Hessian of the selected case embedded in the pair's
/// 12-coordinate stencil: (p, t0, t1, t2) for point-triangle and (a0, a1, b0, b1) for edge-edge,
/// vertex-major. Vertices that the case does not involve get zero rows and columns. Device-callable,
/// allocation-free. The case is an input so that the value, gradient and Hessian at one x use the same
/// case (spec §5.4, last paragraph).

#include "kernels/distance_edge_edge.hpp"
#include "kernels/distance_point_edge.hpp"
#include "kernels/distance_point_point.hpp"
#include "kernels/distance_point_triangle.hpp"
#include "kernels/distance_type.hpp"
#include "kernels/small_matrix.hpp"

#include <type_traits>

namespace intact::kernels {

namespace detail {

/// Stencil positions of the vertices a sub-case uses: pp = {point, point} for a point-point case,
/// pe = {point, edge start, edge end} for a point-edge case; entries a case does not use are untouched.
KOKKOS_INLINE_FUNCTION void point_triangle_sub_stencil(PointTriangleCase c, int (&pp)[2], int (&pe)[3]) {
    // Rows: pp0, pp1, pp2, pe01, pe12, pe20 (the enum order).
    constexpr int k_pp[3][2] = {{0, 1}, {0, 2}, {0, 3}};
    constexpr int k_pe[3][3] = {{0, 1, 2}, {0, 2, 3}, {0, 3, 1}};
    const int i = static_cast<int>(c);
    if (i < 3) {
        pp[0] = k_pp[i][0];
        pp[1] = k_pp[i][1];
    } else if (i < 6) {
        for (int k = 0; k < 3; ++k) {
            pe[k] = k_pe[i - 3][k];
        }
    }
}

/// As point_triangle_sub_stencil, for the edge-edge stencil (a0, a1, b0, b1) = (0, 1, 2, 3).
KOKKOS_INLINE_FUNCTION void edge_edge_sub_stencil(EdgeEdgeCase c, int (&pp)[2], int (&pe)[3]) {
    // Rows: pp_a0b0, pp_a0b1, pp_a1b0, pp_a1b1, then pe_a0_b, pe_a1_b, pe_b0_a, pe_b1_a (the enum order).
    constexpr int k_pp[4][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}};
    constexpr int k_pe[4][3] = {{0, 2, 3}, {1, 2, 3}, {2, 0, 1}, {3, 0, 1}};
    const int i = static_cast<int>(c);
    if (i < 4) {
        pp[0] = k_pp[i][0];
        pp[1] = k_pp[i][1];
    } else if (i < 8) {
        for (int k = 0; k < 3; ++k) {
            pe[k] = k_pe[i - 4][k];
        }
    }
}

KOKKOS_INLINE_FUNCTION bool is_point_point(PointTriangleCase c) {
    return static_cast<int>(c) < 3;
}

KOKKOS_INLINE_FUNCTION bool is_point_point(EdgeEdgeCase c) {
    return static_cast<int>(c) < 4;
}

/// Squared distance, gradient and Hessian of a point-point or point-edge sub-case of a 4-vertex stencil x
/// (PT or EE): the sub-case's own kernel on the slots it uses, scattered into the 12-coordinate stencil.
template <class Case> KOKKOS_INLINE_FUNCTION void sub_case_slots(Case c, int (&pp)[2], int (&pe)[3]) {
    if constexpr (std::is_same_v<Case, PointTriangleCase>) {
        point_triangle_sub_stencil(c, pp, pe);
    } else {
        edge_edge_sub_stencil(c, pp, pe);
    }
}

template <class Case> KOKKOS_INLINE_FUNCTION double sub_case_distance(const Vec3 (&x)[4], Case c) {
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    sub_case_slots(c, pp, pe);
    return is_point_point(c) ? point_point_distance(x[pp[0]], x[pp[1]])
                             : point_edge_distance(x[pe[0]], x[pe[1]], x[pe[2]]);
}

template <class Case> KOKKOS_INLINE_FUNCTION Vec12 sub_case_gradient(const Vec3 (&x)[4], Case c) {
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    sub_case_slots(c, pp, pe);
    Vec12 g = Vec12::Zero();
    if (is_point_point(c)) {
        scatter_gradient<2, 4>(point_point_distance_gradient(x[pp[0]], x[pp[1]]), pp, g);
    } else {
        scatter_gradient<3, 4>(point_edge_distance_gradient(x[pe[0]], x[pe[1]], x[pe[2]]), pe, g);
    }
    return g;
}

template <class Case> KOKKOS_INLINE_FUNCTION Mat12 sub_case_hessian(const Vec3 (&x)[4], Case c) {
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    sub_case_slots(c, pp, pe);
    Mat12 H = Mat12::Zero();
    if (is_point_point(c)) {
        scatter_hessian<2, 4>(point_point_distance_hessian(x[pp[0]], x[pp[1]]), pp, H);
    } else {
        scatter_hessian<3, 4>(point_edge_distance_hessian(x[pe[0]], x[pe[1]], x[pe[2]]), pe, H);
    }
    return H;
}

} // namespace detail

/// Squared distance (m^2) of point p and triangle (t0, t1, t2) in case c: |p - t_i|^2 for pp_i,
/// point_edge_distance to the line of the edge for pe_ij, point_plane_distance for interior.
KOKKOS_INLINE_FUNCTION double
point_triangle_distance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, PointTriangleCase c) {
    if (c == PointTriangleCase::interior) {
        return point_plane_distance(p, t0, t1, t2);
    }
    return detail::sub_case_distance({p, t0, t1, t2}, c);
}

/// Gradient (m) of point_triangle_distance in (p, t0, t1, t2) for case c.
KOKKOS_INLINE_FUNCTION Vec12 point_triangle_distance_gradient(
    const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, PointTriangleCase c) {
    if (c == PointTriangleCase::interior) {
        return point_plane_distance_gradient(p, t0, t1, t2);
    }
    return detail::sub_case_gradient({p, t0, t1, t2}, c);
}

/// Hessian (dimensionless) of point_triangle_distance in (p, t0, t1, t2) for case c.
KOKKOS_INLINE_FUNCTION Mat12 point_triangle_distance_hessian(
    const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, PointTriangleCase c) {
    if (c == PointTriangleCase::interior) {
        return point_plane_distance_hessian(p, t0, t1, t2);
    }
    return detail::sub_case_hessian({p, t0, t1, t2}, c);
}

/// Squared distance (m^2) of edges (a0, a1) and (b0, b1) in case c: point_point_distance for pp_*,
/// point_edge_distance of the vertex to the other edge's line for pe_*, line_line_distance for interior.
KOKKOS_INLINE_FUNCTION double
edge_edge_distance(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, EdgeEdgeCase c) {
    if (c == EdgeEdgeCase::interior) {
        return line_line_distance(a0, a1, b0, b1);
    }
    return detail::sub_case_distance({a0, a1, b0, b1}, c);
}

/// Gradient (m) of edge_edge_distance in (a0, a1, b0, b1) for case c.
KOKKOS_INLINE_FUNCTION Vec12
edge_edge_distance_gradient(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, EdgeEdgeCase c) {
    if (c == EdgeEdgeCase::interior) {
        return line_line_distance_gradient(a0, a1, b0, b1);
    }
    return detail::sub_case_gradient({a0, a1, b0, b1}, c);
}

/// Hessian (dimensionless) of edge_edge_distance in (a0, a1, b0, b1) for case c.
KOKKOS_INLINE_FUNCTION Mat12
edge_edge_distance_hessian(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, EdgeEdgeCase c) {
    if (c == EdgeEdgeCase::interior) {
        return line_line_distance_hessian(a0, a1, b0, b1);
    }
    return detail::sub_case_hessian({a0, a1, b0, b1}, c);
}

} // namespace intact::kernels
