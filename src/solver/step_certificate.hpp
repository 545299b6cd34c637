#pragma once
/// @file step_certificate.hpp
/// @brief Whether a step is accepted: one check after every method, the same for `ipc`, `al`, `bal` and
/// stencil descent, from global reductions. A step is *certified* when
///
///  1. the method's own stopping test passed (its `converged`);
///  2. it is balanced: the unbalanced force per mass of the end state, with every force the method
///     applies (the barrier's, `al`'s multipliers, `bal`'s augmented terms), is below the scene's ε_a
///     on every free node (stopping_rule.hpp). A method whose stopping test already includes that measure
///     (`StepSolver::tests_balance`) passes it with its own test, which may also end on round-off
///     (stopping_rule.hpp, `below_round_off`); `al`'s test (B < ε) does not, so its measured a decides;
///  3. it is energy-consistent, under implicit Euler: the total energy (kinetic, elastic, gravitational
///     and the energy stored in the barrier) at the step's end does not exceed the start's plus the work
///     of the applied forces in the step plus an allowance (below). Implicit Euler is dissipative: for a
///     convex potential the exact step loses ½ ‖vⁿ⁺¹ − vⁿ‖²_M, so a gain beyond the allowance is the
///     solve's error, not physics (an `al` step that stopped on B < ε with the multipliers far from
///     balance gained 65% on a landing steel bar).
///
/// Where the rule is silent or cannot be checked, the certificate says so (`energy: null` with the reason
/// in `energy_rule`) rather than pass the step:
///  - BDF2 and Newmark (and implicit midpoint) are not monotone in this energy step by step (BDF2 is
///    stable in a two-step norm; Newmark's trapezoidal rule conserves a linear oscillator's energy and
///    may gain at stiff impacts); A-search controls its energy by its own target (a_search.hpp). Their
///    steps are checked for balance only.
///  - Moving obstacles and prescribed motion do work that the step does not measure (the reaction on
///    prescribed rows and on obstacle surfaces); scenes with either are checked for balance only.
///
/// The allowance: the energy error of a step solved to ε_a is at most Σ m_i |vⁿ_i| h ε_a to first order
/// (the velocity error is at most h ε_a, stopping_rule.hpp), plus the potential's convexity defect along
/// the step, elastic and contact (below), plus 1e-12 of the
/// energies' magnitudes for round-off, plus the elastic energy's own round-off: an element's energy
/// density comes from invariants of order one (I₁ ≈ 3, log J), so near rest it is computed to about
/// ε (μ + λ) V whatever its value (64 ε Σ (μ + λ) V; a resting block's steps differ by 1.5e-13 J of it). A
/// barrier stiffness κ changed during the step (IPC's adaptive κ) is applied to the start's barrier energy
/// too (E_barrier is linear in κ), so raising κ is not a gain.
///
/// The potential's convexity defect. With Δx = xⁿ⁺¹ − xⁿ, Δv = vⁿ⁺¹ − vⁿ and g the step's
/// unbalanced force, implicit Euler's end state satisfies exactly
///     ΔE = Δx·g − ½ ‖Δv‖²_M + D,   D = Ψ(xⁿ⁺¹) − Ψ(xⁿ) − ∇Ψ(xⁿ⁺¹)·Δx,
/// and D ≤ 0 for a convex potential Ψ (gravity, linear, adds nothing; lagged friction's work along the
/// step is never positive). Elasticity is not convex in x: a stiff spinning ball landing on a steel plate
/// (2 ranks, h = 5 ms, balanced to 3e-6 m/s²) gained 3.4e-4 J in one step with an elastic defect
/// D_e = 7.8e-4 J, 0.4% of its kinetic energy; the allowance counts D_e exactly (`elastic_defect` in the
/// metrics) instead of a share of the kinetic energy. The barrier is not convex in x either: a point's
/// distance to a triangle changes formula where it crosses an edge's region, an edge–edge distance is not
/// convex, and the edge–edge mollifier varies with the edges' angle at a fixed distance. An exact step may
/// then gain up to D_c = C(xⁿ⁺¹) − C(xⁿ) − ∇C(xⁿ⁺¹)·Δx of the stored contact terms C, which the allowance
/// counts (`contact_defect` in the metrics). Measured on `inputs/stack.json` (2 ranks,
/// every step solved to 1e-6 of ε_a): gains of up to 8.5e-5 J (3.6% of the kinetic energy) with D_c = 2.2e-4
/// J while the elastic defect was negative; the gain shrinks as h² (1.0% at h/2, none at h/4), as D does. The
/// allowance adds D_e + D_c where that sum is positive. An unbalanced step, or forces that are not the
/// gradient of stored energy (`al`'s multipliers at B < ε), are still rejected: D counts the stored terms
/// alone. For a method whose residual g holds every force it applies (ipc, bal, stencil descent), the
/// energy check thus tests the balance along the step, Δx·g. Stencil descent's own
/// barrier (its pair set B with ŝᵢ, κᵢ; StepResult::own_barrier_*) counts as a stored term of both ends,
/// taken with the end's B.

#include "src/core/types.hpp"
#include "src/io/scene.hpp"
#include "src/solver/step_problem.hpp"
#include "src/solver/stopping_rule.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace intact::solver {

/// The energies of a state as the certificate counts them (J, summed over ranks).
struct EnergyAccount {
    double kinetic = 0.0;
    double elastic = 0.0;
    double gravitational = 0.0;
    double momentum = 0.0;       ///< Σ m_i |v_i| over owned nodes (kg m/s)
    std::vector<double> stored;  ///< per energy-storing term (the barrier): weight · energy (J)
    std::vector<double> weights; ///< those terms' weights (κ) when evaluated
    /// A step's end only: per stored term, its gradient here dotted with the step, ∇C(xⁿ⁺¹)·(xⁿ⁺¹ − xⁿ)
    /// (J); empty elsewhere (then the contact defect counts as zero).
    std::vector<double> slopes;
    /// A step's end only: the elastic energy's (solids, shells, rods) gradient here dotted with the step,
    /// ∇Ψ_e(xⁿ⁺¹)·(xⁿ⁺¹ − xⁿ) (J); NaN elsewhere (then the elastic defect counts as zero).
    double elastic_slope = std::numeric_limits<double>::quiet_NaN();
    double unstored = 0.0; ///< Σ of the conservative terms that store none (metrics only)
    /// Kinetic + elastic + gravitational + the stored terms, the terms taken at `weights` when given
    /// (a term's energy is linear in its weight).
    double total(const std::vector<double>* at_weights = nullptr) const;
    /// Σ of the magnitudes of the parts (the scale of round-off in `total`).
    double magnitude() const;
};

/// The certificate's verdict on one step.
struct StepVerdict {
    bool method_converged = false;
    bool balanced = false;
    std::optional<bool> energy_consistent; ///< none: not checked (StepCertificate::energy_rule says why)
    double residual_acceleration = 0.0;    ///< m/s², the measure the balance check used
    double energy_change = 0.0;            ///< E_end − E_start (J), κ of the end applied to both
    double work = 0.0;                     ///< work of the applied forces in the step (J)
    double allowance = 0.0;                ///< J
    double contact_defect = 0.0;           ///< the stored contact terms' convexity defect D_c (J)
    double elastic_defect = 0.0;           ///< the elastic energy's convexity defect D_e (J)

    /// When the run's method failed the certificate and the step was repaired: the checks the method's
    /// first end failed, and who repaired it: the method itself, going on from where it stopped
    /// (StepSolver::repair; `repaired_itself`), or another method solving the step again from its start
    /// (solver.fallback).
    std::vector<std::string> repaired_checks;
    std::string repaired_by;
    bool repaired_itself = false;
    int method_iterations = 0;                 ///< the run's method's Newton iterations (or sweeps) first
    double method_residual_acceleration = 0.0; ///< and its unbalanced force per mass then, m/s²

    bool certified() const { return method_converged && balanced && energy_consistent.value_or(true); }
    /// Another method solved the step again (the state and the energy account are that method's).
    bool fell_back() const { return !repaired_by.empty() && !repaired_itself; }
    /// The checks that failed, by name: "method", "balance", "energy".
    std::vector<std::string> failed() const;
    /// One line for the log: what failed, with its figures (empty when certified).
    std::string explain(double acceleration_tolerance) const;
    /// The metrics record (metrics.jsonl "certificate").
    nlohmann::json to_json() const;
    /// The repair's record (metrics.jsonl "repair"): null when the step was certified as first solved.
    nlohmann::json repair_json() const;
};

class StepCertificate {
public:
    /// `tolerances`: the scene's ε_a (stopping_rule.hpp).
    StepCertificate(const io::Scene& scene, const StoppingTolerances& tolerances);

    /// Whether steps are checked for energy, and if not, why (for the start-up log and the docs).
    bool checks_energy() const { return m_checks_energy; }
    const std::string& energy_rule() const { return m_energy_rule; }
    double acceleration_tolerance() const { return m_acceleration; }
    /// Σ (μ + λ) V over every element of the scene (J), the scale of the elastic energy's round-off.
    void set_elastic_scale(double stiffness_volume) {
        m_elastic_round_off = 64.0 * 2.2e-16 * stiffness_volume;
    }

    /// Judge a step: `result` as the method returned it; `tests_balance`: whether the method's own
    /// stopping test includes the balance measure; the energies at the step's start and end; `work` of
    /// the applied forces; h. Host only: every argument is already reduced over ranks.
    StepVerdict judge(const StepResult& result,
                      bool tests_balance,
                      const EnergyAccount& start,
                      const EnergyAccount& end,
                      double work,
                      double h) const;
    /// The same in two parts: the method's test and the balance, which the solve's result decides
    /// before the integrator's end step, and then the energy (when checked) added to that verdict.
    StepVerdict judge_balance(const StepResult& result, bool tests_balance) const;
    void judge_energy(StepVerdict& verdict,
                      const EnergyAccount& start,
                      const EnergyAccount& end,
                      double work,
                      double h) const;

private:
    double m_acceleration = 0.0;
    double m_elastic_round_off = 0.0; ///< J
    bool m_checks_energy = false;
    std::string m_energy_rule;
};

} // namespace intact::solver
