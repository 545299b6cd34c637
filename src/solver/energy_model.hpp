#pragma once
/// @file energy_model.hpp
/// @brief The integrators' view of a scene's potential (integrator.hpp, EnergyModel): elasticity and
/// gravity from the incremental potential's elastic term, and the energy terms the solver added
/// (conservative ones into P, dissipative ones into the friction work), evaluated at the contact model's
/// current positions. Nothing here knows which solver added the terms.

#include "comm/halo_exchange.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/integrator.hpp"

namespace intact::solver {

/// Σ over the first `rows` (owned) rows of g · (x − start): this rank's part of a force's work along a
/// step, or of a gradient's slope along it.
double work_rows(const NodeField& g, const NodeField& x, const NodeField& start, int rows);

class SceneEnergyModel final : public EnergyModel {
public:
    SceneEnergyModel(IncrementalPotential& potential, comm::HaloExchange& halo, const Vec3& gravity);

    MPI_Comm comm() const override { return m_halo.plan().comm(); }
    int num_owned() const override { return m_potential.num_owned(); }
    Kokkos::View<const double*, MemSpace> lumped_mass() const override { return m_potential.lumped_mass(); }
    Kokkos::View<const double*, MemSpace> free_mask() const override { return m_potential.free_mask(); }
    void gather(const NodeField& field) override { m_halo.gather(field); }
    int num_terms() const override;
    std::vector<double> term_weights() const override;
    /// Per conservative term (the order of `conservative`'s terms): whether it stores energy
    /// (EnergyTerm::stores_energy).
    std::vector<bool> stored_terms() const;
    LocalEnergies conservative(const NodeField& x,
                               double ch2,
                               const NodeField& gradient,
                               const std::vector<NodeField>& term_gradients) override;
    double dissipated_work(const NodeField& x, const NodeField& start, double ch2) override;
    /// Per energy-storing term (the order of stored_terms' true entries): Σ over owned rows of its
    /// gradient at x dotted with x − start (J), at the contact model's positions, which the caller made
    /// x. The step certificate's convexity defect of the contact potential (step_certificate.hpp). Local.
    std::vector<double> stored_slopes(const NodeField& x, const NodeField& start, double ch2);

private:
    std::vector<EnergyTerm*> terms(bool conservative) const;

    IncrementalPotential& m_potential;
    comm::HaloExchange& m_halo;
    Vec3 m_gravity;
    contact::PairStencils m_stencils; ///< one term's derivatives at a time
    NodeField m_scratch;              ///< one term's gradient rows (friction work, slopes)
};

} // namespace intact::solver
