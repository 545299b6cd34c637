#pragma once
/// @file stencil_terms.hpp
/// @brief Private to src/solver/stencil_descent/: the device helpers that evaluate the terms of one stencil:
/// the slots, vertex pairs and edges of a stencil, each element's energy change and derivatives with its own
/// material, and the weighted barrier of a pair of B with its lagged friction.

#include "kernels/elastic_element.hpp"
#include "kernels/material_fixed_corotated.hpp"
#include "kernels/material_linear.hpp"
#include "kernels/material_neo_hookean.hpp"
#include "kernels/material_stable_neo_hookean.hpp"
#include "kernels/material_stvk.hpp"
#include "src/contact/pair_potential.hpp"
#include "src/contact/pair_toi.hpp"
#include "src/solver/stencil_descent.hpp"

#include <cstdint>

namespace intact::solver::stencil_detail {

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
inline std::uint64_t edge_key(int a, int b) {
    return (static_cast<std::uint64_t>(std::min(a, b)) << 32) | static_cast<std::uint32_t>(std::max(a, b));
}

// Index of the vertex pair (a, b), a ≠ b, among (0,1), (0,2), (0,3), (1,2), (1,3), (2,3).
KOKKOS_INLINE_FUNCTION int pair_slot(int a, int b) {
    const int lo = a < b ? a : b;
    const int hi = a < b ? b : a;
    return lo == 0 ? hi - 1 : lo + hi;
}

// The four nodes of stencil k (elements first, then pairs, then codimensional stencils); −1 for a slot
// that is no stencil vertex.
KOKKOS_INLINE_FUNCTION void stencil_nodes(const StencilData& d, int k, int (&nodes)[4]) {
    const int pair = k - d.num_elements;
    const int codim = pair - d.num_pairs;
    for (int a = 0; a < 4; ++a) {
        nodes[a] = k < d.num_elements ? d.tets(k, a)
                   : codim < 0        ? d.pair_nodes(pair, a)
                                      : d.codim_nodes(codim, a);
    }
}

// The codimensional stencils around node v: [begin, end) in codim_entries (none past the LocalMesh's rows).
KOKKOS_INLINE_FUNCTION void codim_range(const StencilData& d, int v, int& begin, int& end) {
    begin = end = 0;
    if (d.num_codim > 0 && v >= 0 && v < d.num_local) {
        begin = d.codim_offsets(v);
        end = d.codim_offsets(v + 1);
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

// The codimensional energy change (unweighted, J) of stencil k's local problem at its first slot a's vertex
// v when stencil `nodes` move by alpha · dir: the stencils around v other than k by their quadratic model
// from v's sums, α gᵀδ + ½ α² δᵀ D δ (g, D: codim_sums less k's own part); and once, at slot 0, stencil k's
// own change when k is codimensional (codim_stencil_energy_change). Every rank has these terms for every
// stencil it holds, so the local steps agree across rank counts.
KOKKOS_INLINE_FUNCTION double codim_model_change(
    const StencilData& d, int k, const int (&nodes)[4], int a, const Vec12& dir, double alpha) {
    const int v = nodes[a];
    const int c = k - d.num_elements - d.num_pairs; // ≥ 0: a codimensional stencil
    double g[3], D[3][3];
    for (int i = 0; i < 3; ++i) {
        g[i] = d.codim_sums(v, i);
        for (int j = 0; j < 3; ++j) {
            D[i][j] = d.codim_sums(v, 3 + 3 * i + j);
        }
    }
    double change = 0.0;
    if (c >= 0) {
        for (int i = 0; i < 3; ++i) {
            g[i] -= d.codim_gradient(c, 3 * a + i);
            for (int j = 0; j < 3; ++j) {
                D[i][j] -= d.codim_hessian(c, 3 * a + i, 3 * a + j);
            }
        }
        if (a == 0) {
            KVec3 q[4], step[4];
            for (int b = 0; b < 4; ++b) {
                const int n = d.codim_nodes(c, b) >= 0 ? d.codim_nodes(c, b) : d.codim_nodes(c, 0);
                q[b] = row3(d.x, n);
                const int s = d.codim_nodes(c, b) >= 0 ? b : 0;
                step[b] = alpha * KVec3(dir(3 * s), dir(3 * s + 1), dir(3 * s + 2));
            }
            change +=
                codim_stencil_energy_change(codim_kind_of(d.codim_begin, c), d.codim_parameters, c, q, step);
        }
    }
    for (int i = 0; i < 3; ++i) {
        const double delta_i = alpha * dir(3 * a + i);
        change += g[i] * delta_i;
        for (int j = 0; j < 3; ++j) {
            change += 0.5 * delta_i * D[i][j] * alpha * dir(3 * a + j);
        }
    }
    return change;
}

// Weighted barrier κ_i b_i of pair p with stencil positions x (pair_positions order), the energy the pair
// stores (c h² J); the derivatives when order > energy.
KOKKOS_INLINE_FUNCTION double
pair_barrier(const StencilData& d, int p, const KVec3 (&x)[4], int order, Vec12& g, Mat12& H) {
    const int kind = d.pairs.kind(p);
    const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2), d.pairs.rows(p, 3)};
    double b = 0.0;
    const contact::BarrierPhi phi{d.pair_s_hat(p)};
    const double offset = contact::pair_offset(kind, rows, d.topology); // ξ: the barrier acts on d − ξ
    if (kind == contact::k_point_plane) {
        b = contact::plane_potential(x[0], x[1], contact::pair_plane_normal(kind, rows, d.topology), phi,
                                     order, g, H, offset);
    } else {
        b = contact::pair_potential(kind, x, phi, contact::pair_mollifier_threshold(kind, rows, d.topology),
                                    order, contact::HessianProjection::by_case, g, H, offset);
    }
    const double kappa = d.pair_kappa(p);
    if (order != contact::k_value) {
        g *= kappa;
        if (order == contact::k_hessian) {
            H *= kappa;
        }
    }
    return kappa * b;
}

// pair_barrier with the pair's lagged friction on the same stencil slots (spec §10 item 18): the pair's
// term of the step's potential.
KOKKOS_INLINE_FUNCTION double
pair_term(const StencilData& d, int p, const KVec3 (&x)[4], int order, Vec12& g, Mat12& H) {
    double b = pair_barrier(d, p, x, order, g, H);
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

} // namespace intact::solver::stencil_detail
