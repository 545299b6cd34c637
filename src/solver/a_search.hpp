#pragma once
/// @file a_search.hpp
/// @brief A-1 and A-search (A-search spec §2.10–§3.6): the implicit-Euler solve for positions, then the
/// velocity vⁿ⁺¹ = w − α Dv with w = (xⁿ⁺¹ − xⁿ)/h and Dv = h M⁻¹ (∇P(xⁿ) − ∇P(xⁿ⁺¹)), the
/// conservative force difference. A-1 takes α = 1; A-search picks α per step so that the total energy
///     H(α) = P(xⁿ⁺¹) + ½ ‖w − α Dv‖²_M = a α² + b α + c0,  a = ½‖Dv‖²_M, b = −⟨w, Dv⟩_M, c0 = P + ½‖w‖²_M
/// meets an energy target T (EnergyTarget), clipped to [α_min, α_max]. Positions are exactly the
/// implicit-Euler minimiser, so whatever the solver guarantees (no penetration, no inversion) holds.
///
/// Distribution (spec §7): one reduction per step of [Ψ, gravity, KW, WD, DD, D, Σ‖∇ terms‖², applied
/// forces, each conservative term] to rank 0 and one broadcast of the reduced numbers, so every rank
/// computes the same α from the same bits (start() reduces the total mass and constraints once more).
/// Friction is not part of P: it acts inside the solve and its work D enters the target.
///
/// Barrier stiffness: when a conservative term's weight changes between steps (IPC's κ starts afresh
/// every step and may double), P changes definition; the cached ∇P(xⁿ) and energy of that term are
/// rescaled to the new weight and the target is rebased by the energy difference at xⁿ (spec §3.6).
///
/// Free flight [OURS; spec §3.6 says only that IE's free-fall loss, which Dv cannot return, is repaid
/// "once contact/elastic forces appear"]. In a step where no conservative term (contact) exerts a force
/// at xⁿ or xⁿ⁺¹, the scene has no applied force and no node is constrained, the centre of mass of every body
/// falls exactly as implicit Euler lets it, losing ½ h² |g|² M per step (M the total mass), and internal
/// forces cannot change that. Aiming α at Tⁿ⁺¹ there pins it at or above 1 for the whole flight, and α > 1
/// pays the centre of mass's loss into the only directions Dv has, the bodies' internal motion: a bouncing
/// ball spins and vibrates more after every flight and rebounds lower (the paper's ball, 6 790 tets
/// dropped 1 m at h = 1/120 s: 0.980, 0.940, 0.928 of the drop). Such steps defer that loss: α aims at
/// Tⁿ⁺¹ less the loss summed since the last step with contact, so it keeps only the internal motion's
/// energy; the next step with contact aims at Tⁿ⁺¹ again and repays the deficit through the contact
/// forces' Dv (the same ball: 0.982, 0.979, 0.978). Every other loss is aimed at as before.

#include "src/solver/integrator.hpp"

#include <array>

namespace intact::solver {

/// α from H(α) = a α² + b α + c0 = target (spec §3.3): the real root closest to 1; when the parabola
/// is flat (Dv ≈ 0) α_max if the energy is short by more than 1e-12 relative, else 1; when no root exists
/// (the target lies below every reachable energy) α_min; clipped to [α_min, α_max]. Host.
double solve_alpha(double a, double b, double c0, double target, double alpha_min, double alpha_max);

/// The energy target schedule (spec §3.2): T₀ = s₀ H₀; per step Tⁿ⁺¹ = E_g + e^(−h/τ) (Tⁿ − E_g − Dⁿ⁺¹)
/// while a decay piece is in effect at the step's start time, Tⁿ⁺¹ = Tⁿ − Dⁿ⁺¹ otherwise (this step's
/// friction loss, not the previous step's as in the paper's Alg. 1: the loss is known when the target
/// is set). τ is an e-folding time.
class EnergyTarget {
public:
    explicit EnergyTarget(io::EnergyTargetSettings settings) : m_settings(std::move(settings)) {}
    void start(double initial_energy) { m_target = m_settings.scale * initial_energy; }
    /// Add `delta` J (a rebase when P changed definition).
    void rebase(double delta) { m_target += delta; }
    /// Set Tⁿ as saved by a checkpoint (value() then; bit for bit, unlike a rebase).
    void restore(double target) { m_target = target; }
    /// The target at the end of the step [t, t + h] that lost `dissipated` J to friction.
    double advance(double t, double h, double dissipated);
    double value() const { return m_target; }

private:
    io::EnergyTargetSettings m_settings;
    double m_target = 0.0; ///< Tⁿ
};

class ASearch final : public ImplicitEuler {
public:
    /// `fixed_alpha`: A-1 (α = 1 always, no target); else A-search with the scene's α range and target.
    /// @param h the run's time step (s), for the energies of the start
    ASearch(EnergyModel& model,
            int num_local,
            double h,
            const io::IntegratorSettings& settings,
            bool fixed_alpha);
    std::string name() const override { return m_fixed_alpha ? "a1" : "a_search"; }
    void start(const NodeField& x, const NodeField& v) override;
    void end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) override;
    std::optional<EnergyControl> control() const override { return m_control; }
    bool keeps_history() const override { return true; }
    /// Tⁿ, the step count (the schedule's clock), ∇(Ψ + gravity) and each term's gradient at xⁿ, the
    /// terms' energies and weights at xⁿ, and the last step's control numbers.
    void save(io::CheckpointWriter& out) const override;
    void restore(const io::CheckpointReader& in) override;

    /// Steps of end_step, public only because CUDA lambdas must live in public member functions.
    /// Dv = h M⁻¹ (∇P(xⁿ) − ∇P(xⁿ⁺¹)) on free owned rows, with the start's term gradients rescaled by
    /// `ratios`; returns this rank's [KW, WD, DD] with w in v, and Σ ‖gradient‖² of the conservative terms
    /// at xⁿ and xⁿ⁺¹ (zero: no term exerts a force in this step).
    std::array<double, 4> force_difference(double h, const NodeField& v, const std::vector<double>& ratios);
    /// v = w − α Dv on owned rows.
    void correct_velocity(double alpha, const NodeField& v);
    /// This rank's kinetic energy ½ Σ m |v|² over owned rows.
    double kinetic_energy(const NodeField& v) const;
    /// This rank's owned mass (kg) and its number of owned rows that are not free (constrained).
    std::pair<double, double> owned_mass() const;

private:
    /// Reduce `local` over ranks to rank 0 and broadcast the sums: the same bits on every rank.
    std::vector<double> reduce_everywhere(std::vector<double> local) const;

    EnergyModel& m_model;
    double m_h;
    bool m_fixed_alpha;
    double m_alpha_min;
    double m_alpha_max;
    EnergyTarget m_target;  ///< Tⁿ (history)
    NodeField m_correction; ///< Dv of the current step (owned rows)
    /// ∇(Ψ + gravity) at the step's start xⁿ and at its end (swapped after each step): history.
    NodeField m_start_gradient, m_end_gradient;
    /// Per conservative term: its gradient at xⁿ and at xⁿ⁺¹ (J/m), its energy at xⁿ (J) and its weight
    /// then: history, so that a weight change can be rescaled instead of re-evaluated.
    std::vector<NodeField> m_start_term_gradients, m_end_term_gradients;
    std::vector<double> m_start_term_energies;
    std::vector<double> m_start_term_weights;
    int m_steps_taken = 0; ///< n: the schedule's clock is n h (history)
    std::optional<EnergyControl> m_control;
    double m_deferred = 0.0;    ///< the free-flight loss since the last step with contact, J (history)
    double m_flight_mass = 0.0; ///< M, or 0 when a node is constrained (no free-flight rule)
};

} // namespace intact::solver
