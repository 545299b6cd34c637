#pragma once
/// @file bal_pairs.hpp
/// @brief The augmentation of the barrier-augmented Lagrangian (BAL spec §2.5–§2.6, seed 002) on the
/// augmentation set A′, as device kernels over a ConstraintSet (μᵢ in its `lambda`, sᵢ in its `slack`).
///
/// Squared-distance convention, as the barrier (kernels/barrier.hpp): the paper's d and d̂ become s = d²
/// and ŝ = d̂², so one σ weighs both barriers and the slacks are in m² (spec A9: one convention). Pair i of
/// A′ adds
///
///     φᵢ(s) = μᵢ (ŝ + sᵢ − s) + σ b(s, ŝ + sᵢ),
///
/// (times the edge–edge mollifier, as the barrier), with μᵢ, sᵢ and σ held during an inexact Newton
/// step; it keeps acting after the pair leaves A (spec A8). After the step (Alg. 1, literally, with the
/// old μ): sᵢ ← max(s − ŝ − μᵢ/σ, 0), then μᵢ ← μᵢ + σ b(s, ŝ + sᵢ) (spec A5, A6).
///
/// Ownership as for the AL constraints (al_constraints.hpp): every rank holding a pair (the ranks owning
/// one of its rows, the ghost plan carrying the others) evaluates it from the same gathered rows, so μᵢ and
/// sᵢ agree on those ranks; the owner of its smallest global row counts its energy.

#include "src/contact/constraint_set.hpp"
#include "src/contact/pair_stencils.hpp"

namespace intact::contact {

/// out := the pairs of `active` closer than `distance` (m) at xs (the A′ candidates, d < 1e-2 d̂), in
/// their order. Device work. Local.
void select_closer_than(const PairList& active,
                        const ConstSurfaceField& xs,
                        const SurfaceTopology& topology,
                        double distance,
                        PairList& out);

/// Σ over the pairs of `set` this rank counts of φᵢ at xs (+∞ for a pair at zero distance). Device work,
/// host result. Local.
double augmentation_local_energy(const ConstraintSet& set,
                                 const ConstSurfaceField& xs,
                                 const SurfaceTopology& topology,
                                 double s_hat,
                                 double sigma);

/// Gradient and (when `hessian`) PSD-projected Hessian of φᵢ per pair of `set` at xs, into `out`. Device
/// work. Local.
void augmentation_derivatives(const ConstraintSet& set,
                              const ConstSurfaceField& xs,
                              const SurfaceTopology& topology,
                              double s_hat,
                              double sigma,
                              bool hessian,
                              PairStencils& out);

/// The augmentation's normal force Nᵢ = −2 w d φᵢ′(s) (J/m) per pair of `set` at xs, for friction (the
/// barrier's share comes from barrier_normal_forces), grown to set.size(). Device work. Local.
void augmentation_normal_forces(const ConstraintSet& set,
                                const ConstSurfaceField& xs,
                                const SurfaceTopology& topology,
                                double s_hat,
                                double sigma,
                                Kokkos::View<double*, MemSpace>& out);

/// The slack and multiplier update of Alg. 1 at xs (see the file comment). Device work. Local.
void update_multipliers(const ConstraintSet& set,
                        const ConstSurfaceField& xs,
                        const SurfaceTopology& topology,
                        double s_hat,
                        double sigma);

} // namespace intact::contact
