#pragma once
/// @file contact_surface.hpp
/// @brief The primitives that take part in contact, and the ghost exchange that gives every rank the
/// ones near its own.
///
/// Surface rows ("surface vertices") are numbered the same on every rank:
/// - rows [0, num_body_vertices): the bodies' boundary vertices, ordered by owner rank, then global id;
/// - rows [num_body_vertices, num_vertices): obstacle rows: the vertices of mesh obstacles, then one row
///   per plane obstacle holding a point of the plane. Obstacles move rigidly (io::RigidMotion from their
///   placement at time 0); their rows are known on every rank and never exchanged.
/// Triangles and edges (body boundary, then obstacle meshes: triangles, the edges of triangles and the
/// segments) refer to rows. Every obstacle mesh vertex is a point: point–triangle pairs against body
/// triangles (whose closest-feature cases cover point–edge and point–point), and the edges take part in
/// edge–edge pairs (whose cases cover point–edge and point–point); so point sets and segment sets need no
/// other pair kind. The topology and the rest
/// positions are replicated (set up once); positions are not.
///
/// Contact ghosts. A rank's own primitives are the triangles and edges with a vertex it owns (all their
/// vertices are local nodes, because the element ghost ring is one element deep). Each rank bounds its
/// own primitives over the step so far, {xᵗ, x, x + p} (and any friction lagging point), inflates the
/// box by d̂ plus twice the largest contact offset, and shares it (MPI_Allgather of 6 doubles). A rank
/// then sends to every other rank the owned vertices of its own primitives whose (uninflated) swept box
/// overlaps that rank's box. Any primitive that can come within d̂ + ξ (ξ: the pair's offsets) of one of
/// rank r's own primitives anywhere on the segments x → x + p therefore reaches r, and so do the
/// primitives of the pairs lagged for friction. The Newton solver refreshes the
/// plan (`update_ghosts`: an MPI_Allgather, an MPI_Alltoall of counts, then point-to-point ids) when it
/// assembles at x and again for the step x → x + p; `gather` then moves only the rows the plan names,
/// point to point.
///
/// Device side. Everything per row and per primitive runs in kernels: the anchors are one box per local
/// row on the device (the union of xᵗ and every lagging point), `update_ghosts` builds the swept boxes,
/// this rank's box and the rows to send on the device, and only the 6 doubles of the rank box, the
/// counts and the send lists reach the host (for the MPI set-up). The plan is then a comm::HaloPlan
/// (send ids: local nodes, receive ids: surface rows) that the HaloTransport moves (MPI or NCCL), and
/// the device `gather(field, out)` packs and unpacks in kernels into a SurfaceField. The topology, the
/// known primitives (`known()`) and the obstacle rows are device data too; the host accessors above
/// the device API remain for the host BarrierPotential path.

#include "comm/halo_plan.hpp"
#include "comm/halo_transport.hpp"
#include "src/contact/pair_list.hpp"
#include "src/core/types.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "src/mesh/scene_mesh.hpp"

#include <mpi.h>

#include <array>
#include <memory>
#include <vector>

namespace intact::contact {

/// A plane obstacle: its row holds a point of the plane; `normal` (unit) points to the free side.
struct Plane {
    int row = 0;
    Vec3 normal{};
    int obstacle = 0; ///< index in the scene's `obstacles`
};

/// The primitives a rank searches for candidates after `update_ghosts`, as device lists of ascending
/// indices (exact-size Views): owned_points (the owned rows), other_points (received rows and obstacle
/// mesh rows), triangles (all rows known), owned_triangles (those with an owned row), owned_edges (all
/// rows known, one owned), other_edges (all rows known, none owned).
struct KnownPrimitives {
    Kokkos::View<const int*, MemSpace> owned_points, other_points;
    Kokkos::View<const int*, MemSpace> triangles, owned_triangles;
    Kokkos::View<const int*, MemSpace> owned_edges, other_edges;
};

class ContactSurface {
public:
    /// Collective. `scene_mesh` is read on rank 0 only (boundary extraction, obstacle meshes), then
    /// broadcast; `obstacles` (the scene's, same on every rank) give planes and velocities.
    /// The device gather moves ghost rows with an MPI transport until `set_transport` gives another.
    ContactSurface(MPI_Comm comm,
                   const SceneMesh& scene_mesh,
                   const std::vector<io::Obstacle>& obstacles,
                   const LocalMesh& local);

    int num_vertices() const { return static_cast<int>(m_vertex_gid.size()); }
    int num_body_vertices() const { return m_num_body_vertices; }
    int num_obstacle_rows() const { return num_vertices() - m_num_body_vertices; }
    bool is_obstacle(int s) const { return s >= m_num_body_vertices; }

    /// Per row: global node id (obstacle rows: global_num_nodes + k, above every body node).
    const std::vector<GlobalId>& vertex_gid() const { return m_vertex_gid; }
    /// Per row: body index, or −1 − k for a row of obstacle k.
    const std::vector<int>& vertex_body() const { return m_vertex_body; }
    /// How messages name the bodies (io::body_label), set by the simulation; body b is `bodies[b]` without.
    void set_body_labels(std::vector<std::string> labels) { m_body_labels = std::move(labels); }
    std::string body_label(int body) const {
        return static_cast<std::size_t>(body) < m_body_labels.size()
                   ? m_body_labels[static_cast<std::size_t>(body)]
                   : "bodies[" + std::to_string(body) + "]";
    }
    /// Per row: 1 when its motion is prescribed (fixed or moving nodes, obstacles).
    const std::vector<char>& vertex_constrained() const { return m_vertex_constrained; }
    /// Per row: the obstacle's own Coulomb μ, or −1 (body rows, obstacles without `friction`).
    const std::vector<double>& vertex_friction() const { return m_vertex_friction; }
    /// Per row: the contact offset (m) of its body (io::Body::contact_offset; 0 for solids and
    /// obstacles). A pair's offset ξ is the sum of its two primitives' (pair_offset).
    const std::vector<double>& vertex_offset() const { return m_vertex_offset; }
    /// The largest row offset (m): a pair's ξ is at most twice it. 0 when no body has an offset.
    double max_offset() const { return m_max_offset; }
    const std::vector<Vec3>& rest_positions() const { return m_rest; }
    const std::vector<std::array<int, 3>>& triangles() const { return m_triangles; }
    const std::vector<std::array<int, 2>>& edges() const { return m_edges; }
    const std::vector<Plane>& planes() const { return m_planes; }

    /// Obstacle rows at time t (the rigid motion from rest, kernels/rigid_motion.hpp), size
    /// num_obstacle_rows. Host.
    std::vector<Vec3> obstacle_positions(double time) const;

    /// The body rows of moving box `motion` (SceneMesh::motion) become free rows: they take contact from
    /// now on, with obstacles too. Host and device flags; every rank alike. Local.
    void release_motion(int motion);

    /// Surface rows this rank owns: their row indices and local node indices (same order).
    const std::vector<int>& owned_surface() const { return m_owned_surface; }
    const std::vector<int>& owned_local() const { return m_owned_local; }
    bool owns(int s) const { return m_owned[static_cast<std::size_t>(s)] != 0; }
    /// Local node index of a body row this rank holds (owned or ghost), or -1.
    int local_of_surface(int surface) const { return m_local_of_surface[static_cast<std::size_t>(surface)]; }

    /// Remember the step's start xᵗ (rows of local nodes, ghosts current): ghost boxes include it until
    /// the next begin_step. Local.
    void begin_step(const NodeField& x);
    /// Also cover x (a friction lagging point) in the ghost boxes until the next begin_step. Local.
    void add_anchor(const NodeField& x);

    /// Rebuild the ghost plan for positions x and, when given, the step x → x + step (both with current
    /// ghost rows). `inflation` is d̂ + 2 max_offset() (ContactModel::reach). Collective.
    void update_ghosts(const NodeField& x, const NodeField* step, double inflation);
    /// Pairs whose rows every rank holding them must know whatever the boxes say (an augmented-Lagrangian
    /// method's constraints, which stay in its set while their primitives drift apart). From the next
    /// update_ghosts on, each rank also sends its owned rows of these pairs to the owners of the pairs'
    /// other body rows (who hold the same pairs, since they touch a row those ranks own). The list must
    /// outlive its use; null clears it. Local.
    void require_pairs(const PairList* pairs) { m_required = pairs; }
    /// Rank owning body row s (rows are numbered by owner rank). Host.
    int owner_of(int s) const;

    /// Rows this rank can use after the last `update_ghosts`: owned, received and obstacle mesh rows (not
    /// the plane rows, which are no primitive's vertex), and the triangles and edges whose vertices are
    /// all such rows. Sorted.
    /// (Host copies of the device lists, made on first use after each update_ghosts.)
    const std::vector<int>& known_vertices() const;
    const std::vector<int>& known_triangles() const;
    const std::vector<int>& known_edges() const;

    /// Fill `out` (size num_vertices) with `field`'s rows of the known body rows (owned ones from this
    /// rank, the others from their owners by the current plan) and `obstacle_rows` in the obstacle rows.
    /// Rows that are not known keep whatever they held. Collective.
    void gather(const NodeField& field, const std::vector<Vec3>& obstacle_rows, std::vector<Vec3>& out) const;

    // ---- Device API ------------------------------------------------------------------------------------

    /// The replicated topology and this rank's row flags on the device (built once, in the constructor).
    const SurfaceTopology& topology() const { return m_topology; }

    /// The transport of the device `gather` (e.g. comm::make_transport(comm, scene.halo_transport)); it
    /// must not be null. Not collective (creating the transport is).
    void set_transport(std::shared_ptr<comm::HaloTransport> transport);

    /// A zeroed device field of num_vertices rows.
    SurfaceField make_field(const std::string& label) const;

    /// Write the obstacle rows of `xs` (num_vertices rows) at time t, as the host obstacle_positions.
    /// Device, local.
    void obstacle_positions(double time, const SurfaceField& xs) const;
    /// out = a x + b y on the obstacle rows only (e.g. step = target − now: a = 1, b = −1; trial = now +
    /// α step: a = 1, b = α); other rows untouched. With a = b = 0 the rows are set to 0. Device, local.
    void combine_obstacle_rows(double a,
                               const ConstSurfaceField& x,
                               double b,
                               const ConstSurfaceField& y,
                               const SurfaceField& out) const;
    /// max |value| over the obstacle rows of `field` (0 without obstacles). Device reduction, local.
    double obstacle_max_abs(const ConstSurfaceField& field) const;

    /// Fill the known body rows of `out` (num_vertices rows) with `field`'s values (local nodes): owned
    /// rows by a kernel, the rows of other ranks through the ghost plan and the transport (packed and
    /// unpacked in kernels, buffers kept from update_ghosts). Obstacle rows and rows that are not known
    /// are left as they are: the caller writes the obstacle rows (obstacle_positions /
    /// combine_obstacle_rows), once, since gather never touches them. Collective among neighbours.
    void gather(const NodeField& field, const SurfaceField& out) const;

    /// Known primitives of the current plan (device lists). Valid until the next update_ghosts.
    const KnownPrimitives& known() const { return m_known_device; }

private:
    /// Merge the owned rows of the required pairs into the send blocks (ranks ascending, rows ascending,
    /// without duplicates) and copy the send lists to the device. Host.
    void add_required_rows(std::vector<int>& ranks, std::vector<int>& block_start, std::vector<int>& sent);

    MPI_Comm m_comm;
    int m_rank = 0;
    int m_size = 1;
    int m_num_body_vertices = 0;
    std::vector<GlobalId> m_vertex_gid;
    std::vector<int> m_vertex_body;
    std::vector<std::string> m_body_labels;
    std::vector<char> m_vertex_constrained;
    std::vector<int> m_vertex_motion;      ///< per row: moving box of a body row, or −1
    std::vector<double> m_vertex_friction; ///< per row: obstacle μ or −1
    std::vector<double> m_vertex_offset;   ///< per row: contact offset, m
    double m_max_offset = 0.0;
    std::vector<Vec3> m_rest;
    std::vector<io::RigidMotion> m_obstacle_motion; ///< per obstacle row (host)
    std::vector<std::array<int, 3>> m_triangles;
    std::vector<std::array<int, 2>> m_edges;
    std::vector<Plane> m_planes;
    std::vector<int> m_owned_surface, m_owned_local, m_local_of_surface;
    std::vector<char> m_owned;
    std::vector<int> m_row_owner_offsets; ///< rank r owns body rows [offsets[r], offsets[r + 1])
    const PairList* m_required = nullptr;

    // Static: own primitives and their rows; row → incident triangles / edges (CSR).
    std::vector<int> m_own_triangles, m_own_edges;
    std::vector<int> m_local_rows;         ///< body rows of local nodes (owned and ghosts)
    std::vector<int> m_row_of_local_index; ///< row → index in m_local_rows, or -1
    std::vector<int> m_triangle_offsets, m_triangle_ids, m_edge_offsets, m_edge_ids;

    // The plan: rows sent to / received from each neighbour, in blocks.
    std::vector<int> m_send_ranks, m_send_offsets, m_send_rows;
    std::vector<int> m_recv_ranks, m_recv_offsets, m_recv_rows;
    bool m_has_plan = false;
    // Host copies of the known lists (legacy accessors), made lazily.
    mutable std::vector<int> m_known_vertices, m_known_triangles, m_known_edges;
    mutable bool m_known_on_host = false;

    // ---- Device data ----
    using IntView = Kokkos::View<int*, MemSpace>;
    using RowsView = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;
    SurfaceTopology m_topology;
    /// Per obstacle row: velocity, angular velocity, centre.
    Kokkos::View<double* [9], Kokkos::LayoutRight, MemSpace> m_obstacle_motion_d;
    std::shared_ptr<comm::HaloTransport> m_transport;
    // Static lists: owned rows and their local nodes; local rows and their local nodes; own primitives,
    // each primitive's slot among the own boxes (or −1); the incidence CSR.
    IntView m_owned_surface_d, m_owned_local_d, m_local_nodes_d, m_row_of_local_index_d;
    IntView m_own_triangles_d, m_own_edges_d, m_own_slot_of_triangle_d, m_own_slot_of_edge_d;
    IntView m_triangle_offsets_d, m_triangle_ids_d, m_edge_offsets_d, m_edge_ids_d;
    // Per local row: anchor box (xᵗ and lagging points) and swept box; per own primitive: its box.
    RowsView m_anchor_lo, m_anchor_hi, m_row_lo, m_row_hi, m_own_lo, m_own_hi;
    Kokkos::View<double[6], MemSpace> m_bound_d; ///< this rank's box (lo, hi)
    Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace> m_neighbour_boxes_d; ///< per candidate rank
    Kokkos::View<double* [6], Kokkos::LayoutRight, MemSpace>::HostMirror m_neighbour_boxes_host;
    // The plan on the device: sent rows and their local nodes, received rows, block starts.
    IntView m_send_rows_d, m_send_local_d, m_recv_rows_d, m_block_offsets_d;
    Kokkos::View<char*, MemSpace> m_known_d; ///< per row: 1 when known
    IntView m_other_points_d, m_triangles_d, m_owned_triangles_d, m_owned_edges_d, m_other_edges_d;
    KnownPrimitives m_known_device;
    std::unique_ptr<comm::HaloPlan> m_ghost_plan;
    Kokkos::View<double*, MemSpace> m_gather_send, m_gather_recv;
    // Rows `gather` takes from a field: the owned rows, then the rows sent (local node indices), packed on
    // the device and copied to the host in one piece. Rebuilt with the plan.
    Kokkos::View<int*, MemSpace> m_pack_local;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> m_pack;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>::HostMirror m_pack_host;
    mutable std::vector<double> m_recv_buffer;
    mutable std::vector<MPI_Request> m_requests;
};

} // namespace intact::contact
