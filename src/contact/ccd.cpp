#include "src/contact/ccd.hpp"

#include "kernels/ccd_additive.hpp"
#include "src/contact/pair_geometry.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <limits>
#include <string>

namespace intact::contact {

namespace {

// The step bound of one pair on [0, 1] (see the file comment of ccd.hpp).
KOKKOS_INLINE_FUNCTION double pair_time_of_impact(int kind,
                                                  const int rows[4],
                                                  const ConstSurfaceField& xs,
                                                  const ConstSurfaceField& ps,
                                                  const SurfaceTopology& topology) {
    const double d0 = ::sqrt(pair_squared_distance(kind, rows, xs, topology));
    if (kind == k_point_plane) {
        double approach = 0.0;
        for (int c = 0; c < 3; ++c) {
            approach -= topology.plane_normal(rows[1], c) * (ps(rows[0], c) - ps(rows[2], c));
        }
        if (approach > 0.0) {
            const double alpha = 0.8 * d0 / approach; // keep 20% of the gap
            return alpha < 1.0 ? alpha : 1.0;
        }
        return 1.0;
    }
    kernels::Vec3 start[4], end[4];
    for (int k = 0; k < 4; ++k) {
        start[k] = kernels::Vec3(xs(rows[k], 0), xs(rows[k], 1), xs(rows[k], 2));
        end[k] = start[k] + kernels::Vec3(ps(rows[k], 0), ps(rows[k], 1), ps(rows[k], 2));
    }
    const bool pt = kind == k_point_triangle;
    double toi = 1.0;
    const double separation = 0.2 * d0; // no pair closes more than 80% of its gap in one step
    const bool hit = pt ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                      end[2], end[3], separation, 1.0, toi)
                        : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                 end[2], end[3], separation, 1.0, toi);
    if (!hit) {
        return 1.0;
    }
    if (toi < 1e-6) {
        // Too close to separate by 20%: use 80% of the time of impact itself (IPC spec §8.2).
        double touch = 1.0;
        const bool touches = pt ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0],
                                                              end[1], end[2], end[3], 0.0, 1.0, touch)
                                : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0],
                                                         end[1], end[2], end[3], 0.0, 1.0, touch);
        toi = touches ? 0.8 * touch : 1.0;
    }
    return toi < 1.0 ? toi : 1.0;
}

} // namespace

double times_of_impact(const PairList& candidates,
                       const ConstSurfaceField& xs,
                       const ConstSurfaceField& ps,
                       const SurfaceTopology& topology,
                       const Kokkos::View<double*, MemSpace>& toi) {
    INTACT_REQUIRE(static_cast<int>(toi.extent(0)) >= candidates.count,
                   "times_of_impact: " << toi.extent(0) << " entries for " << candidates.count << " pairs");
    const auto kind = candidates.kind;
    const auto rows = candidates.rows;
    double alpha = 1.0;
    Kokkos::parallel_reduce(
        "intact::contact::times_of_impact", Kokkos::RangePolicy<ExecSpace>(0, candidates.count),
        KOKKOS_LAMBDA(const int k, double& smallest) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            toi(k) = pair_time_of_impact(kind(k), r, xs, ps, topology);
            smallest = toi(k) < smallest ? toi(k) : smallest;
        },
        Kokkos::Min<double>(alpha));
    return candidates.count == 0 ? 1.0 : (alpha < 1.0 ? alpha : 1.0);
}

double max_step(const PairList& candidates,
                const ConstSurfaceField& xs,
                const ConstSurfaceField& ps,
                const SurfaceTopology& topology) {
    const auto kind = candidates.kind;
    const auto rows = candidates.rows;
    double alpha = 1.0;
    Kokkos::parallel_reduce(
        "intact::contact::max_step", Kokkos::RangePolicy<ExecSpace>(0, candidates.count),
        KOKKOS_LAMBDA(const int k, double& smallest) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            const double t = pair_time_of_impact(kind(k), r, xs, ps, topology);
            smallest = t < smallest ? t : smallest;
        },
        Kokkos::Min<double>(alpha));
    return candidates.count == 0 ? 1.0 : (alpha < 1.0 ? alpha : 1.0);
}

double
min_squared_distance(const PairList& pairs, const ConstSurfaceField& xs, const SurfaceTopology& topology) {
    if (pairs.count == 0) {
        return std::numeric_limits<double>::infinity();
    }
    const auto kind = pairs.kind;
    const auto rows = pairs.rows;
    double smallest = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::min_squared_distance", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int k, double& m) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            const double s = pair_squared_distance(kind(k), r, xs, topology);
            m = s < m ? s : m;
        },
        Kokkos::Min<double>(smallest));
    return smallest;
}

void select_active(const PairList& in,
                   const ConstSurfaceField& xs,
                   const SurfaceTopology& topology,
                   double s_hat,
                   PairList& out) {
    const auto kind = in.kind;
    const auto rows = in.rows;
    select_pairs(
        "intact::contact::select_active", in,
        KOKKOS_LAMBDA(const int k) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            return pair_squared_distance(kind(k), r, xs, topology) < s_hat;
        },
        out);
}

} // namespace intact::contact
