#pragma once
/// @file stencil_descent.hpp
/// @brief Second-order stencil descent (stencil descent spec; Lan et al. 2023): a Newton-free,
/// matrix-free block-coordinate minimiser of the step's incremental potential whose blocks are 12-DOF
/// stencils, every tetrahedron and every barrier pair of the step's pair set B, and (not in the paper) every
/// element of the shells and rods: membrane triangles, hinges, rod segments and rod bending vertices.
///
/// One sweep (spec §3.3, §6.4): (K1) gradient g_v and diagonal Hessian block D_v per vertex, summed over
/// the vertex's elements and pairs in a fixed order; (K2) per stencil k, from the frozen x: the local
/// gradient g^[k] and Hessian H^[k] (the 12×12 principal block of the global Hessian: D blocks plus the
/// element and pair blocks coupling its vertices), `cg_iterations` of CG with the curvature guard, a
/// local CCD on the pairs touching k (shared per-pair bound, contact/pair_toi.hpp), a local inversion
/// search on every element touching k with all shared vertices moving (the shared volume bound), each
/// scaled by `toi_factor`, and Armijo backtracking on E^[k] (every term that depends on k's vertices);
/// (K3) per owned vertex: the step of the stencil of the sweep's color containing it (Gauss–Seidel), or
/// the mean of the steps of every stencil containing it (Jacobi; barrier and codimensional stencils are
/// always Jacobi); (K4) the safety filter: the shared step bound (inversion + CCD with a broad phase, global
/// MIN) on the assembled update, which scales it when a pair or an element would be violated, so every
/// accepted state is penetration- and inversion-free, and whose swept pairs join B (B only grows within a
/// step); then (not in the paper; `accept_updates`) the energy test on the assembled update, E(x + αΔx) −
/// E(x) ≤ c₁ α gᵀΔx, damping the Jacobi rows and then α when it fails; (K5) x ← x + Δx and one halo gather.
///
/// Decisions where the spec leaves a choice (spec §10): element Hessians are the PSD-projected ones of the
/// shared element kernel and barrier Hessians the shared PSD ones, so H^[k] is positive definite (M > 0)
/// and the local CG is a true Newton-CG (the curvature guard remains for massless corner cases); H^[k] is
/// assembled per stencil (spec §7.4 Option B) rather than by dual numbers, from per-vertex diagonal and
/// per-edge blocks of elasticity that each sweep sums from batches of element Hessians (nothing per
/// element is kept: `element_batch`). Barrier: squared distances
/// (kernels/barrier.hpp), per pair ŝ_i = max(ŝ, s_i(x at insertion)), κ_i = κ d̂ / d̂_i, κ from IPC's
/// adaptive start at each step. The convergence test (§6.1) is ‖g‖₂ ≤ tolerance ‖g(x⁰)‖₂ + ε_abs over
/// free owned DOFs, with ε_abs = ε_a h² ‖m‖₂ (ε_a the project's acceleration tolerance: the gradient of
/// a uniform residual acceleration ε_a), and then the step certificate's balance, max |g|/m < ε_a over
/// free owned nodes (without a round-off exit: a step whose noise alone stays above ε_a sweeps to the
/// cap and falls back), checked before every sweep; `max_sweeps` caps a step with a logged warning. The
/// color schedule is s = n mod S, c = (n div S) mod T with n counted across steps.
/// Prescribed nodes are placed on their targets at the step's start when that is safe, else by safe
/// fractions as the sweeps make room, and are fixed rows meanwhile; obstacles likewise.
///
/// State carried across steps: the sweep counter n of the color schedule, and κ's bounds (κ restarts
/// every step); B, ŝ_i and κ_i are rebuilt every step.

#include "kernels/small_matrix.hpp"
#include "src/contact/barrier_stiffness.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/solver/codim_stencil.hpp"
#include "src/solver/elastic_term.hpp"
#include "src/solver/stencil_coloring.hpp"
#include "src/solver/stencil_layout.hpp"
#include "src/solver/step_bound.hpp"
#include "src/solver/step_solver.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace intact::solver {

/// The local Newton step of one stencil (spec §2.3, Alg. 1): at most `iterations` CG iterations on
/// H Δ = −g from Δ = 0, stopping when ‖r‖ ≤ 1e-6 ‖g‖. Curvature guard: on a direction p with pᵀHp ≤ 0
/// the first iteration takes the step of inertia alone along p (curvature m_min pᵀp, m_min the stencil's
/// smallest free mass; none when m_min is 0) and later ones stop. Device-callable.
KOKKOS_INLINE_FUNCTION kernels::Vec12
local_newton_cg(const kernels::Mat12& H, const kernels::Vec12& g, int iterations, double m_min) {
    constexpr double guard = 1e-6; // ε_cg
    kernels::Vec12 step = kernels::Vec12::Zero();
    kernels::Vec12 r = -g;
    kernels::Vec12 p = r;
    double rho = r.dot(r);
    const double stop = guard * guard * rho;
    for (int j = 0; j < iterations && rho > stop && rho > 0.0; ++j) {
        const kernels::Vec12 q = H * p;
        const double curvature = p.dot(q);
        if (!(curvature > 0.0)) {
            if (j == 0 && m_min > 0.0) {
                step = (rho / (m_min * p.dot(p))) * p;
            }
            break;
        }
        const double alpha = rho / curvature;
        step += alpha * p;
        r -= alpha * q;
        const double next = r.dot(r);
        p = r + (next / rho) * p;
        rho = next;
    }
    return step;
}

/// The device data of the sweep kernels (stencil_descent/). Nodes index the stencil layout; the
/// first `num_nodes` (the LocalMesh's) are stencil vertices.
struct StencilData {
    using IntView = Kokkos::View<int*, MemSpace>;
    using RealView = Kokkos::View<double*, MemSpace>;
    int num_nodes = 0;    ///< stencil vertices: LocalMesh nodes, then contact partners (layout.num_vertices)
    int num_local = 0;    ///< LocalMesh nodes (the rows of the solver's fields)
    int num_owned = 0;    ///< owned nodes
    int num_elements = 0; ///< element stencils (LocalMesh elements)
    int num_pairs = 0;    ///< barrier stencils (|B|)
    double h2c = 0.0;     ///< c h²
    double elastic = 1.0; ///< weight of elasticity: 0 in the warm start (spec §4)
    Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets; ///< layout elements
    Kokkos::View<const double* [3][3], Kokkos::LayoutRight, MemSpace> dm_inverse;
    Kokkos::View<const double*, MemSpace> volume;
    // Elasticity, evaluated at every sweep in batches of `batch` layout elements taken in ascending global
    // element id, each batch's gradients and PSD Hessians summed per stencil vertex and per edge before
    // the next batch overwrites them: no per-element storage, and every sum in global element order.
    int batch = 1;            ///< layout elements per batch
    IntView element_order;    ///< layout elements by ascending global element id
    IntView element_position; ///< per layout element, its index in element_order
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> batch_gradient; ///< V ψ's gradient
    /// V ψ's PSD Hessian, its upper triangle row by row (packed_upper; 624 bytes per element, not 1152)
    Kokkos::View<double* [78], Kokkos::LayoutRight, MemSpace> batch_hessian;
    NodeField elastic_gradient; ///< per stencil vertex: Σ_e ∇_v(V ψ), unweighted
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> elastic_diagonal; ///< Σ_e ∇²_vv(V ψ)
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> edge_nodes; ///< per edge: stencil vertices u < w
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> edge_block; ///< per edge: Σ_e ∇²_uw(V ψ)
    /// Per element stencil, the edges of its vertex pairs (0,1), (0,2), (0,3), (1,2), (1,3), (2,3).
    Kokkos::View<int* [6], Kokkos::LayoutRight, MemSpace> stencil_edges;
    Kokkos::View<int* [6], Kokkos::LayoutRight, MemSpace> pair_edges; ///< per pair of B, likewise; −1: none
    IntView model;                                                    ///< per layout element: MaterialModel
    RealView mu, lambda;                                              ///< per layout element (Pa)
    IntView element_offsets; ///< per stencil vertex: [offsets(v), offsets(v+1)) in element_entries
    IntView element_entries; ///< 4 × element + the vertex's corner in it, by element gid (entry_*)
    IntView pair_offsets;    ///< per stencil vertex, into pair_entries
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> pair_entries; ///< (pair, slot), pair order
    Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace> pair_nodes;   ///< per pair slot: node or −1
    RealView mass;             ///< per stencil vertex (kg), summed in element-id order
    RealView free;             ///< per layout row: 1 free, 0 prescribed
    NodeField x, x_hat, force; ///< per layout row
    NodeField gradient;        ///< per stencil vertex, g_v
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> diagonal; ///< per stencil vertex, D_v
    // Local steps Δ^[k] (K2): the element stencils' batch by batch in global element order, each batch
    // summed per vertex (step_sum) before the next overwrites it, so none is kept per element; the
    // barrier and codimensional stencils' all at once, after them.
    int step_batch = 1; ///< layout elements per batch of local steps
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> batch_steps; ///< per element of the batch
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> pair_steps;  ///< per pair of B
    NodeField step_sum; ///< per owned vertex: Σ of its element stencils' steps so far, in entry order
    Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, MemSpace> color; ///< (scheme, element)
    // Pairs of B: kind, rows, ŝ_i, κ_i; their weighted gradients and PSD Hessians at x.
    contact::PairList pairs;
    RealView pair_s_hat, pair_kappa;
    IntView pair_friction; ///< per pair of B: its lagged friction pair, or −1 (none)
    /// Per pair of B: 1 on the one rank that counts its energy (the owner of its lowest-id mesh node).
    Kokkos::View<std::uint8_t*, MemSpace> pair_counted;
    contact::FrictionPairs::Lagged friction; ///< the step's lagged friction (spec §10 item 18)
    contact::PairStencils pair_derivatives;
    contact::SurfaceField xs; ///< the contact model's positions at x
    contact::SurfaceTopology topology;
    // Codimensional stencils: the triangles and hinges of shells, the segments and bending vertices of rods
    // (the potential's CodimTerm on the LocalMesh rows, which are the layout's first rows). They are
    // stencils k = num_elements + num_pairs + c after B's pairs, Jacobi like them, and their elasticity is
    // part of elastic_gradient and elastic_diagonal. A rank holds the codimensional stencils around its
    // owned nodes, not those around its ghosts, so a stencil's local problem takes the others through
    // their per-vertex sums (codim_sums, gathered from the owners): every rank solves it alike.
    bool has_codim = false;               ///< the scene has shells or rods (every rank alike)
    int num_codim = 0;                    ///< this rank's codimensional stencils (owned and ghost)
    int codim_begin[5] = {0, 0, 0, 0, 0}; ///< first stencil of each kind, then the end (codim_kind_of)
    Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> codim_nodes; ///< corners; −1 unused
    CodimParameters codim_parameters;
    // The potential's CodimTerm buffers (no copy): valid from codim_derivatives until anything else
    // evaluates that term; the Hessians PSD-projected unless a solver turned the projection off.
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> codim_gradient;    ///< at x, unweighted
    Kokkos::View<double* [12][12], Kokkos::LayoutRight, MemSpace> codim_hessian; ///< PSD, unweighted
    IntView codim_offsets; ///< per LocalMesh node, [offsets(v), offsets(v+1)) in codim_entries
    /// (stencil, corner) per LocalMesh node, by the stencil's kind and global node ids (a fixed order)
    Kokkos::View<int* [2], Kokkos::LayoutRight, MemSpace> codim_entries;
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> codim_steps; ///< per codimensional stencil
    /// Per layout row: Σ of its codimensional stencils' gradients (3) and diagonal blocks (9, row-major),
    /// unweighted, every row complete (its owner's sums)
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> codim_sums;
    double gravity[3] = {0.0, 0.0, 0.0}; ///< m/s² (a plain array: device code reads it)
    int cg_iterations = 12;
    double toi_factor = 0.8;

    /// The layout element and the vertex's corner (0–3) of entry k of element_entries.
    KOKKOS_INLINE_FUNCTION int entry_element(int k) const { return element_entries(k) >> 2; }
    KOKKOS_INLINE_FUNCTION int entry_corner(int k) const { return element_entries(k) & 3; }
};

class StencilDescent final : public StepSolver {
public:
    StencilDescent(const StepParts& parts, const NewtonSettings& settings, const LocalMesh& local);
    const char* name() const override { return "stencil_descent"; }
    const char* residual_name() const override { return "|gradE|"; } // ‖∇E‖₂ over the free rows
    const char* residual_unit() const override { return ""; }
    StepResult solve(const NodeField& x, const StepProblem& problem) override;
    /// The color-schedule counter n, the only state one step hands to the next (B, ŝᵢ, κᵢ and κ are
    /// rebuilt at every step), so a restarted run sweeps the same colors as the uninterrupted one.
    void save(io::CheckpointWriter& out) const override;
    void restore(const io::CheckpointReader& in) override;

    const StencilColoring& coloring() const { return m_coloring; }
    const StencilData& data() const { return m_data; }

    /// For tests: stencil k's local system at the current state, g^[k] and H^[k] (row-major), as K2 builds
    /// it (fixed slots: zero gradient, identity block); k < num_elements an element stencil, then pair
    /// k − num_elements of B, then codimensional stencil k − num_elements − num_pairs. One device thread,
    /// copied to the host.
    std::pair<std::array<double, 12>, std::array<double, 144>> local_system(int k) const;
    /// For tests, on one rank: E(x + Δ^[k]) − E(x) with stencil k's local step Δ^[k] (K2) alone (every
    /// other vertex held), from the sweeps' energy test (the shared potential's inertia, load and
    /// elasticity and B's pairs), and g^[k]ᵀΔ^[k]; `x` and `problem` the state and step the solver last
    /// worked on. Overwrites the sweep's scratch (the update m_delta, its surface rows, the trial point).
    /// Collective.
    std::array<double, 2> lone_step_change(int k, const NodeField& x, const StepProblem& problem);
    /// K1: g_v and D_v of every stencil vertex at the current state (from elastic_derivatives' sums).
    void vertex_derivatives();
    /// Elasticity's sums at the current state: per stencil vertex its gradient and, with `hessians`, its
    /// diagonal block, and the block of every edge; batch by batch in global element order; then the shells'
    /// and rods' (codim_derivatives: collective in a scene that has them).
    void elastic_derivatives(bool hessians);
    /// The barrier pairs' weighted gradients and Hessians at the current positions.
    void pair_derivatives();
    /// Public for CUDA lambdas: the codimensional stencils' gradients (and with `hessians` their diagonal
    /// blocks) summed per owned vertex, gathered to every layout row and added to elasticity's sums.
    /// Collective (a layout gather) in a scene with shells or rods; nothing otherwise.
    void codim_derivatives(bool hessians);
    /// Public for CUDA lambdas: the codimensional lumped masses on every stencil vertex (owned rows from
    /// the potential's CodimTerm, the others from their owners), added to d.mass. Collective, as above.
    void add_codim_masses();
    /// Public for tests and CUDA lambdas: copy x into the layout rows and gather the outer ring.
    void load_state(const NodeField& x, const StepProblem& problem);
    /// Public for CUDA lambdas: copy x into the layout rows and gather the outer ring.
    void load_positions(const NodeField& x);
    /// Public for CUDA lambdas: K2 and K3 of a sweep for scheme s, color c: every stencil's local step from
    /// the frozen state, and per owned row (into delta) the step of the color's stencil containing it
    /// (Gauss–Seidel) or the mean of its stencils' steps (Jacobi).
    void sweep_update(int scheme, int color, const NodeField& delta);
    /// Public for CUDA lambdas: the warm start's per-vertex step into delta (owned rows).
    void warm_start_update(const NodeField& delta);
    /// Public for CUDA lambdas: the barrier stencils' local steps into pair_steps.
    void pair_steps();
    /// Public for CUDA lambdas: filter the update m_delta, test it on the energy (`accept_updates`), apply
    /// it to x and refresh the layout and contact; whether x moved.
    bool take_step(const NodeField& x, PhaseSeconds& seconds);
    /// Public for CUDA lambdas: m_delta on the surface rows for update_energy_change (one layout gather,
    /// when B has pairs). Collective.
    void load_update();
    /// Public for CUDA lambdas: E(x + α Δ) − E(x) for the assembled update Δ = m_delta (ghost rows current;
    /// load_update() since it last changed) as {inertia, load and the pairs of B; c h² Ψ} (elasticity
    /// apart, which the warm start leaves out): the shared potential's owned nodes and elements, and the
    /// pairs this rank counts, each term a difference that keeps the digits of small steps. Collective
    /// (one SUM).
    std::array<double, 2> update_energy_change(const NodeField& x, double alpha);
    /// Public for CUDA lambdas: B's barrier energy (its ŝᵢ and κᵢ, friction apart) at the step's start
    /// m_x_start and at x, and its gradient at x dotted with x − m_x_start (J; the pairs this rank counts,
    /// summed over ranks), for the step certificate (StepResult::own_barrier_*). Overwrites the update
    /// m_delta and its surface rows. Collective.
    std::array<double, 3> barrier_account(const NodeField& x);
    /// Public for CUDA lambdas: m_delta ← the assembled update with its Jacobi rows scaled by ω. Collective.
    void damp_jacobi(double omega);
    /// Public for CUDA lambdas: gᵀΔ over the owned Gauss–Seidel rows and over the owned Jacobi rows of the
    /// assembled update m_delta (g at the sweep's start). Collective.
    std::array<double, 2> update_slopes() const;
    /// Public for CUDA lambdas: ‖g‖₂² over free owned rows.
    double gradient_norm_squared() const;

    /// Public for CUDA lambdas: B at the step's start (κ from the stencil data's ∇E at x, so after
    /// load_state; then the pairs near the inertial path). Collective.
    void start_pairs(const NodeField& x);
    /// Public for CUDA lambdas: the pairs of `found` (on any rank) that come within d̂ on the contact
    /// model's segment join B; whether B grew (the same on every rank). Collective.
    bool add_pairs(const contact::PairList& found);
    /// Public for CUDA lambdas: `field` (solver rows) on the layout rows, in a scratch field valid until the
    /// next call. Collective (a layout gather).
    NodeField on_layout(const NodeField& field);
    /// Public for CUDA lambdas: `field`'s owned rows into `rows` (layout rows), the rest from their owners.
    /// Collective (a layout gather).
    void to_layout(const NodeField& field, const NodeField& rows);
    /// Public for CUDA lambdas: the safety filter between regular CCDs: the inversion bound and B's pairs
    /// along m_delta. Collective (one MIN).
    double filter_bound(const NodeField& x);
    /// Public for CUDA lambdas: the regular CCD on the chord from the last certified state to x (falling
    /// back along it on a hit); x becomes the certified state. Whether x moved. Collective.
    bool certify(const NodeField& x, PhaseSeconds& seconds);
    /// Public for CUDA lambdas: move the prescribed rows and obstacles of x towards their targets by the
    /// safe fraction of their remaining motion (all of it when safe); `during_sweeps`: the swept pairs
    /// join B and the layout is refreshed. Whether they arrived. Collective.
    bool advance_boundary(const NodeField& x, PhaseSeconds& seconds, bool during_sweeps);
    /// Public for CUDA lambdas: lag friction on B at the current positions: every pair of B gets a
    /// friction pair, with its normal force from its own barrier there (zero for pairs outside their
    /// ŝ_i). Collective (a layout gather).
    void lag_friction();
    /// Public for CUDA lambdas: `field` (layout rows) on the surface rows the layout holds, `obstacles`'
    /// rows on the obstacle rows, into `out`. Local.
    void fill_surface(const NodeField& field,
                      const contact::ConstSurfaceField& obstacles,
                      const contact::SurfaceField& out) const;

private:
    /// The codimensional stencils' device data (StencilData::codim_*), once: the LocalMesh does not change.
    void build_codim_data();
    /// Drop the layout's views before a rebuild (see stencil_descent/layout.cpp).
    void release_static_data();
    /// m_elastic on the layout mesh, shared with the potential's elastic term (one copy of D_m⁻¹).
    void build_elastic();
    void build_static_data();
    /// B (m_pair_set) to the device, then the per-vertex pair adjacency.
    void upload_pairs();
    void rebuild_pair_adjacency();
    /// After B changed: the layout must hold, besides the LocalMesh, every contact partner of an owned
    /// node with its element ring and every other row of B's pairs; rebuild it when it does not (and at a
    /// step's start when it holds other nodes than those), then upload B. Collective.
    void refresh_pairs(bool step_start);
    /// The layout for `rings` and `points` (RemoteNode lists), its elastic term, data and row maps, and the
    /// step's state on it. Collective.
    void rebuild_layout(const std::vector<RemoteNode>& rings, const std::vector<RemoteNode>& points);

    StepParts m_parts;
    NewtonSettings m_settings;
    io::StencilDescentOptions m_options;
    const LocalMesh& m_local;
    StencilLayout m_layout;
    std::optional<ElasticTerm> m_elastic;       ///< on m_layout.mesh (rebuilt with it)
    std::set<GlobalId> m_rings, m_points;       ///< what m_layout holds beyond the LocalMesh's two rings
    std::unordered_set<GlobalId> m_layout_gids; ///< every node of m_layout
    std::vector<int> m_row_node;                ///< per contact surface row: layout node, or −1
    std::unordered_map<std::uint64_t, int> m_edge_of; ///< edge id by (lower, higher) layout node
    Kokkos::View<int*, MemSpace> m_node_row;          ///< per layout node: contact surface row, or −1
    contact::SurfaceField m_xs;             ///< surface rows at the layout's positions (pairs read them)
    NodeField m_x;                          ///< the solve's x (LocalMesh rows), for layout rebuilds
    const StepProblem* m_problem = nullptr; ///< the solve's problem, for layout rebuilds
    NodeField m_x_start;                    ///< x at the step's start, before prescribed rows arrive
    NodeField m_layout_scratch;             ///< layout rows
    contact::SurfaceField m_obstacle_start; ///< obstacle rows at the step's start
    NodeField m_x_ck;    ///< the last state a regular CCD certified (regular_ccd_every > 1)
    int m_since_ccd = 0; ///< sweeps since then
    contact::SurfaceField m_surface_step, m_zero_rows; ///< the assembled update on surface rows; zeros
    StencilColoring m_coloring;
    StencilData m_data;
    StepBound m_bound;
    contact::ContactModel* m_contact;
    std::optional<contact::BarrierStiffness> m_kappa;
    std::optional<contact::FrictionPairs> m_friction; ///< with contact.friction or an obstacle's friction
    contact::SurfaceField m_friction_start;           ///< surface rows at xᵗ, before prescribed rows arrive
    Kokkos::View<double*, MemSpace> m_normal_force;   ///< per pair of B at the lagging point
    Kokkos::View<double*, MemSpace> m_found_distance; ///< add_pairs' scratch, per found candidate
    double m_h = 0.0;                                 ///< the step's h (s)
    contact::PairStencils m_kappa_stencils;
    bool m_has_codim = false; ///< the scene has shells or rods (the same on every rank)
    NodeField m_delta, m_product;
    NodeField m_assembled;                          ///< the sweep's update before damping
    Kokkos::View<std::uint8_t*, MemSpace> m_jacobi; ///< per owned row: 1 when its step is a Jacobi mean
    long long m_sweep_counter = 0;                  ///< n of the color schedule, across steps
    /// B on the host, by (kind, global ids of its rows): ordered, so B's device order is the pair order.
    using PairKey = std::array<GlobalId, 5>;
    struct PairValues {
        double s_hat = 0.0;        ///< ŝ_i (m²)
        double kappa = 0.0;        ///< κ_i
        int friction = -1;         ///< index of its lagged friction pair, or −1
        int kind = 0;              ///< contact::PairKind
        std::array<int, 4> rows{}; ///< surface rows (PairList convention)
    };
    PairKey pair_key(int kind, const int (&rows)[4]) const;
    /// κ of the step (IPC's adaptive start), rounded to 20 significant bits.
    double kappa() const;
    std::map<PairKey, PairValues> m_pair_set;
};

} // namespace intact::solver
