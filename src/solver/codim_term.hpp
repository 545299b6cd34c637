#pragma once
/// @file codim_term.hpp
/// @brief Elastic energy of the codimensional bodies of one rank (shells and rods): membrane triangles,
/// bending hinges, rod segments and rod bending vertices, with per-stencil gradients, PSD-projected
/// Hessians and lumped masses.
///
/// Every element of a codimensional body is a stencil of at most four local nodes, stored in one list
/// with unused corners −1: triangles (3 nodes), then hinges (4), segments (2), rod vertices (3). Its
/// gradient (12) and Hessian (12×12) are written in the layout of ElasticTerm's per-tet derivatives (corner
/// a, coordinate i at 3a + i; zeros in unused corners), so the block matrix sums them per owned row in a
/// fixed order, exactly as it sums tets. Energies are summed over owned stencils only (each counted once
/// across ranks); derivatives are produced for all local stencils. Rest data are computed once on the
/// host; every per-stencil loop is a device kernel.

#include "src/core/types.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/codim_elements.hpp"
#include "src/solver/codim_stencil.hpp"

#include <array>
#include <utility>
#include <vector>

namespace intact::solver {

/// The elastic model of one codimensional body, SI units. Made from the scene (or by tests).
struct CodimMaterial {
    enum class Kind { none, shell, rod };
    enum class Membrane { stvk, neo_hookean };
    Kind kind = Kind::none;
    // Shells
    Membrane membrane = Membrane::stvk;
    double mu = 0.0;                ///< Lamé μ (Pa)
    double lambda = 0.0;            ///< plane-stress λ (Pa), kernels::plane_stress_lambda
    double thickness = 0.0;         ///< m
    double bending_stiffness = 0.0; ///< shells: k_b (J); rods: E I (N m²)
    // Rods
    double stretch_stiffness = 0.0; ///< E A (N)
    double radius = 0.0;            ///< m
    double density = 0.0;           ///< kg/m³
};

/// The CodimMaterial of every body of the scene (kind none for solids): shells get μ and the
/// plane-stress λ from E and ν, k_b = E h³/(12(1 − ν²)) unless given; rods E A = E π r² and
/// E I = E π r⁴/4 unless given.
std::vector<CodimMaterial> codim_materials(const io::Scene& scene);

class CodimTerm {
public:
    using Stencils = Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>;
    using StencilGradients = Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace>;
    using StencilHessians = Kokkos::View<double* [12][12], Kokkos::LayoutRight, MemSpace>;
    using StencilParameters = CodimParameters; ///< rest data per stencil (codim_stencil.hpp)

    /// @param rest_position per local node (m)
    /// @param elements local node indices, owned first in each list
    /// @param materials per body (indexed by the elements' body indices)
    CodimTerm(const std::vector<Vec3>& rest_position,
              const CodimElements& elements,
              const std::vector<CodimMaterial>& materials);

    /// Σ over owned stencils of their energies at x (J; +∞ if a neo-Hookean membrane triangle is
    /// collapsed or a rod vertex folded back). Device work, host result. This rank only.
    double energy(const NodeField& x) const;
    /// Σ over owned stencils of E(trial) − E(x), each stencil's change taken on its own and keeping the
    /// digits of small ones (codim_stencil_energy_change), and Σ |E(x)|. This rank only.
    std::pair<double, double> energy_change(const NodeField& x, const NodeField& trial) const;
    /// Gradient (12) and, with `hessians`, Hessian (12×12) of every local stencil at x, PSD-projected
    /// unless `set_projection(false)` (ElasticTerm::set_projection says why). Device work.
    void evaluate(const NodeField& x, bool hessians = true);
    void set_projection(bool project) { m_project = project; }

    /// Lumped mass of every local node from the codimensional elements (complete for owned nodes): a
    /// third of ρ h A per triangle corner, half of ρ π r² L per segment end (kg).
    Kokkos::View<const double*, MemSpace> lumped_mass() const { return m_mass; }

    int num_stencils() const { return static_cast<int>(m_stencils.extent(0)); }
    Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> stencils() const { return m_stencils; }
    /// Empty until the first `evaluate` (the Hessians until the first one with `hessians`).
    StencilGradients gradients() const {
        return m_gradients;
    }
    StencilHessians hessians() const { return m_hessians; }
    StencilParameters parameters() const { return m_parameters; }
    /// The first stencil of each kind (CodimStencilKind), then the end of the last: codim_kind_of's table.
    void kind_begins(int (&begin)[5]) const {
        begin[0] = m_triangles.begin;
        begin[1] = m_hinges.begin;
        begin[2] = m_segments.begin;
        begin[3] = m_rod_vertices.begin;
        begin[4] = m_rod_vertices.end;
    }
    /// The stencils as host arrays (−1 for unused corners), for the block matrix's pattern.
    const std::vector<std::array<int, 4>>& host_stencils() const { return m_host_stencils; }

private:
    struct Range {
        int begin = 0;
        int end = 0;
    };
    Stencils m_stencils;
    StencilParameters m_parameters;
    Kokkos::View<int*, MemSpace> m_owned; ///< 1 for owned stencils
    Kokkos::View<double*, MemSpace> m_mass;
    StencilGradients m_gradients;
    StencilHessians m_hessians;
    /// The stencils of kind 0 (triangles), 1 (hinges), 2 (segments) or 3 (rod vertices).
    Range range_of(int kind) const;
    Range m_triangles, m_hinges, m_segments, m_rod_vertices;
    std::vector<std::array<int, 4>> m_host_stencils;
    bool m_project = true;

public:
    /// The kernels of one kind of stencil; public only because CUDA lambdas must live in public member
    /// functions.
    double energy_of_range(const NodeField& x, int kind) const;
    std::pair<double, double>
    energy_change_of_range(const NodeField& x, const NodeField& trial, int kind) const;
    void evaluate_range(const NodeField& x, int kind, bool hessians, bool project);
};

} // namespace intact::solver
