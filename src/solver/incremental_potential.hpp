#pragma once
/// @file incremental_potential.hpp
/// @brief The incremental potential every implicit method minimises (IPC spec §1, A-search spec §2):
///
///     E(x) = ½ (x − x̂)ᵀ M (x − x̂) + c h² (Ψ(x) − Σ_i m_i g·x_i) + Σ_terms weight · term(x)
///
/// It owns the elastic term, the block matrix and the gradient of the owned rows; energy terms (barrier,
/// friction, augmented-Lagrangian terms) are added by the method and evaluated on the contact surface
/// that the ContactModel gathers. Contact Hessian blocks on the diagonal join the matrix (block Jacobi
/// sees them); the others act in every product through `apply`. The formula lives here only: methods
/// ask for assembly, products and energy changes.

#include "comm/halo_exchange.hpp"
#include "src/contact/contact_model.hpp"
#include "src/solver/block_matrix.hpp"
#include "src/solver/elastic_term.hpp"
#include "src/solver/energy_term.hpp"
#include "src/solver/step_problem.hpp"

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
    void add_term(const EnergyTerm& term) { m_terms.push_back(&term); }
    const std::vector<const EnergyTerm*>& terms() const { return m_terms; }

    const ElasticTerm& elastic() const { return m_elastic; }
    ElasticTerm& elastic() { return m_elastic; }
    const BlockMatrix& matrix() const { return m_matrix; }
    NodeField gradient() const { return m_gradient; }
    Kokkos::View<const double*, MemSpace> lumped_mass() const { return m_elastic.lumped_mass(); }
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }
    int num_owned() const { return m_num_owned; }

    /// ∇E (owned rows) and the Hessian at x: inertia, elasticity and gravity, then every term at the
    /// contact model's positions() (which the caller has gathered at x). Local.
    void assemble(const NodeField& x, const StepProblem& problem);
    /// Only the inertial, elastic and gravitational part of `assemble`. Local.
    void assemble_elastic(const NodeField& x, const StepProblem& problem);

    /// y(owned rows) = mask ⊙ (H p) with the terms' blocks; `p` must hold current ghost rows. The terms'
    /// columns are gathered on the contact surface (obstacle rows zero). Collective with terms.
    void apply(const NodeField& p, const NodeField& y);
    /// y(owned rows) += mask ⊙ (blocks with an obstacle column · obstacle_step): how moving obstacles push
    /// through the contact terms in the right-hand side. Local.
    void add_obstacle_push(const std::vector<Vec3>& obstacle_step, const NodeField& y);

    /// Unweighted energy of every term at surface positions xs, each summed over ranks (one
    /// allreduce). Collective.
    std::vector<double> term_energies(const std::vector<Vec3>& xs) const;

    /// E(trial) − E(x) summed term by term over owned entries and ranks, and Σ|terms of E(x)| as the
    /// scale below which a change is round-off. `at_x`: term_energies at x (shared by every trial of a
    /// line search); the terms are evaluated at the contact model's trial(), gathered by the caller.
    /// Collective.
    std::pair<double, double> energy_change(const NodeField& x,
                                            const NodeField& trial,
                                            const StepProblem& problem,
                                            const std::vector<double>& at_x) const;

    /// Elastic energy Σ V ψ and gravitational energy −Σ m g·x over owned entries, summed over ranks.
    /// Collective.
    std::pair<double, double> potential_energies(const NodeField& x, const Vec3& gravity) const;

    /// Add `weight` × the terms' gradient at xs to `gradient` (host, 3 values per local node). Local.
    void add_term_gradient(const std::vector<Vec3>& xs, std::vector<double>& gradient) const;

    /// Public for CUDA lambdas: y(row) += mask(row) Σ B · columns(col) over the off-diagonal term blocks
    /// whose column is a body row (`obstacle_columns` false: `columns` has every surface row) or an
    /// obstacle row (true: `columns` has the obstacle rows).
    void add_block_products(const std::vector<Vec3>& columns, bool obstacle_columns, const NodeField& y);
    /// Public for CUDA lambdas: the terms' part of `assemble`.
    void add_terms(const NodeField& x);

private:
    MPI_Comm m_comm;
    int m_num_owned;
    ElasticTerm m_elastic;
    BlockMatrix m_matrix;
    Kokkos::View<const double*, MemSpace> m_free;
    NodeField m_gradient;
    contact::ContactModel* m_contact = nullptr;
    std::vector<const EnergyTerm*> m_terms;

    // Off-diagonal term blocks of owned rows, and the row slots their products are summed in.
    std::vector<contact::ContactBlock> m_blocks;
    std::vector<int> m_block_slot, m_slot_rows;
    Kokkos::View<int*, MemSpace> m_slot_rows_device;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> m_slot_products;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>::HostMirror m_slot_products_host;
    NodeField m_term_gradient_device;
    std::vector<double> m_term_gradient;
};

} // namespace intact::solver
