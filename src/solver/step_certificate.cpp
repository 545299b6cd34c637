/// @file step_certificate.cpp
/// @brief The step certificate's rules (step_certificate.hpp).

#include "src/solver/step_certificate.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace intact::solver {

namespace {

/// Whether a rigid motion moves anything.
bool moves(const io::RigidMotion& motion) {
    for (int d = 0; d < 3; ++d) {
        if (motion.velocity[static_cast<std::size_t>(d)] != 0.0 ||
            motion.angular_velocity[static_cast<std::size_t>(d)] != 0.0) {
            return true;
        }
    }
    return false;
}

/// Round-off of the energy sum, relative to the magnitudes of its parts.
constexpr double round_off = 1e-12;

/// D_c = C(xⁿ⁺¹) − C(xⁿ) − ∇C(xⁿ⁺¹)·Δx over the stored terms, C(xⁿ) at the end's weights (the header).
/// Zero where the end carries no slopes or the terms differ in number.
double contact_defect(const EnergyAccount& start, const EnergyAccount& end) {
    if (end.slopes.size() != end.stored.size() || start.stored.size() != end.stored.size()) {
        return 0.0;
    }
    double defect = 0.0;
    for (std::size_t k = 0; k < end.stored.size(); ++k) {
        const double at_end_weight =
            start.weights[k] != 0.0 ? start.stored[k] * (end.weights[k] / start.weights[k]) : start.stored[k];
        defect += end.stored[k] - at_end_weight - end.slopes[k];
    }
    return defect;
}

/// D_e = Ψ_e(xⁿ⁺¹) − Ψ_e(xⁿ) − ∇Ψ_e(xⁿ⁺¹)·Δx (the header); zero where the end carries no slope.
double elastic_defect(const EnergyAccount& start, const EnergyAccount& end) {
    return std::isfinite(end.elastic_slope) ? end.elastic - start.elastic - end.elastic_slope : 0.0;
}

} // namespace

double EnergyAccount::total(const std::vector<double>* at_weights) const {
    double sum = kinetic + elastic + gravitational;
    for (std::size_t k = 0; k < stored.size(); ++k) {
        const bool rescale = at_weights && k < at_weights->size() && weights[k] != 0.0;
        sum += rescale ? stored[k] * ((*at_weights)[k] / weights[k]) : stored[k];
    }
    return sum;
}

double EnergyAccount::magnitude() const {
    double sum = std::abs(kinetic) + std::abs(elastic) + std::abs(gravitational);
    for (double e : stored) {
        sum += std::abs(e);
    }
    return sum;
}

std::vector<std::string> StepVerdict::failed() const {
    std::vector<std::string> names;
    if (!method_converged) {
        names.emplace_back("method");
    }
    if (!balanced) {
        names.emplace_back("balance");
    }
    if (energy_consistent && !*energy_consistent) {
        names.emplace_back("energy");
    }
    return names;
}

std::string StepVerdict::explain(double acceleration_tolerance) const {
    std::ostringstream out;
    const char* separator = "";
    if (!method_converged) {
        out << "the method's stopping test did not pass";
        separator = "; ";
    }
    if (!balanced) {
        out << separator << "unbalanced force per mass " << residual_acceleration
            << " m/s² above solver.acceleration_tolerance = " << acceleration_tolerance << " m/s²";
        separator = "; ";
    }
    if (energy_consistent && !*energy_consistent) {
        out << separator << "energy gained: " << energy_change << " J with " << work
            << " J of applied work, allowance " << allowance << " J (of it the potential's convexity "
            << "defect " << std::max(0.0, elastic_defect + contact_defect) << " J: elastic " << elastic_defect
            << " J, contact " << contact_defect << " J)";
    }
    return out.str();
}

nlohmann::json StepVerdict::to_json() const {
    using nlohmann::json;
    return {{"certified", certified()},
            {"method_converged", method_converged},
            {"balanced", balanced},
            {"energy_consistent", energy_consistent ? json(*energy_consistent) : json(nullptr)},
            {"energy_change", energy_consistent ? json(energy_change) : json(nullptr)},
            {"work", energy_consistent ? json(work) : json(nullptr)},
            {"allowance", energy_consistent ? json(allowance) : json(nullptr)},
            {"contact_defect", energy_consistent ? json(contact_defect) : json(nullptr)},
            {"elastic_defect", energy_consistent ? json(elastic_defect) : json(nullptr)},
            {"failed", failed()}};
}

nlohmann::json StepVerdict::repair_json() const {
    if (repaired_by.empty()) {
        return nullptr;
    }
    return {{"failed", repaired_checks},
            {"by", repaired_by},
            {"how", repaired_itself ? "went on" : "solved again"},
            {"method_iterations", method_iterations},
            {"method_residual_acceleration", std::isfinite(method_residual_acceleration)
                                                 ? nlohmann::json(method_residual_acceleration)
                                                 : nlohmann::json(nullptr)}};
}

StepCertificate::StepCertificate(const io::Scene& scene, const StoppingTolerances& tolerances)
    : m_acceleration(tolerances.acceleration) {
    bool moving_boundary = false;
    for (const io::MovingSelector& selector : scene.moving_selectors()) {
        moving_boundary = moving_boundary || moves(selector.motion);
    }
    for (const io::Obstacle& obstacle : scene.obstacles) {
        moving_boundary = moving_boundary || moves(obstacle.motion);
    }
    if (scene.integrator != "implicit_euler") {
        m_energy_rule = "not checked: integrator.type \"" + scene.integrator +
                        "\" is not monotone in energy step by step (balance is checked)";
    } else if (moving_boundary) {
        m_energy_rule = "not checked: moving obstacles or prescribed motion do work the step does not "
                        "measure (balance is checked)";
    } else {
        m_checks_energy = true;
        m_energy_rule = "implicit Euler: the energy may not exceed the step start's plus the applied "
                        "forces' work plus the allowance";
    }
}

StepVerdict StepCertificate::judge(const StepResult& result,
                                   bool tests_balance,
                                   const EnergyAccount& start,
                                   const EnergyAccount& end,
                                   double work,
                                   double h) const {
    StepVerdict verdict = judge_balance(result, tests_balance);
    judge_energy(verdict, start, end, work, h);
    return verdict;
}

StepVerdict StepCertificate::judge_balance(const StepResult& result, bool tests_balance) const {
    StepVerdict verdict;
    verdict.method_converged = result.converged;
    verdict.residual_acceleration = result.residual_acceleration;
    // A method whose own test includes the balance passed it when it converged (possibly by its
    // round-off rule); otherwise the measured a decides. A non-finite a is not balanced: NaN (not
    // measured, or a state with NaN rows, whose max reduction ends at its identity, −∞) or ∞.
    const double a = result.residual_acceleration;
    verdict.balanced = (tests_balance && result.converged) || (std::isfinite(a) && a < m_acceleration);
    return verdict;
}

void StepCertificate::judge_energy(
    StepVerdict& verdict, const EnergyAccount& start, const EnergyAccount& end, double work, double h) const {
    if (!m_checks_energy) {
        return;
    }
    verdict.energy_change = end.total() - start.total(&end.weights);
    verdict.work = work;
    verdict.contact_defect = contact_defect(start, end);
    verdict.elastic_defect = elastic_defect(start, end);
    verdict.allowance = std::max(start.momentum, end.momentum) * h * m_acceleration +
                        round_off * std::max(start.magnitude(), end.magnitude()) + m_elastic_round_off +
                        std::max(0.0, verdict.elastic_defect + verdict.contact_defect);
    verdict.energy_consistent = verdict.energy_change <= work + verdict.allowance;
}

} // namespace intact::solver
