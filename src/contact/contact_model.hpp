#pragma once
/// @file contact_model.hpp
/// @brief The contact side of a step, shared by every contact term and by the step bound: the obstacle
/// rows, and the contact surface gathered at the current iterate, along a step and at a trial point.
///
/// Surface rows at x are gathered once per refresh and read by every term (barrier, friction, later the
/// augmented-Lagrangian terms), so a Newton iteration refreshes the contact ghost plan twice (at x for
/// assembly, and for the segment x → x + d for the CCD bound), as DESIGN.md's halo rules ask. Collective
/// calls are marked; every rank must make them in the same order.

#include "src/contact/barrier_potential.hpp"
#include "src/contact/contact_surface.hpp"

#include <vector>

namespace intact::contact {

class ContactModel {
public:
    ContactModel(MPI_Comm comm, ContactSurface& surface, const BarrierPotential& barrier);

    ContactSurface& surface() { return m_surface; }
    const ContactSurface& surface() const { return m_surface; }
    const BarrierPotential& barrier() const { return m_barrier; }
    double dhat() const { return m_barrier.dhat(); }

    /// Refresh the ghost plan for x and gather the surface at x, with the obstacles at `obstacles`, into
    /// positions(). Collective.
    void update(const NodeField& x, const std::vector<Vec3>& obstacles);
    /// Refresh the ghost plan for the segment x → x + d and gather both ends' rows: positions() at x,
    /// step() = d (obstacle rows: `obstacle_step`). Collective.
    void update_segment(const NodeField& x,
                        const std::vector<Vec3>& obstacles,
                        const NodeField& d,
                        const std::vector<Vec3>& obstacle_step);
    /// Gather x with the current plan into positions(). Collective.
    void gather(const NodeField& x, const std::vector<Vec3>& obstacles);
    /// Gather a trial point with the current plan into trial(). Collective.
    void gather_trial(const NodeField& trial, const std::vector<Vec3>& obstacles);
    /// Gather a search direction with the current plan (obstacle rows zero) into direction(). Collective.
    void gather_direction(const NodeField& p);

    const std::vector<Vec3>& positions() const { return m_xs; }
    const std::vector<Vec3>& step() const { return m_ps; }
    const std::vector<Vec3>& trial() const { return m_ts; }
    const std::vector<Vec3>& direction() const { return m_ds; }

    /// Largest α in (0, 1] along positions() + α step() that closes no pair by more than 80% of its gap,
    /// on this rank's pairs (the caller reduces with MIN). Local.
    double local_max_step() const;
    /// Smallest squared pair distance at positions(), MIN over ranks. Collective.
    double min_squared_distance() const;
    /// Active pairs at positions() counted once over all ranks. Collective.
    long long count_active_pairs() const;

private:
    MPI_Comm m_comm;
    ContactSurface& m_surface;
    const BarrierPotential& m_barrier;
    std::vector<Vec3> m_xs, m_ps, m_ts, m_ds;
    std::vector<Vec3> m_obstacle_zero;
};

} // namespace intact::contact
