// The integrators' update rules against closed forms (A-search spec §2.12, §6 T1, T2, T5), on point
// masses whose step minimisation is solved exactly: a linear oscillator m x'' = −k x and a point mass
// against a one-sided stiff wall. The integrators run unchanged (device fields, EnergyModel); only the
// solver is replaced by the closed-form minimiser of ½ m (y − x̂)² + c h² P(y).
#include "src/solver/a_search.hpp"
#include "src/solver/integrator.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <memory>

namespace {

using namespace intact;
using solver::EnergyModel;
using solver::Integrator;
using solver::LocalEnergies;
using solver::StepProblem;

constexpr double pi = 3.14159265358979323846;

/// One point mass per row, P = Σ ½ k x_z² (a linear oscillator along z), or with `wall` only where
/// x_z < 0 (a one-sided wall at z = 0). x and y rows stay at rest. Rank-local (MPI_COMM_SELF).
class PointMasses final : public EnergyModel {
public:
    PointMasses(int rows, double mass, double k, bool wall)
        : m_mass("mass", rows), m_free("free", rows), m_k(k), m_wall(wall) {
        Kokkos::deep_copy(m_mass, mass);
        Kokkos::deep_copy(m_free, 1.0);
    }
    MPI_Comm comm() const override { return MPI_COMM_SELF; }
    int num_owned() const override { return static_cast<int>(m_mass.extent(0)); }
    Kokkos::View<const double*, MemSpace> lumped_mass() const override { return m_mass; }
    Kokkos::View<const double*, MemSpace> free_mask() const override { return m_free; }
    void gather(const NodeField& /*field*/) override {}
    int num_terms() const override { return 0; }
    std::vector<double> term_weights() const override { return {}; }
    LocalEnergies conservative(const NodeField& x,
                               double /*ch2*/,
                               const NodeField& gradient,
                               const std::vector<NodeField>& /*term_gradients*/) override {
        auto xh = Kokkos::create_mirror_view_and_copy(HostSpace(), x);
        LocalEnergies energies;
        auto g = Kokkos::create_mirror_view(gradient);
        for (int i = 0; i < num_owned(); ++i) {
            const double z = spring(xh(i, 2));
            energies.elastic += 0.5 * m_k * z * z;
            if (gradient.extent(0) > 0) {
                g(i, 0) = g(i, 1) = 0.0;
                g(i, 2) = m_k * z;
            }
        }
        if (gradient.extent(0) > 0) {
            Kokkos::deep_copy(gradient, g);
        }
        return energies;
    }
    double dissipated_work(const NodeField&, const NodeField&, double) override { return 0.0; }

    /// The exact minimiser of ½ m (y − x̂)² + c h² P(y), into x.
    void solve(const StepProblem& problem, const NodeField& x) const {
        auto x_hat = Kokkos::create_mirror_view_and_copy(HostSpace(), problem.x_hat);
        auto y = Kokkos::create_mirror_view(x);
        const double m = 1.0 * mass();
        const double ch2k = problem.weight * problem.h * problem.h * m_k;
        for (int i = 0; i < num_owned(); ++i) {
            y(i, 0) = x_hat(i, 0);
            y(i, 1) = x_hat(i, 1);
            y(i, 2) = (m_wall && x_hat(i, 2) >= 0.0) ? x_hat(i, 2) : m * x_hat(i, 2) / (m + ch2k);
        }
        Kokkos::deep_copy(x, y);
    }
    double mass() const {
        auto m = Kokkos::create_mirror_view_and_copy(HostSpace(), m_mass);
        return m(0);
    }
    double energy(double z, double v) const {
        const double s = spring(z);
        return 0.5 * m_k * s * s + 0.5 * mass() * v * v;
    }

private:
    double spring(double z) const { return m_wall ? std::min(z, 0.0) : z; }

    Kokkos::View<double*, MemSpace> m_mass;
    Kokkos::View<double*, MemSpace> m_free;
    double m_k;
    bool m_wall;
};

/// One row's state along z, stepped by an integrator with the exact solve.
struct PointRun {
    PointMasses model;
    std::unique_ptr<Integrator> integrator;
    NodeField x{"x", 1}, v{"v", 1};

    PointRun(double k, bool wall, double z0, double v0) : model(1, 1.0, k, wall) { set(z0, v0); }
    void set(double z0, double v0) {
        auto xh = Kokkos::create_mirror_view(x);
        auto vh = Kokkos::create_mirror_view(v);
        xh(0, 0) = xh(0, 1) = vh(0, 0) = vh(0, 1) = 0.0;
        xh(0, 2) = z0;
        vh(0, 2) = v0;
        Kokkos::deep_copy(x, xh);
        Kokkos::deep_copy(v, vh);
    }
    void start() { integrator->start(x, v); }
    void step(double h) {
        StepProblem problem = integrator->begin_step(h, x, v);
        model.solve(problem, x);
        integrator->end_step(problem, x, v);
    }
    double z() const { return Kokkos::create_mirror_view_and_copy(HostSpace(), x)(0, 2); }
    double vz() const { return Kokkos::create_mirror_view_and_copy(HostSpace(), v)(0, 2); }
    double energy() const { return model.energy(z(), vz()); }
};

io::IntegratorSettings a_search_settings(double alpha_min = 0.0, double alpha_max = 1.1) {
    io::IntegratorSettings settings;
    settings.alpha_min = alpha_min;
    settings.alpha_max = alpha_max;
    return settings;
}

enum class Rule { implicit_euler, newmark, implicit_midpoint, a1, a_fixed };

std::unique_ptr<Integrator> make(Rule rule, EnergyModel& model, double h, double alpha = 0.0) {
    switch (rule) {
    case Rule::implicit_euler:
        return std::make_unique<solver::ImplicitEuler>(1);
    case Rule::newmark:
        return std::make_unique<solver::Newmark>(model, 1, 0.25, 0.5);
    case Rule::implicit_midpoint:
        return std::make_unique<solver::ImplicitMidpoint>(1);
    case Rule::a1:
        return std::make_unique<solver::ASearch>(model, 1, h, a_search_settings(), true);
    case Rule::a_fixed:
        return std::make_unique<solver::ASearch>(model, 1, h, a_search_settings(alpha, alpha), false);
    }
    return nullptr;
}

/// The one-step matrix Q acting on (x, v), column by column from unit states (m = k = 1... k given).
std::array<std::array<double, 2>, 2> measured_q(Rule rule, double k, double h, double alpha = 0.0) {
    std::array<std::array<double, 2>, 2> q{};
    for (int column = 0; column < 2; ++column) {
        PointRun run(k, false, column == 0 ? 1.0 : 0.0, column == 0 ? 0.0 : 1.0);
        run.integrator = make(rule, run.model, h, alpha);
        run.start();
        run.step(h);
        q[0][static_cast<std::size_t>(column)] = run.z();
        q[1][static_cast<std::size_t>(column)] = run.vz();
    }
    return q;
}

/// Closed forms of spec §2.12 (m = 1): IE, midpoint / trapezoid (= Newmark ¼, ½), A-search(α).
std::array<std::array<double, 2>, 2> closed_form_q(Rule rule, double k, double h, double alpha = 0.0) {
    const double hbar = h * h * k;
    if (rule == Rule::implicit_euler) {
        const double s = 1.0 / (1.0 + hbar);
        return {{{s, s * h}, {-s * h * k, s}}};
    }
    if (rule == Rule::newmark || rule == Rule::implicit_midpoint) {
        const double s = 1.0 / (1.0 + hbar / 4.0);
        return {{{s * (1.0 - hbar / 4.0), s * h}, {-s * h * k, s * (1.0 - hbar / 4.0)}}};
    }
    const double a = rule == Rule::a1 ? 1.0 : alpha;
    const double s = 1.0 / (1.0 + hbar);
    return {{{s, s * h}, {-s * h * k * (1.0 + a * hbar), s * (1.0 + a * hbar)}}};
}

TEST(Integrators, OneStepMatricesMatchTheirClosedForms) {
    for (const double hbar : {0.1, 10.0, 1e6}) {
        const double k = 1.0;
        const double h = std::sqrt(hbar / k);
        for (const Rule rule : {Rule::implicit_euler, Rule::newmark, Rule::implicit_midpoint, Rule::a1}) {
            const auto q = measured_q(rule, k, h);
            const auto expected = closed_form_q(rule, k, h);
            for (int r = 0; r < 2; ++r) {
                for (int c = 0; c < 2; ++c) {
                    const double e = expected[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
                    EXPECT_NEAR(q[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)], e,
                                1e-12 * std::max(1.0, std::abs(e)))
                        << "rule " << static_cast<int>(rule) << " hbar " << hbar << " entry " << r << c;
                }
            }
        }
        for (const double alpha : {0.0, 0.5, 1.1}) {
            const auto q = measured_q(Rule::a_fixed, k, h, alpha);
            const auto expected = closed_form_q(Rule::a_fixed, k, h, alpha);
            for (int r = 0; r < 2; ++r) {
                for (int c = 0; c < 2; ++c) {
                    const double e = expected[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
                    EXPECT_NEAR(q[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)], e,
                                1e-12 * std::max(1.0, std::abs(e)))
                        << "alpha " << alpha << " hbar " << hbar;
                }
            }
        }
    }
}

TEST(Integrators, AmplificationFactorsDampConserveAndRotateAsTheSpecSays) {
    for (const double hbar : {0.1, 10.0, 1e6}) {
        const double h = std::sqrt(hbar);
        auto det = [](const auto& q) { return q[0][0] * q[1][1] - q[0][1] * q[1][0]; };
        // Implicit Euler damps: det = 1 / (1 + hbar).
        EXPECT_NEAR(det(measured_q(Rule::implicit_euler, 1.0, h)), 1.0 / (1.0 + hbar), 1e-12);
        // Midpoint and Newmark (¼, ½) conserve: det = 1.
        EXPECT_NEAR(det(measured_q(Rule::implicit_midpoint, 1.0, h)), 1.0, 1e-12);
        EXPECT_NEAR(det(measured_q(Rule::newmark, 1.0, h)), 1.0, 1e-12);
        // A-1 (T1): det = 1, a complex pair on the unit circle, arg → π/3 as hbar → ∞.
        const auto q = measured_q(Rule::a1, 1.0, h);
        EXPECT_NEAR(det(q), 1.0, 1e-10);
        const double trace = q[0][0] + q[1][1];
        EXPECT_LT(trace * trace, 4.0 * det(q)); // complex eigenvalues, |λ|² = det
        EXPECT_NEAR(trace, 1.0 + 1.0 / (1.0 + hbar), 1e-10);
        if (hbar == 1e6) {
            EXPECT_NEAR(std::acos(trace / 2.0), pi / 3.0, 1e-3);
        }
        // A-search with α = 0 is implicit Euler (T1).
        const auto q0 = measured_q(Rule::a_fixed, 1.0, h, 0.0);
        EXPECT_NEAR(det(q0), 1.0 / (1.0 + hbar), 1e-12);
    }
}

// The principal root of BDF2 on x'' = −ω² x: (1 − ⅔ h λ) ζ² − 4/3 ζ + 1/3 = 0 with λ = iω.
double bdf2_amplification(double h, double omega) {
    const std::complex<double> a = 1.0 - 2.0 / 3.0 * h * std::complex<double>(0.0, omega);
    const std::complex<double> root = std::sqrt(16.0 / 9.0 - 4.0 / 3.0 * a);
    return std::max(std::abs((4.0 / 3.0 + root) / (2.0 * a)), std::abs((4.0 / 3.0 - root) / (2.0 * a)));
}

TEST(Integrators, Bdf2FollowsItsRecurrenceAndDampsLessThanImplicitEuler) {
    const double k = 4.0, h = 0.05; // ω = 2, hbar = 0.01
    PointRun bdf2(k, false, 1.0, 0.0);
    bdf2.integrator = std::make_unique<solver::Bdf2>(1);
    PointRun euler(k, false, 1.0, 0.0);
    euler.integrator = std::make_unique<solver::ImplicitEuler>(1);
    // Step 1 is implicit Euler; every later step satisfies both BDF2 equations exactly.
    std::vector<double> z{1.0}, v{0.0};
    for (int n = 1; n <= 2000; ++n) {
        bdf2.step(h);
        euler.step(h);
        z.push_back(bdf2.z());
        v.push_back(bdf2.vz());
        const auto i = static_cast<std::size_t>(n);
        if (n == 1) {
            EXPECT_NEAR(z[1], 1.0 / (1.0 + h * h * k), 1e-14);
        } else {
            EXPECT_NEAR(z[i], 4.0 / 3.0 * z[i - 1] - 1.0 / 3.0 * z[i - 2] + 2.0 / 3.0 * h * v[i], 1e-13);
            EXPECT_NEAR(v[i], 4.0 / 3.0 * v[i - 1] - 1.0 / 3.0 * v[i - 2] - 2.0 / 3.0 * h * k * z[i], 1e-13);
        }
    }
    // Amplitude decay per step over the last 1000 steps (the parasitic root has died out): the principal
    // root's modulus, 1 − 2.4e-5 here, to far better than its distance from 1.
    const double rate = std::pow(bdf2.energy() / bdf2.model.energy(z[1000], v[1000]), 1.0 / 2000.0);
    EXPECT_NEAR(rate, bdf2_amplification(h, 2.0), 1e-9);
    EXPECT_LT(bdf2_amplification(h, 2.0), 1.0);
    EXPECT_GT(bdf2.energy(), 10.0 * euler.energy()); // IE has lost far more
}

TEST(Integrators, ASearchHitsItsTargetWhereverAlphaIsNotClipped) {
    // T5: a stiff oscillator at large h; with the target H₀ the energy stays at H₀ to round-off.
    for (const double hbar : {0.5, 10.0, 1e4}) {
        const double k = 100.0;
        const double h = std::sqrt(hbar / k);
        PointRun run(k, false, 0.1, 1.0);
        run.integrator =
            std::make_unique<solver::ASearch>(run.model, 1, h, a_search_settings(0.0, 4.0), false);
        run.start();
        const double initial = run.energy();
        for (int n = 0; n < 50; ++n) {
            run.step(h);
            const auto control = *run.integrator->control();
            if (*control.alpha > 0.0 && *control.alpha < 4.0) {
                EXPECT_NEAR(run.energy(), *control.target, 1e-10 * initial)
                    << "hbar " << hbar << " step " << n;
            }
        }
        EXPECT_NEAR(run.energy(), initial, 1e-10 * initial);
    }
}

TEST(Integrators, StiffWallImpactReturnsTheIncomingSpeed) {
    // T2: x₀ = β h in front of a wall with hbar = 1e10, v₀ = −1. A-1: v = −1, −β, 1 − β, 1, 1 ...;
    // A-search (target ½ J, α in [0, 1.1]): v₂ = −min(1.1 β, 1), v₃ = 1.1 (1 + v₂), then exactly 1.
    const double k = 1e10, h = 1.0;
    for (const double beta : {0.1, 0.3, 0.5, 0.7, 0.95}) {
        PointRun a1(k, true, beta * h, -1.0);
        a1.integrator = std::make_unique<solver::ASearch>(a1.model, 1, h, a_search_settings(), true);
        a1.start();
        const std::vector<double> expected_a1{-1.0, -beta, 1.0 - beta, 1.0, 1.0, 1.0};
        for (const double expected : expected_a1) {
            a1.step(h);
            EXPECT_NEAR(a1.vz(), expected, 1e-8) << "A-1 beta " << beta;
        }
        PointRun search(k, true, beta * h, -1.0);
        search.integrator = std::make_unique<solver::ASearch>(search.model, 1, h, a_search_settings(), false);
        search.start();
        const double v2 = -std::min(1.1 * beta, 1.0);
        const std::vector<double> expected_search{-1.0, v2, 1.1 * (1.0 + v2), 1.0, 1.0, 1.0};
        for (const double expected : expected_search) {
            search.step(h);
            EXPECT_NEAR(search.vz(), expected, 1e-8) << "A-search beta " << beta;
        }
        EXPECT_GT(search.z(), 0.0); // it has left the wall
    }
}

TEST(Integrators, SolveAlphaBranches) {
    // H(α) = 2α² − 2α + 2 (vertex 0.5, minimum 1.5): target 2 → roots 0 and 1, take 1; target 1.625 →
    // 0.25 and 0.75, take 0.75; target 6 → −1 and 2, take 2, clipped to α_max; below the minimum → α_min;
    // flat (Dv = 0) → α_max when energy is short, else 1.
    EXPECT_NEAR(solver::solve_alpha(2.0, -2.0, 2.0, 2.0, 0.0, 1.1), 1.0, 1e-15);
    EXPECT_NEAR(solver::solve_alpha(2.0, -2.0, 2.0, 1.625, 0.0, 1.1), 0.75, 1e-15);
    EXPECT_NEAR(solver::solve_alpha(2.0, -2.0, 2.0, 6.0, 0.0, 4.0), 2.0, 1e-15);
    EXPECT_EQ(solver::solve_alpha(2.0, -2.0, 2.0, 6.0, 0.0, 1.1), 1.1);
    EXPECT_EQ(solver::solve_alpha(2.0, -2.0, 2.0, 1.4, 0.2, 1.1), 0.2);
    EXPECT_EQ(solver::solve_alpha(0.0, 0.0, 2.0, 3.0, 0.0, 1.1), 1.1);
    EXPECT_EQ(solver::solve_alpha(0.0, 0.0, 2.0, 1.0, 0.0, 1.1), 1.0);
}

TEST(Integrators, EnergyTargetScheduleDecaysPiecewise) {
    io::EnergyTargetSettings settings;
    settings.scale = 0.95;
    settings.ground_energy = 1.0;
    settings.schedule = {{1.0, 1.0}, {1.5, 0.5}, {2.0, std::nullopt}};
    solver::EnergyTarget target(settings);
    target.start(11.0); // T₀ = 10.45
    const double h = 0.01;
    double t = 0.0;
    for (int n = 0; n < 300; ++n, t = n * h) {
        target.advance(t, h, n == 10 ? 0.25 : 0.0); // a friction loss at step 10
    }
    // Conserved (minus the loss) to t = 1, e-folding 1 s to 1.5, 0.5 s to 2, conserved after.
    const double expected = 1.0 + (10.45 - 0.25 - 1.0) * std::exp(-0.5 / 1.0) * std::exp(-0.5 / 0.5);
    EXPECT_NEAR(target.value(), expected, 1e-10);
}

} // namespace
