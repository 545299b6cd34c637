#pragma once
/// @file newton_solver.hpp
/// @brief Projected Newton on the incremental potential of one time step, distributed (IPC spec §7).
///
///     E(x) = ½ (x − x̂)ᵀ M (x − x̂) + c h² P(x),   P(x) = Σ_e V_e ψ(F_e) − Σ_i m_i g·x_i
///
/// Each iteration assembles the gradient and the PSD-projected Hessian of the owned rows, solves
/// H p = −∇E with distributed PCG (constrained nodes eliminated), stops when ‖p‖∞ / h < tolerance
/// (velocity units, reduced with MAX over ranks), and otherwise backtracks from α = min(1, α_inversion)
/// halving α until E(x + α p) ≤ E(x) (Armijo constant 0), energies summed once over ranks. Collective.

#include "comm/halo_exchange.hpp"
#include "src/solver/block_matrix.hpp"
#include "src/solver/elastic_term.hpp"
#include "src/solver/pcg.hpp"

#include <memory>

namespace intact::solver {

struct NewtonSettings {
    double tolerance = 1e-2;   ///< ‖p‖∞ / h below this (m/s) ends the solve
    int max_iterations = 100;  ///< the solve reports non-convergence past this
    PcgSettings linear;
};

struct NewtonResult {
    int iterations = 0;
    int linear_iterations = 0;
    double residual = 0.0;     ///< ‖p‖∞ / h of the last direction, m/s
    bool converged = false;
    bool line_search_failed = false;
};

class NewtonSolver {
public:
    /// @param constrained 1 for fixed or moving nodes (per local node), 0 for free ones
    NewtonSolver(const LocalMesh& mesh, const io::Scene& scene, comm::HaloExchange<>& halo,
                 const std::vector<NodeConstraint>& constrained);

    /// Minimise E over the free nodes of x, starting from x (ghost rows current). On return x holds the
    /// minimiser with ghost rows gathered. `weight` is c; `gravity` in m/s². Collective.
    NewtonResult minimize(const NodeField& x, const NodeField& x_hat, double h, double weight, const Vec3& gravity,
                          const NewtonSettings& settings);

    /// E(x) summed over ranks. Collective.
    double total_energy(const NodeField& x, const NodeField& x_hat, double h, double weight, const Vec3& gravity) const;

    /// Elastic energy Σ V ψ and gravitational energy −Σ m g·x over owned entries, summed over ranks.
    /// Collective.
    std::pair<double, double> potential_energies(const NodeField& x, const Vec3& gravity) const;

    const ElasticTerm& elastic() const { return m_elastic; }
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }

    /// Assemble ∇E (owned rows) and the Hessian values. Public for CUDA lambdas and benchmarks.
    void assemble(const NodeField& x, const NodeField& x_hat, double h, double weight, const Vec3& gravity);
    const BlockMatrix& matrix() const { return m_matrix; }

private:
    MPI_Comm m_comm;
    int m_num_owned;
    comm::HaloExchange<>& m_halo;
    ElasticTerm m_elastic;
    BlockMatrix m_matrix;
    Kokkos::View<double*, MemSpace> m_free; ///< 1 free, 0 constrained, per local node
    Pcg m_pcg;
    NodeField m_gradient, m_rhs, m_direction, m_trial;
};

} // namespace intact::solver
