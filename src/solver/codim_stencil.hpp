#pragma once
/// @file codim_stencil.hpp
/// @brief The energy of one codimensional stencil (a membrane triangle, a bending hinge, a rod segment or
/// a rod bending vertex) with its gradient and Hessian in the 12-entry layout of CodimTerm. Device code
/// shared by CodimTerm (assembly, energies) and stencil descent (local steps and their line search).

#include "kernels/hinge_bending.hpp"
#include "kernels/rod_energy.hpp"
#include "kernels/shell_membrane.hpp"
#include "src/core/types.hpp"

namespace intact::solver {

/// The kinds of codimensional stencil, in CodimTerm's order.
enum CodimStencilKind : int {
    k_codim_triangle = 0,
    k_codim_hinge = 1,
    k_codim_segment = 2,
    k_codim_rod_vertex = 3
};

/// Rest data per stencil: triangles D_m⁻¹ (4, row-major), A h, μ, λ, model (0 StVK, 1 neo-Hookean);
/// hinges θ̄, w; segments L̄, k_s; rod vertices κ̄, w.
using CodimParameters = Kokkos::View<double* [8], Kokkos::LayoutRight, MemSpace>;

/// Energy of stencil s of `kind` at corners x (J), and optionally its gradient and Hessian (PSD-projected
/// when `project`) in the 12-entry layout (corner a, coordinate i at 3a + i; unused corners zero).
KOKKOS_INLINE_FUNCTION double codim_stencil_energy(int kind,
                                                   const CodimParameters& p,
                                                   int s,
                                                   const kernels::Vec3 x[4],
                                                   kernels::Vec12* g,
                                                   kernels::Mat12* h,
                                                   bool project = true) {
    using namespace kernels;
    if (g) {
        g->setZero();
    }
    if (h) {
        h->setZero();
    }
    if (kind == k_codim_triangle) {
        Mat2 Dm_inv;
        Dm_inv << p(s, 0), p(s, 1), p(s, 2), p(s, 3);
        Vec9 g9;
        Mat9 h9;
        const double weight = p(s, 4);
        const double e = p(s, 7) == 0.0
                             ? membrane_element(MembraneStVK{p(s, 5), p(s, 6)}, x, Dm_inv, weight,
                                                g ? &g9 : nullptr, h ? &h9 : nullptr, project)
                             : membrane_element(MembraneNeoHookean{p(s, 5), p(s, 6)}, x, Dm_inv, weight,
                                                g ? &g9 : nullptr, h ? &h9 : nullptr, project);
        if (g) {
            g->segment<9>(0) = g9;
        }
        if (h) {
            h->block<9, 9>(0, 0) = h9;
        }
        return e;
    }
    if (kind == k_codim_hinge) {
        return hinge_element(x, p(s, 0), p(s, 1), g, h, project);
    }
    if (kind == k_codim_segment) {
        Vec6 g6;
        Mat6 h6;
        const double e =
            rod_stretch_element(x, p(s, 0), p(s, 1), g ? &g6 : nullptr, h ? &h6 : nullptr, project);
        if (g) {
            g->segment<6>(0) = g6;
        }
        if (h) {
            h->block<6, 6>(0, 0) = h6;
        }
        return e;
    }
    Vec9 g9;
    Mat9 h9;
    const double e = rod_bend_element(x, p(s, 0), p(s, 1), g ? &g9 : nullptr, h ? &h9 : nullptr, project);
    if (g) {
        g->segment<9>(0) = g9;
    }
    if (h) {
        h->block<9, 9>(0, 0) = h9;
    }
    return e;
}

/// Change of stencil s's energy (J) from corners x to x + step, keeping the digits of small changes, as
/// kernels::elastic_energy_change does for tets: the plain difference carries the rounding of the energy
/// (about μ A h ε for a membrane near rest), more than a converging step gains on a stiff sheet. For a
/// small step (every corner moving at most 1e-3 of the distance between the first two corners) whose plain
/// difference is below 1e-9 of the two energies (so it has lost at least 7 of its digits), it integrates the
/// gradient along the step, ∫₀¹ ∇E(x + t step) · step dt, by 2-point Gauss–Legendre (error of relative
/// order 1e-12 at that step); otherwise it takes the difference (+∞ when the trial folds a rod vertex or
/// collapses a neo-Hookean triangle). `energy_before`, when given, receives E(x).
KOKKOS_INLINE_FUNCTION double codim_stencil_energy_change(int kind,
                                                          const CodimParameters& p,
                                                          int s,
                                                          const kernels::Vec3 x[4],
                                                          const kernels::Vec3 step[4],
                                                          double* energy_before = nullptr) {
    using kernels::Vec3;
    Vec3 trial[4];
    double largest = 0.0;
    for (int a = 0; a < 4; ++a) {
        trial[a] = x[a] + step[a];
        const double moved = step[a].norm();
        largest = moved > largest ? moved : largest;
    }
    const double before = codim_stencil_energy(kind, p, s, x, nullptr, nullptr);
    if (energy_before) {
        *energy_before = before;
    }
    const double after = codim_stencil_energy(kind, p, s, trial, nullptr, nullptr);
    const double change = after - before;
    const double magnitude = (before < 0.0 ? -before : before) + (after < 0.0 ? -after : after);
    if (!kernels::is_finite(change) || (change < 0.0 ? -change : change) > 1e-9 * magnitude ||
        largest > 1e-3 * (x[1] - x[0]).norm()) {
        return change; // a change this large keeps its digits in the plain difference
    }
    constexpr double spread = 0.28867513459481287; // 1 / (2 √3): the 2-point rule's nodes on [0, 1]
    const double nodes[2] = {0.5 - spread, 0.5 + spread};
    double integral = 0.0;
    for (int q = 0; q < 2; ++q) {
        Vec3 at[4];
        for (int a = 0; a < 4; ++a) {
            at[a] = x[a] + nodes[q] * step[a];
        }
        kernels::Vec12 g;
        codim_stencil_energy(kind, p, s, at, &g, nullptr);
        double slope = 0.0;
        for (int a = 0; a < 4; ++a) {
            for (int i = 0; i < 3; ++i) {
                slope += g(3 * a + i) * step[a](i);
            }
        }
        integral += 0.5 * slope;
    }
    return integral;
}

/// The kind of stencil s from the first stencil of each kind (`begin[kind]`, CodimTerm's order) and the
/// end of the last.
KOKKOS_INLINE_FUNCTION int codim_kind_of(const int (&begin)[5], int s) {
    int kind = k_codim_triangle;
    while (kind < k_codim_rod_vertex && s >= begin[kind + 1]) {
        ++kind;
    }
    return kind;
}

} // namespace intact::solver
