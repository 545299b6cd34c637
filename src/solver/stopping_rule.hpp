#pragma once
/// @file stopping_rule.hpp
/// @brief When a Newton-type solve of a step's incremental potential may stop. One home for every
/// Newton-type method (IPC today, the augmented-Lagrangian methods next).
///
/// After the Newton direction p at the iterate x (boundary arrived, so the free rows of the right-hand
/// side are −r with r = ∇E(x)), two measures, both MAX over free owned nodes and ranks:
///
///     step velocity          u = ‖p‖∞ / h                      m/s    (IPC spec §7's ε_d test)
///     residual acceleration  a = max_i ‖r_i‖∞ / (m_i h²)       m/s²   (the unbalanced force per mass)
///
/// The solve may stop when u < ε_d and a < ε_a. Why both: p = H⁻¹ r estimates the remaining correction
/// only where the Hessian models E well over that distance. In the sticking zone of smoothed friction
/// (slip below ε_v h) H is about μN / (ε_v h), so p is tiny while gravity is still unbalanced, and the
/// u test alone ends the step before its forces have acted (a block on a slope then slides too slowly or
/// not at all). The a test cannot be fooled that way: the projected H is at least M, so the remaining
/// correction δ = H⁻¹ r obeys ‖δ‖_M ≤ ‖M⁻¹ r‖_M, and the step's velocity error δ / h is at most h a
/// (in the mass norm). A residual acceleration below ε_a therefore bounds the error of every step's
/// velocity by h ε_a, whatever h, the stiffness or the friction smoothing.
///
/// Defaults (`stopping_tolerances`): ε_d = 1e-2 l/s (IPC's, l the bounding-box diagonal) and
/// ε_a = 1e-4 |g| (1e-4 l/s² without gravity). Newton's
/// last steps converge fast, so the error left is far below the bound: slopes slide within 0.01% of Coulomb's
/// acceleration, and a swinging beam stays within 3e-7 of a run converged to 1e-9 (1e-3 |g| gives 5e-6 there,
/// for a fifth fewer iterations on a settling stack; tests/solver/test_accuracy.cpp, README "Stopping"). A
/// user's `solver.newton_tolerance` / `solver.acceleration_tolerance` replace them.
///
/// One more way to end: when the line search finds no decrease along a direction whose whole predicted
/// decrease is below the round-off of E (`below_round_off`), the iterate is as converged as E can tell
/// (stiff bodies reach this near ε_a), and the step ends converged instead of as a failed search.

#include "src/core/types.hpp"
#include "src/io/scene.hpp"

#include <mpi.h>

namespace intact::solver {

/// The two tolerances of the rule.
struct StoppingTolerances {
    double velocity = 1e-2;     ///< ε_d, m/s: ‖p‖∞ / h below this
    double acceleration = 1e-3; ///< ε_a, m/s²: max_i ‖r_i‖∞ / (m_i h²) below this
    double resolution = 0.0;    ///< m: a direction no longer than this cannot move the iterate (1e-13 l)
};

/// The measures of a Newton iterate (see the file comment).
struct NewtonMeasures {
    double step_length = 0.0;           ///< ‖p‖∞, m
    double step_velocity = 0.0;         ///< u = ‖p‖∞ / h, m/s
    double residual_acceleration = 0.0; ///< a = max_i ‖r_i‖∞ / (m_i h²), m/s²
    /// Whether the iterate may end the solve: both tests pass, or the direction is below what double
    /// precision resolves in the scene's coordinates, so no further iterate can differ (near-massless,
    /// quasi-static scenes reach this with a still above ε_a: a divides force round-off by tiny masses).
    bool converged(const StoppingTolerances& tolerances) const {
        return balanced(tolerances) || step_length <= tolerances.resolution;
    }
    /// Both tests pass, without the resolution exit (for a direction shorter than Newton's, e.g. damped).
    bool balanced(const StoppingTolerances& tolerances) const {
        return step_velocity < tolerances.velocity && residual_acceleration < tolerances.acceleration;
    }
};

/// The scene's tolerances: its `solver.newton_tolerance` and `solver.acceleration_tolerance` where set,
/// else the defaults above. `length`: the bounding-box diagonal l (m). Host.
StoppingTolerances stopping_tolerances(const io::Scene& scene, double length);

/// ‖p‖∞ over the first `num_owned` rows, MAX over ranks. Device reduction. Collective.
double max_norm(MPI_Comm comm, const NodeField& p, int num_owned);

/// max_i ‖r_i‖∞ / m_i over owned rows i with free_mask(i) = 1, MAX over ranks (m). Device reduction.
/// Collective.
double mass_scaled_max_norm(MPI_Comm comm,
                            const NodeField& r,
                            Kokkos::View<const double*, MemSpace> mass,
                            Kokkos::View<const double*, MemSpace> free_mask,
                            int num_owned);

/// Both measures at once: `direction` p and `residual` r (or −r: the sign does not matter), the lumped
/// masses, the free mask and h. Two MAX reductions. Collective.
NewtonMeasures measure_newton(MPI_Comm comm,
                              const NodeField& direction,
                              const NodeField& residual,
                              Kokkos::View<const double*, MemSpace> mass,
                              Kokkos::View<const double*, MemSpace> free_mask,
                              int num_owned,
                              double h);

/// A failed line search along a direction with ‖p‖∞ / h below this fraction of ε_d ends the solve
/// converged: E cannot resolve such a step (stiff elements lose about μ V h² ε of E to round-off, more
/// than `below_round_off` allows for), and the direction is a thousandth of the accuracy asked for.
constexpr double k_round_off_velocity = 1e-3;

/// Σ mask ⊙ r · p over the owned rows of every rank (e.g. the predicted decrease −∇E·p = rhs·p of a
/// Newton direction). Device reduction. Collective.
double free_dot(MPI_Comm comm,
                const NodeField& r,
                const NodeField& p,
                Kokkos::View<const double*, MemSpace> free_mask,
                int num_owned);

/// Whether a Newton direction p is below the resolution of E: its predicted decrease −∇E·p = rhs·p
/// (free owned rows, summed over ranks) is at most the line search's round-off × `energy_scale`
/// (Σ|terms of E|, LineSearchSettings). A line search that fails on such a direction has met E's
/// round-off, not a jam: the solve ends converged. Device reduction. Collective.
bool below_round_off(MPI_Comm comm,
                     const NodeField& rhs,
                     const NodeField& direction,
                     Kokkos::View<const double*, MemSpace> free_mask,
                     int num_owned,
                     double energy_scale);

} // namespace intact::solver
