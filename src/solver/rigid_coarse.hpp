#pragma once
/// @file rigid_coarse.hpp
/// @brief Block Jacobi plus a coarse correction on every body's six rigid modes, for any Newton-type
/// method's PCG (`solver.preconditioner: "rigid_coarse"`).
///
/// Why. Block Jacobi sees one node at a time. On a stiff body (stone, E = 20 GPa, at h = 1/30 s) the
/// Newton matrix M/h² + K + contact has the body's rigid motions at about M/h² and its elastic modes near
/// K, six orders of magnitude apart, and no nodal preconditioner brings them together: PCG needs about
/// the square root of that ratio, a thousand iterations per Newton step on the stone arch, whatever the
/// barrier or the augmented Lagrangian does (README "Barrier-augmented Lagrangian solver").
///
/// What. With R the n × 6B matrix whose columns are each body's translations and (linearised) rotations
/// about its centroid, at the positions of the assembly, and A_c = Rᵀ H R (6B × 6B),
///
///     z = J⁻¹ r + R A_c⁻¹ Rᵀ r
///
/// (J: block Jacobi). Both parts are symmetric positive definite on the free rows, so PCG stays CG. A_c
/// holds, per body, Rᵀ H R over its element blocks (contact diagonal blocks included, as the matrix holds
/// them), and between two bodies the projection of the contact blocks that join them; it is factored
/// once per Newton system (sparse LDLᵀ, Eigen) on every rank, the same on each. Rotation columns are scaled
/// by the body's radius of gyration so the six columns have the same size. Prescribed rows are left out of
/// R (zero rows), so a body held everywhere has zero columns; they get a unit diagonal, and every diagonal
/// a relative shift of 1e-12 (a body with fewer than three free nodes has dependent columns).
///
/// Distributed. Per-body sums run over each rank's owned nodes in chunks of at most k_chunk nodes of one
/// body (one kernel, no atomics), are summed per body on the host in chunk order and then over ranks (one
/// allreduce of 6B values per PCG iteration; 36B, plus the contact couplings by an allgather, per setup),
/// so every rank solves the same coarse system. Cost: per PCG iteration two kernels, two small host
/// copies and the allreduce; per setup the projection of the matrix rows and one sparse factorisation.
/// The coarse level is made for scenes of up to tens of thousands of bodies; each is one 6 × 6 block.

#include "src/solver/incremental_potential.hpp"
#include "src/solver/pcg.hpp"

#include <map>
#include <memory>
#include <vector>

namespace intact::solver {

class RigidCoarse final : public Preconditioner {
public:
    static constexpr int k_chunk = 128;      ///< owned nodes per partial sum
    static constexpr double k_shift = 1e-12; ///< relative diagonal shift of A_c
    static constexpr int k_block = 36;       ///< values of one 6 × 6 coarse block

    /// `node_body`: body index per local node (owned, then ghosts); `num_bodies`: bodies in the scene.
    RigidCoarse(IncrementalPotential& potential,
                BlockJacobi& jacobi,
                const std::vector<int>& node_body,
                int num_bodies,
                MPI_Comm comm);
    ~RigidCoarse() override;

    /// Positions of the next setup's Newton system (ghost rows current); kept as a view, read by setup().
    void set_positions(const NodeField& x) { m_positions = x; }
    /// The block-Jacobi inverses and the coarse system at the positions of set_positions, for the
    /// potential's last assembly. Collective.
    void setup() override;
    /// z = J⁻¹ r + R A_c⁻¹ Rᵀ r on owned rows. Collective.
    void apply(const NodeField& r, const NodeField& z) const override;
    /// Block Jacobi's fused update (r ← r − α q, z = J⁻¹ r, both sums), then the coarse correction: z +=
    /// R c with c = A_c⁻¹ Rᵀ r, and r·(R c) = (Rᵀ r)·c from the 6B global values, added on rank 0 alone
    /// (the caller sums the ranks' values). Collective.
    std::pair<double, double> update_residual(
        double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const override;

    /// A_c as a dense matrix (tests; 6B × 6B, row-major), without the shift.
    std::vector<double> coarse_matrix() const;
    /// Rᵀ v for owned rows of v, summed over ranks (6B values). Collective.
    std::vector<double> restrict_field(const NodeField& v) const;
    /// out(owned rows) = R c (c: 6B values). Local.
    void prolong(const std::vector<double>& c, const NodeField& out) const;
    /// Whether the last setup factored A_c (else the coarse correction is skipped, with a warning).
    bool factored() const;

    /// Public for CUDA lambdas: the steps of setup and apply.
    void fill_mask();
    void body_frames();
    void fill_arms();
    void element_blocks();
    void contact_blocks(std::map<std::pair<int, int>, std::vector<double>>& couplings) const;
    void restrict_chunks(const NodeField& v) const;
    void add_prolongation(const NodeField& out) const;

private:
    /// Per-chunk partial sums (`width` values per chunk, chunk order; m_narrow up to 6, m_partial above)
    /// to per-body sums on the host.
    void sum_chunks(int width, std::vector<double>& per_body) const;
    /// c = A_c⁻¹ Rᵀ r into m_coefficients, z += R c; returns (Rᵀ r)·c. Collective.
    double add_correction(const NodeField& r, const NodeField& z) const;

    IncrementalPotential& m_potential;
    BlockJacobi& m_jacobi;
    MPI_Comm m_comm;
    int m_num_bodies;
    int m_num_owned;
    NodeField m_positions;
    Kokkos::View<int*, MemSpace> m_body;          ///< per local node
    Kokkos::View<int*, MemSpace> m_chunk_offsets; ///< into m_chunk_nodes, per chunk
    Kokkos::View<int*, MemSpace> m_chunk_nodes;   ///< owned nodes grouped by body
    std::vector<int> m_chunk_body;                ///< per chunk (host)
    using Blocks = Kokkos::View<double* [k_block], Kokkos::LayoutRight, MemSpace>;
    using Narrow = Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace>;
    Blocks m_partial;                  ///< per chunk, 36 values (A_c's element blocks)
    Blocks::HostMirror m_partial_host; ///< its host copy
    Narrow m_narrow;                   ///< per chunk, up to 6 values (frames; Rᵀ r in every PCG iteration)
    Narrow::HostMirror m_narrow_host;  ///< its host copy
    mutable Blocks m_projected;        ///< per contact block: its 6 × 6 projection (grown)
    mutable Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> m_keys; ///< its bodies (grown)
    NodeField m_arm;                        ///< per local node: (x − centroid) / radius of its body
    NodeField m_mask3;                      ///< per local node: the free mask, three times
    std::vector<double> m_center, m_radius; ///< per body
    std::vector<double> m_diagonal;         ///< per body: Rᵀ H R over its element blocks (36)
    std::map<std::pair<int, int>, std::vector<double>> m_couplings;       ///< contact blocks (b, d): 36 each
    mutable Kokkos::View<double*, MemSpace> m_coefficients;               ///< A_c⁻¹ Rᵀ r, 6B values
    contact::SurfaceField m_surface_arm, m_surface_mask, m_obstacle_zero; ///< on the contact surface
    Kokkos::View<int*, MemSpace> m_surface_body; ///< per surface row (−1: obstacle)
    struct Factor;
    std::unique_ptr<Factor> m_factor; ///< the shifted A_c, factored
    bool m_warned = false;
    int m_rank = 0;
};

} // namespace intact::solver
