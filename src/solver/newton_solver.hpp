#pragma once
/// @file newton_solver.hpp
/// @brief Projected Newton on the incremental potential of one time step, distributed (IPC spec §7).
///
///     E(x) = ½ (x − x̂)ᵀ M (x − x̂) + c h² P(x),   P(x) = Σ_e V_e ψ(F_e) − Σ_i m_i g·x_i
///
/// Each iteration assembles the gradient and the PSD-projected Hessian of the owned rows and solves for
/// the free rows of the step with distributed PCG. Constrained (fixed or moving) nodes are Dirichlet
/// data of the increment: their part of the step is Δ = target − x, and the free part solves
/// H_ff p = −(∇E + H Δ)_f, so prescribed motion enters gradually and never inverts an element. The step
/// d = p + Δ is capped by α_inversion (neo-Hookean elements keep 20% of their volume). While Δ ≠ 0 the
/// capped step is taken as is (prescribed motion does work, so E may rise); once the boundary has
/// arrived, α is halved until E(x + α d) ≤ E(x) (Armijo constant 0), the change of energy summed term
/// by term so that round-off does not stall the search. The solve ends when the boundary has arrived
/// and ‖p‖∞ / h < tolerance (velocity units, MAX over ranks). Collective.
///
/// With contact, the barrier joins E and the CCD caps α; obstacles are prescribed rows of the contact
/// surface and move to their targets like the constrained nodes. With friction, the solve above runs
/// inside IPC's lag loop (spec §6.5): lag at xᵗ, solve, lag again at the solution, until the direction
/// with the updated lagged terms is already below the tolerance or `friction_iterations` solves.

#include "comm/halo_exchange.hpp"
#include "src/contact/barrier_potential.hpp"
#include "src/contact/friction_potential.hpp"
#include "src/solver/block_matrix.hpp"
#include "src/solver/elastic_term.hpp"
#include "src/solver/pcg.hpp"

#include <limits>
#include <memory>

namespace intact::solver {

struct NewtonSettings {
    double tolerance = 1e-2;     ///< ‖p‖∞ / h below this (m/s) ends the solve
    int max_iterations = 100;    ///< Newton iterations per lagged solve; non-convergence past this
    int friction_iterations = 1; ///< lagged solves per step at most (IPC spec §6.5)
    PcgSettings linear;
};

/// What one time step minimises: E(x) = ½ (x − x̂)ᵀ M (x − x̂) + c h² P(x), with constrained nodes
/// ending at `target`.
struct StepProblem {
    NodeField x_hat;     ///< inertial target x̂ (rows: local nodes)
    NodeField target;    ///< end-of-step positions of constrained nodes (rows of free nodes unused)
    double h = 0.0;      ///< time step, s
    double weight = 1.0; ///< c
    Vec3 gravity{};      ///< m/s²
    /// End-of-step positions of the obstacle rows of the contact surface (empty without contact).
    std::vector<Vec3> obstacle_target;
};

struct NewtonResult {
    int iterations = 0;
    int linear_iterations = 0;
    double residual = 0.0; ///< ‖p‖∞ / h of the last direction, m/s
    bool converged = false;
    bool line_search_failed = false;
    long long contact_pairs = 0; ///< active contact pairs at the end of the solve (all ranks)
    double min_distance = std::numeric_limits<double>::infinity(); ///< smallest pair distance at the end (m)
    double kappa = 0.0;    ///< barrier stiffness at the end of the solve
    int friction_lags = 0; ///< friction lag updates this step, the first at xᵗ (0 without friction)
};

class NewtonSolver {
public:
    /// @param constrained 1 for fixed or moving nodes (per local node), 0 for free ones
    NewtonSolver(const LocalMesh& mesh,
                 const io::Scene& scene,
                 comm::HaloExchange& halo,
                 const std::vector<NodeConstraint>& constrained);

    /// Minimise E, starting from x (feasible, ghost rows current). On return x holds the minimiser (with
    /// the constrained nodes at their targets) and ghost rows are current. Collective.
    NewtonResult minimize(const NodeField& x, const StepProblem& problem, const NewtonSettings& settings);

    /// E(trial) − E(x) summed term by term over owned entries and ranks, and Σ|terms of E(x)| as the
    /// scale below which a change is round-off. Collective.
    /// `contact_at_x`: the barrier (unweighted) and friction energies at x, computed once per Newton
    /// iteration by contact_energies (every trial of a line search shares them). Collective.
    /// `obstacle_trial`: the obstacle rows at the trial point.
    std::pair<double, double> energy_change(const NodeField& x,
                                            const NodeField& trial,
                                            const std::vector<Vec3>& obstacle_trial,
                                            const StepProblem& problem,
                                            const std::pair<double, double>& contact_at_x) const;

    /// Barrier energy Σ b (without κ) and friction energy at surface positions xs; zeros without contact.
    /// Collective.
    std::pair<double, double> contact_energies(const std::vector<Vec3>& xs) const;

    /// Elastic energy Σ V ψ and gravitational energy −Σ m g·x over owned entries, summed over ranks.
    /// Collective.
    std::pair<double, double> potential_energies(const NodeField& x, const Vec3& gravity) const;

    /// Add IPC contact: barrier κ Σ b(s_k) on the pairs of `barrier`, κ adapted per step (IPC spec §4),
    /// the line search capped by CCD. `length` is the scene's bounding-box diagonal l (m). Obstacles
    /// start at their rest rows; each step moves them to StepProblem::obstacle_target like the prescribed
    /// nodes (the Dirichlet part of the step).
    void
    enable_contact(contact::ContactSurface& surface, const contact::BarrierPotential& barrier, double length);
    /// Add lagged friction (IPC spec §6) on top of contact, lagged at each step's start and then up to
    /// NewtonSettings::friction_iterations − 1 more times (the lag loop).
    void enable_friction(contact::FrictionPotential& friction) { m_friction = &friction; }

    const ElasticTerm& elastic() const { return m_elastic; }
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }

    /// Assemble ∇E (owned rows) and the Hessian values. Public for CUDA lambdas and benchmarks.
    /// Collective with contact (it refreshes the contact ghost plan at x).
    void assemble(const NodeField& x, const StepProblem& problem);
    /// The elastic and inertial part of `assemble` (no contact). Local.
    void assemble_elastic(const NodeField& x, const StepProblem& problem);
    const BlockMatrix& matrix() const { return m_matrix; }

    /// The contact part of `assemble`: gradient rows and diagonal blocks added on the device, the other
    /// blocks kept for PCG. Collective (it refreshes the ghost plan). Public for CUDA lambdas.
    void add_contact(const NodeField& x);
    /// y(row) += mask(row) Σ B · columns(col) over the off-diagonal contact blocks whose column is a body
    /// row (`obstacle_columns` false: `columns` has every surface row) or an obstacle row (true: `columns`
    /// has the obstacle rows). Host sums per row slot, added on the device. Public for CUDA lambdas.
    void add_block_products(const std::vector<Vec3>& columns, bool obstacle_columns, const NodeField& y);

private:
    MPI_Comm m_comm;
    int m_num_owned;
    comm::HaloExchange& m_halo;
    ElasticTerm m_elastic;
    BlockMatrix m_matrix;
    Kokkos::View<double*, MemSpace> m_free; ///< 1 free, 0 constrained, per local node
    Pcg m_pcg;
    NodeField m_gradient, m_rhs, m_direction, m_trial, m_boundary_step, m_product;

    // Contact (optional).
    void apply_contact(const NodeField& p, const NodeField& y);
    void initialize_kappa(const NodeField& x, const StepProblem& problem);
    bool snap_is_safe(const NodeField& x);
    contact::ContactSurface* m_surface = nullptr; ///< its ghost plan is refreshed here
    const contact::BarrierPotential* m_barrier = nullptr;
    contact::FrictionPotential* m_friction = nullptr;
    double m_kappa = 0.0, m_kappa_min = 0.0, m_kappa_max = 0.0, m_length = 1.0;
    std::vector<contact::ContactBlock> m_contact_blocks; ///< off-diagonal contact blocks of owned rows
    std::vector<int> m_block_slot, m_slot_rows;          ///< per block its row's slot; per slot its local row
    Kokkos::View<int*, MemSpace> m_slot_rows_device;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>
        m_slot_products; ///< per slot, sized per iteration
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>::HostMirror m_slot_products_host;
    NodeField m_contact_gradient_device;
    std::vector<Vec3> m_xs, m_ps;   ///< gathered surface rows
    mutable std::vector<Vec3> m_ts; ///< surface rows at a line-search trial
    // Obstacle rows: where they are now, their remaining motion this step, and zeros (PCG directions
    // leave prescribed rows alone).
    std::vector<Vec3> m_obstacle_x, m_obstacle_step, m_obstacle_trial, m_obstacle_zero, m_obstacle_start;
    NodeField m_step_start; ///< xᵗ, for friction lags after the first
    std::vector<double> m_contact_gradient;
};

} // namespace intact::solver
