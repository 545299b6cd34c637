#pragma once
/// @file boundary_motion.hpp
/// @brief Prescribed motion within a step: fixed and moving nodes, and obstacles.
///
/// Every step, prescribed nodes end at x + h v_prescribed (fixed nodes: v = 0) and obstacle rows at their
/// positions at the step's end time (rest + velocity · t). Two ways to get there:
/// - gradual (IPC): the remaining motion Δ = target − x is part of every Newton step, capped by the
///   step bound like the free rows, so prescribed motion never inverts an element or crosses a contact;
///   `arrive` puts the boundary on target once the remainder is negligible.
/// - place and eliminate (augmented-Lagrangian methods, AL spec §2.8): `arrive` at the step's start
///   moves prescribed rows and obstacles to their targets; they are then eliminated rows (free mask 0)
///   for the rest of the step.
/// The free mask (1 free, 0 prescribed) is the elimination every product and PCG uses.

#include "src/contact/contact_surface.hpp"
#include "src/mesh/distribute.hpp"

#include <mpi.h>

#include <vector>

namespace intact::io {
class CheckpointWriter;
class CheckpointReader;
} // namespace intact::io

namespace intact::solver {

class BoundaryMotion {
public:
    /// `prescribed_velocity`: m/s per local node (0 for free and fixed ones). `surface` may be null
    /// (no contact: no obstacles).
    BoundaryMotion(MPI_Comm comm,
                   const LocalMesh& mesh,
                   NodeField prescribed_velocity,
                   const contact::ContactSurface* surface);

    /// 1 for free nodes, 0 for fixed or moving ones (per local node, device).
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }

    /// This step's targets from the state at its start: nodes at x + h v, obstacles at `end_time`. Device.
    /// Local.
    void begin_step(const NodeField& x, double h, double end_time);

    /// Δ = target − x on prescribed rows (0 on free rows), into step(), and the obstacles' remaining
    /// motion into obstacle_step(); returns ‖Δ‖∞ over all ranks and obstacle rows. Collective.
    double remaining(const NodeField& x);
    /// Prescribed rows of x and the obstacles onto their targets; step() and obstacle_step() become 0.
    /// Local.
    void arrive(const NodeField& x);

    /// trial = x + α p on every local row, except that when α = 1 the prescribed rows land exactly on
    /// their targets; obstacle rows likewise into obstacle_trial(). Local.
    void trial_point(const NodeField& x, const NodeField& p, double alpha, const NodeField& trial);
    /// Accept the last trial point's obstacle rows. Local.
    void accept_trial();

    /// Checkpoint: where the obstacles are (a step that ended before they arrived leaves them short of
    /// their target; prescribed nodes are part of x). Replicated values. Local.
    void save(io::CheckpointWriter& out) const;
    /// Restart: the obstacle rows `save` wrote. Local.
    void restore(const io::CheckpointReader& in);

    NodeField step() const { return m_step; }
    NodeField target() const { return m_target; }
    /// Obstacle rows (full-size surface fields; only the obstacle rows are meaningful; empty Views without
    /// contact): where they are now, their remaining motion, the last trial point, the step's target.
    contact::SurfaceField obstacle_positions() const { return m_obstacle_x; }
    contact::SurfaceField obstacle_step() const { return m_obstacle_step; }
    contact::SurfaceField obstacle_trial() const { return m_obstacle_trial; }
    contact::SurfaceField obstacle_target() const { return m_obstacle_target; }

private:
    MPI_Comm m_comm;
    const contact::ContactSurface* m_surface;
    Kokkos::View<double*, MemSpace> m_free;
    NodeField m_velocity, m_target, m_step;
    contact::SurfaceField m_obstacle_x, m_obstacle_target, m_obstacle_step, m_obstacle_trial;
};

} // namespace intact::solver
