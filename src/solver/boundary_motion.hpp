#pragma once
/// @file boundary_motion.hpp
/// @brief Prescribed motion within a step: fixed and moving nodes, and obstacles.
///
/// Every step, prescribed nodes end where their rigid motion (io::MovingSelector: velocity, angular
/// velocity about a centre, a time window) carries them from x over the step (fixed nodes, and moving
/// nodes before their start, stay at x), and obstacle rows at their positions at the step's end time
/// (ContactSurface::obstacle_positions). A moving box whose window has ended is released at the first
/// step that starts at or after its end: its nodes become free (free mask and contact flags) and keep
/// the velocity they had. Two ways to get there:
/// - gradual (IPC): the remaining motion Δ = target − x is part of every Newton step, capped by the
///   step bound like the free rows, so prescribed motion never inverts an element or crosses a contact;
///   `arrive` puts the boundary on target once the remainder is negligible.
/// - place and eliminate (AL spec §2.8): the method's own iterate takes prescribed rows and obstacles to
///   their targets (`al` in safe stages, AlSolver::place_boundary; stencil descent at the step's start
///   when that is safe, else by safe fractions); they are then eliminated rows (free mask 0) for the
///   rest of the step.
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
    /// `mesh.motion` indexes `scene.moving_selectors()`. `surface` may be null (no contact: no
    /// obstacles); released rows are marked free in it.
    BoundaryMotion(MPI_Comm comm,
                   const LocalMesh& mesh,
                   const io::Scene& scene,
                   contact::ContactSurface* surface);

    /// 1 for free nodes, 0 for fixed or moving ones (per local node, device). Its contents change (in
    /// place) when a moving box is released.
    Kokkos::View<const double*, MemSpace> free_mask() const { return m_free; }

    /// The step of h seconds from start_time (as the caller counts time, so that windows and the
    /// obstacles' clock see exact values): releases moving boxes that have ended, then the targets from
    /// the state at the step's start: each moving node carried by its motion over the part of
    /// [start_time, start_time + h] inside its window, obstacles at obstacle_time. h is the solve's
    /// share of the time step (half of it for implicit midpoint, whose solve is at t + h/2);
    /// obstacle_time is always the time step's end, because the integrator's end state is checked
    /// against the obstacles where the step leaves them (and output and `intact check` place them
    /// there). Device kernels; a few numbers per moving box from the host. Local.
    void begin_step(const NodeField& x, double h, double start_time, double obstacle_time);

    /// Δ = target − x on prescribed rows (0 on free rows), into step(), and the obstacles' remaining
    /// motion into obstacle_step(); returns ‖Δ‖∞ over all ranks and obstacle rows. Collective.
    double remaining(const NodeField& x);
    /// Prescribed rows of x and the obstacles onto their targets; step() and obstacle_step() become 0.
    /// Local.
    void arrive(const NodeField& x);
    /// Prescribed rows and obstacles stay where they are for now (short of their targets): step() and
    /// obstacle_step() become 0 until the next `remaining`, so step bounds along free motion do not move
    /// them. Local.
    void hold();

    /// trial = x + α p on every local row, except that when α = 1 and `snap`, the prescribed rows land
    /// exactly on their targets; obstacle rows likewise into obstacle_trial(). Local.
    void trial_point(
        const NodeField& x, const NodeField& p, double alpha, const NodeField& trial, bool snap = true);
    /// Accept the last trial point's obstacle rows. Local.
    void accept_trial();

    /// Checkpoint: where the obstacles are (a step that ended before they arrived leaves them short of
    /// their target; prescribed nodes are part of x). Replicated values. Local. Nothing else is saved:
    /// which moving boxes are released, their maps and the obstacles' targets are functions of the step's
    /// start time, so the first `begin_step` after a restart recomputes them as the run would have.
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

    /// Public for CUDA lambdas: free the nodes of moving box k (device, local).
    void release(int k);

private:
    MPI_Comm m_comm;
    contact::ContactSurface* m_surface;
    Kokkos::View<double*, MemSpace> m_free;
    Kokkos::View<int*, MemSpace> m_motion; ///< per local node: moving box, or −1
    std::vector<io::MovingSelector> m_selectors;
    std::vector<char> m_released;
    /// Per moving box, this step's map x ↦ R x + b: R row-major in [0, 9), b in [9, 12).
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> m_maps;
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace>::HostMirror m_maps_host;
    NodeField m_target, m_step;
    contact::SurfaceField m_obstacle_x, m_obstacle_target, m_obstacle_step, m_obstacle_trial;
};

} // namespace intact::solver
