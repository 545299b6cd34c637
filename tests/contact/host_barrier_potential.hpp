#pragma once
/// @file host_barrier_potential.hpp
/// @brief The host reference of the device contact path, kept for tests only (device candidate search,
/// pair evaluation and contact matrix are checked against it). IPC contact: the constraint set, the
/// barrier energy κ Σ b(s_k, ŝ) with its derivatives, and the
/// CCD bound of the line search (IPC spec §2, §4, §5, §8). Host code over the rows the surface's ghost
/// plan makes known (contact_surface.hpp).
///
/// Pairs: point–triangle (a surface row against a triangle it is not a corner of), edge–edge (two
/// edges without a shared row, each unordered pair once) and point–plane (a body row against a plane
/// obstacle). Obstacle triangles and edges pair with body ones like any other; pairs whose rows are all
/// prescribed are left out. A pair is active when its squared distance s is below ŝ = d̂².
/// Ownership: a pair's energy is counted on the rank owning its smallest global vertex id (obstacle rows
/// have the largest ids, so that is always a body row); every rank evaluates the pairs that touch a row
/// it owns, among the rows the surface's ghost plan makes known, and adds their derivatives to its owned
/// rows, so no contribution travels back. Pairs are kept sorted by their rows, so sums are
/// deterministic.

#include "src/contact/broad_phase.hpp"
#include "src/contact/contact_surface.hpp"
#include "src/io/scene.hpp"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace intact::contact {

/// A 3×3 block of the contact Hessian: row = local node (owned), col = surface vertex.
struct ContactBlock {
    int row;
    int col;
    double value[3][3];
};

class BarrierPotential {
public:
    enum class Kind { point_triangle, edge_edge, point_plane };
    struct Pair {
        Kind kind;
        std::array<int, 4> v; ///< surface rows (point_plane: v[0], v[1] = plane index, v[2] = its row)
        bool operator<(const Pair& o) const { return std::tie(kind, v) < std::tie(o.kind, o.v); }
    };

    /// @param dhat contact distance d̂ (m)
    BarrierPotential(MPI_Comm comm, const ContactSurface& surface, double dhat);

    double dhat() const { return m_dhat; }

    /// Active pairs (s < ŝ) at surface positions `xs` that touch a vertex this rank owns. Local.
    std::vector<Pair> active_pairs(const std::vector<Vec3>& xs) const;

    /// Σ over active pairs this rank owns of w b(s, ŝ) (w: edge–edge mollifier), summed over ranks;
    /// +∞ if a pair has s ≤ 0. Collective.
    double energy(const std::vector<Vec3>& xs) const;
    /// This rank's part of `energy` (no reduction). Local.
    double local_energy(const std::vector<Vec3>& xs) const;

    /// Smallest squared distance over the candidate pairs touching owned rows (primitives whose boxes
    /// come within d̂, and every plane), reduced with MIN over ranks; +∞ without pairs. Collective.
    double min_squared_distance(const std::vector<Vec3>& xs) const;

    /// Add the κ-weighted gradient rows (owned local nodes) and, when `blocks` is given, append the Hessian
    /// blocks (PSD-projected per pair, summed per block) of the pairs active at `xs`. `gradient` is indexed
    /// by local node (3 values each). Local.
    void derivatives(const std::vector<Vec3>& xs,
                     double kappa,
                     std::vector<double>& gradient,
                     std::vector<ContactBlock>* blocks) const;

    /// Largest α in (0, 1] such that no pair closes more than 80% of its gap along xs + α ps
    /// (conservative CCD over swept-box candidates), reduced with MIN over ranks. Collective.
    double max_step(const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) const;
    /// This rank's part of `max_step` (no reduction). Local.
    double local_max_step(const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) const;

    /// First pair closer than d̂ at `xs` (for the start-up check), as text naming the bodies (or
    /// obstacles) and their nodes, or empty. Collective (same text on every rank).
    std::string first_close_pair(const std::vector<Vec3>& xs) const;

    /// Whether this rank owns the pair's energy (smallest global vertex id is owned here).
    bool owns(const Pair& pair) const;
    /// ε_x of the edge–edge mollifier of an edge pair, from the rest lengths (IPC eq. 24). Host.
    double mollifier_threshold(const Pair& pair) const;
    /// Whether this rank owns surface row `s` (adds its rows).
    bool owns_vertex(int s) const { return m_surface.owns(s); }

private:
    std::vector<Pair>
    candidates(const std::vector<Vec3>& xs, const std::vector<Vec3>* ps, double inflation) const;
    double pair_squared_distance(const Pair& pair, const std::vector<Vec3>& xs) const;
    /// Signed distance of a point–plane pair's row from its plane (positive on the free side).
    double plane_distance(const Pair& pair, const std::vector<Vec3>& xs) const;
    /// "body B node G" or "obstacles[K] vertex J", for messages.
    std::string describe_row(int s) const;

    MPI_Comm m_comm;
    const ContactSurface& m_surface;
    double m_dhat;
    // Broad phase (cell: the mean rest length of the bodies' boundary edges, at least 2 d̂) and its boxes.
    mutable SpatialHash m_hash;
    mutable BoxList m_owned_point_boxes, m_other_point_boxes, m_known_triangle_boxes, m_owned_triangle_boxes;
    mutable BoxList m_owned_edge_boxes, m_other_edge_boxes;
};

} // namespace intact::contact
