#pragma once
/// @file pcg.hpp
/// @brief Distributed preconditioned conjugate gradients on a BlockMatrix (block-Jacobi preconditioner).
///
/// Vectors are node fields (one row of 3 values per local node, owned rows first). The solve works on
/// owned rows; ghost rows of the search direction are refreshed by one halo gather per iteration before
/// the SpMV. Dot products reduce over owned rows and then over ranks (allreduce), so every rank takes the
/// same decisions. Constrained (Dirichlet) nodes are eliminated through a per-node mask: their rows of
/// the residual and of every direction are zero, so their columns never contribute.

#include "comm/halo_exchange.hpp"
#include "src/solver/block_matrix.hpp"

#include <functional>

namespace intact::solver {

/// y(owned rows) = mask ⊙ (A x). `x` must hold current ghost values. Device, not collective.
void spmv(const BlockMatrix& matrix,
          const NodeField& x,
          const NodeField& y,
          const Kokkos::View<const double*, MemSpace>& mask);

/// Σ over owned rows of a·b, reduced over all ranks. Collective.
double dot(MPI_Comm comm, int num_owned, const NodeField& a, const NodeField& b);

struct PcgSettings {
    double tolerance = 1e-6; ///< stop when ‖r‖ ≤ tolerance · ‖b‖ (2-norms over owned, free DOFs)
    int max_iterations = 1000;
};

struct PcgResult {
    int iterations = 0;
    double relative_residual = 0.0;
    bool converged = false;
    bool breakdown = false; ///< pᵀAp ≤ 0 or not finite: stopped early
};

class Pcg {
public:
    /// @param mask 1 for free nodes, 0 for constrained ones (per local node, device)
    Pcg(const BlockMatrix& matrix, comm::HaloExchange& halo, Kokkos::View<const double*, MemSpace> mask);

    /// Solve A x = b for the owned rows of x (x starts at zero; ghost rows hold their owners' values on
    /// return). Rebuilds the block-Jacobi inverse from the current matrix values. Collective.
    PcgResult solve(const NodeField& b, const NodeField& x, const PcgSettings& settings);

    /// An operator added to the matrix in every product: y(owned rows) += mask ⊙ (A_extra x). Contact
    /// uses it for Hessian blocks that couple nodes beyond the element pattern. Collective when called.
    using ExtraOperator = std::function<void(const NodeField& x, const NodeField& y)>;
    void set_extra_operator(ExtraOperator op) { m_extra = std::move(op); }
    /// A x including the extra operator (owned rows, masked). `x` must hold current ghost values.
    void apply(const NodeField& x, const NodeField& y) const;

private:
    const BlockMatrix& m_matrix;
    comm::HaloExchange& m_halo;
    Kokkos::View<const double*, MemSpace> m_mask;
    NodeField m_r, m_z, m_p, m_q;
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> m_inverse_diagonal;
    ExtraOperator m_extra;
};

} // namespace intact::solver
