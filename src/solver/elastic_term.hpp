#pragma once
/// @file elastic_term.hpp
/// @brief Hyperelastic energy Σ_e V_e ψ(F_e) of one rank's local elements, with gradients and PSD-projected
/// Hessians per element, and lumped masses.
///
/// Every body has its own material (`material.model` and Lamé parameters); elements are grouped by body
/// and each group runs the element kernel instantiated for its model. Energies are summed over owned
/// elements only (each element counted once across ranks); gradients and Hessians are produced for all
/// local elements, so owned rows can be assembled completely without communication.

#include "src/core/types.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"

#include <vector>

namespace intact::solver {

enum class MaterialModel { neo_hookean, stable_neo_hookean, fixed_corotated, stvk, linear };

MaterialModel material_model(const std::string& name);

class ElasticTerm {
public:
    using ElementScalars = Kokkos::View<double*, MemSpace>;
    using ElementGradients = Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace>;
    using ElementHessians = Kokkos::View<double* [12][12], Kokkos::LayoutRight, MemSpace>;
    using RestInverses = Kokkos::View<const double* [3][3], Kokkos::LayoutRight, MemSpace>;

    ElasticTerm(const LocalMesh& mesh, const io::Scene& scene);

    /// Σ over owned elements of V ψ(F) on this rank (not reduced over ranks). +∞ when a neo-Hookean
    /// element is inverted or flat. Device work, host result.
    double energy(const NodeField& x) const;

    /// Σ over owned elements of V ψ(trial) − V ψ(x) (element by element, +∞ if a neo-Hookean element of
    /// `trial` is inverted) and Σ |V ψ(x)|. This rank only.
    std::pair<double, double> energy_change(const NodeField& x, const NodeField& trial) const;

    /// Per-element gradient (12) and Hessian (12×12) of V ψ for every local element, PSD-projected unless
    /// `set_projection(false)`; only the gradients when `hessians` is false (the Hessians keep their old
    /// values).
    void evaluate(const NodeField& x, bool hessians = true);

    /// Whether `evaluate` projects each element's Hessian to PSD (the default) or keeps the exact one
    /// (IpcSolver's Newton basin: the projection drops the curvature of compressed and twisted elements,
    /// and Newton then converges only linearly).
    void set_projection(bool project) { m_project = project; }
    bool projects() const { return m_project; }
    /// (`gradients()` and `hessians()` are empty until the first evaluation that needs them.)

    /// Largest α in (0, 1] such that every local element, of any material, keeps at least 20% of its
    /// current volume along x + α p (IPC spec §7.4 for neo-Hookean; the invertible models get it too, so
    /// no solver inverts an element); 1 when no element shrinks that much. With `rest_floor` > 0, every
    /// element also keeps at least that fraction of its rest volume (an element already at or below it
    /// may not shrink). This rank only.
    double max_step(const NodeField& x, const NodeField& p, double rest_floor = 0.0) const;

    /// Lumped mass of every local node (complete for owned nodes), kg.
    Kokkos::View<const double*, MemSpace> lumped_mass() const { return m_mass; }
    Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets() const {
        return m_tets;
    } ElementGradients gradients() const {
        return m_gradients;
    }
    ElementHessians hessians() const { return m_hessians; }
    /// Per local element: D_m⁻¹ (rest edge matrix inverse) and the rest volume V (m³).
    RestInverses dm_inverses() const { return m_dm_inverse; }
    Kokkos::View<const double*, MemSpace> volumes() const { return m_volume; }
    int num_owned_elements() const { return m_num_owned_elements; }

    /// Keep one copy of the rest data: this term's tets, D_m⁻¹ and V become views of the leading rows of
    /// `larger`'s, whose mesh must hold this term's elements first, in the same order (stencil descent's
    /// layout mesh extends the LocalMesh so). Saves 96 bytes per element once this term's own copy is
    /// released. Aborts the job (INTACT_REQUIRE) when the leading tets differ: a programming error.
    void share_rest_data(const ElasticTerm& larger);

    /// Launch the kernels of one material over the elements `[begin, end)` of the body ordering. Public
    /// only because CUDA lambdas must live in public member functions.
    template <class Material> double energy_of(const Material& material, const NodeField& x, int group) const;
    template <class Material>
    std::pair<double, double>
    energy_change_of(const Material& material, const NodeField& x, const NodeField& trial, int group) const;
    template <class Material>
    void evaluate_group(const Material& material, const NodeField& x, int group, bool hessians, bool project);

private:
    /// The gradients' storage (96 bytes per element) and, with `hessians`, the Hessians' (1152), made by
    /// the first evaluation that needs them: a term whose derivatives are never used (the incremental
    /// potential's and the stencil layout's under stencil descent, which sums elasticity per vertex and
    /// edge batch by batch) spends no memory on them.
    void allocate_derivatives(bool hessians);

    struct Group {
        MaterialModel model;
        double mu;
        double lambda;
        Kokkos::View<int*, MemSpace> elements; ///< local element indices of this body
        Kokkos::View<int*, MemSpace> owned;    ///< the owned subset of `elements`
    };
    int m_num_owned_elements = 0;
    std::vector<Group> m_groups;
    Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace> m_tets;
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> m_dm_inverse;
    Kokkos::View<double*, MemSpace> m_volume;
    Kokkos::View<double*, MemSpace> m_mass;
    ElementGradients m_gradients;
    ElementHessians m_hessians;
    bool m_project = true;
};

} // namespace intact::solver
