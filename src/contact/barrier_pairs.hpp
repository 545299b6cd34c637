#pragma once
/// @file barrier_pairs.hpp
/// @brief The IPC barrier on a PairList, on the device: energy, κ-weighted gradients and PSD Hessians per
/// pair (IPC spec §2, §5). The same formulas as the host BarrierPotential, so both agree to round-off.
///
/// Stencils written by barrier_derivatives: point–triangle {p, t0, t1, t2} and edge–edge {a0, a1, b0, b1}
/// with 4 vertices; point–plane {point, plane row} with 2, gradient (g, −g), g = κ b′(s) 2 d n, and
/// Hessian [[K, −K], [−K, K]], K = κ max(0, 4 s b″ + 2 b′) n nᵀ (the plane's row is prescribed and never
/// owned, so only the point's row is added, with the coupling block through which a moving plane pushes).
///
/// PSD projection and pairs across partitions. A pair whose rows are owned by two ranks is evaluated, and
/// its Hessian projected, on both (each keeps its owned rows): sending projected rows to the other rank
/// would add a message per Newton iteration against the owner-computes design, and skipping the
/// projection on one rank would change its rows. Contact between bodies on different ranks is the
/// common case (two blocks on 2 to 4 ranks in test_contact_assembly: 165 pairs cost 314 to 352
/// evaluations), so the projection itself is made cheaper, exactly (kernels/pair_projection.hpp): every
/// contact Hessian is translation-invariant, so point–triangle, edge–edge interior and mollified pairs
/// project 9×9 instead of 12×12, point–edge cases 6×6 on their three vertices, and point–point cases use
/// the rank-one closed form. Measured on one loaded CPU core (test ContactAssembly.ProjectionCost, which
/// prints the figures): the gradient alone costs 0.2 µs per pair, project_psd<12> about 20 to 25 µs per
/// matrix (over 95% of the Hessian pass); on the two-block scene's 165 pairs (70 point–edge, 79 interior
/// or mollified) the Hessian pass took 12.2 µs per pair with project_psd<12> and 5.0 µs with the reduced
/// projections (2.4×), on random configurations 23 µs and 7.6 µs (3×). Both agree to 1e-12 (tests).

#include "src/contact/hessian_projection.hpp"
#include "src/contact/pair_list.hpp"
#include "src/contact/pair_stencils.hpp"

namespace intact::contact {

/// Σ over the pairs of `candidates` this rank owns (owns_pair) of w b(s, ŝ) (w: the edge–edge mollifier;
/// pairs with s ≥ ŝ add 0), +∞ if an owned pair has s ≤ 0 (a point–plane pair on or behind its plane).
/// With contact offsets s is the squared gap (d − ξ)² (pair_potential.hpp).
/// Not reduced over ranks. Device work, host result.
double barrier_local_energy(const PairList& candidates,
                            const ConstSurfaceField& xs,
                            const SurfaceTopology& topology,
                            double s_hat);

/// κ-weighted gradient and, when `hessian`, PSD-projected Hessian of b (w b for edge pairs) per pair of
/// `active` (every pair, owned or not: ContactMatrix keeps this rank's rows), written to `out` (one entry
/// per pair, in the order of `active`). With `hessian` false this is the gradient-only pass of the κ
/// initialisation (IPC spec §4.2, κ = 1 there). Device work, no host sync beyond `out.resize`.
void barrier_derivatives(const PairList& active,
                         const ConstSurfaceField& xs,
                         const SurfaceTopology& topology,
                         double s_hat,
                         double kappa,
                         bool hessian,
                         PairStencils& out,
                         HessianProjection projection = HessianProjection::by_case);

/// As barrier_derivatives with `hessian`, but with the plain project_psd<12> on every point–triangle and
/// edge–edge pair (the host path's projection), for tests and the cost measurement.
void barrier_derivatives_full_projection(const PairList& active,
                                         const ConstSurfaceField& xs,
                                         const SurfaceTopology& topology,
                                         double s_hat,
                                         double kappa,
                                         PairStencils& out);

} // namespace intact::contact
