#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "kernels/ccd_additive.hpp"
#include "kernels/elastic_element.hpp"
#include "kernels/lame_parameters.hpp"
#include "kernels/material_fixed_corotated.hpp"
#include "kernels/material_linear.hpp"
#include "kernels/material_neo_hookean.hpp"
#include "kernels/material_stable_neo_hookean.hpp"
#include "kernels/material_stvk.hpp"
#include "kernels/tet_geometry.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/pair_potential.hpp"
#include "src/contact/pair_toi.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/core/phase_timer.hpp"
#include "src/io/checkpoint.hpp"
#include "src/solver/ipc_solver.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

namespace intact::solver {

namespace {

/// Index of entry (r, c) of a symmetric 12×12 matrix stored as its upper triangle, row by row (78 values).
KOKKOS_INLINE_FUNCTION int packed_upper(int r, int c) {
    if (r > c) {
        const int t = r;
        r = c;
        c = t;
    }
    return r * (23 - r) / 2 + c;
}

using kernels::Mat12;
using kernels::Vec12;
using KVec3 = kernels::Vec3;

constexpr double k_armijo = 1e-4; // c₁ of the local line search (spec §2.7)
constexpr int k_backtracks = 10;  // L_max
// Weights of the assembled update's Jacobi rows tried in turn by the acceptance test (take_step).
constexpr double k_jacobi_weights[] = {1.0, 0.5, 0.0};
constexpr double k_warm_start_tolerance = 1e-2; // ε_ws: the warm start ends at this fraction of its ‖∇E_ws‖
// Advancements of a local CCD (spec §2.5) at most: a pair at distance d that a stencil moves by l along or
// towards itself needs about l / d of them, and the time reached by then is collision-free: a capped pair
// only shortens the step (its local one, or the global filter's bound). Each advancement covers at least
// 0.9 × (the pair's distance − 0.2 d) / l of the step, so 100 of them reach a motion of at least about
// 7 d (a pair approaching head-on) and about 70 d (a pair sliding at its distance). Uncapped, pairs squeezed
// to 1e-11 m made one sweep of 48 tets take 0.3 s; at 1000, the stone arch's first step at 2670 pairs
// 0.25 µm apart spent 90% of its 37 s in local CCD, 19 s at 100 (20 sweeps, ‖g‖ 304 → 35).
constexpr int k_local_ccd_iterations = 100;
// With the prescribed rows short of their targets, they advance again once the sweeps have cut ‖g‖ to
// this fraction of what it was right after their last advance (or met the step's test).
constexpr double k_boundary_settling = 0.1;

// f(material, Dm⁻¹, V) with element e's material model and parameters (a device-side switch on its
// model), for one element's energy change or derivatives.
template <class F>
KOKKOS_INLINE_FUNCTION double with_element_material(const StencilData& d, int e, const F& f) {
    kernels::Mat3 Dm;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            Dm(r, c) = d.dm_inverse(e, r, c);
        }
    }
    const double mu = d.mu(e);
    const double lambda = d.lambda(e);
    const double V = d.volume(e);
    switch (static_cast<MaterialModel>(d.model(e))) {
    case MaterialModel::neo_hookean:
        return f(kernels::NeoHookean{mu, lambda}, Dm, V);
    case MaterialModel::stable_neo_hookean:
        return f(kernels::StableNeoHookean{mu, lambda}, Dm, V);
    case MaterialModel::fixed_corotated:
        return f(kernels::FixedCorotated{mu, lambda}, Dm, V);
    case MaterialModel::stvk:
        return f(kernels::StVK{mu, lambda}, Dm, V);
    case MaterialModel::linear:
        break;
    }
    return f(kernels::LinearElastic{mu, lambda}, Dm, V);
}

// V ψ(q + step) − V ψ(q), keeping the digits of small steps (kernels::elastic_energy_change).
struct EnergyChange {
    const KVec3 (&q)[4];
    const KVec3 (&step)[4];
    template <class Material>
    KOKKOS_INLINE_FUNCTION double operator()(const Material& m, const kernels::Mat3& Dm, double V) const {
        return kernels::elastic_energy_change(m, q, step, Dm, V);
    }
};

// V ψ's gradient and (when H is not null) PSD-projected Hessian at q; returns V ψ.
struct Derivatives {
    const KVec3 (&q)[4];
    Vec12& g;
    Mat12* H;
    template <class Material>
    KOKKOS_INLINE_FUNCTION double operator()(const Material& m, const kernels::Mat3& Dm, double V) const {
        return kernels::elastic_element(m, q, Dm, V, &g, H);
    }
};

KOKKOS_INLINE_FUNCTION double
element_energy_change(const StencilData& d, int e, const KVec3 (&q)[4], const KVec3 (&step)[4]) {
    return with_element_material(d, e, EnergyChange{q, step});
}

KOKKOS_INLINE_FUNCTION void
element_derivatives(const StencilData& d, int e, const KVec3 (&q)[4], Vec12& g, Mat12* H) {
    with_element_material(d, e, Derivatives{q, g, H});
}

// The key of the edge between layout nodes a and b in StencilDescent::m_edge_of (either order).
std::uint64_t edge_key(int a, int b) {
    return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint32_t>(std::max(a, b));
}

// Index of the vertex pair (a, b), a ≠ b, among (0,1), (0,2), (0,3), (1,2), (1,3), (2,3).
KOKKOS_INLINE_FUNCTION int pair_slot(int a, int b) {
    const int lo = a < b ? a : b;
    const int hi = a < b ? b : a;
    return lo == 0 ? hi - 1 : lo + hi;
}

// The four nodes of stencil k (elements first, then pairs); −1 for a slot that is no stencil vertex.
KOKKOS_INLINE_FUNCTION void stencil_nodes(const StencilData& d, int k, int (&nodes)[4]) {
    for (int a = 0; a < 4; ++a) {
        nodes[a] = k < d.num_elements ? d.tets(k, a) : d.pair_nodes(k - d.num_elements, a);
    }
}

// Slot of node n in stencil `nodes`, or −1.
KOKKOS_INLINE_FUNCTION int slot_of(const int (&nodes)[4], int n) {
    for (int a = 0; a < 4; ++a) {
        if (n >= 0 && nodes[a] == n) {
            return a;
        }
    }
    return -1;
}

KOKKOS_INLINE_FUNCTION KVec3 row3(const NodeField& f, int n) {
    return KVec3(f(n, 0), f(n, 1), f(n, 2));
}

// Weighted barrier b_i κ_i of pair p with stencil positions x (pair_positions order); the derivatives when
// order > energy.
KOKKOS_INLINE_FUNCTION double
pair_term(const StencilData& d, int p, const KVec3 (&x)[4], int order, Vec12& g, Mat12& H) {
    const int kind = d.pairs.kind(p);
    const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2), d.pairs.rows(p, 3)};
    double b = 0.0;
    const contact::BarrierPhi phi{d.pair_s_hat(p)};
    if (kind == contact::k_point_plane) {
        b = contact::plane_potential(x[0], x[1], contact::pair_plane_normal(kind, rows, d.topology), phi,
                                     order, g, H);
    } else {
        b = contact::pair_potential(kind, x, phi, contact::pair_mollifier_threshold(kind, rows, d.topology),
                                    order, false, g, H);
    }
    const double kappa = d.pair_kappa(p);
    if (order != contact::k_value) {
        g *= kappa;
        if (order == contact::k_hessian) {
            H *= kappa;
        }
    }
    b *= kappa;
    // The pair's lagged friction, on the same stencil slots (spec §10 item 18).
    const int f = d.pair_friction(p);
    if (f >= 0) {
        Vec12 friction_gradient;
        Mat12 friction_hessian;
        b += d.friction.evaluate(f, x, order != contact::k_value, friction_gradient, friction_hessian);
        if (order != contact::k_value) {
            g += friction_gradient;
            if (order == contact::k_hessian) {
                H += friction_hessian;
            }
        }
    }
    return b;
}

// Pair p's stencil positions at xs with the stencil's nodes moved by alpha · dir.
KOKKOS_INLINE_FUNCTION void pair_positions_moved(const StencilData& d,
                                                 int p,
                                                 const int (&nodes)[4],
                                                 const Vec12& dir,
                                                 double alpha,
                                                 KVec3 (&x)[4],
                                                 KVec3 (&moved)[4]) {
    const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2), d.pairs.rows(p, 3)};
    contact::pair_positions(d.pairs.kind(p), rows, d.xs, x);
    for (int j = 0; j < 4; ++j) {
        const int a = slot_of(nodes, d.pair_nodes(p, j));
        moved[j] = a < 0 ? KVec3::Zero() : KVec3(dir(3 * a), dir(3 * a + 1), dir(3 * a + 2));
        x[j] += alpha * moved[j];
    }
}

// Whether slot a is the first slot holding its vertex (a pair stencil may list a vertex twice).
KOKKOS_INLINE_FUNCTION bool first_slot(const int (&nodes)[4], int a) {
    return nodes[a] >= 0 && slot_of(nodes, nodes[a]) == a;
}

// Whether a term with these four nodes (an element's, or a pair's with −1 for absent rows), met in the
// walk over slot a's terms, holds the vertex of an earlier first slot, so that the walk has met it
// already (each term is visited once per stencil).
KOKKOS_INLINE_FUNCTION bool met_before(const int (&nodes)[4], int a, const int (&term)[4]) {
    for (int b = 0; b < a; ++b) {
        if (first_slot(nodes, b) && slot_of(term, nodes[b]) >= 0) {
            return true;
        }
    }
    return false;
}

KOKKOS_INLINE_FUNCTION bool element_met_before(const StencilData& d, const int (&nodes)[4], int a, int e) {
    const int term[4] = {d.tets(e, 0), d.tets(e, 1), d.tets(e, 2), d.tets(e, 3)};
    return met_before(nodes, a, term);
}

KOKKOS_INLINE_FUNCTION bool pair_met_before(const StencilData& d, const int (&nodes)[4], int a, int p) {
    const int term[4] = {d.pair_nodes(p, 0), d.pair_nodes(p, 1), d.pair_nodes(p, 2), d.pair_nodes(p, 3)};
    return met_before(nodes, a, term);
}

// E^[k](x + α dir) − E^[k](x): inertia and external load of the stencil's free vertices, each element
// touching them once and each pair touching them once (counted at its first stencil slot).
KOKKOS_INLINE_FUNCTION double
stencil_energy_change(const StencilData& d, const int (&nodes)[4], const Vec12& dir, double alpha) {
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
        for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
            const int e = d.entry_element(k);
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
        for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
            const int p = d.pair_entries(k, 0);
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
                                                : d.pair_edges(k - d.num_elements, pair_slot(a, b));
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

// K2 for stencil k (element stencils first, then B's pairs), from the frozen state: its local Newton
// step, shortened by the local CCD and inversion search and backtracked on E^[k]; zero when nothing
// descends.
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
                k_local_ccd_iterations);
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
            const double change = stencil_energy_change(d, nodes, dir, alpha);
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

} // namespace

void StencilDescent::elastic_derivatives(bool hessians) {
    const StencilData d = m_data;
    const int num_elements = static_cast<int>(d.element_order.extent(0));
    Kokkos::deep_copy(d.elastic_gradient, 0.0);
    if (hessians) {
        Kokkos::deep_copy(d.elastic_diagonal, 0.0);
        Kokkos::deep_copy(d.edge_block, 0.0);
    }
    for (int lo = 0; lo < num_elements; lo += d.batch) {
        const int hi = std::min(num_elements, lo + d.batch);
        // 1. The batch's elements, each into its slot.
        Kokkos::parallel_for(
            "intact::solver::stencil_batch_derivatives", Kokkos::RangePolicy<ExecSpace>(lo, hi),
            KOKKOS_LAMBDA(const int k) {
                const int e = d.element_order(k);
                KVec3 q[4];
                for (int a = 0; a < 4; ++a) {
                    q[a] = row3(d.x, d.tets(e, a));
                }
                Vec12 g;
                Mat12 H;
                element_derivatives(d, e, q, g, hessians ? &H : nullptr);
                for (int i = 0; i < 12; ++i) {
                    d.batch_gradient(k - lo, i) = g(i);
                    if (hessians) {
                        for (int j = i; j < 12; ++j) {
                            d.batch_hessian(k - lo, packed_upper(i, j)) = H(i, j);
                        }
                    }
                }
            });
        // 2. Per stencil vertex, its elements of the batch in global id order (its entries' order).
        Kokkos::parallel_for(
            "intact::solver::stencil_vertex_sums", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
            KOKKOS_LAMBDA(const int v) {
                for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                    const int slot = d.element_position(d.entry_element(k)) - lo;
                    if (slot < 0) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    const int s = d.entry_corner(k);
                    for (int i = 0; i < 3; ++i) {
                        d.elastic_gradient(v, i) += d.batch_gradient(slot, 3 * s + i);
                        if (hessians) {
                            for (int j = 0; j < 3; ++j) {
                                d.elastic_diagonal(v, i, j) +=
                                    d.batch_hessian(slot, packed_upper(3 * s + i, 3 * s + j));
                            }
                        }
                    }
                }
            });
        if (!hessians) {
            continue;
        }
        // 3. Per edge (u, w), the batch's elements around u that contain w, in global id order.
        Kokkos::parallel_for(
            "intact::solver::stencil_edge_sums", Kokkos::RangePolicy<ExecSpace>(0, d.edge_nodes.extent(0)),
            KOKKOS_LAMBDA(const int edge) {
                const int u = d.edge_nodes(edge, 0);
                const int w = d.edge_nodes(edge, 1);
                for (int k = d.element_offsets(u); k < d.element_offsets(u + 1); ++k) {
                    const int e = d.entry_element(k);
                    const int slot = d.element_position(e) - lo;
                    if (slot < 0) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    const int su = d.entry_corner(k);
                    for (int sw = 0; sw < 4; ++sw) {
                        if (d.tets(e, sw) != w) {
                            continue;
                        }
                        for (int i = 0; i < 3; ++i) {
                            for (int j = 0; j < 3; ++j) {
                                d.edge_block(edge, i, j) +=
                                    d.batch_hessian(slot, packed_upper(3 * su + i, 3 * sw + j));
                            }
                        }
                    }
                }
            });
    }
}

void StencilDescent::vertex_derivatives() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_vertex_derivatives", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
        KOKKOS_LAMBDA(const int v) {
            // g_v = m (x − x̂) − c h² (m g + f) + c h² Σ_e ∇_v(V ψ) + Σ_i κ_i ∇_v b_i; D_v likewise.
            double g[3];
            double D[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
            for (int i = 0; i < 3; ++i) {
                g[i] = d.mass(v) * (d.x(v, i) - d.x_hat(v, i)) -
                       d.h2c * (d.mass(v) * d.gravity[i] + d.force(v, i));
                D[i][i] = d.mass(v);
            }
            for (int i = 0; i < 3; ++i) {
                g[i] += d.elastic * d.h2c * d.elastic_gradient(v, i);
                for (int j = 0; j < 3; ++j) {
                    D[i][j] += d.elastic * d.h2c * d.elastic_diagonal(v, i, j);
                }
            }
            for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                const int p = d.pair_entries(k, 0);
                const int s = d.pair_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    g[i] += d.pair_derivatives.gradient(p, 3 * s + i);
                    for (int j = 0; j < 3; ++j) {
                        D[i][j] += d.pair_derivatives.hessian(p, 3 * s + i, 3 * s + j);
                    }
                }
            }
            for (int i = 0; i < 3; ++i) {
                d.gradient(v, i) = d.free(v) * g[i];
                for (int j = 0; j < 3; ++j) {
                    d.diagonal(v, i, j) = D[i][j];
                }
            }
        });
}

void StencilDescent::pair_derivatives() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_pair_derivatives", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                 d.pairs.rows(p, 3)};
            KVec3 x[4];
            contact::pair_positions(d.pairs.kind(p), rows, d.xs, x);
            Vec12 g;
            Mat12 H;
            pair_term(d, p, x, contact::k_hessian, g, H);
            for (int i = 0; i < 12; ++i) {
                d.pair_derivatives.gradient(p, i) = g(i);
                for (int j = 0; j < 12; ++j) {
                    d.pair_derivatives.hessian(p, i, j) = H(i, j);
                }
            }
        });
}

std::pair<std::array<double, 12>, std::array<double, 144>> StencilDescent::local_system(int k) const {
    const StencilData d = m_data;
    Kokkos::View<double[12 + 144], MemSpace> out("intact::solver::stencil_local_system");
    Kokkos::parallel_for(
        "intact::solver::stencil_local_system", Kokkos::RangePolicy<ExecSpace>(0, 1),
        KOKKOS_LAMBDA(const int) {
            int nodes[4];
            stencil_nodes(d, k, nodes);
            Vec12 g;
            Mat12 H;
            double m_min = 0.0;
            stencil_system(d, k, nodes, g, H, m_min);
            for (int i = 0; i < 12; ++i) {
                out(i) = g(i);
                for (int j = 0; j < 12; ++j) {
                    out(12 + 12 * i + j) = H(i, j);
                }
            }
        });
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::pair<std::array<double, 12>, std::array<double, 144>> system{};
    for (std::size_t i = 0; i < 12; ++i) {
        system.first[i] = host(i);
    }
    for (std::size_t i = 0; i < 144; ++i) {
        system.second[i] = host(12 + i);
    }
    return system;
}

std::array<double, 2>
StencilDescent::lone_step_change(int k, const NodeField& x, const StepProblem& problem) {
    const StencilData d = m_data;
    const NodeField delta = m_delta;
    Kokkos::deep_copy(delta, 0.0);
    Kokkos::View<double, MemSpace> slope("intact::solver::stencil_lone_slope");
    Kokkos::parallel_for(
        "intact::solver::stencil_lone_step", Kokkos::RangePolicy<ExecSpace>(0, 1), KOKKOS_LAMBDA(const int) {
            int nodes[4];
            stencil_nodes(d, k, nodes);
            const Vec12 step = stencil_local_step(d, k);
            double sum = 0.0;
            for (int a = 0; a < 4; ++a) {
                const int v = nodes[a];
                if (v < 0 || v >= d.num_local || slot_of(nodes, v) != a) {
                    continue;
                }
                for (int i = 0; i < 3; ++i) {
                    delta(v, i) = d.free(v) * step(3 * a + i);
                    sum += d.gradient(v, i) * delta(v, i);
                }
            }
            slope() = sum;
        });
    const StepProblem* solving = m_problem; // null outside a solve: layout rebuilds read it
    m_problem = &problem;
    load_update();
    const auto [others, elastic] = update_energy_change(x, 1.0);
    m_problem = solving;
    double host_slope = 0.0;
    Kokkos::deep_copy(host_slope, slope);
    return {others + elastic, host_slope};
}

void StencilDescent::pair_steps() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_pair_steps", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const Vec12 step = stencil_local_step(d, d.num_elements + p);
            for (int i = 0; i < 12; ++i) {
                d.pair_steps(p, i) = step(i);
            }
        });
}

void StencilDescent::sweep_update(int scheme, int color, const NodeField& delta) {
    // The element stencils' steps come batch by batch in ascending global element id, and each batch is
    // summed into step_sum per owned vertex, in its entries' order, before the next batch: so every sum
    // adds the same terms in the same order as with all steps at once, on every rank count and batch
    // size, and no step is kept per element (96 bytes each). The barrier stencils' steps come in the
    // first batch's launch (a launch of their own would wait for its slowest thread after the elements').
    const StencilData d = m_data;
    const auto jacobi = m_jacobi;
    const int num_layout_elements = static_cast<int>(d.element_order.extent(0));
    for (int lo = 0; lo < num_layout_elements || lo == 0; lo += d.step_batch) {
        const int hi = std::min(num_layout_elements, lo + d.step_batch);
        const int pairs = lo == 0 ? d.num_pairs : 0;
        Kokkos::parallel_for(
            "intact::solver::stencil_local_steps", Kokkos::RangePolicy<ExecSpace>(0, hi - lo + pairs),
            KOKKOS_LAMBDA(const int k) {
                if (k >= hi - lo) {
                    const int p = k - (hi - lo);
                    const Vec12 step = stencil_local_step(d, d.num_elements + p);
                    for (int i = 0; i < 12; ++i) {
                        d.pair_steps(p, i) = step(i);
                    }
                    return;
                }
                const int e = d.element_order(lo + k);
                if (e >= d.num_elements) {
                    return; // a layout element beyond the LocalMesh's: no stencil of this rank
                }
                const Vec12 step = stencil_local_step(d, e);
                for (int i = 0; i < 12; ++i) {
                    d.batch_steps(k, i) = step(i);
                }
            });
        Kokkos::parallel_for(
            "intact::solver::stencil_step_sums", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
            KOKKOS_LAMBDA(const int v) {
                if (lo == 0) {
                    for (int i = 0; i < 3; ++i) {
                        d.step_sum(v, i) = 0.0;
                    }
                    jacobi(v) = 1;
                }
                for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                    const int e = d.entry_element(k);
                    const int slot = d.element_position(e) - lo;
                    if (slot < 0 || e >= d.num_elements) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    // The color's stencils share no vertex: at most one is v's Gauss–Seidel step.
                    const bool committed = d.color(scheme, e) == color;
                    const int s = d.entry_corner(k);
                    for (int i = 0; i < 3; ++i) {
                        const double step = d.batch_steps(slot, 3 * s + i);
                        d.step_sum(v, i) += step;
                        if (committed) {
                            delta(v, i) = step;
                        }
                    }
                    if (committed) {
                        jacobi(v) = 0;
                    }
                }
            });
    }
    Kokkos::parallel_for(
        "intact::solver::stencil_commit", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            double sum[3] = {d.step_sum(v, 0), d.step_sum(v, 1), d.step_sum(v, 2)};
            int count = 0;
            for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                count += d.entry_element(k) < d.num_elements ? 1 : 0;
            }
            for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                const int p = d.pair_entries(k, 0);
                const int s = d.pair_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    sum[i] += d.pair_steps(p, 3 * s + i);
                }
                ++count;
            }
            for (int i = 0; i < 3; ++i) {
                const double mean = count > 0 ? sum[i] / count : 0.0;
                delta(v, i) = d.free(v) * (jacobi(v) ? mean : delta(v, i));
            }
        });
}

bool StencilDescent::take_step(const NodeField& x, PhaseSeconds& seconds) {
    // K4: the safety filter on the assembled update m_delta (its ghost rows current), which scales it when
    // an element or a pair would be violated. Every `regular_ccd_every`-th sweep (and every sweep by
    // default): the shared step bound (inversion, and CCD with a broad phase; global MIN), whose swept
    // pairs join B. Between (spec §5.2–§5.3): the inversion bound and the pairs of B alone, no broad
    // phase; the chord from the last certified state is then certified by a regular CCD every
    // `regular_ccd_every` sweeps and before a step ends.
    //
    // Then the acceptance test on the whole potential, which the paper does not have: each stencil's step
    // lowers E with every other vertex held, but the Jacobi means combine steps that each assumed the
    // others fixed, and across a stiff barrier pair (both sides move the whole way apart) or a stiff
    // element they overshoot: on inputs/default.json every second sweep raised E from the lower cube's
    // landing on, ‖g‖ alternated between two levels and every step ran to the sweep cap. The update is
    // accepted when E(x + α Δ) − E(x) ≤ c₁ α gᵀΔ; else the Jacobi rows are damped (ω = ½, then 0: the
    // Gauss–Seidel rows alone, vertex-disjoint stencils whose steps each descend, so gᵀΔ < 0) and then α
    // halves (no new bound needed: a shorter step along a certified segment). Nothing accepted: no move
    // this sweep (the next sweep commits another color). In the warm start, which minimises E without
    // elasticity, an update must also not raise the full E: a 20 m/s bullet stopped by a plate in the warm
    // start was otherwise crushed, its rear moving the whole inertial path while barriers held its front,
    // each update keeping a fifth of the volumes until they were round-off (inputs/thin_plate.json ended
    // its first step with an inverted tet and ‖∇E‖₂ = 3e9).
    const bool regular = !m_contact || m_options.regular_ccd_every <= 1;
    const bool damping = m_options.accept_updates;
    std::array<double, 2> slopes{}; // gᵀΔ over the Gauss–Seidel rows and over the Jacobi rows
    if (damping) {
        Kokkos::deep_copy(m_assembled, m_delta);
        slopes = update_slopes(); // now: a bound's new pairs may rebuild the layout, and g with it
    }
    double alpha = 0.0;
    for (const double omega : k_jacobi_weights) {
        if (omega < 1.0) {
            if (omega > 0.0 && slopes[1] == 0.0) {
                continue; // no Jacobi rows: straight to the shorter steps
            }
            damp_jacobi(omega);
        }
        {
            ScopedTimer timer(seconds.step_bound);
            alpha = regular ? m_bound.along(x, m_delta, m_parts.boundary) : filter_bound(x);
        }
        if (m_contact && regular) {
            ScopedTimer timer(seconds.contact);
            if (add_pairs(m_contact->swept())) {
                refresh_pairs(false);
            }
        }
        if (!damping) {
            break;
        }
        ScopedTimer timer(seconds.line_search);
        load_update();
        const double slope = slopes[0] + omega * slopes[1];
        bool accepted = false;
        for (int halving = 0; halving < (omega > 0.0 ? 1 : k_backtracks) && !accepted; ++halving) {
            const auto [others, elastic] = update_energy_change(x, alpha);
            accepted = slope < 0.0 && others + m_data.elastic * elastic <= k_armijo * alpha * slope &&
                       (m_data.elastic > 0.0 || others + elastic <= 0.0);
            alpha = accepted ? alpha : 0.5 * alpha;
        }
        if (accepted) {
            break;
        }
        alpha = 0.0;
    }
    // K5: x ← x + α Δx on every row of the solver's fields, then the layout's halo.
    const NodeField delta = m_delta;
    Kokkos::parallel_for(
        "intact::solver::stencil_update", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                x(v, i) += alpha * delta(v, i);
            }
        });
    load_positions(x);
    if (!regular && ++m_since_ccd >= m_options.regular_ccd_every) {
        certify(x, seconds);
    }
    return alpha > 0.0;
}

void StencilDescent::damp_jacobi(double omega) {
    const NodeField full = m_assembled;
    const NodeField delta = m_delta;
    const auto jacobi = m_jacobi;
    Kokkos::parallel_for(
        "intact::solver::stencil_damp_jacobi", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_owned),
        KOKKOS_LAMBDA(const int v) {
            const double weight = jacobi(v) != 0 ? omega : 1.0;
            for (int i = 0; i < 3; ++i) {
                delta(v, i) = weight * full(v, i);
            }
        });
    m_parts.halo.gather(m_delta);
}

std::array<double, 2> StencilDescent::update_slopes() const {
    const StencilData d = m_data;
    const NodeField delta = m_delta;
    const auto jacobi = m_jacobi;
    double sums[2] = {0.0, 0.0};
    Kokkos::parallel_reduce(
        "intact::solver::stencil_update_slopes", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v, double& seidel, double& jacobi_rows) {
            double dot = 0.0;
            for (int i = 0; i < 3; ++i) {
                dot += d.gradient(v, i) * delta(v, i);
            }
            (jacobi(v) != 0 ? jacobi_rows : seidel) += dot;
        },
        sums[0], sums[1]);
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m_parts.comm));
    return {sums[0], sums[1]};
}

void StencilDescent::to_layout(const NodeField& field, const NodeField& rows) {
    // The owned rows from `field`, every other layout row from its owner.
    const NodeField out = rows;
    Kokkos::parallel_for(
        "intact::solver::stencil_to_layout", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_owned),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                out(v, i) = field(v, i);
            }
        });
    m_layout.halo->gather(out);
}

NodeField StencilDescent::on_layout(const NodeField& field) {
    to_layout(field, m_layout_scratch);
    return m_layout_scratch;
}

double StencilDescent::filter_bound(const NodeField& x) {
    // Inversion along the assembled update (the shared element bound), and every pair of B along it with
    // its local CCD (the pairs' rows' steps through the layout). Global MIN.
    double alpha = m_parts.potential.elastic().max_step(x, m_delta);
    const StencilData d = m_data;
    fill_surface(on_layout(m_delta), m_zero_rows, m_surface_step);
    const contact::SurfaceField ps = m_surface_step;
    double pairs = 1.0;
    Kokkos::parallel_reduce(
        "intact::solver::stencil_filter_pairs", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p, double& bound) {
            const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                 d.pairs.rows(p, 3)};
            const int kind = d.pairs.kind(p);
            KVec3 start[4], step[4];
            contact::pair_positions(kind, rows, d.xs, start);
            contact::pair_positions(kind, rows, ps, step);
            const double d0 = ::sqrt(contact::pair_squared_distance(kind, rows, d.xs, d.topology));
            const double t = contact::pair_time_of_impact_at(
                kind, start, step, contact::pair_plane_normal(kind, rows, d.topology), d0,
                k_local_ccd_iterations);
            bound = t < bound ? t : bound;
        },
        Kokkos::Min<double>(pairs));
    return comm::allreduce_min(m_parts.comm, std::min(alpha, pairs));
}

bool StencilDescent::certify(const NodeField& x, PhaseSeconds& seconds) {
    // Spec §5.2: a regular CCD (broad phase over every primitive) on the chord x_ck → x; the pairs it
    // sweeps join B; on a hit, x falls back to x_ck + t (x − x_ck) with t the safe fraction (80% of every
    // gap), which is collision-free because x_ck was and the chord is up to t.
    m_since_ccd = 0;
    const NodeField chord = m_product;
    const NodeField start = m_x_ck;
    Kokkos::parallel_for(
        "intact::solver::stencil_chord", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                chord(v, i) = x(v, i) - start(v, i);
            }
        });
    double t = 1.0;
    {
        ScopedTimer timer(seconds.step_bound);
        t = m_bound.along(m_x_ck, chord, m_parts.boundary);
    }
    {
        ScopedTimer timer(seconds.contact);
        if (add_pairs(m_contact->swept())) {
            refresh_pairs(false);
        }
    }
    if (t < 1.0) {
        Kokkos::parallel_for(
            "intact::solver::stencil_fall_back", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
            KOKKOS_LAMBDA(const int v) {
                for (int i = 0; i < 3; ++i) {
                    x(v, i) = start(v, i) + t * chord(v, i);
                }
            });
        load_positions(x);
    }
    Kokkos::deep_copy(m_x_ck, x);
    return t < 1.0;
}

void StencilDescent::warm_start_update(const NodeField& delta) {
    // Spec §4 step 4: a vertex in no pair takes the closed-form minimiser of inertia and load, x̂ + c h²
    // (g + f / m) − x; a vertex in pairs the mean of its barrier stencils' steps (Jacobi).
    pair_steps();
    const StencilData d = m_data;
    const auto jacobi = m_jacobi;
    Kokkos::parallel_for(
        "intact::solver::stencil_warm_start_update", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            const int count = d.pair_offsets(v + 1) - d.pair_offsets(v);
            for (int i = 0; i < 3; ++i) {
                double step = 0.0;
                if (count == 0) {
                    step = d.x_hat(v, i) + d.h2c * (d.gravity[i] + d.force(v, i) / d.mass(v)) - d.x(v, i);
                } else {
                    for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                        step += d.pair_steps(d.pair_entries(k, 0), 3 * d.pair_entries(k, 1) + i);
                    }
                    step /= count;
                }
                delta(v, i) = d.free(v) * step;
            }
            jacobi(v) = count == 0 ? 0 : 1;
        });
}

void StencilDescent::load_update() {
    // Only the pairs read the update on layout and surface rows; B is the same on every rank, so every rank
    // gathers alike.
    if (m_data.num_pairs > 0) {
        fill_surface(on_layout(m_delta), m_zero_rows, m_surface_step);
    }
}

std::array<double, 2> StencilDescent::update_energy_change(const NodeField& x, double alpha) {
    // The trial point on the solver's rows (ghosts too: owned elements read them), in the step bound's
    // scratch, which is free here; inertia, load and elasticity from the shared potential.
    const NodeField trial = m_product;
    const NodeField delta = m_delta;
    Kokkos::parallel_for(
        "intact::solver::stencil_update_trial", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                trial(v, i) = x(v, i) + alpha * delta(v, i);
            }
        });
    const double nodal = m_parts.potential.nodal_energy_change(x, trial, *m_problem).first;
    const double elastic = m_parts.potential.elastic().energy_change(x, trial).first;
    double pairs = 0.0;
    if (m_data.num_pairs > 0) {
        const StencilData d = m_data;
        const contact::SurfaceField ps = m_surface_step;
        Kokkos::parallel_reduce(
            "intact::solver::stencil_update_energy_pairs", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
            KOKKOS_LAMBDA(const int p, double& sum) {
                if (d.pair_counted(p) == 0) {
                    return;
                }
                const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                     d.pairs.rows(p, 3)};
                KVec3 before[4], after[4];
                contact::pair_positions(d.pairs.kind(p), rows, d.xs, before);
                contact::pair_positions(d.pairs.kind(p), rows, ps, after);
                for (int j = 0; j < 4; ++j) {
                    after[j] = before[j] + alpha * after[j];
                }
                Vec12 g;
                Mat12 H;
                sum += pair_term(d, p, after, contact::k_value, g, H) -
                       pair_term(d, p, before, contact::k_value, g, H);
            },
            pairs);
    }
    double sums[2] = {nodal + pairs, m_data.h2c * elastic};
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, m_parts.comm));
    return {sums[0], sums[1]};
}

double StencilDescent::gradient_norm_squared() const {
    const StencilData d = m_data;
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::stencil_gradient_norm", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v, double& total) {
            for (int i = 0; i < 3; ++i) {
                total += d.free(v) * d.gradient(v, i) * d.gradient(v, i);
            }
        },
        sum);
    return comm::allreduce_sum(m_parts.comm, sum);
}

StencilDescent::StencilDescent(const StepParts& parts, const NewtonSettings& settings, const LocalMesh& local)
    : m_parts(parts), m_settings(settings), m_options(parts.scene.stencil_descent), m_local(local),
      m_layout(build_stencil_layout(parts.comm, local, parts.scene.halo_transport)),
      m_coloring(global_stencil_coloring(parts.comm, local, m_options.colors, m_options.schemes)),
      m_bound(parts.comm, parts.potential.elastic(), parts.contact), m_contact(parts.contact),
      m_delta("intact::solver::stencil_delta", local.num_local_nodes()),
      m_product("intact::solver::stencil_product", local.num_local_nodes()),
      m_assembled("intact::solver::stencil_assembled", local.num_local_nodes()),
      m_jacobi("intact::solver::stencil_jacobi", local.num_local_nodes()) {
    if (m_contact) {
        const int rows = m_contact->surface().num_vertices();
        m_xs = contact::SurfaceField("intact::solver::stencil_xs", rows);
        m_surface_step = contact::SurfaceField("intact::solver::stencil_surface_step", rows);
        m_zero_rows = contact::SurfaceField("intact::solver::stencil_zero_rows", rows);
        m_x_ck = NodeField("intact::solver::stencil_x_ck", local.num_local_nodes());
        m_data.xs = m_xs;
        m_data.topology = m_contact->topology();
    }
    build_elastic();
    build_static_data();
    if (m_contact) {
        double mass = 0.0;
        const auto host_mass = Kokkos::create_mirror_view_and_copy(HostSpace(), m_data.mass);
        for (int i = 0; i < m_data.num_owned; ++i) {
            mass += host_mass(i);
        }
        const double nodes =
            static_cast<double>(comm::allreduce_sum(parts.comm, std::int64_t{m_data.num_owned}));
        m_kappa.emplace(comm::allreduce_sum(parts.comm, mass) / nodes, m_contact->dhat(), parts.length);
        m_parts.potential.set_contact(*m_contact);
        if (parts.scene.has_friction()) {
            m_friction.emplace(parts.scene.contact.friction, parts.scene.contact.epsv);
            const int rows = m_contact->surface().num_vertices();
            m_friction_start = contact::SurfaceField("intact::solver::stencil_friction_start", rows);
            m_obstacle_start = contact::SurfaceField("intact::solver::stencil_obstacle_start", rows);
            m_x_start = NodeField("intact::solver::stencil_x_start", local.num_local_nodes());
        }
    }
}

void StencilDescent::release_static_data() {
    // The views build_static_data() makes for the layout, so that the old layout's and the new are not
    // held together (the peak memory of a rebuild counted both). Not these: the old rest data (tets, D_m⁻¹,
    // V) stays alive through the potential's elastic term until build_elastic() shares the new one, and
    // the new StencilLayout exists already.
    StencilData& d = m_data;
    d.tets = {};
    d.dm_inverse = {};
    d.volume = {};
    d.model = d.element_offsets = d.element_entries = d.element_order = d.element_position = {};
    d.mu = d.lambda = d.mass = d.free = {};
    d.batch_gradient = {};
    d.batch_hessian = {};
    d.elastic_gradient = d.x = d.x_hat = d.force = d.gradient = {};
    d.elastic_diagonal = {};
    d.diagonal = {};
    d.stencil_edges = {};
    d.edge_nodes = {};
    d.edge_block = {};
    d.color = {};
    d.batch_steps = {};
    d.step_sum = {};
    d.pair_offsets = {};
    d.pair_edges = {};
    m_layout_scratch = {};
    m_node_row = {};
    m_elastic.reset();
}

void StencilDescent::build_elastic() {
    m_elastic.emplace(m_layout.mesh, m_parts.scene);
    // The layout's elements start with the LocalMesh's, so the potential's elastic term (line search,
    // energies, inversion bound) reads its rest data from this one instead of keeping its own copy.
    m_parts.potential.elastic().share_rest_data(*m_elastic);
}

void StencilDescent::build_static_data() {
    const LocalMesh& mesh = m_layout.mesh;
    StencilData& d = m_data;
    d.num_nodes = m_layout.num_vertices;
    d.num_local = m_local.num_local_nodes();
    d.num_owned = m_local.num_owned_nodes;
    d.num_elements = m_layout.num_stencils;
    d.cg_iterations = m_options.cg_iterations;
    d.toi_factor = m_options.toi_factor;
    d.tets = m_elastic->tets();
    d.dm_inverse = m_elastic->dm_inverses();
    d.volume = m_elastic->volumes();

    // Materials per layout element.
    const int num_layout_elements = mesh.num_local_elements();
    d.model = StencilData::IntView("intact::solver::stencil_model", num_layout_elements);
    d.mu = StencilData::RealView("intact::solver::stencil_mu", num_layout_elements);
    d.lambda = StencilData::RealView("intact::solver::stencil_lambda", num_layout_elements);
    auto model = Kokkos::create_mirror_view(d.model);
    auto mu = Kokkos::create_mirror_view(d.mu);
    auto lambda = Kokkos::create_mirror_view(d.lambda);
    std::vector<double> density(static_cast<std::size_t>(num_layout_elements));
    for (int e = 0; e < num_layout_elements; ++e) {
        const auto& material =
            m_parts.scene.bodies[static_cast<std::size_t>(mesh.element_body[static_cast<std::size_t>(e)])]
                .material;
        const auto lame = kernels::lame_from_youngs<>(material.youngs_modulus, material.poisson_ratio);
        model(e) = static_cast<int>(material_model(material.model));
        mu(e) = lame.mu;
        lambda(e) = lame.lambda;
        density[static_cast<std::size_t>(e)] = material.density;
    }
    Kokkos::deep_copy(d.model, model);
    Kokkos::deep_copy(d.mu, mu);
    Kokkos::deep_copy(d.lambda, lambda);

    // Elements around each stencil vertex, by ascending global element id (the fixed order of every sum),
    // and the lumped masses summed in that order.
    std::vector<std::vector<std::pair<GlobalId, std::array<int, 2>>>> around(
        static_cast<std::size_t>(d.num_nodes));
    for (int e = 0; e < num_layout_elements; ++e) {
        for (int a = 0; a < 4; ++a) {
            const int n = mesh.tets[static_cast<std::size_t>(e)][static_cast<std::size_t>(a)];
            if (n < d.num_nodes) {
                around[static_cast<std::size_t>(n)].push_back(
                    {mesh.element_global_id[static_cast<std::size_t>(e)], {e, a}});
            }
        }
    }
    const auto volume = Kokkos::create_mirror_view_and_copy(HostSpace(), m_elastic->volumes());
    d.element_offsets = StencilData::IntView("intact::solver::stencil_element_offsets", d.num_nodes + 1);
    d.mass = StencilData::RealView("intact::solver::stencil_mass", d.num_nodes);
    auto offsets = Kokkos::create_mirror_view(d.element_offsets);
    auto mass = Kokkos::create_mirror_view(d.mass);
    offsets(0) = 0;
    for (int v = 0; v < d.num_nodes; ++v) {
        auto& list = around[static_cast<std::size_t>(v)];
        std::sort(list.begin(), list.end());
        offsets(v + 1) = offsets(v) + static_cast<int>(list.size());
    }
    d.element_entries = StencilData::IntView("intact::solver::stencil_element_entries", offsets(d.num_nodes));
    auto entries = Kokkos::create_mirror_view(d.element_entries);
    for (int v = 0; v < d.num_nodes; ++v) {
        mass(v) = 0.0;
        int k = offsets(v);
        for (const auto& [gid, entry] : around[static_cast<std::size_t>(v)]) {
            entries(k) = 4 * entry[0] + entry[1];
            mass(v) += density[static_cast<std::size_t>(entry[0])] * volume(entry[0]) / 4.0;
            ++k;
        }
    }
    Kokkos::deep_copy(d.element_offsets, offsets);
    Kokkos::deep_copy(d.element_entries, entries);
    Kokkos::deep_copy(d.mass, mass);

    // Elasticity's batches: layout elements in ascending global id, `element_batch` at a time (automatic:
    // a sixteenth of the layout, so the batch buffers (720 bytes per element) stay a small share of the
    // memory, and at least 1024 on a GPU, so that a batch still fills its cores reasonably, 256 on the
    // host, whose threads a batch fills at any size; three kernels per batch and sweep).
    std::vector<int> order(static_cast<std::size_t>(num_layout_elements));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return mesh.element_global_id[static_cast<std::size_t>(a)] <
               mesh.element_global_id[static_cast<std::size_t>(b)];
    });
    d.element_order = StencilData::IntView("intact::solver::stencil_element_order", num_layout_elements);
    d.element_position =
        StencilData::IntView("intact::solver::stencil_element_position", num_layout_elements);
    auto order_host = Kokkos::create_mirror_view(d.element_order);
    auto position = Kokkos::create_mirror_view(d.element_position);
    for (int k = 0; k < num_layout_elements; ++k) {
        order_host(k) = order[static_cast<std::size_t>(k)];
        position(order[static_cast<std::size_t>(k)]) = k;
    }
    Kokkos::deep_copy(d.element_order, order_host);
    Kokkos::deep_copy(d.element_position, position);
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
    const int automatic = std::max(on_host ? 256 : 1024, (num_layout_elements + 15) / 16);
    d.batch = std::max(
        1, std::min(num_layout_elements, m_options.element_batch > 0 ? m_options.element_batch : automatic));
    // The local steps' batches (sweep_update): elasticity's on the host. On a GPU at least 65 536 stencils
    // (every element when fewer): each is one long thread (a 12 × 12 CG, CCD and line search), so the
    // batches run one after another at the speed of one thread each, and a batch of a few thousand would
    // leave most of the device idle. An explicit element_batch sets both.
    constexpr int k_device_step_batch = 65536;
    d.step_batch = m_options.element_batch > 0 || on_host
                       ? d.batch
                       : std::max(1, std::min(num_layout_elements, std::max(d.batch, k_device_step_batch)));
    d.batch_steps = decltype(d.batch_steps)("intact::solver::stencil_batch_steps", d.step_batch);
    d.batch_gradient = decltype(d.batch_gradient)("intact::solver::stencil_batch_gradient", d.batch);
    d.batch_hessian = decltype(d.batch_hessian)("intact::solver::stencil_batch_hessian", d.batch);
    d.elastic_gradient = NodeField("intact::solver::stencil_elastic_gradient", d.num_nodes);
    d.elastic_diagonal =
        decltype(d.elastic_diagonal)("intact::solver::stencil_elastic_diagonal", d.num_nodes);

    // Edges between stencil vertices (every vertex pair of a layout element), and those of each element
    // stencil.
    m_edge_of.clear();
    std::vector<std::array<int, 2>> edges;
    auto edge_of = [&](int a, int b) {
        const auto [it, inserted] = m_edge_of.emplace(edge_key(a, b), static_cast<int>(edges.size()));
        if (inserted) {
            edges.push_back({std::min(a, b), std::max(a, b)});
        }
        return it->second;
    };
    d.stencil_edges = decltype(d.stencil_edges)("intact::solver::stencil_edges", d.num_elements);
    auto stencil_edges = Kokkos::create_mirror_view(d.stencil_edges);
    for (int e = 0; e < num_layout_elements; ++e) {
        const auto& tet = mesh.tets[static_cast<std::size_t>(e)];
        for (int a = 0; a < 4; ++a) {
            for (int b = a + 1; b < 4; ++b) {
                const int na = tet[static_cast<std::size_t>(a)], nb = tet[static_cast<std::size_t>(b)];
                const bool both = na < d.num_nodes && nb < d.num_nodes && na != nb;
                const int edge = both ? edge_of(na, nb) : -1;
                if (e < d.num_elements) {
                    stencil_edges(e, pair_slot(a, b)) = edge;
                }
            }
        }
    }
    Kokkos::deep_copy(d.stencil_edges, stencil_edges);
    d.edge_nodes = decltype(d.edge_nodes)("intact::solver::stencil_edge_nodes", edges.size());
    auto edge_nodes = Kokkos::create_mirror_view(d.edge_nodes);
    for (std::size_t k = 0; k < edges.size(); ++k) {
        edge_nodes(k, 0) = edges[k][0];
        edge_nodes(k, 1) = edges[k][1];
    }
    Kokkos::deep_copy(d.edge_nodes, edge_nodes);
    d.edge_block = decltype(d.edge_block)("intact::solver::stencil_edge_block", edges.size());
    d.pair_edges = decltype(d.pair_edges)("intact::solver::stencil_pair_edges", 0);

    // Colors of the element stencils, and the rest of the fields.
    d.color = decltype(d.color)("intact::solver::stencil_color", m_coloring.schemes, d.num_elements);
    auto color = Kokkos::create_mirror_view(d.color);
    for (int s = 0; s < m_coloring.schemes; ++s) {
        for (int e = 0; e < d.num_elements; ++e) {
            color(s, e) = m_coloring.of(s, e);
        }
    }
    Kokkos::deep_copy(d.color, color);
    const int rows = mesh.num_local_nodes();
    d.free = StencilData::RealView("intact::solver::stencil_free", rows);
    d.x = NodeField("intact::solver::stencil_x", rows);
    d.x_hat = NodeField("intact::solver::stencil_x_hat", rows);
    d.force = NodeField("intact::solver::stencil_force", rows);
    m_layout_scratch = NodeField("intact::solver::stencil_layout_scratch", rows);
    d.gradient = NodeField("intact::solver::stencil_gradient", d.num_nodes);
    d.diagonal = decltype(d.diagonal)("intact::solver::stencil_diagonal", d.num_nodes);
    d.step_sum = NodeField("intact::solver::stencil_step_sum", d.num_owned);
    d.pair_offsets = StencilData::IntView("intact::solver::stencil_pair_offsets", d.num_nodes + 1);
    d.pair_entries = decltype(d.pair_entries)("intact::solver::stencil_pair_entries", 0);
    d.pair_nodes = decltype(d.pair_nodes)("intact::solver::stencil_pair_nodes", 0);
    d.pair_s_hat = StencilData::RealView("intact::solver::stencil_pair_s_hat", 0);
    d.pair_kappa = StencilData::RealView("intact::solver::stencil_pair_kappa", 0);
    d.pairs.kind = Kokkos::View<int*, MemSpace>("intact::solver::stencil_pair_kind", 0);
    d.pairs.rows =
        Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>("intact::solver::stencil_pair_rows", 0);
    d.pair_friction = StencilData::IntView("intact::solver::stencil_pair_friction", 0);
    d.num_pairs = 0;
    d.pairs.count = 0;
    d.pair_derivatives.resize(0, true);

    // Contact surface rows ↔ layout nodes, by global node id.
    if (m_contact) {
        const auto& surface = m_contact->surface();
        std::unordered_map<GlobalId, int> node_of;
        for (int n = 0; n < rows; ++n) {
            node_of[mesh.node_global_id[static_cast<std::size_t>(n)]] = n;
        }
        m_row_node.assign(static_cast<std::size_t>(surface.num_vertices()), -1);
        m_layout_gids.clear();
        m_layout_gids.insert(mesh.node_global_id.begin(), mesh.node_global_id.end());
        m_node_row = Kokkos::View<int*, MemSpace>("intact::solver::stencil_node_row", rows);
        auto node_row = Kokkos::create_mirror_view(m_node_row);
        Kokkos::deep_copy(node_row, -1);
        for (int r = 0; r < surface.num_body_vertices(); ++r) {
            const auto it = node_of.find(surface.vertex_gid()[static_cast<std::size_t>(r)]);
            if (it != node_of.end()) {
                m_row_node[static_cast<std::size_t>(r)] = it->second;
                node_row(it->second) = r;
            }
        }
        Kokkos::deep_copy(m_node_row, node_row);
    }
}

void StencilDescent::fill_surface(const NodeField& field,
                                  const contact::ConstSurfaceField& obstacles,
                                  const contact::SurfaceField& out) const {
    const auto node_row = m_node_row;
    Kokkos::parallel_for(
        "intact::solver::stencil_fill_surface",
        Kokkos::RangePolicy<ExecSpace>(0, static_cast<int>(node_row.extent(0))), KOKKOS_LAMBDA(const int n) {
            const int r = node_row(n);
            for (int i = 0; r >= 0 && i < 3; ++i) {
                out(r, i) = field(n, i);
            }
        });
    const auto& surface = m_contact->surface();
    const int first = surface.num_body_vertices();
    Kokkos::parallel_for(
        "intact::solver::stencil_fill_obstacles",
        Kokkos::RangePolicy<ExecSpace>(first, surface.num_vertices()), KOKKOS_LAMBDA(const int r) {
            for (int i = 0; i < 3; ++i) {
                out(r, i) = obstacles(r, i);
            }
        });
}

void StencilDescent::load_positions(const NodeField& x) {
    to_layout(x, m_data.x);
    if (m_contact) {
        fill_surface(m_data.x, m_parts.boundary.obstacle_positions(), m_xs);
    }
}

void StencilDescent::load_state(const NodeField& x, const StepProblem& problem) {
    // Owned rows from the solver's fields, every other layout row from its owner.
    const StencilData d = m_data;
    const NodeField x_hat = problem.x_hat;
    const NodeField force = problem.force;
    const auto free = m_parts.boundary.free_mask();
    const bool has_force = force.extent(0) > 0;
    Kokkos::parallel_for(
        "intact::solver::stencil_load_state", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            d.free(v) = free(v);
            for (int i = 0; i < 3; ++i) {
                d.x_hat(v, i) = x_hat(v, i);
                d.force(v, i) = has_force ? force(v, i) : 0.0;
            }
        });
    m_layout.halo->gather(d.x_hat);
    m_layout.halo->gather(d.force);
    m_layout.halo->gather(d.free);
    load_positions(x);
    m_data.h2c = problem.weight * problem.h * problem.h;
    for (int i = 0; i < 3; ++i) {
        m_data.gravity[i] = problem.gravity[static_cast<std::size_t>(i)];
    }
}

double StencilDescent::kappa() const {
    // IPC's adaptive κ comes out of sums over ranks, whose round-off depends on the partition; a local
    // Newton-CG step reacts to round-off in its input discontinuously (its early exit, the Armijo test), so
    // κ is rounded to 20 significant bits: the same on every rank count unless the exact value lies within
    // round-off of a rounding boundary (about 1e-10 of the time).
    int exponent = 0;
    const double mantissa = std::frexp(m_kappa->value(), &exponent);
    return std::ldexp(std::round(std::ldexp(mantissa, 20)), exponent - 20);
}

StencilDescent::PairKey StencilDescent::pair_key(int kind, const int (&rows)[4]) const {
    // Global ids in place of surface rows (which are numbered by owner rank): B's order, and so the order
    // of every per-vertex sum over pairs, is the same on every rank count. A point–plane pair's second
    // entry is its plane's index and its last unused.
    const auto& gid = m_contact->surface().vertex_gid();
    const bool plane = kind == contact::k_point_plane;
    return {kind, gid[static_cast<std::size_t>(rows[0])],
            plane ? rows[1] : gid[static_cast<std::size_t>(rows[1])], gid[static_cast<std::size_t>(rows[2])],
            plane ? 0 : gid[static_cast<std::size_t>(rows[3])]};
}

bool StencilDescent::advance_boundary(const NodeField& x, PhaseSeconds& seconds, bool during_sweeps) {
    // IPC's gradual arrival, taken apart from the sweeps: the prescribed rows (free rows stay) move by the
    // largest fraction of their remaining motion that inverts no element and closes no gap by more than
    // 80%; the pairs that motion sweeps join B. Collective.
    BoundaryMotion& boundary = m_parts.boundary;
    if (boundary.remaining(x) <= 0.0) {
        return true;
    }
    double alpha = 0.0;
    {
        ScopedTimer timer(seconds.step_bound);
        alpha = m_bound.along(x, boundary.step(), boundary);
    }
    if (alpha >= 1.0) {
        boundary.arrive(x);
    } else {
        boundary.trial_point(x, boundary.step(), alpha, m_product);
        boundary.accept_trial();
        boundary.hold(); // the sweeps' step bounds move free rows only
        Kokkos::deep_copy(x, m_product);
    }
    if (during_sweeps) {
        // B grows by the pairs that motion swept, and the layout sees the new positions.
        if (m_contact) {
            ScopedTimer timer(seconds.contact);
            if (add_pairs(m_contact->swept())) {
                refresh_pairs(false);
            }
        }
        load_positions(x);
        if (m_contact) {
            Kokkos::deep_copy(m_x_ck, x); // the step bound certified the boundary's advance
        }
    }
    return alpha >= 1.0;
}

bool StencilDescent::add_pairs(const contact::PairList& found) {
    // B only grows within a step (spec §5.1). A swept candidate joins B when it comes within d̂ somewhere
    // on the contact model's segment positions() → positions() + step() (proximity and CCD hits: additive
    // CCD with minimum separation d̂), with ŝ_i = max(ŝ, s_i) at the segment's start (the last certified
    // state) and κ_i = κ d̂ / d̂_i. Broad-phase candidates that stay farther apart are left out: their
    // customized barrier would act from wherever they are. Every rank finds the pairs touching its owned
    // rows; all of them are gathered, so every rank holds the same B (identical entries: each is computed
    // from the same positions wherever it is found).
    grow(m_found_distance, std::max(1, found.count), "intact::solver::stencil_found_distance");
    const Kokkos::View<double*, MemSpace> distance = m_found_distance;
    {
        const auto kind = found.kind;
        const auto rows = found.rows;
        const auto xs = m_contact->positions();
        const auto ps = m_contact->step();
        const auto topology = m_contact->topology();
        const double dhat = m_contact->dhat();
        Kokkos::parallel_for(
            "intact::solver::stencil_found_distance", Kokkos::RangePolicy<ExecSpace>(0, found.count),
            KOKKOS_LAMBDA(const int k) {
                const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
                const double s = contact::pair_squared_distance(kind(k), r, xs, topology);
                KVec3 start[4], step[4];
                contact::pair_positions(kind(k), r, xs, start);
                contact::pair_positions(kind(k), r, ps, step);
                bool near = s < dhat * dhat;
                if (!near && kind(k) == contact::k_point_plane) {
                    const KVec3 n = contact::pair_plane_normal(kind(k), r, topology);
                    near = n.dot(start[0] + step[0] - start[1] - step[1]) < dhat;
                } else if (!near) {
                    double toi = 1.0;
                    near =
                        kind(k) == contact::k_point_triangle
                            ? kernels::point_triangle_ccd(
                                  start[0], start[1], start[2], start[3], start[0] + step[0],
                                  start[1] + step[1], start[2] + step[2], start[3] + step[3], dhat, 1.0, toi)
                            : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3],
                                                     start[0] + step[0], start[1] + step[1],
                                                     start[2] + step[2], start[3] + step[3], dhat, 1.0, toi);
                }
                distance(k) = near ? s : -1.0;
            });
    }
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), found.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), found.rows);
    const auto s = Kokkos::create_mirror_view_and_copy(HostSpace(), distance);
    std::vector<int> keys;
    std::vector<double> squared;
    for (int k = 0; k < found.count; ++k) {
        const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
        if (s(k) >= 0.0 && m_pair_set.count(pair_key(kind(k), r)) == 0) {
            const int key[5] = {kind(k), r[0], r[1], r[2], r[3]};
            keys.insert(keys.end(), key, key + 5);
            squared.push_back(s(k));
        }
    }
    int size = 1;
    MPI_Comm_size(m_parts.comm, &size);
    if (size > 1) {
        const int mine = static_cast<int>(squared.size());
        std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size), 0);
        INTACT_CHECK_MPI(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, m_parts.comm));
        int total = 0;
        for (int r = 0; r < size; ++r) {
            displs[static_cast<std::size_t>(r)] = total;
            total += counts[static_cast<std::size_t>(r)];
        }
        std::vector<double> all_squared(static_cast<std::size_t>(total));
        INTACT_CHECK_MPI(MPI_Allgatherv(squared.data(), mine, MPI_DOUBLE, all_squared.data(), counts.data(),
                                        displs.data(), MPI_DOUBLE, m_parts.comm));
        for (int r = 0; r < size; ++r) {
            counts[static_cast<std::size_t>(r)] *= 5;
            displs[static_cast<std::size_t>(r)] *= 5;
        }
        std::vector<int> all_keys(static_cast<std::size_t>(5 * total));
        INTACT_CHECK_MPI(MPI_Allgatherv(keys.data(), 5 * mine, MPI_INT, all_keys.data(), counts.data(),
                                        displs.data(), MPI_INT, m_parts.comm));
        keys.swap(all_keys);
        squared.swap(all_squared);
    }
    const double s_hat = m_contact->s_hat();
    bool grew = false;
    for (std::size_t k = 0; k < squared.size(); ++k) {
        const int rows_k[4] = {keys[5 * k + 1], keys[5 * k + 2], keys[5 * k + 3], keys[5 * k + 4]};
        const PairKey key = pair_key(keys[5 * k], rows_k);
        if (m_pair_set.count(key) == 0) {
            const double s_i = std::max(s_hat, squared[k]);
            m_pair_set[key] = {s_i,
                               kappa() * std::sqrt(s_hat / s_i),
                               -1,
                               keys[5 * k],
                               {rows_k[0], rows_k[1], rows_k[2], rows_k[3]}};
            grew = true;
        }
    }
    return grew;
}

void StencilDescent::refresh_pairs(bool step_start) {
    int size = 1;
    MPI_Comm_size(m_parts.comm, &size);
    if (size > 1) {
        // What the layout must hold beyond the LocalMesh: the rows of every pair of B (their positions), and
        // with its element ring each row of a pair that touches an owned node (so that the pair's stencil,
        // with its line-search energy, is complete here).
        const auto& surface = m_contact->surface();
        std::map<GlobalId, RemoteNode> rings, points;
        for (const auto& entry : m_pair_set) {
            const PairValues& pair = entry.second;
            const int rows[4] = {pair.rows[0], pair.rows[1], pair.rows[2], pair.rows[3]};
            int stencil[4];
            const int count = contact::pair_stencil_rows(pair.kind, rows, stencil);
            bool touches_owned = false;
            for (int j = 0; j < count; ++j) {
                touches_owned =
                    touches_owned ||
                    (stencil[j] >= 0 && stencil[j] < surface.num_body_vertices() && surface.owns(stencil[j]));
            }
            for (int j = 0; j < count; ++j) {
                const int r = stencil[j];
                if (r < 0 || r >= surface.num_body_vertices()) {
                    continue;
                }
                const int n = m_row_node[static_cast<std::size_t>(r)];
                if (n >= 0 && n < m_data.num_local) {
                    continue; // a LocalMesh node: its ring is here already
                }
                const GlobalId gid = surface.vertex_gid()[static_cast<std::size_t>(r)];
                (touches_owned ? rings : points)[gid] = RemoteNode{
                    gid, surface.owner_of(r), surface.rest_positions()[static_cast<std::size_t>(r)]};
            }
        }
        // Missing: a ring vertex that is no stencil vertex here, or a point that is no layout node.
        std::set<GlobalId> ring_ids, point_ids;
        bool missing = false;
        for (const auto& [gid, node] : rings) {
            ring_ids.insert(gid);
            missing = missing || m_rings.count(gid) == 0;
        }
        for (const auto& [gid, node] : points) {
            if (rings.count(gid) == 0) {
                point_ids.insert(gid);
                missing = missing || m_layout_gids.count(gid) == 0;
            }
        }
        const bool stale = step_start && (ring_ids != m_rings || point_ids != m_points);
        if (comm::allreduce_max(m_parts.comm, std::int64_t{missing || stale ? 1 : 0}) > 0) {
            std::vector<RemoteNode> ring_list, point_list;
            for (GlobalId gid : ring_ids) {
                ring_list.push_back(rings.at(gid));
            }
            for (GlobalId gid : point_ids) {
                point_list.push_back(points.at(gid));
            }
            rebuild_layout(ring_list, point_list);
            m_rings = std::move(ring_ids);
            m_points = std::move(point_ids);
        }
    }
    upload_pairs();
}

void StencilDescent::rebuild_layout(const std::vector<RemoteNode>& rings,
                                    const std::vector<RemoteNode>& points) {
    m_layout = build_stencil_layout(m_parts.comm, m_local, m_parts.scene.halo_transport, rings, points);
    release_static_data();
    build_elastic();
    build_static_data();
    if (m_problem) {
        load_state(m_x, *m_problem);
    }
}

void StencilDescent::upload_pairs() {
    StencilData& d = m_data;
    d.num_pairs = static_cast<int>(m_pair_set.size());
    grow(d.pairs.kind, d.num_pairs, "intact::solver::stencil_pair_kind");
    grow(d.pairs.rows, d.num_pairs, "intact::solver::stencil_pair_rows");
    grow(d.pair_s_hat, d.num_pairs, "intact::solver::stencil_pair_s_hat");
    grow(d.pair_kappa, d.num_pairs, "intact::solver::stencil_pair_kappa");
    grow(d.pair_friction, d.num_pairs, "intact::solver::stencil_pair_friction");
    grow(d.pair_counted, d.num_pairs, "intact::solver::stencil_pair_counted");
    d.pairs.count = d.num_pairs;
    auto host_kind = Kokkos::create_mirror_view(d.pairs.kind);
    auto host_rows = Kokkos::create_mirror_view(d.pairs.rows);
    auto host_s_hat = Kokkos::create_mirror_view(d.pair_s_hat);
    auto host_kappa = Kokkos::create_mirror_view(d.pair_kappa);
    auto host_friction = Kokkos::create_mirror_view(d.pair_friction);
    auto host_counted = Kokkos::create_mirror_view(d.pair_counted);
    const auto& surface = m_contact->surface();
    const auto& gid = surface.vertex_gid();
    int p = 0;
    for (const auto& [key, values] : m_pair_set) {
        host_kind(p) = values.kind;
        for (int c = 0; c < 4; ++c) {
            host_rows(p, c) = values.rows[static_cast<std::size_t>(c)];
        }
        host_s_hat(p) = values.s_hat;
        host_kappa(p) = values.kappa;
        host_friction(p) = values.friction;
        // Counted where the pair's lowest-id mesh node is owned (that rank's layout holds all its rows).
        int stencil[4];
        contact::pair_stencil_rows(values.kind, values.rows.data(), stencil);
        int lowest = -1;
        for (const int row : stencil) {
            if (row >= 0 && !surface.is_obstacle(row) &&
                (lowest < 0 || gid[static_cast<std::size_t>(row)] < gid[static_cast<std::size_t>(lowest)])) {
                lowest = row;
            }
        }
        const int node = lowest < 0 ? -1 : m_row_node[static_cast<std::size_t>(lowest)];
        host_counted(p) = node >= 0 && node < d.num_owned ? 1 : 0;
        ++p;
    }
    Kokkos::deep_copy(d.pairs.kind, host_kind);
    Kokkos::deep_copy(d.pairs.rows, host_rows);
    Kokkos::deep_copy(d.pair_s_hat, host_s_hat);
    Kokkos::deep_copy(d.pair_kappa, host_kappa);
    Kokkos::deep_copy(d.pair_friction, host_friction);
    Kokkos::deep_copy(d.pair_counted, host_counted);
    rebuild_pair_adjacency();
}

void StencilDescent::lag_friction() {
    // Lagged friction per pair (spec §10 item 18, IPC's lagged potential): at the step's start every pair
    // of B becomes a friction pair whose normal force is its own customized barrier's, N_i = −2 κ_i w d
    // b′(d²; ŝ_i) at xᵗ (zero outside ŝ_i), with the closest-point coefficients and tangent basis there.
    // Slips count from the state before the prescribed rows arrived (m_x_start, m_obstacle_start), so a
    // moving obstacle drags what rests on it. Pairs that join B later get friction at the next lag.
    StencilData& d = m_data;
    fill_surface(on_layout(m_x_start), m_obstacle_start, m_friction_start);
    grow(m_normal_force, std::max(1, d.num_pairs), "intact::solver::stencil_normal_force");
    const StencilData data = d;
    const auto force = m_normal_force;
    Kokkos::parallel_for(
        "intact::solver::stencil_normal_forces", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const int rows[4] = {data.pairs.rows(p, 0), data.pairs.rows(p, 1), data.pairs.rows(p, 2),
                                 data.pairs.rows(p, 3)};
            const int kind = data.pairs.kind(p);
            const double s_hat = data.pair_s_hat(p);
            double distance = 0.0, weight = 1.0;
            if (kind == contact::k_point_plane) {
                distance = contact::plane_signed_distance(rows, data.xs, data.topology);
            } else {
                distance = ::sqrt(contact::pair_squared_distance(kind, rows, data.xs, data.topology));
                if (kind == contact::k_edge_edge) {
                    KVec3 x[4];
                    contact::pair_positions(kind, rows, data.xs, x);
                    weight = kernels::edge_edge_mollifier(
                        x[0], x[1], x[2], x[3], contact::pair_mollifier_threshold(kind, rows, data.topology));
                }
            }
            force(p) = -2.0 * data.pair_kappa(p) * weight * distance *
                       kernels::barrier_first_derivative(distance * distance, s_hat);
        });
    m_friction->lag(d.pairs, m_friction_start, d.xs, d.topology, m_normal_force, m_h);
    int p = 0;
    for (auto& entry : m_pair_set) {
        entry.second.friction = p++;
    }
    auto host_friction = Kokkos::create_mirror_view(d.pair_friction);
    for (int k = 0; k < d.num_pairs; ++k) {
        host_friction(k) = k;
    }
    Kokkos::deep_copy(d.pair_friction, host_friction);
    d.friction = m_friction->lagged();
}

void StencilDescent::rebuild_pair_adjacency() {
    StencilData& d = m_data;
    const auto& surface = m_contact->surface();
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), d.pairs.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), d.pairs.rows);
    grow(d.pair_nodes, d.num_pairs, "intact::solver::stencil_pair_nodes");
    auto nodes = Kokkos::create_mirror_view(d.pair_nodes);
    std::vector<std::vector<std::array<int, 2>>> around(static_cast<std::size_t>(d.num_nodes));
    for (int p = 0; p < d.num_pairs; ++p) {
        const int r[4] = {rows(p, 0), rows(p, 1), rows(p, 2), rows(p, 3)};
        int stencil[4];
        contact::pair_stencil_rows(kind(p), r, stencil);
        for (int j = 0; j < 4; ++j) {
            const int row = stencil[j];
            const int n = row >= 0 && row < surface.num_body_vertices()
                              ? m_row_node[static_cast<std::size_t>(row)]
                              : -1;
            nodes(p, j) = n >= 0 && n < d.num_nodes ? n : -1;
            if (nodes(p, j) >= 0) {
                around[static_cast<std::size_t>(nodes(p, j))].push_back({p, j});
            }
        }
    }
    Kokkos::deep_copy(Kokkos::subview(d.pair_nodes, std::make_pair(0, d.num_pairs), Kokkos::ALL),
                      Kokkos::subview(nodes, std::make_pair(0, d.num_pairs), Kokkos::ALL));
    // The edges among each pair's vertices (a triangle's, an edge's own), for its elastic blocks.
    grow(d.pair_edges, d.num_pairs, "intact::solver::stencil_pair_edges");
    auto pair_edges = Kokkos::create_mirror_view(d.pair_edges);
    for (int p = 0; p < d.num_pairs; ++p) {
        for (int a = 0; a < 4; ++a) {
            for (int b = a + 1; b < 4; ++b) {
                const int na = nodes(p, a), nb = nodes(p, b);
                int edge = -1;
                if (na >= 0 && nb >= 0 && na != nb) {
                    const auto it = m_edge_of.find(edge_key(na, nb));
                    edge = it == m_edge_of.end() ? -1 : it->second;
                }
                pair_edges(p, pair_slot(a, b)) = edge;
            }
        }
    }
    Kokkos::deep_copy(Kokkos::subview(d.pair_edges, std::make_pair(0, d.num_pairs), Kokkos::ALL),
                      Kokkos::subview(pair_edges, std::make_pair(0, d.num_pairs), Kokkos::ALL));
    auto offsets = Kokkos::create_mirror_view(d.pair_offsets);
    offsets(0) = 0;
    for (int v = 0; v < d.num_nodes; ++v) {
        offsets(v + 1) = offsets(v) + static_cast<int>(around[static_cast<std::size_t>(v)].size());
    }
    grow(d.pair_entries, std::max(1, offsets(d.num_nodes)), "intact::solver::stencil_pair_entries");
    auto entries = Kokkos::create_mirror_view(d.pair_entries);
    for (int v = 0; v < d.num_nodes; ++v) {
        int k = offsets(v);
        for (const auto& entry : around[static_cast<std::size_t>(v)]) {
            entries(k, 0) = entry[0];
            entries(k, 1) = entry[1];
            ++k;
        }
    }
    Kokkos::deep_copy(d.pair_offsets, offsets);
    Kokkos::deep_copy(d.pair_entries, entries);
    grow(d.pair_steps, d.num_pairs, "intact::solver::stencil_pair_steps");
    d.pair_derivatives.resize(d.num_pairs, true);
}

void StencilDescent::start_pairs(const NodeField& x) {
    // The pair set B of the step (spec §4 steps 2–3): κ from IPC's adaptive start at xᵗ, then every pair
    // within d̂ somewhere on the inertial path xᵗ → x̂ (proximity and CCD in one swept query).
    m_data.num_pairs = 0;
    m_data.pairs.count = 0;
    m_pair_set.clear();
    Kokkos::deep_copy(m_data.pair_offsets, 0);
    m_contact->surface().begin_step(x);
    // κ from ∇E at xᵗ (inertia, load, elasticity; no pairs yet), which the stencil data give without the
    // shared potential's element gradients and matrix pattern (96 + about 100 bytes per tetrahedron).
    elastic_derivatives(false);
    vertex_derivatives();
    start_barrier_stiffness(m_parts.comm, m_data.gradient, m_parts.potential, *m_contact, m_parts.boundary, x,
                            m_kappa_stencils, m_product, *m_kappa);
    m_kappa->reset_distance(m_contact->min_squared_distance());
    const NodeField path = m_delta;
    const NodeField x_hat = m_data.x_hat;
    Kokkos::parallel_for(
        "intact::solver::stencil_inertial_path", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                path(v, i) = x_hat(v, i) - x(v, i);
            }
        });
    m_contact->update_segment(x, m_parts.boundary.obstacle_positions(), path,
                              m_parts.boundary.obstacle_step());
    add_pairs(m_contact->swept());
    refresh_pairs(true);
}

void StencilDescent::save(io::CheckpointWriter& out) const {
    out.put_values("stencil_descent/sweep_counter", {static_cast<double>(m_sweep_counter)});
}

void StencilDescent::restore(const io::CheckpointReader& in) {
    m_sweep_counter = static_cast<long long>(in.values("stencil_descent/sweep_counter").at(0));
}

StepResult StencilDescent::solve(const NodeField& x, const StepProblem& problem) {
    StepResult result;
    PhaseSeconds& seconds = result.seconds;
    BoundaryMotion& boundary = m_parts.boundary;

    m_h = problem.h;
    m_x = x;
    m_problem = &problem;
    struct ForgetProblem {
        const StepProblem*& problem;
        ~ForgetProblem() { problem = nullptr; }
    } forget{m_problem}; // also when the step throws
    if (m_friction) {
        // Friction measures slips from xᵗ as it is before prescribed rows and obstacles arrive.
        Kokkos::deep_copy(m_x_start, x);
        Kokkos::deep_copy(m_obstacle_start, boundary.obstacle_positions());
    }

    // 0. Prescribed nodes and obstacles towards their targets (then fixed rows): the whole way when that
    //    is safe, else the safe fraction now and the rest after sweeps have moved the free rows aside.
    bool arrived = advance_boundary(x, seconds, false);

    // 1. The step's state on the stencil layout, and the pair set B with its customized barriers.
    load_state(x, problem);
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        start_pairs(x);
        if (m_friction) {
            lag_friction();
            result.friction_lags = 1;
        }
    }

    if (m_contact) {
        Kokkos::deep_copy(m_x_ck, x); // certified: the step bound placed the boundary, xᵗ was
        m_since_ccd = 0;
    }

    // 2. The absolute floor of the convergence test: the gradient of a uniform residual acceleration ε_a.
    double mass_squared = 0.0;
    {
        const StencilData d = m_data;
        Kokkos::parallel_reduce(
            "intact::solver::stencil_mass_norm", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
            KOKKOS_LAMBDA(const int v, double& sum) { sum += 3.0 * d.free(v) * d.mass(v) * d.mass(v); },
            mass_squared);
    }
    const double floor = m_settings.stop.acceleration * problem.h * problem.h *
                         std::sqrt(comm::allreduce_sum(m_parts.comm, mass_squared));

    // The scale of the relative test: ‖g‖₂ at the step's start xᵗ (prescribed rows moved as far as safe). The
    // spec's r₀ is ‖g(x⁰)‖₂ after the warm start; the test below uses the smaller of the two, because the
    // warm start leaves elasticity out, and on a stiff body the strain it leaves inflates ‖g(x⁰)‖₂ by orders
    // of magnitude, so that the relative test ended steps before their forces had acted (a 1e8 Pa block on a
    // 30° slope slid at 0.45 of Coulomb's acceleration at dt = 0.005 s, and not at all at 0.01 s).
    double start_norm = 0.0;
    {
        ScopedTimer timer(seconds.assembly);
        elastic_derivatives(false); // again: start_pairs may have rebuilt the layout
        if (m_contact) {
            pair_derivatives();
        }
        vertex_derivatives();
        start_norm = std::sqrt(gradient_norm_squared());
    }

    // 3. Warm start (spec §4): Jacobi sweeps on inertia, load and barriers alone.
    if (m_options.warm_start_sweeps > 0) {
        m_data.elastic = 0.0;
        double warm_start_norm = 0.0;
        result.warm_start_sweeps = 0;
        for (int sweep = 0;; ++sweep) {
            {
                ScopedTimer timer(seconds.assembly);
                if (m_contact) {
                    pair_derivatives();
                }
                vertex_derivatives();
            }
            const double norm = std::sqrt(gradient_norm_squared());
            warm_start_norm = sweep == 0 ? norm : warm_start_norm;
            if (norm <= k_warm_start_tolerance * warm_start_norm + floor ||
                sweep >= m_options.warm_start_sweeps) {
                break;
            }
            {
                ScopedTimer timer(seconds.linear_solve);
                warm_start_update(m_delta);
                m_parts.halo.gather(m_delta);
            }
            if (!take_step(x, seconds)) {
                break; // the update would raise the step's potential: the sweeps take over from here
            }
            result.warm_start_sweeps = sweep + 1;
        }
        m_data.elastic = 1.0;
    }

    // 4. Hybrid sweeps until ‖g‖₂ ≤ tolerance r₀ + floor. With friction, IPC's lag loop: lag again at the
    //    solution and sweep on, at most contact.friction_iterations solves, until a new lag leaves the test
    //    met at once; `max_sweeps` bounds the sweeps of all of them together.
    double initial_norm = 0.0;
    int sweeps = 0;
    bool relaxing = !arrived;   // the first test after an advance only records ‖g‖
    double advanced_norm = 0.0; // ‖g‖ right after the boundary's last advance
    int advanced_at = 0;        // `sweeps` at the boundary's last advance
    for (int lag = 1;; ++lag) {
        bool met_at_once = false;
        for (int sweep = 0;; ++sweep) {
            {
                ScopedTimer timer(seconds.assembly);
                elastic_derivatives(true);
                if (m_contact) {
                    pair_derivatives();
                }
                vertex_derivatives();
            }
            const double norm = std::sqrt(gradient_norm_squared());
            initial_norm = sweeps == 0 && lag == 1 ? std::min(norm, start_norm) : initial_norm;
            result.residual = norm;
            result.residual_acceleration = mass_scaled_max_norm(m_parts.comm, m_data.gradient, m_data.mass,
                                                                m_data.free, m_data.num_owned) /
                                           (problem.h * problem.h);
            const bool met = !relaxing && norm <= m_options.tolerance * initial_norm + floor;
            if (relaxing) {
                advanced_norm = norm;
            }
            relaxing = false;
            const bool settled =
                !arrived && sweeps > advanced_at && norm <= k_boundary_settling * advanced_norm;
            if ((met || settled || sweeps >= m_options.max_sweeps) && m_since_ccd > 0) {
                // A step ends, and the boundary advances, only from a state a regular CCD certified.
                certify(x, seconds);
                continue;
            }
            if ((met || settled) && !arrived && sweeps < m_options.max_sweeps) {
                // Converged with the prescribed rows short of their targets: they take the next safe
                // fraction of their motion, and the sweeps go on from there (a continuation: the free rows
                // settle around each position the boundary reaches).
                arrived = advance_boundary(x, seconds, true);
                advanced_at = sweeps;
                relaxing = true; // at least one sweep before the next test
                continue;
            }
            if (met && arrived) {
                result.converged = true;
                met_at_once = sweep == 0;
                break;
            }
            if (sweeps >= m_options.max_sweeps) {
                log::warn() << "stencil_descent: the step ended after solver.stencil_descent.max_sweeps = "
                            << m_options.max_sweeps << " sweeps with ‖g‖ = " << norm << " (start "
                            << initial_norm << ", goal " << m_options.tolerance * initial_norm + floor << ")"
                            << (arrived ? "" : " and the prescribed motion short of its target");
                break;
            }
            // K2: every stencil's local step from the frozen state; K3: Gauss–Seidel for the sweep's
            // color, Jacobi means elsewhere.
            {
                ScopedTimer timer(seconds.linear_solve);
                const int schemes = m_coloring.schemes;
                const int scheme = static_cast<int>(m_sweep_counter % schemes);
                const int color = static_cast<int>((m_sweep_counter / schemes) % m_coloring.colors);
                sweep_update(scheme, color, m_delta);
                m_parts.halo.gather(m_delta);
            }
            ++m_sweep_counter;
            result.iterations = ++sweeps;
            take_step(x, seconds);
        }
        if (!m_friction || !result.converged || met_at_once || lag >= m_settings.friction_iterations) {
            break;
        }
        ScopedTimer timer(seconds.contact);
        lag_friction();
        result.friction_lags = lag + 1;
        result.converged = false;
    }

    // A step cannot end with the boundary short of where the scene puts it: the output, `intact check` and
    // the next step place prescribed rows and obstacles at their targets. (`arrived` comes from global
    // MINs, so every rank stops here alike.)
    INTACT_REQUIRE(arrived,
                   m_parts.scene.file
                       << ": stencil_descent: the prescribed nodes and obstacles did not reach their "
                          "targets within solver.stencil_descent.max_sweeps = "
                       << m_options.max_sweeps
                       << " sweeps (they advance as far as contact gaps and element inversion allow, and "
                          "the sweeps did not make room for the rest); use a smaller time.dt, a larger "
                          "solver.stencil_descent.max_sweeps, or solver.type \"ipc\"");

    // 5. What the step ends with.
    result.sweeps = result.iterations;
    result.barrier_stencils = static_cast<long long>(m_pair_set.size()); // every rank holds all of B
    result.grey_fraction = m_coloring.grey_fraction();
    if (m_contact) {
        ScopedTimer timer(seconds.contact);
        m_contact->update(x, boundary.obstacle_positions());
        result.contact_pairs = m_contact->count_active_pairs();
        result.min_distance = std::sqrt(m_contact->min_squared_distance());
        result.kappa = kappa();
    }
    return result;
}

} // namespace intact::solver
