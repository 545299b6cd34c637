#pragma once
/// @file local_step.hpp
/// @brief Private to src/solver/stencil_descent/: K2's device code for one stencil: its local system g^[k],
/// H^[k], its energy change E^[k](x + α dir) − E^[k](x), and its local step (Newton-CG, shortened by the
/// local inversion search and the local CCD, then Armijo backtracking).

#include "kernels/tet_geometry.hpp"
#include "src/contact/pair_toi.hpp"
#include "src/solver/stencil_descent/stencil_terms.hpp"

namespace intact::solver::stencil_detail {

constexpr double k_armijo = 1e-4; // c₁ of the local line search (spec §2.7)
constexpr int k_backtracks = 10;  // L_max
// Advancements of a local CCD (spec §2.5) at most: a pair at distance d that a stencil moves by l along or
// towards itself needs about l / d of them, and the time reached by then is collision-free: a capped pair
// only shortens the step (its local one, or the global filter's bound). Each advancement covers at least
// 0.9 × (the pair's distance − 0.2 d) / l of the step, so 100 of them reach a motion of at least about
// 7 d (a pair approaching head-on) and about 70 d (a pair sliding at its distance). Uncapped, pairs squeezed
// to 1e-11 m made one sweep of 48 tets take 0.3 s; at 1000, the stone arch's first step at 2670 pairs
// 0.25 µm apart spent 90% of its 37 s in local CCD, 19 s at 100 (20 sweeps, ‖g‖ 304 → 35).
constexpr int k_local_ccd_iterations = 100;

// E^[k](x + α dir) − E^[k](x): inertia and external load of the stencil's free vertices, each element and
// pair touching them once (counted at its first stencil slot), and the codimensional stencils: k's own
// exactly, the others by their quadratic model at each vertex (codim_model_change).
KOKKOS_INLINE_FUNCTION double
stencil_energy_change(const StencilData& d, int k, const int (&nodes)[4], const Vec12& dir, double alpha) {
    double change = 0.0;
    for (int a = 0; a < 4; ++a) {
        const int v = nodes[a];
        if (!first_slot(nodes, a)) {
            continue;
        }
        const KVec3 step = alpha * KVec3(dir(3 * a), dir(3 * a + 1), dir(3 * a + 2));
        const KVec3 load = d.mass(v) * KVec3(d.gravity[0], d.gravity[1], d.gravity[2]) + row3(d.force, v);
        change += d.mass(v) * ((row3(d.x, v) - row3(d.x_hat, v)).dot(step) + 0.5 * step.squaredNorm()) -
                  d.h2c * load.dot(step);
        for (int q = d.element_offsets(v); q < d.element_offsets(v + 1); ++q) {
            const int e = d.entry_element(q);
            if (element_met_before(d, nodes, a, e)) {
                continue;
            }
            KVec3 before[4], step[4];
            for (int c = 0; c < 4; ++c) {
                const int n = d.tets(e, c);
                before[c] = row3(d.x, n);
                const int s = slot_of(nodes, n);
                step[c] =
                    s < 0 ? KVec3::Zero() : KVec3(alpha * KVec3(dir(3 * s), dir(3 * s + 1), dir(3 * s + 2)));
            }
            if (d.elastic > 0.0) {
                change += d.elastic * d.h2c * element_energy_change(d, e, before, step);
            }
        }
        if (d.has_codim && d.elastic > 0.0) {
            change += d.elastic * d.h2c * codim_model_change(d, k, nodes, a, dir, alpha);
        }
        for (int q = d.pair_offsets(v); q < d.pair_offsets(v + 1); ++q) {
            const int p = d.pair_entries(q, 0);
            if (pair_met_before(d, nodes, a, p)) {
                continue;
            }
            KVec3 before[4], after[4], moved[4];
            Vec12 g;
            Mat12 H;
            pair_positions_moved(d, p, nodes, dir, 0.0, before, moved);
            pair_positions_moved(d, p, nodes, dir, alpha, after, moved);
            change += pair_term(d, p, after, contact::k_value, g, H) -
                      pair_term(d, p, before, contact::k_value, g, H);
        }
    }
    return change;
}

// The local gradient and Hessian of stencil k (fixed slots zeroed, their diagonal the identity).
KOKKOS_INLINE_FUNCTION void
stencil_system(const StencilData& d, int k, const int (&nodes)[4], Vec12& g, Mat12& H, double& m_min) {
    g.setZero();
    H.setZero();
    m_min = 0.0;
    bool any = false;
    for (int a = 0; a < 4; ++a) {
        const int v = nodes[a];
        const bool free = v >= 0 && d.free(v) > 0.0 && slot_of(nodes, v) == a;
        if (!free) {
            for (int i = 0; i < 3; ++i) {
                H(3 * a + i, 3 * a + i) = 1.0;
            }
            continue;
        }
        m_min = !any || d.mass(v) < m_min ? d.mass(v) : m_min;
        any = true;
        for (int i = 0; i < 3; ++i) {
            g(3 * a + i) = d.gradient(v, i);
            for (int j = 0; j < 3; ++j) {
                H(3 * a + i, 3 * a + j) = d.diagonal(v, i, j);
            }
        }
        for (int b = 0; b < 4; ++b) {
            const int u = nodes[b];
            if (b == a || u < 0 || u == v || d.free(u) <= 0.0 || slot_of(nodes, u) != b) {
                continue;
            }
            // Off-diagonal block (a, b): the elements containing both v and u (their edge's sum), then the
            // pairs.
            const int edge = k < d.num_elements ? d.stencil_edges(k, pair_slot(a, b))
                             : k < d.num_elements + d.num_pairs
                                 ? d.pair_edges(k - d.num_elements, pair_slot(a, b))
                                 : -1;
            if (edge >= 0) {
                const bool forward = d.edge_nodes(edge, 0) == v;
                for (int i = 0; i < 3; ++i) {
                    for (int j = 0; j < 3; ++j) {
                        H(3 * a + i, 3 * b + j) +=
                            d.elastic * d.h2c *
                            (forward ? d.edge_block(edge, i, j) : d.edge_block(edge, j, i));
                    }
                }
            }
            // A codimensional stencil's own block (the others sharing the edge are left out: a whole
            // stencil's off-diagonal blocks dropped keep H^[k] positive definite, and no rank holds every
            // stencil around its ghosts).
            const int codim = k - d.num_elements - d.num_pairs;
            for (int i = 0; codim >= 0 && d.elastic > 0.0 && i < 3; ++i) {
                for (int j = 0; j < 3; ++j) {
                    H(3 * a + i, 3 * b + j) +=
                        d.elastic * d.h2c * d.codim_hessian(codim, 3 * a + i, 3 * b + j);
                }
            }
            for (int q = d.pair_offsets(v); q < d.pair_offsets(v + 1); ++q) {
                const int p = d.pair_entries(q, 0);
                const int sa = d.pair_entries(q, 1);
                for (int sb = 0; sb < 4; ++sb) {
                    if (d.pair_nodes(p, sb) != u) {
                        continue;
                    }
                    for (int i = 0; i < 3; ++i) {
                        for (int j = 0; j < 3; ++j) {
                            H(3 * a + i, 3 * b + j) += d.pair_derivatives.hessian(p, 3 * sa + i, 3 * sb + j);
                        }
                    }
                }
            }
        }
    }
}

// K2 for stencil k (element stencils first, then B's pairs, then the codimensional stencils), from the
// frozen state: its local Newton step, shortened by the local CCD and inversion search and backtracked on
// E^[k]; zero when nothing descends.
KOKKOS_INLINE_FUNCTION Vec12 stencil_local_step(const StencilData& d, int k) {
    int nodes[4];
    stencil_nodes(d, k, nodes);
    Vec12 g;
    Mat12 H;
    double m_min = 0.0;
    stencil_system(d, k, nodes, g, H, m_min);
    // 1. Local Newton-CG with the curvature guard (spec §2.3).
    Vec12 dir = local_newton_cg(H, g, d.cg_iterations, m_min);
    // 2. Local inversion search and local CCD: every element and pair touching the stencil, with all
    //    of the stencil's vertices moving (spec §2.5, §2.6).
    //    Each element and pair once: a tet meets its own stencil's walk four times.
    double t = 1.0;
    for (int a = 0; a < 4; ++a) {
        const int v = nodes[a];
        if (!first_slot(nodes, a)) {
            continue;
        }
        for (int k2 = d.element_offsets(v); k2 < d.element_offsets(v + 1); ++k2) {
            const int e = d.entry_element(k2); // every material: no element inverts (ElasticTerm::max_step)
            if (element_met_before(d, nodes, a, e)) {
                continue;
            }
            KVec3 q[4], dq[4];
            for (int c = 0; c < 4; ++c) {
                const int n = d.tets(e, c);
                q[c] = row3(d.x, n);
                const int s = slot_of(nodes, n);
                dq[c] = s < 0 ? KVec3::Zero() : KVec3(dir(3 * s), dir(3 * s + 1), dir(3 * s + 2));
            }
            const double bound = kernels::max_step_keeping_volume(q, dq, 0.2, t);
            t = bound < t ? bound : t;
        }
        for (int k2 = d.pair_offsets(v); k2 < d.pair_offsets(v + 1); ++k2) {
            const int pi = d.pair_entries(k2, 0);
            if (pair_met_before(d, nodes, a, pi)) {
                continue;
            }
            const int rows[4] = {d.pairs.rows(pi, 0), d.pairs.rows(pi, 1), d.pairs.rows(pi, 2),
                                 d.pairs.rows(pi, 3)};
            const int kind = d.pairs.kind(pi);
            KVec3 start[4], moved[4];
            pair_positions_moved(d, pi, nodes, dir, 0.0, start, moved);
            const double d0 = ::sqrt(contact::pair_squared_distance(kind, rows, d.xs, d.topology));
            const double bound = contact::pair_time_of_impact_at(
                kind, start, moved, contact::pair_plane_normal(kind, rows, d.topology), d0,
                k_local_ccd_iterations, contact::pair_offset(kind, rows, d.topology));
            t = bound < t ? bound : t;
        }
    }
    if (t < 1.0) {
        dir *= d.toi_factor * t;
    }
    // 3. Armijo backtracking on E^[k] (spec §2.7); no decrease: no step.
    const double slope = g.dot(dir);
    double alpha = 1.0;
    bool accepted = false;
    if (slope < 0.0) {
        for (int i = 0; i < k_backtracks && !accepted; ++i, alpha *= 0.5) {
            const double change = stencil_energy_change(d, k, nodes, dir, alpha);
            accepted = change <= k_armijo * alpha * slope;
            if (accepted) {
                break;
            }
        }
    }
    if (!accepted) {
        return Vec12::Zero();
    }
    return alpha * dir;
}

} // namespace intact::solver::stencil_detail
