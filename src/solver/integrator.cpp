#include "src/solver/integrator.hpp"

#include "src/core/error.hpp"
#include "src/io/checkpoint.hpp"
#include "src/solver/a_search.hpp"

namespace intact::solver {

namespace {

using Policy = Kokkos::RangePolicy<ExecSpace>;

// out = a x + b y + c z + d w on every row (the linear combinations of the multistep rules).
void combine(const NodeField& out,
             double a,
             const NodeField& x,
             double b,
             const NodeField& y,
             double c = 0.0,
             const NodeField& z = NodeField(),
             double d = 0.0,
             const NodeField& w = NodeField()) {
    const bool has_z = c != 0.0;
    const bool has_w = d != 0.0;
    Kokkos::parallel_for(
        "intact::solver::integrator_combine", Policy(0, out.extent(0)), KOKKOS_LAMBDA(const int i) {
            for (int k = 0; k < 3; ++k) {
                double value = a * x(i, k) + b * y(i, k);
                if (has_z) {
                    value += c * z(i, k);
                }
                if (has_w) {
                    value += d * w(i, k);
                }
                out(i, k) = value;
            }
        });
}

} // namespace

// --- implicit Euler ---------------------------------------------------------------------------------

ImplicitEuler::ImplicitEuler(int num_local)
    : m_x_hat("intact::solver::inertial_target", num_local),
      m_start("intact::solver::step_start", num_local) {}

StepProblem ImplicitEuler::begin_step(double h, const NodeField& x, const NodeField& v) {
    Kokkos::deep_copy(m_start, x);
    combine(m_x_hat, 1.0, x, h, v); // x̂ = xⁿ + h vⁿ
    StepProblem problem;
    problem.x_hat = m_x_hat;
    problem.h = h;
    return problem;
}

void ImplicitEuler::end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) {
    combine(v, 1.0 / problem.h, x, -1.0 / problem.h, m_start); // v = (xⁿ⁺¹ − xⁿ) / h
}

// --- BDF2 -------------------------------------------------------------------------------------------

Bdf2::Bdf2(int num_local)
    : m_x_hat("intact::solver::inertial_target", num_local), m_start("intact::solver::step_start", num_local),
      m_start_velocity("intact::solver::start_velocity", num_local),
      m_previous_position("intact::solver::previous_position", num_local),
      m_previous_velocity("intact::solver::previous_velocity", num_local) {}

StepProblem Bdf2::begin_step(double h, const NodeField& x, const NodeField& v) {
    StepProblem problem;
    problem.x_hat = m_x_hat;
    problem.h = h;
    if (m_steps_taken == 0) {
        combine(m_x_hat, 1.0, x, h, v); // the implicit-Euler start-up step
        problem.weight = 1.0;
    } else {
        combine(m_x_hat, 4.0 / 3.0, x, -1.0 / 3.0, m_previous_position, 8.0 / 9.0 * h, v, -2.0 / 9.0 * h,
                m_previous_velocity);
        problem.weight = 4.0 / 9.0;
    }
    Kokkos::deep_copy(m_start, x);
    Kokkos::deep_copy(m_start_velocity, v);
    return problem;
}

void Bdf2::end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) {
    const double h = problem.h;
    if (m_steps_taken == 0) {
        combine(v, 1.0 / h, x, -1.0 / h, m_start);
    } else {
        combine(v, 1.5 / h, x, -2.0 / h, m_start, 0.5 / h, m_previous_position);
    }
    std::swap(m_previous_position, m_start);
    std::swap(m_previous_velocity, m_start_velocity);
    ++m_steps_taken;
}

void Bdf2::save(io::CheckpointWriter& out) const {
    out.put_node_field("bdf2/previous_position", m_previous_position);
    out.put_node_field("bdf2/previous_velocity", m_previous_velocity);
    out.put_values("bdf2/steps_taken", {static_cast<double>(m_steps_taken)});
}

void Bdf2::restore(const io::CheckpointReader& in) {
    m_steps_taken = static_cast<int>(in.values("bdf2/steps_taken").at(0));
    in.node_field("bdf2/previous_position", m_previous_position);
    in.node_field("bdf2/previous_velocity", m_previous_velocity);
}

// --- Newmark ----------------------------------------------------------------------------------------

Newmark::Newmark(EnergyModel& model, int num_local, double beta, double gamma)
    : m_model(model), m_beta(beta), m_gamma(gamma), m_x_hat("intact::solver::inertial_target", num_local),
      m_acceleration("intact::solver::acceleration", num_local) {
    INTACT_REQUIRE(beta > 0.0, "Newmark: beta must be > 0 (the scene reader checks this)");
}

void Newmark::start(const NodeField& x, const NodeField& /*v*/) {
    // a⁰ = −M⁻¹ ∇P(x⁰) on free rows; contact terms vanish at the start (bodies start farther than d̂ apart).
    NodeField gradient("intact::solver::initial_gradient", x.extent(0));
    m_model.conservative(x, 1.0, gradient, {});
    const auto mass = m_model.lumped_mass();
    const auto free = m_model.free_mask();
    const auto a = m_acceleration;
    Kokkos::parallel_for(
        "intact::solver::newmark_initial_acceleration", Policy(0, m_model.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                a(i, c) = -free(i) * gradient(i, c) / mass(i);
            }
        });
    m_model.gather(m_acceleration);
}

StepProblem Newmark::begin_step(double h, const NodeField& x, const NodeField& v) {
    combine(m_x_hat, 1.0, x, h, v, (0.5 - m_beta) * h * h, m_acceleration);
    StepProblem problem;
    problem.x_hat = m_x_hat;
    problem.h = h;
    problem.weight = m_beta;
    return problem;
}

void Newmark::end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) {
    const double h = problem.h;
    const double beta_h2 = m_beta * h * h;
    const double gamma = m_gamma;
    const auto a = m_acceleration;
    const auto x_hat = m_x_hat;
    // aⁿ⁺¹ = (xⁿ⁺¹ − x̂) / (β h²), vⁿ⁺¹ = vⁿ + h ((1 − γ) aⁿ + γ aⁿ⁺¹), row by row in place.
    Kokkos::parallel_for(
        "intact::solver::newmark_correct", Policy(0, x.extent(0)), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                const double next = (x(i, c) - x_hat(i, c)) / beta_h2;
                v(i, c) += h * ((1.0 - gamma) * a(i, c) + gamma * next);
                a(i, c) = next;
            }
        });
}

void Newmark::save(io::CheckpointWriter& out) const {
    out.put_node_field("newmark/acceleration", m_acceleration);
}

void Newmark::restore(const io::CheckpointReader& in) {
    in.node_field("newmark/acceleration", m_acceleration); // replaces start()'s a⁰
}

// --- implicit midpoint ------------------------------------------------------------------------------

ImplicitMidpoint::ImplicitMidpoint(int num_local)
    : m_x_hat("intact::solver::inertial_target", num_local), m_start("intact::solver::step_start", num_local),
      m_move("intact::solver::midpoint_move", num_local) {}

StepProblem ImplicitMidpoint::begin_step(double h, const NodeField& x, const NodeField& v) {
    Kokkos::deep_copy(m_start, x);
    combine(m_x_hat, 1.0, x, 0.5 * h, v); // x̂ = xⁿ + (h/2) vⁿ
    StepProblem problem;
    problem.x_hat = m_x_hat;
    problem.h = h;
    problem.weight = 0.25;
    problem.theta = 0.5;
    return problem;
}

void ImplicitMidpoint::end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) {
    const double h = problem.h;
    combine(m_move, 1.0, x, -1.0, m_start); // y − xⁿ
    m_fraction = m_limit ? m_limit(x, m_move) : 1.0;
    // xⁿ⁺¹ = y + t (y − xⁿ); vⁿ⁺¹ = 4 (y − xⁿ)/h − vⁿ
    combine(x, 1.0, x, m_fraction, m_move);
    combine(v, 4.0 / h, m_move, -1.0, v);
}

// --- factory ----------------------------------------------------------------------------------------

std::unique_ptr<Integrator> make_integrator(const io::Scene& scene, EnergyModel& model, int num_local) {
    const std::string& type = scene.integrator;
    const io::IntegratorSettings& settings = scene.integrator_settings;
    if (type == "implicit_euler") {
        return std::make_unique<ImplicitEuler>(num_local);
    }
    if (type == "bdf2") {
        return std::make_unique<Bdf2>(num_local);
    }
    if (type == "newmark") {
        return std::make_unique<Newmark>(model, num_local, settings.beta, settings.gamma);
    }
    if (type == "implicit_midpoint") {
        return std::make_unique<ImplicitMidpoint>(num_local);
    }
    INTACT_REQUIRE(type == "a_search" || type == "a1",
                   "unknown integrator '" << type << "' (the scene reader checks this)");
    return std::make_unique<ASearch>(model, num_local, scene.dt, settings, type == "a1");
}

} // namespace intact::solver
