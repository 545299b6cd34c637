#pragma once
/// @file incremental_potential.hpp
/// @brief The incremental potential every implicit method minimises (IPC spec §1, A-search spec §2):
///
///     E(x) = ½ (x − x̂)ᵀ M (x − x̂) + c h² (Ψ(x) − Σ_i (m_i g + f_i)·x_i) + Σ_terms weight · term(x)
///
/// (f: the step's applied forces, StepProblem::force)
///
/// It owns the elastic term, the block matrix and the gradient of the owned rows; energy terms (barrier,
/// friction, augmented-Lagrangian terms) are added by the method and evaluated on the contact surface
/// that the ContactModel gathers. Contact Hessian blocks on the diagonal join the matrix (block Jacobi
/// sees them); the others act in every product through `apply`. The formula lives here only: methods
/// ask for assembly, products and energy changes.

#include "comm/halo_exchange.hpp"
#include "src/contact/contact_matrix.hpp"
#include "src/contact/contact_model.hpp"
#include "src/solver/block_matrix.hpp"
#include "src/solver/codim_term.hpp"
#include "src/solver/elastic_term.hpp"
#include "src/solver/energy_term.hpp"
#include "src/solver/step_problem.hpp"

#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace intact::solver {

class IncrementalPotential {
public:
    /// @param free_mask 1 for free nodes, 0 for prescribed ones (per local node; products are masked)
    IncrementalPotential(const LocalMesh& mesh,
                         const io::Scene& scene,
                         comm::HaloExchange& halo,
                         Kokkos::View<const double*, MemSpace> free_mask);

    /// Evaluate terms on this contact model's surface (needed before any term is added).
    void set_contact(contact::ContactModel& contact) { m_contact = &contact; }
    contact::ContactModel* contact() const { return m_contact; }
    /// Append a term; terms are summed in the order they were added.
    void add_term(EnergyTerm& term);
    const std::vector<EnergyTerm*>& terms() const { return m_terms; }
    /// Replace every term by `terms` (in that order): a step solved by another method than the run's,
    /// such as the reference method that re-solves a step the certificate rejected (Simulation), uses
    /// that method's terms and then the run's again. Local.
    void use_terms(const std::vector<EnergyTerm*>& terms);

    const ElasticTerm& elastic() const { return m_elastic; }
    ElasticTerm& elastic() { return m_elastic; }
    /// The shells' and rods' elastic term (no stencils without such bodies); its stencils are the
    /// elements from matrix().num_tets() on.
    const CodimTerm& codim() const { return m_codim; }
    CodimTerm& codim() { return m_codim; }
    /// Whether the elastic Hessians of solids, shells and rods are PSD-projected (the default) or exact
    /// (ElasticTerm::set_projection).
    void set_elastic_projection(bool project) {
        m_elastic.set_projection(project);
        m_codim.set_projection(project);
    }
    /// Σ V ψ over owned tets plus the owned codimensional stencils' energies at x (J). Device work; this
    /// rank only.
    double elastic_energy(const NodeField& x) const;
    /// The block matrix on the element pattern, made on first use with its values deferred to the first
    /// assembly: stencil descent, which keeps no global matrix, never makes it (its pattern is about 110
    /// bytes per element, its values 200).
    const BlockMatrix& matrix() const;
    NodeField gradient() const { return m_gradient; }
    /// Lumped mass of every local node, solids' and codimensional bodies' (kg).
    Kokkos::View<const double*, MemSpace> lumped_mass() const { return m_mass; }
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }
    int num_owned() const { return m_num_owned; }
    /// Local nodes: owned, then ghosts (the rows of every node field).
    int num_local() const { return m_num_local; }
    /// The terms' off-diagonal contact blocks of the last `assemble` (their diagonal blocks are in
    /// matrix()), and each term's per-pair stencils (in term order), e.g. for the stiffness-decade
    /// warm start (decade_warm_start.hpp).
    const contact::ContactMatrix& contact_matrix() const { return m_contact_matrix; }
    const std::vector<contact::PairStencils>& term_stencils() const { return m_stencils; }

    /// ∇E (owned rows) and the Hessian at x: inertia, elasticity, gravity and applied forces, then every term
    /// at the contact model's positions() (which the caller has gathered at x). Device work. Local.
    void assemble(const NodeField& x, const StepProblem& problem);
    /// Only the inertial, elastic and gravitational part of `assemble`; without `hessian`, only ∇E (the
    /// matrix keeps its values, and no element Hessian is evaluated or stored). Local.
    void assemble_elastic(const NodeField& x, const StepProblem& problem, bool hessian = true);
    /// out(owned rows) = the gradient rows of per-pair `stencils` alone, summed as `assemble` sums them
    /// (e.g. the unweighted barrier gradient for κ's start value). Invalidates the terms' blocks until the
    /// next `assemble`. Device work. Local.
    void gradient_of(const contact::PairStencils& stencils, const NodeField& out);

    /// y(owned rows) = mask ⊙ (H p) with the terms' blocks; `p` must hold current ghost rows. The terms'
    /// columns are gathered on the contact surface (obstacle rows zero). Collective with terms.
    void apply(const NodeField& p, const NodeField& y);
    /// y(owned rows) = mask ⊙ (H Δ) for the boundary's remaining motion: Δ on prescribed rows and
    /// `obstacle_step` on the obstacle rows, so moving obstacles push through the contact blocks too.
    /// Collective with terms.
    void apply_boundary(const NodeField& delta,
                        const contact::ConstSurfaceField& obstacle_step,
                        const NodeField& y);

    /// Unweighted energy of every term at surface positions xs, each summed over ranks (one
    /// allreduce). Collective.
    std::vector<double> term_energies(const contact::ConstSurfaceField& xs) const;

    /// The inertia and load part of E(trial) − E(x) over owned nodes, each node's change written with
    /// trial − x so nothing cancels, and Σ ½ m |x − x̂|² as its scale. Device work; this rank only.
    std::pair<double, double>
    nodal_energy_change(const NodeField& x, const NodeField& trial, const StepProblem& problem) const;

    /// E(trial) − E(x) summed term by term over owned entries and ranks, and Σ|terms of E(x)| as the
    /// scale below which a change is round-off. `at_x`: term_energies at x (shared by every trial of a
    /// line search); the terms are evaluated at the contact model's trial(), gathered by the caller.
    /// Collective.
    std::pair<double, double> energy_change(const NodeField& x,
                                            const NodeField& trial,
                                            const StepProblem& problem,
                                            const std::vector<double>& at_x) const;

    /// out(owned rows) = ∇(Ψ − Σ m g·x) at x: the conservative force without contact, negated (J/m), from
    /// element gradients alone (no Hessians). Device work. Local.
    void potential_gradient(const NodeField& x, const Vec3& gravity, const NodeField& out);

    /// Elastic energy Σ V ψ and gravitational energy −Σ m g·x over owned entries, summed over ranks.
    /// Collective.
    std::pair<double, double> potential_energies(const NodeField& x, const Vec3& gravity) const;

private:
    void add_terms();

    BlockMatrix& block_matrix() const;

    MPI_Comm m_comm;
    int m_num_owned;
    int m_num_local;
    const std::vector<std::array<int, 4>>& m_tets; ///< the LocalMesh's (the Simulation owns both)
    ElasticTerm m_elastic;
    CodimTerm m_codim;
    Kokkos::View<double*, MemSpace> m_mass;      ///< m_elastic's plus m_codim's
    mutable std::optional<BlockMatrix> m_matrix; ///< made by the first matrix() or block_matrix()
    Kokkos::View<const double*, MemSpace> m_free;
    NodeField m_gradient;
    contact::ContactModel* m_contact = nullptr;
    std::vector<EnergyTerm*> m_terms;
    std::vector<contact::PairStencils> m_stencils; ///< one per term
    contact::ContactMatrix m_contact_matrix;       ///< the terms' blocks of owned rows
    /// gradient_of's own slots: one term's gradient (κ's start, the certificate's slopes, friction work)
    /// leaves the assembled blocks of m_contact_matrix as they are
    contact::ContactMatrix m_gradient_matrix;
};

} // namespace intact::solver
