#pragma once
/// @file forcing_term.hpp
/// @brief PCG tolerances that follow Newton's progress: Eisenstat and Walker's forcing terms (choice 2).
///
/// An inexact Newton method solves H p = −∇E only to ‖r‖ ≤ η_k ‖∇E‖. Far from the solution a loose η
/// loses nothing (the model itself is inaccurate there); near it η must shrink for superlinear
/// convergence. Eisenstat and Walker (1996, choice 2) take
///
///     η_k = γ (‖∇E_k‖ / ‖∇E_{k−1}‖)^α,   γ = 0.9, α = 2,
///
/// safeguarded by η_k ≥ γ η_{k−1}^α whenever that bound exceeds 0.1 (so η does not collapse after one
/// lucky iteration), and clamped here to [floor, ceiling]: the floor is the scene's
/// `solver.linear_tolerance` (what a fixed tolerance would have used on every solve), the ceiling 0.1,
/// tighter than their 0.9 because the barrier's Hessian changes fast near contact and a step whose
/// direction is 10% off still descends (PCG's directions are descent directions at any accuracy: H is
/// projected to PSD). The first solve of each step takes the ceiling.

#include <algorithm>

namespace intact::solver {

class ForcingTerm {
public:
    ForcingTerm(double floor, double ceiling = 0.1) : m_floor(std::min(floor, ceiling)), m_ceiling(ceiling) {}

    /// A new nonlinear solve: the next tolerance is the ceiling.
    void restart() {
        m_previous_norm = 0.0;
        m_previous_eta = m_ceiling;
    }

    /// The relative PCG tolerance for the Newton iteration whose gradient norm is `gradient_norm`.
    double next(double gradient_norm) {
        double eta = m_ceiling;
        if (m_previous_norm > 0.0) {
            const double ratio = gradient_norm / m_previous_norm;
            eta = k_gamma * ratio * ratio;
            const double safeguard = k_gamma * m_previous_eta * m_previous_eta;
            if (safeguard > 0.1) {
                eta = std::max(eta, safeguard);
            }
        }
        eta = std::clamp(eta, m_floor, m_ceiling);
        m_previous_norm = gradient_norm;
        m_previous_eta = eta;
        return eta;
    }

private:
    static constexpr double k_gamma = 0.9;
    double m_floor;
    double m_ceiling;
    double m_previous_norm = 0.0;
    double m_previous_eta = 0.0;
};

} // namespace intact::solver
