#pragma once
/// @file barrier_potential.hpp
/// @brief IPC contact: the constraint set, the barrier energy κ Σ b(s_k, ŝ) with its derivatives, and the
/// CCD bound of the line search (IPC spec §2, §4, §5, §8). Host code over the replicated surface.
///
/// Pairs: point–triangle (a surface vertex against a triangle it is not a corner of), edge–edge (two
/// surface edges without a shared vertex, each unordered pair once) and point–plane (a surface vertex
/// against a plane obstacle). A pair is active when its squared distance s is below ŝ = d̂².
/// Ownership: a pair's energy is counted on the rank owning its smallest global vertex id; every rank
/// evaluates the pairs that touch a vertex it owns and adds their derivatives to its owned rows, so no
/// contribution travels back. Pairs are kept sorted by their vertex ids, so sums are deterministic.

#include "src/contact/contact_surface.hpp"
#include "src/io/scene.hpp"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace intact::contact {

struct Plane {
    Vec3 point{};
    Vec3 normal{}; ///< unit, towards the free side
};

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
        std::array<int, 4> v; ///< surface vertices (point_plane: v[0]; v[1] = plane index)
        bool operator<(const Pair& o) const { return std::tie(kind, v) < std::tie(o.kind, o.v); }
    };

    /// @param dhat contact distance d̂ (m)
    BarrierPotential(MPI_Comm comm, const ContactSurface& surface, std::vector<Plane> planes, double dhat);

    double dhat() const { return m_dhat; }

    /// Active pairs (s < ŝ) at surface positions `xs` that touch a vertex this rank owns. Local.
    std::vector<Pair> active_pairs(const std::vector<Vec3>& xs) const;

    /// Σ over active pairs this rank owns of w b(s, ŝ) (w: edge–edge mollifier), summed over ranks;
    /// +∞ if a pair has s ≤ 0. Collective.
    double energy(const std::vector<Vec3>& xs) const;

    /// Smallest squared distance over the pairs touching owned vertices (all pairs within d̂), reduced
    /// with MIN over ranks; +∞ without pairs. Collective.
    double min_squared_distance(const std::vector<Vec3>& xs) const;

    /// κ-weighted gradient rows (owned local nodes) and Hessian blocks (PSD-projected per pair) of the
    /// pairs active at `xs`. `gradient` is indexed by local node (3 values each). Local.
    void derivatives(const std::vector<Vec3>& xs,
                     double kappa,
                     std::vector<double>& gradient,
                     std::vector<ContactBlock>& blocks) const;

    /// Largest α in (0, 1] such that no pair closes more than 80% of its gap along xs + α ps
    /// (conservative CCD over swept-box candidates), reduced with MIN over ranks. Collective.
    double max_step(const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) const;

    /// First pair closer than d̂ at `xs` (for the start-up check), as text naming the bodies and
    /// vertices, or empty. Collective (same text on every rank).
    std::string first_close_pair(const std::vector<Vec3>& xs) const;

    /// Whether this rank owns the pair's energy (smallest global vertex id is owned here).
    bool owns(const Pair& pair) const;
    /// Whether this rank owns surface vertex `s` (adds its rows).
    bool owns_vertex(int s) const { return m_owned[static_cast<std::size_t>(s)] != 0; }
    const std::vector<Plane>& planes() const { return m_planes; }

private:
    std::vector<Pair>
    candidates(const std::vector<Vec3>& xs, const std::vector<Vec3>* ps, double inflation) const;
    double pair_squared_distance(const Pair& pair, const std::vector<Vec3>& xs) const;
    double mollifier_threshold(const Pair& pair) const;

    MPI_Comm m_comm;
    const ContactSurface& m_surface;
    std::vector<Plane> m_planes;
    double m_dhat;
    std::vector<char> m_owned; ///< per surface vertex: owned by this rank
    double m_cell = 1.0;       ///< broad-phase grid cell size, m
};

} // namespace intact::contact
