#pragma once
/// @file pair_geometry.hpp
/// @brief Device functions on one pair of a PairList: its stencil positions, squared distance, the
/// edge–edge mollifier threshold and which rank counts its energy. Device-callable, allocation-free;
/// the same formulas the host BarrierPotential used, so both paths agree to round-off.

#include "kernels/distance_type.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "src/contact/pair_list.hpp"

namespace intact::contact {

/// The pair's four stencil positions (point–plane: the point, then the plane's row, then zeros).
KOKKOS_INLINE_FUNCTION void
pair_positions(int kind, const int rows[4], const ConstSurfaceField& xs, kernels::Vec3 (&x)[4]) {
    if (kind == k_point_plane) {
        x[0] = kernels::Vec3(xs(rows[0], 0), xs(rows[0], 1), xs(rows[0], 2));
        x[1] = kernels::Vec3(xs(rows[2], 0), xs(rows[2], 1), xs(rows[2], 2));
        x[2] = kernels::Vec3::Zero();
        x[3] = kernels::Vec3::Zero();
        return;
    }
    for (int k = 0; k < 4; ++k) {
        x[k] = kernels::Vec3(xs(rows[k], 0), xs(rows[k], 1), xs(rows[k], 2));
    }
}

/// The surface rows of a pair's derivative stencil (PairStencils): the 4 rows of a point–triangle or
/// edge–edge pair, {point, plane row} for a point–plane pair; unused slots −1. Returns how many are used.
KOKKOS_INLINE_FUNCTION int pair_stencil_rows(int kind, const int rows[4], int (&out)[4]) {
    if (kind == k_point_plane) {
        out[0] = rows[0];
        out[1] = rows[2];
        out[2] = -1;
        out[3] = -1;
        return 2;
    }
    for (int a = 0; a < 4; ++a) {
        out[a] = rows[a];
    }
    return 4;
}

/// The contact offset ξ (m) of a pair: the sum of its two primitives' offsets, each the largest of its
/// rows' (a primitive belongs to one body, so its rows agree); a plane's is 0. 0 without offsets (an
/// empty SurfaceTopology::offset), read from no View then.
KOKKOS_INLINE_FUNCTION double pair_offset(int kind, const int rows[4], const SurfaceTopology& topology) {
    if (topology.offset.extent(0) == 0) {
        return 0.0;
    }
    const auto& o = topology.offset;
    if (kind == k_point_plane) {
        return o(rows[0]);
    }
    if (kind == k_point_triangle) {
        const double t = o(rows[1]) > o(rows[2]) ? o(rows[1]) : o(rows[2]);
        return o(rows[0]) + (t > o(rows[3]) ? t : o(rows[3]));
    }
    return (o(rows[0]) > o(rows[1]) ? o(rows[0]) : o(rows[1])) +
           (o(rows[2]) > o(rows[3]) ? o(rows[2]) : o(rows[3]));
}

/// The squared gap of a pair from its squared distance s and offset ξ: (√s − ξ)² where √s > ξ, else 0
/// (touching or crossing offset surfaces: no admissible gap); s itself when ξ = 0.
KOKKOS_INLINE_FUNCTION double offset_squared_gap(double s, double offset) {
    if (offset == 0.0) {
        return s;
    }
    const double gap = ::sqrt(s) - offset;
    return gap > 0.0 ? gap * gap : 0.0;
}

/// Signed gap (m) of a point–plane pair: the point's distance from its plane, positive on the free side,
/// less the point's contact offset (pair_offset).
KOKKOS_INLINE_FUNCTION double
plane_signed_distance(const int rows[4], const ConstSurfaceField& xs, const SurfaceTopology& topology) {
    double d = 0.0;
    for (int c = 0; c < 3; ++c) {
        d += topology.plane_normal(rows[1], c) * (xs(rows[0], c) - xs(rows[2], c));
    }
    return d - pair_offset(k_point_plane, rows, topology);
}

/// Squared gap (m²) of a pair at xs, the squared distance of its offset surfaces: the closest-feature
/// case of the point–triangle or edge–edge distance d, as (d − ξ)² where d > ξ and 0 where d ≤ ξ
/// (offset_squared_gap; d² when ξ = 0); for a point–plane pair the squared signed gap on the free side
/// and 0 on or behind the offset plane (no admissible gap). Every contact decision (active, closest,
/// step bound, normal force) reads this, so with offsets they all hold for the offset surfaces.
KOKKOS_INLINE_FUNCTION double pair_squared_distance(int kind,
                                                    const int rows[4],
                                                    const ConstSurfaceField& xs,
                                                    const SurfaceTopology& topology) {
    if (kind == k_point_plane) {
        const double d = plane_signed_distance(rows, xs, topology);
        return d > 0.0 ? d * d : 0.0;
    }
    kernels::Vec3 x[4];
    pair_positions(kind, rows, xs, x);
    const double s = kind == k_point_triangle
                         ? kernels::point_triangle_distance(
                               x[0], x[1], x[2], x[3], kernels::point_triangle_case(x[0], x[1], x[2], x[3]))
                         : kernels::edge_edge_distance(x[0], x[1], x[2], x[3],
                                                       kernels::edge_edge_case(x[0], x[1], x[2], x[3]));
    return offset_squared_gap(s, pair_offset(kind, rows, topology));
}

/// ε_x of the edge–edge mollifier from the rest positions of the pair's rows (IPC eq. 24); 0 for other
/// kinds.
KOKKOS_INLINE_FUNCTION double
pair_mollifier_threshold(int kind, const int rows[4], const SurfaceTopology& topology) {
    if (kind != k_edge_edge) {
        return 0.0;
    }
    kernels::Vec3 r[4];
    for (int k = 0; k < 4; ++k) {
        r[k] = kernels::Vec3(topology.rest(rows[k], 0), topology.rest(rows[k], 1), topology.rest(rows[k], 2));
    }
    return kernels::edge_edge_mollifier_threshold(r[0], r[1], r[2], r[3]);
}

/// Coulomb μ of a pair: the own `friction` of the obstacle one of its rows belongs to (a pair has at
/// most one obstacle, as all-prescribed pairs are never formed), else `mu` (contact.friction).
KOKKOS_INLINE_FUNCTION double
pair_friction(int kind, const int rows[4], const SurfaceTopology& topology, double mu) {
    const int count = kind == k_point_plane ? 3 : 4;
    for (int k = 0; k < count; ++k) {
        if (kind == k_point_plane && k == 1) {
            continue; // the plane's index, not a row
        }
        const double own = topology.friction(rows[k]);
        if (own >= 0.0) {
            return own;
        }
    }
    return mu;
}

/// Whether this rank counts the pair's energy: it owns the pair's row with the smallest global id
/// (obstacle rows have the largest ids, so that is a body row).
KOKKOS_INLINE_FUNCTION bool owns_pair(int kind, const int rows[4], const SurfaceTopology& topology) {
    const int count = kind == k_point_plane ? 1 : 4;
    int smallest = rows[0];
    for (int k = 1; k < count; ++k) {
        if (topology.gid(rows[k]) < topology.gid(smallest)) {
            smallest = rows[k];
        }
    }
    return topology.owned(smallest) != 0;
}

} // namespace intact::contact
