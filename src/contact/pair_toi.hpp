#pragma once
/// @file pair_toi.hpp
/// @brief The step bound of one contact pair along a linear motion (ccd.hpp's file comment has the rule):
/// from its start and end positions (`pair_time_of_impact_at`, for methods that move a few vertices of
/// a pair on their own, such as stencil descent's local CCD) or from surface fields. Device-callable.

#include "kernels/ccd_additive.hpp"
#include "src/contact/pair_geometry.hpp"

namespace intact::contact {

/// Relative to the largest coordinate of a pair (m per m): closer than this, a pair may not close further.
constexpr double k_closest_gap = 1e-12;

/// The step bound on [0, 1] of a pair whose stencil positions (pair_positions: point–plane {point, plane
/// row}) move from `start` to `start + step`; `normal` is the plane's (point–plane only) and `d0` the
/// pair's gap at the start (m; its distance less `offset`, the pair's contact offset ξ). The bound keeps
/// the offset surfaces apart: the CCD's minimum distance is ξ plus 20% of the gap. `max_iterations` caps the
/// additive CCD's advancements (its conservative fallback: the time reached, which is collision-free): a pair
/// at distance d moving by l along or towards itself needs about l / d of them.
KOKKOS_INLINE_FUNCTION double pair_time_of_impact_at(int kind,
                                                     const kernels::Vec3 (&start)[4],
                                                     const kernels::Vec3 (&step)[4],
                                                     const kernels::Vec3& normal,
                                                     double d0,
                                                     int max_iterations = kernels::k_accd_max_iterations,
                                                     double offset = 0.0) {
    // A pair within k_closest_gap of its coordinates' size comes no closer. Keeping 20% of the gap per
    // step leaves it positive in exact arithmetic only: `al` at its outer-iteration cap, pushing one pair
    // 300 times, took a node to 1e-163 m behind a plane.
    double size = 0.0;
    for (int k = 0; k < 4; ++k) {
        for (int c = 0; c < 3; ++c) {
            size = ::fabs(start[k](c)) > size ? ::fabs(start[k](c)) : size;
        }
    }
    const bool closest = d0 <= k_closest_gap * size;
    if (kind == k_point_plane) {
        const double approach = -normal.dot(step[0] - step[1]);
        if (approach > 0.0) {
            const double alpha = closest ? 0.0 : 0.8 * d0 / approach; // keep 20% of the gap
            return alpha < 1.0 ? alpha : 1.0;
        }
        return 1.0;
    }
    kernels::Vec3 end[4];
    for (int k = 0; k < 4; ++k) {
        end[k] = start[k] + step[k];
    }
    const bool pt = kind == k_point_triangle;
    if (closest) {
        // Held while it approaches: the rate of d² along the step, from its gradient at the start. (The
        // distance at the end cannot tell: a point that passes through a triangle ends farther away.)
        const kernels::Vec12 gradient =
            pt ? kernels::point_triangle_distance_gradient(
                     start[0], start[1], start[2], start[3],
                     kernels::point_triangle_case(start[0], start[1], start[2], start[3]))
               : kernels::edge_edge_distance_gradient(
                     start[0], start[1], start[2], start[3],
                     kernels::edge_edge_case(start[0], start[1], start[2], start[3]));
        double rate = 0.0;
        for (int k = 0; k < 4; ++k) {
            for (int c = 0; c < 3; ++c) {
                rate += gradient(3 * k + c) * step[k](c);
            }
        }
        if (rate < 0.0) {
            return 0.0;
        }
    }
    double toi = 1.0;
    const double separation = offset + 0.2 * d0; // no pair closes more than 80% of its gap in one step
    const bool hit = pt ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                      end[2], end[3], separation, 1.0, toi,
                                                      kernels::k_accd_conservative_rescaling, max_iterations)
                        : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                 end[2], end[3], separation, 1.0, toi,
                                                 kernels::k_accd_conservative_rescaling, max_iterations);
    if (!hit) {
        return 1.0;
    }
    if (toi < 1e-6) {
        // Too close to separate by 20%: use 80% of the time of impact itself (IPC spec §8.2), unless the
        // first bound is longer (a capped ACCD reports the time it reached, which also keeps 20% of the
        // gap): either bound is collision-free, so their larger is too.
        double touch = 1.0;
        const bool touches =
            pt ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0], end[1], end[2],
                                             end[3], offset, 1.0, touch,
                                             kernels::k_accd_conservative_rescaling, max_iterations)
               : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0], end[1], end[2],
                                        end[3], offset, 1.0, touch, kernels::k_accd_conservative_rescaling,
                                        max_iterations);
        toi = touches ? (0.8 * touch > toi ? 0.8 * touch : toi) : 1.0;
    }
    return toi < 1.0 ? toi : 1.0;
}

/// The plane normal of a point–plane pair (zero for other kinds).
KOKKOS_INLINE_FUNCTION kernels::Vec3
pair_plane_normal(int kind, const int rows[4], const SurfaceTopology& topology) {
    if (kind != k_point_plane) {
        return kernels::Vec3::Zero();
    }
    return kernels::Vec3(topology.plane_normal(rows[1], 0), topology.plane_normal(rows[1], 1),
                         topology.plane_normal(rows[1], 2));
}

/// The step bound of one pair for positions xs + t ps, t ∈ [0, 1], for its offset surfaces.
KOKKOS_INLINE_FUNCTION double pair_time_of_impact(int kind,
                                                  const int rows[4],
                                                  const ConstSurfaceField& xs,
                                                  const ConstSurfaceField& ps,
                                                  const SurfaceTopology& topology) {
    const double d0 = ::sqrt(pair_squared_distance(kind, rows, xs, topology)); // the gap
    kernels::Vec3 start[4], step[4];
    pair_positions(kind, rows, xs, start);
    pair_positions(kind, rows, ps, step);
    return pair_time_of_impact_at(kind, start, step, pair_plane_normal(kind, rows, topology), d0,
                                  kernels::k_accd_max_iterations, pair_offset(kind, rows, topology));
}

} // namespace intact::contact
