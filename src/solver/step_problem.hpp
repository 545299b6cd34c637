#pragma once
/// @file step_problem.hpp
/// @brief What one time step asks of a solver, and what the solver reports back.
///
/// Every implicit integrator writes its step as one minimisation (A-search spec §2, IPC spec §1):
///
///     x* = argmin_x  ½ (x − x̂)ᵀ M (x − x̂) + c h² (Ψ(x) − Σ_i (m_i g + f_i)·x_i) + Σ terms(x)
///
/// with prescribed (fixed or moving) nodes and obstacles ending the step at their targets, and f the
/// applied forces of the step (AppliedForces), an external load weighted exactly like gravity. The
/// integrator fills x̂ and c, the boundary motion the targets; the solver only minimises.

#include "src/core/types.hpp"

#include <limits>

namespace intact::solver {

/// One step's minimisation problem. Views are device Views with one row per local node.
struct StepProblem {
    NodeField x_hat;     ///< inertial target x̂ (rows: local nodes)
    double h = 0.0;      ///< time step, s
    double weight = 1.0; ///< c, the weight of h² (Ψ + gravity) (1 for implicit Euler)
    Vec3 gravity{};      ///< m/s²
    /// The solve's positions are the state at t + θ h: 1, except ½ for implicit midpoint (whose solve
    /// finds the midpoint y); prescribed nodes and obstacles are placed for that time.
    double theta = 1.0;
    NodeField force; ///< applied force f per local node (N), owned rows; empty View: none
};

/// Wall seconds of a step's phases on this rank (each after a fence). Methods fill those they have.
struct PhaseSeconds {
    double contact = 0.0;      ///< contact ghost plans, gathers, κ start, friction lags, pair counts
    double assembly = 0.0;     ///< gradient and Hessian: elements and energy terms
    double linear_solve = 0.0; ///< PCG, with its products and halo exchanges
    double step_bound = 0.0;   ///< inversion bound and CCD (with the segment's ghost plan)
    double line_search = 0.0;  ///< energies at x and at every trial point
};

/// What a step solver reports. Keys every method shares keep one meaning in metrics.jsonl; a method
/// leaves the counters it has no use for at their defaults (written as documented in README "Output").
struct StepResult {
    int iterations = 0;            ///< Newton (or outer) iterations of the step
    int linear_iterations = 0;     ///< PCG iterations, summed over the step
    int warm_start_iterations = 0; ///< group-CG iterations of the decade warm start, summed (0: none)
    double residual = 0.0;         ///< the method's stopping measure at the end (IPC: ‖p‖∞ / h, m/s)
    double residual_acceleration = 0.0; ///< unbalanced force per mass at the end, m/s² (stopping_rule.hpp)
    bool converged = false;
    bool line_search_failed = false;
    long long contact_pairs = 0; ///< active contact pairs at the end of the step (all ranks)
    double min_distance = std::numeric_limits<double>::infinity(); ///< smallest pair distance (m)
    double kappa = 0.0;        ///< barrier stiffness at the end of the step (0 without a barrier)
    int friction_lags = 0;     ///< friction lag updates this step, the first at xᵗ (0 without friction)
    int outer_iterations = -1; ///< AL: outer iterations (−1: the method has none; written as null)
    double mean_toi = -1.0;    ///< AL: mean α of the step's outer iterations (−1: none; null)
    long long active_set_size = -1; ///< AL: constraints held after the step, all ranks (−1: none; null)
    double normal_force = -1.0;     ///< AL: Σ λ / h², the total contact normal force (N; −1: none; null)
    long long augmented_pairs = -1; ///< BAL: pairs in the augmentation set A′ at the end (−1: none; null)
    double sigma = -1.0;            ///< BAL: σ at the end of the step (−1: none; null)
    int sweeps = -1;                ///< stencil descent: hybrid sweeps of the step (−1: none; null)
    int warm_start_sweeps = -1;     ///< stencil descent: warm-start sweeps of the step (−1: none; null)
    long long barrier_stencils = -1; ///< stencil descent: |B| at the step's end, all ranks (−1: none; null)
    double grey_fraction = -1.0;     ///< stencil descent: GREY share of the coloring (−1: none; null)
    /// A barrier the method keeps in its own stencils (stencil descent's B with its ŝᵢ, κᵢ), which the
    /// shared potential's terms do not hold: its stored energy at the step's start and end, and its
    /// gradient at the end dotted with the step (J, summed over ranks; NaN: none). The step certificate
    /// counts it as a stored term of both ends (step_certificate.hpp).
    double own_barrier_start = std::numeric_limits<double>::quiet_NaN();
    double own_barrier_end = std::numeric_limits<double>::quiet_NaN();
    double own_barrier_slope = std::numeric_limits<double>::quiet_NaN();
    PhaseSeconds seconds; ///< where this rank's time went
};

} // namespace intact::solver
