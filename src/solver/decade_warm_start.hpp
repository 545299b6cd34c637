#pragma once
/// @file decade_warm_start.hpp
/// @brief The stiffness-decade warm start of the BAL paper (seed 002 §4.2–§4.3), for any Newton-type
/// method's PCG (`solver.preconditioner: "decade_warm_start"`).
///
/// 1. Node stiffness. Every stencil (element, contact pair, friction pair) spreads the mean of its PSD
///    Hessian's clamped eigenvalues, λ̄ = trace(H⁺) / (3k) for k stencil nodes, over its 3k diagonal
///    entries (spec A11); the mass adds m_j per entry. e_j sums node j's three entries:
///        e_j = 3 m_j + c h² Σ_elements trace(H_e⁺) / 4 + Σ_pairs trace(H_i⁺) / k_i.
///    The trace is the sum of the clamped eigenvalues, so it is read from the projected Hessians the
///    assembly already holds (the spec's trace trick, A22): no second eigen-analysis. Element entries are
///    summed per owned row in the matrix's fixed order, pair entries by a ContactMatrix gradient pass
///    (deterministic).
/// 2. Groups. g_j = floor(log10 e_j) over free nodes, shifted by the global minimum (one MIN/MAX
///    allreduce) so groups are 0..K−1 on every rank: a node's group depends on its stiffness only, never
///    on the partition. More than k_max_groups decades merge into the stiffest group.
/// 3. Warm start. H_G keeps only the blocks whose row and column nodes share a group (the masked SpMV:
///    element blocks through the ghost rows' groups, contact blocks through the contact surface's), so
///    H_G x = b splits into K independent systems. They are solved together by one Chronopoulos–Gear
///    CG (one SpMV and one allreduce per iteration) with per-group scalars α_g, β_g: the 3K per-group
///    sums r·z, z·Hz, r·r of an iteration travel in one allreduce. A group stops at relative residual
///    k_tolerance, all at k_max_iterations (spec A12: 1e-2 and 50). The block-Jacobi inverses of the
///    global PCG precondition every group (diagonal blocks never cross groups).
/// The global PCG then starts from this x (PcgSettings::warm_start).

#include "comm/halo_exchange.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/pcg.hpp"

#include <vector>

namespace intact::solver {

class DecadeWarmStart {
public:
    static constexpr int k_max_groups = 32;
    static constexpr double k_tolerance = 1e-2;
    static constexpr int k_max_iterations = 50;

    DecadeWarmStart(IncrementalPotential& potential, comm::HaloExchange& halo);

    /// e_j and the groups from the potential's last `assemble` (c h² = `ch2`, the elastic weight of that
    /// assembly). Collective (one allreduce, one halo gather, one contact gather).
    void setup(double ch2);
    /// x ≈ H_G⁻¹ b on owned rows (ghost rows current on return), preconditioned by `jacobi` (set up for
    /// the current matrix). Returns the CG iterations. Collective.
    int solve(const BlockJacobi& jacobi, const NodeField& b, const NodeField& x);
    /// y(owned rows) = mask ⊙ (H_G x); x with current ghost rows. Collective with contact terms.
    void apply_masked(const NodeField& x, const NodeField& y);

    /// e_j per local node in column 0 (owned rows; m·s⁻²·kg units of the matrix, kg).
    NodeField stiffness() const { return m_stiffness; }
    /// Group per local node (ghost rows gathered) in column 0, as a double.
    NodeField groups() const { return m_groups; }
    int num_groups() const { return m_num_groups; }

    /// Public for CUDA lambdas: the steps of setup and solve.
    void sum_pair_stiffness();
    void add_element_stiffness(double ch2);
    std::pair<double, double> local_decade_range() const;
    void assign_groups(double lowest);
    void apply_masked_elements(const NodeField& x, const NodeField& y) const;
    void apply_masked_contact(const NodeField& y) const;
    void
    group_sums(const NodeField& r, const NodeField& z, const NodeField& w, std::vector<double>& sums) const;
    void update_iterate(const NodeField& x, const NodeField& r) const;
    void update_directions() const;

private:
    IncrementalPotential& m_potential;
    comm::HaloExchange& m_halo;
    int m_num_groups = 1;
    NodeField m_stiffness, m_groups;
    NodeField m_r, m_z, m_w, m_p, m_s;
    Kokkos::View<double*, MemSpace> m_alpha, m_beta; ///< per group (0 where a group has stopped)
    std::vector<contact::PairStencils> m_traces;     ///< per term: trace / k on column 0 of each vertex
    contact::ContactMatrix m_trace_sum;
    contact::SurfaceField m_surface_groups, m_obstacle_groups;
};

} // namespace intact::solver
