#pragma once
/// @file ccd.hpp
/// @brief Step bounds and per-pair times of impact over a device PairList, the smallest pair distance, and
/// the active subset of a pair list. All local (no MPI): the caller reduces max_step and
/// min_squared_distance with a global MIN (comm::allreduce_min) so every rank takes the same step.
///
/// Per pair, for positions xs + t ps, t ∈ [0, 1] (IPC spec §8.2):
/// - point–triangle and edge–edge: additive CCD (kernels/ccd_additive.hpp) with separation 0.2 d₀ (d₀ the
///   pair's distance at t = 0: no pair closes more than 80% of its gap); when that time is below 1e-6
///   (the pair is too close to keep 20% of its gap), 80% of the time at which it would touch (separation
///   0) or that first time, whichever is longer (both are collision-free; a capped CCD's time reached can
///   be the longer), or 1 when it never touches;
/// - point–plane, closed form: 0.8 d₀ / a for an approach speed a = −n·(p_row − p_plane row) > 0, else 1;
/// - a pair closer than 1e-12 of its largest coordinate (k_closest_gap) gets 0 while it approaches (a
///   point–plane pair's approach speed; another pair's rate of d² at the start), else the rule above.
/// Each value is capped at 1. The host BarrierPotential::max_step runs the same tests in pair order with
/// the running minimum as the CCD's end time and as the scale of the 1e-6 test; here every pair is tested
/// on [0, 1] on its own, so the result does not depend on the order or the thread count. Both agree to
/// round-off, except when a pair's time lies in [1e-6 α, 1e-6) for the host's running α < 1, where the
/// host keeps the small time and this falls back to the touching time (a larger, still safe step), and
/// except for the closest-gap floor, which the host reference (tests only) does not apply.

#include "src/contact/pair_list.hpp"

namespace intact::contact {

/// Largest α in [0, 1] that no candidate pair forbids along xs + α ps (the minimum of times_of_impact; 1
/// without pairs). `ps` holds the step of every row the pairs use (obstacle rows included). Local.
double max_step(const PairList& candidates,
                const ConstSurfaceField& xs,
                const ConstSurfaceField& ps,
                const SurfaceTopology& topology);

/// Per pair k < candidates.count, toi(k) ∈ [0, 1] (0 for a pair already touching, or a point on or behind
/// its plane: no step is safe, and the line search reports a failure): the step bound of that pair alone (1
/// when it does not restrict the step); returns their minimum, max_step's value. `toi` needs at least
/// candidates.count entries. Device, local.
double times_of_impact(const PairList& candidates,
                       const ConstSurfaceField& xs,
                       const ConstSurfaceField& ps,
                       const SurfaceTopology& topology,
                       const Kokkos::View<double*, MemSpace>& toi);

/// Smallest squared distance (m²) over the pairs at xs (point–plane: 0 on or behind the plane); +∞ without
/// pairs. Local.
double
min_squared_distance(const PairList& pairs, const ConstSurfaceField& xs, const SurfaceTopology& topology);

/// The pairs of `in` whose squared distance at xs is below s_hat (m²), in the order of `in` (so still
/// sorted), compacted by a scan into `out` (capacity kept). Device, local.
void select_active(const PairList& in,
                   const ConstSurfaceField& xs,
                   const SurfaceTopology& topology,
                   double s_hat,
                   PairList& out);

} // namespace intact::contact
