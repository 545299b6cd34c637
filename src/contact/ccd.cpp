#include "src/contact/ccd.hpp"

#include "src/contact/pair_geometry.hpp"
#include "src/contact/pair_toi.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <limits>
#include <string>

namespace intact::contact {

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
