#pragma once
/// @file al_constraints.hpp
/// @brief The linearised distance constraints of the barrier-free augmented Lagrangian (AL spec §1.3–§2.4),
/// as device kernels over a ConstraintSet.
///
/// Constraint i of the set, linearised at the safe state x (surface field xs):
///
///     c_i(y) = d_i(x) + ∇d_i(x)ᵀ (y − x) − δ,
///
/// d the gap: the unsigned distance less the pair's contact offset ξ (pair_offset; 0 between solids), so
/// shells and rods keep δ between their offset surfaces (point–plane: the signed distance to the plane
/// less ξ), y the AL iterate (x̂ in the
/// spec; "y" here, because x̂ is the integrator's inertial target). With the slack s_i = max(0, c_i − λ_i/μ)
/// held fixed, the term γ_i [μ/2 (c_i − s_i)² − λ_i (c_i − s_i)] has the gradient μ γ_i (c_i − λ_i/μ − s_i)
/// ∇d_i (zero for an inactive constraint) and the rank-one PSD Hessian μ γ_i ∇d_i ∇d_iᵀ (AL spec Alg. B).
/// One departure, for constraints whose slack exceeds δ (clearly apart): their slack is minimised out, so
/// they add no Hessian (al_constraints.cpp, term_energy, says why).
///
/// Every rank that holds a constraint (the ranks owning one of its rows) evaluates it from the same
/// gathered rows, so its state (λ, γ, linearisation) is the same on each of them; the owner of its smallest
/// global row counts it once (owns_pair) in energies and counts. `∇d` is stored stencil-ordered: point–
/// triangle and edge–edge over their 4 rows, point–plane over {point, plane row}.

#include "src/contact/constraint_set.hpp"
#include "src/contact/contact_surface.hpp"
#include "src/contact/pair_stencils.hpp"

namespace intact::contact {

/// The constant parts of the AL terms for one step: penalty μ (kg) and offset δ (m).
struct AlPenalty {
    double mu = 0.0;
    double delta = 0.0;
    /// A constraint whose slack exceeds this is released (al_constraints.cpp, term_energy): δ in the
    /// paper's loop, 0 while a step settles (AlSolver).
    double release = 0.0;
};

/// d_i and ∇d_i of every constraint at the safe state xs, into the set's state (distance, gradient).
/// Device work. Local.
void linearize_constraints(const ConstraintSet& set,
                           const ConstSurfaceField& xs,
                           const SurfaceTopology& topology);

/// s_i = max(0, c_i(ys) − λ_i/μ) for every constraint (the closed-form slack, AL spec eq. P14). Device
/// work. Local.
void update_slacks(const ConstraintSet& set,
                   const ConstSurfaceField& xs,
                   const ConstSurfaceField& ys,
                   const AlPenalty& penalty);

/// Σ over the constraints this rank counts of γ_i [μ/2 (c_i − s_i)² − λ_i (c_i − s_i)] at ys, slacks held.
/// Device work, host result. Local.
double al_local_energy(const ConstraintSet& set,
                       const ConstSurfaceField& xs,
                       const ConstSurfaceField& ys,
                       const SurfaceTopology& topology,
                       const AlPenalty& penalty);

/// Gradient and (when `hessian`) rank-one Hessian of every constraint's term at ys, slacks held, into
/// `out`. Device work. Local.
void al_derivatives(const ConstraintSet& set,
                    const ConstSurfaceField& xs,
                    const ConstSurfaceField& ys,
                    const AlPenalty& penalty,
                    bool hessian,
                    PairStencils& out);

/// One AL dual update per constraint at ys (AL spec Alg. B lines 16–24, γ as §7 item 2 corrects it):
/// active (s = 0): λ ← λ − μ c, γ ← 1; inactive: λ ← 0, γ ← decay · γ. Device work. Local.
void dual_update(const ConstraintSet& set,
                 const ConstSurfaceField& xs,
                 const ConstSurfaceField& ys,
                 const AlPenalty& penalty,
                 double decay);

/// flags(i) = 1 for the constraints whose γ is below `threshold` (to be removed), else 0; `flags` is grown
/// to the set's size. Device work. Local.
void flag_faded(const ConstraintSet& set, double threshold, Kokkos::View<int*, MemSpace>& flags);

/// Totals of a constraint set over ranks, each constraint counted once.
struct ConstraintTotals {
    long long size = 0;    ///< constraints held
    long long pushing = 0; ///< those with λ > 0
    double lambda = 0.0;   ///< Σ λ (kg·m): the normal force in the incremental potential's units
};
ConstraintTotals count_constraints(MPI_Comm comm, const ConstraintSet& set, const SurfaceTopology& topology);

/// When each pair of `swept` starts to violate the contact along the segment xs → xs + ps, for the set
/// update: entry(j) = toi(j) when the conservative CCD time is below 1 (it closes most of its gap), else 1
/// when it ends the segment closer than δ (a slow approach into the offset zone, which the CCD's relative
/// threshold would let through ever deeper as h shrinks), else 2 (no violation). `ends`: scratch surface
/// field; `entry` is grown to swept.count. Device work. Local.
void segment_entry_times(const PairList& swept,
                         const Kokkos::View<const double*, MemSpace>& toi,
                         const ConstSurfaceField& xs,
                         const ConstSurfaceField& ps,
                         const SurfaceTopology& topology,
                         double delta,
                         const SurfaceField& ends,
                         Kokkos::View<double*, MemSpace>& entry);

/// The pairs of `swept` that enter the set (AL spec Alg. C lines 2–6): not in it yet, colliding on the
/// segment (entry ≤ 1, segment_entry_times), and the earliest new collision of at least one of their body
/// rows. A body row's
/// earliest time is the minimum over the new colliding pairs its owner holds (the owner holds every pair
/// that touches the row), handed to the other ranks through the contact ghost plan, so ranks agree on
/// shared rows. Obstacle rows take no part in the filter. Result sorted like `swept`, into `out`
/// (capacity kept). Device work; collective (one gather through the ghost plan).
struct NewPairScratch {
    Kokkos::View<int*, MemSpace> in_set;      ///< grown here
    Kokkos::View<double*, MemSpace> earliest; ///< grown here
    NodeField node_earliest;                  ///< one row per local node: allocated by the caller
    SurfaceField gathered;                    ///< made here
};
void select_new_pairs(const PairList& swept,
                      const Kokkos::View<const double*, MemSpace>& entry,
                      const ConstraintSet& set,
                      const ContactSurface& surface,
                      NewPairScratch& scratch,
                      PairList& out);

} // namespace intact::contact
