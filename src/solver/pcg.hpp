#pragma once
/// @file pcg.hpp
/// @brief Distributed preconditioned conjugate gradients with a pluggable operator and preconditioner
/// (block Jacobi the default), with an optional warm start.
///
/// Vectors are node fields (one row of 3 values per local node, owned rows first). The solve works on
/// owned rows; ghost rows of the search direction are refreshed by one halo gather per iteration before
/// the SpMV. Dot products reduce over owned rows and then over ranks (allreduce), so every rank takes the
/// same decisions. Constrained (Dirichlet) nodes are eliminated through a per-node mask: their rows of
/// the residual and of every direction are zero, so their columns never contribute.

#include "comm/halo_exchange.hpp"
#include "src/solver/block_matrix.hpp"

#include <functional>
#include <limits>
#include <utility>

namespace intact::solver {

/// y(owned rows) = mask ⊙ (A x). `x` must hold current ghost values. Device, not collective.
void spmv(const BlockMatrix& matrix,
          const NodeField& x,
          const NodeField& y,
          const Kokkos::View<const double*, MemSpace>& mask);

/// Σ over owned rows of a·b, reduced over all ranks. Collective.
double dot(MPI_Comm comm, int num_owned, const NodeField& a, const NodeField& b);

/// What PCG's stall window watches (BAL spec §3.5 and A13, seed 002: stop when the solve has "stopped
/// decreasing over the last 100" iterations).
enum class StallTest {
    /// The CG model φ(x) = ½ xᵀAx − bᵀx, which every iteration lowers by ½ α (r·z): stalled when the
    /// last window lowered it by at most tolerance² of its whole decrease so far. φ is monotone where ‖r‖
    /// is not, so only a solve that has stopped improving stops.
    energy,
    /// ‖r‖ has reached no new low over the window (the paper's words). On ill-conditioned systems CG's
    /// residual rises and oscillates for hundreds of iterations while the error keeps falling, and this
    /// stops such solves with ‖r‖ at 1e-2 to 1.5 of ‖b‖ (README "Barrier-augmented Lagrangian solver").
    residual,
};

struct PcgSettings {
    double tolerance = 1e-6; ///< stop when ‖r‖ ≤ tolerance · ‖b‖ (2-norms over owned, free DOFs)
    int max_iterations = 1000;
    bool warm_start = false; ///< start from the x given (true) or from zero (false)
    /// Stop when the solve has stalled over this many iterations, as `stall_test` says; 0: never.
    int stall_window = 0;
    StallTest stall_test = StallTest::energy;
    /// When `report_curvature` (the same on every rank), a breakdown also reports the curvature it met
    /// relative to a per-row weight (e.g. the lumped mass): pᵀAp / Σᵢ metricᵢ ‖pᵢ‖² over owned free rows
    /// (PcgResult::breakdown_curvature).
    bool report_curvature = false;
    Kokkos::View<const double*, MemSpace> curvature_metric;
};

struct PcgResult {
    int iterations = 0;
    double relative_residual = 0.0;
    bool converged = false;
    bool breakdown = false; ///< pᵀAp ≤ 0 or not finite: stopped early
    bool stalled = false;   ///< stopped by the stall window
    /// At a breakdown with PcgSettings::report_curvature: pᵀAp / pᵀ diag(metric) p of the direction that
    /// met it (≤ 0; −∞ where pᵀ diag(metric) p = 0; NaN where pᵀAp is not finite); NaN without a
    /// breakdown.
    double breakdown_curvature = std::numeric_limits<double>::quiet_NaN();
};

/// z = M⁻¹ r on owned rows. `setup` is called once per solve, after the matrix values changed.
class Preconditioner {
public:
    virtual ~Preconditioner() = default;
    virtual void setup() = 0;
    virtual void apply(const NodeField& r, const NodeField& z) const = 0;

    /// One PCG iteration's residual update on the first n (owned) rows: r ← r − α q, z = M⁻¹ r, and this
    /// rank's (r·r, r·z), not reduced over ranks. This version runs the update, apply() and a reduction;
    /// a preconditioner that acts row by row does all three in one pass.
    virtual std::pair<double, double>
    update_residual(double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const;
};

/// Block Jacobi: the inverted 3×3 diagonal blocks of the matrix (identity on prescribed nodes and on
/// blocks that are not positive definite). The default preconditioner.
class BlockJacobi final : public Preconditioner {
public:
    BlockJacobi(const BlockMatrix& matrix, Kokkos::View<const double*, MemSpace> mask);
    void setup() override;
    void apply(const NodeField& r, const NodeField& z) const override;
    /// The update, the 3×3 products and both sums in one kernel.
    std::pair<double, double> update_residual(
        double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const override;

private:
    const BlockMatrix& m_matrix;
    Kokkos::View<const double*, MemSpace> m_mask;
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> m_inverse;
};

/// y(owned rows) = mask ⊙ (A x) for an x with current ghost rows. Collective where A needs it.
using LinearOperator = std::function<void(const NodeField& x, const NodeField& y)>;

/// Distributed PCG on node fields (owned rows; ghost rows of the direction refreshed by one halo gather
/// per iteration). Buffers are allocated once.
class Pcg {
public:
    /// @param mask 1 for free nodes, 0 for constrained ones (per local node, device)
    Pcg(int num_owned, int num_local, comm::HaloExchange& halo, Kokkos::View<const double*, MemSpace> mask);

    /// Solve A x = b for the owned rows of x: from zero, or from the x given when settings.warm_start.
    /// Ghost rows of x hold their owners' values on return. Calls M.setup() first. Collective.
    PcgResult solve(const LinearOperator& A,
                    Preconditioner& M,
                    const NodeField& b,
                    const NodeField& x,
                    const PcgSettings& settings);

private:
    int m_num_owned;
    comm::HaloExchange& m_halo;
    Kokkos::View<const double*, MemSpace> m_mask;
    NodeField m_r, m_z, m_p, m_q;
};

} // namespace intact::solver
