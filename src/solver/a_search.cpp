#include "src/solver/a_search.hpp"

#include "src/core/error.hpp"
#include "src/io/checkpoint.hpp"

#include <algorithm>
#include <cmath>

namespace intact::solver {

double solve_alpha(double a, double b, double c0, double target, double alpha_min, double alpha_max) {
    const double c = c0 - target;
    double alpha = 1.0;
    // Spec §3.3 [OURS] for the branches the paper leaves open: a flat parabola (Dv ≈ 0, e.g. free fall)
    // cannot steer, so take α_max while energy is short by more than round-off (the paper's plots show
    // α = 1.1 in free fall), else 1; no real root means even the energy-minimising α stays above the
    // target: fall back to α_min (IE).
    const double scale = std::max({std::abs(c0), std::abs(target), 1e-12});
    if (a <= 1e-14 * scale) {
        alpha = c < -1e-12 * scale ? alpha_max : 1.0;
    } else {
        const double discriminant = b * b - 4.0 * a * c;
        if (discriminant < 0.0) {
            alpha = alpha_min;
        } else {
            // Cancellation-free roots q / a and c / q.
            const double q = -0.5 * (b + std::copysign(std::sqrt(discriminant), b));
            const double r1 = q / a;
            const double r2 = q != 0.0 ? c / q : r1;
            alpha = std::abs(r1 - 1.0) <= std::abs(r2 - 1.0) ? r1 : r2;
        }
    }
    return std::min(alpha_max, std::max(alpha_min, alpha));
}

double EnergyTarget::advance(double t, double h, double dissipated) {
    // The piece in effect at the step's start (a piece starting within round-off of t counts).
    const io::EnergyDecay* piece = nullptr;
    for (const auto& decay : m_settings.schedule) {
        if (decay.from <= t + 1e-9 * h) {
            piece = &decay;
        }
    }
    if (piece && piece->decay_time) {
        const double ground = m_settings.ground_energy;
        m_target = ground + std::exp(-h / *piece->decay_time) * (m_target - ground - dissipated);
    } else {
        m_target -= dissipated;
    }
    return m_target;
}

ASearch::ASearch(
    EnergyModel& model, int num_local, double h, const io::IntegratorSettings& settings, bool fixed_alpha)
    : ImplicitEuler(num_local), m_model(model), m_h(h), m_fixed_alpha(fixed_alpha),
      m_alpha_min(settings.alpha_min), m_alpha_max(settings.alpha_max), m_target(settings.energy),
      m_correction("intact::solver::velocity_correction", num_local),
      m_start_gradient("intact::solver::start_potential_gradient", num_local),
      m_end_gradient("intact::solver::end_potential_gradient", num_local) {}

std::vector<double> ASearch::reduce_everywhere(std::vector<double> local) const {
    std::vector<double> sums(local.size(), 0.0);
    const int count = static_cast<int>(local.size());
    int rank = 0;
    MPI_Comm_rank(m_model.comm(), &rank);
    INTACT_CHECK_MPI(MPI_Reduce(local.data(), sums.data(), count, MPI_DOUBLE, MPI_SUM, 0, m_model.comm()));
    INTACT_CHECK_MPI(MPI_Bcast(sums.data(), count, MPI_DOUBLE, 0, m_model.comm()));
    return sums;
}

double ASearch::kinetic_energy(const NodeField& v) const {
    const auto mass = m_model.lumped_mass();
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::a_search_kinetic_energy", Kokkos::RangePolicy<ExecSpace>(0, m_model.num_owned()),
        KOKKOS_LAMBDA(const int i, double& total) {
            total += 0.5 * mass(i) * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
        },
        sum);
    return sum;
}

std::pair<double, double> ASearch::owned_mass() const {
    const auto mass = m_model.lumped_mass();
    const auto free = m_model.free_mask();
    double total = 0.0, constrained = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::a_search_mass", Kokkos::RangePolicy<ExecSpace>(0, m_model.num_owned()),
        KOKKOS_LAMBDA(const int i, double& sum_mass, double& sum_constrained) {
            sum_mass += mass(i);
            sum_constrained += free(i) < 1.0 ? 1.0 : 0.0;
        },
        total, constrained);
    return {total, constrained};
}

void ASearch::start(const NodeField& x, const NodeField& v) {
    // H⁰ = P(x⁰) + ½‖v⁰‖²_M and ∇P(x⁰), the first step's cached start gradient.
    const int terms = m_model.num_terms();
    m_start_term_gradients.clear();
    m_end_term_gradients.clear();
    for (int k = 0; k < terms; ++k) {
        m_start_term_gradients.emplace_back("intact::solver::start_term_gradient", x.extent(0));
        m_end_term_gradients.emplace_back("intact::solver::end_term_gradient", x.extent(0));
    }
    const LocalEnergies local = m_model.conservative(x, m_h * m_h, m_start_gradient, m_start_term_gradients);
    std::vector<double> values{local.elastic, local.gravitational, kinetic_energy(v)};
    values.insert(values.end(), local.terms.begin(), local.terms.end());
    const std::vector<double> sums = reduce_everywhere(values);
    const auto [mass, constrained] = owned_mass();
    const std::vector<double> total = reduce_everywhere({mass, constrained});
    m_flight_mass = total[1] > 0.0 ? 0.0 : total[0];
    double energy = 0.0;
    for (double e : sums) {
        energy += e;
    }
    m_target.start(energy);
    m_deferred = 0.0;
    m_start_term_energies.assign(sums.begin() + 3, sums.end());
    m_start_term_weights = m_model.term_weights();
    m_steps_taken = 0;
    m_control = EnergyControl{m_fixed_alpha ? std::nullopt : std::optional<double>(m_target.value()),
                              std::nullopt, 0.0};
}

std::array<double, 4>
ASearch::force_difference(double h, const NodeField& v, const std::vector<double>& ratios) {
    const int rows = m_model.num_owned();
    const auto mass = m_model.lumped_mass();
    const auto free = m_model.free_mask();
    const auto dv = m_correction;
    {
        const auto start = m_start_gradient;
        const auto end = m_end_gradient;
        Kokkos::parallel_for(
            "intact::solver::a_search_force_difference", Kokkos::RangePolicy<ExecSpace>(0, rows),
            KOKKOS_LAMBDA(const int i) {
                const double scale = free(i) * h / mass(i);
                for (int c = 0; c < 3; ++c) {
                    dv(i, c) = scale * (start(i, c) - end(i, c));
                }
            });
    }
    double forces = 0.0;
    for (std::size_t k = 0; k < ratios.size(); ++k) {
        const auto start = m_start_term_gradients[k];
        const auto end = m_end_term_gradients[k];
        const double ratio = ratios[k];
        double term = 0.0;
        Kokkos::parallel_reduce(
            "intact::solver::a_search_term_force_difference", Kokkos::RangePolicy<ExecSpace>(0, rows),
            KOKKOS_LAMBDA(const int i, double& sum) {
                const double scale = free(i) * h / mass(i);
                for (int c = 0; c < 3; ++c) {
                    dv(i, c) += scale * (ratio * start(i, c) - end(i, c));
                    sum += start(i, c) * start(i, c) + end(i, c) * end(i, c);
                }
            },
            term);
        forces += term;
    }
    // KW = ½‖w‖²_M, WD = ⟨w, Dv⟩_M, DD = ½‖Dv‖²_M with w in v.
    double kw = 0.0, wd = 0.0, dd = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::a_search_dots", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const int i, double& sum_kw, double& sum_wd, double& sum_dd) {
            for (int c = 0; c < 3; ++c) {
                sum_kw += 0.5 * mass(i) * v(i, c) * v(i, c);
                sum_wd += mass(i) * v(i, c) * dv(i, c);
                sum_dd += 0.5 * mass(i) * dv(i, c) * dv(i, c);
            }
        },
        kw, wd, dd);
    return {kw, wd, dd, forces};
}

void ASearch::correct_velocity(double alpha, const NodeField& v) {
    const auto dv = m_correction;
    Kokkos::parallel_for(
        "intact::solver::a_search_correct", Kokkos::RangePolicy<ExecSpace>(0, m_model.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                v(i, c) -= alpha * dv(i, c);
            }
        });
    m_model.gather(v);
}

void ASearch::end_step(const StepProblem& problem, const NodeField& x, const NodeField& v) {
    const double h = problem.h;
    INTACT_REQUIRE(problem.weight == 1.0, "A-search corrects an implicit-Euler solve (c = 1)");

    // 1. The implicit-Euler velocity w = (xⁿ⁺¹ − xⁿ)/h, into v.
    ImplicitEuler::end_step(problem, x, v);

    // 2. ∇P(xⁿ⁺¹) and this rank's energies there (the solver left the contact model at xⁿ⁺¹).
    const LocalEnergies end = m_model.conservative(x, h * h, m_end_gradient, m_end_term_gradients);

    // 3. A term whose weight changed since xⁿ (IPC's κ) changed P: its start gradient and energy scale
    //    with the weight, and the target moves by the energy difference at xⁿ (spec §3.6).
    const std::vector<double> weights = m_model.term_weights();
    std::vector<double> ratios(weights.size(), 1.0);
    double rebase = 0.0;
    for (std::size_t k = 0; k < weights.size(); ++k) {
        if (m_start_term_weights[k] > 0.0) {
            ratios[k] = weights[k] / m_start_term_weights[k];
        }
        rebase += (ratios[k] - 1.0) * m_start_term_energies[k];
    }

    // 4. Dv, the dot products and the friction work, then one reduction: the same numbers everywhere.
    const auto dots = force_difference(h, v, ratios);
    const double work = m_model.dissipated_work(x, m_start, h * h);
    const double loaded = problem.force.extent(0) > 0 ? 1.0 : 0.0;
    constexpr int k_scalars = 8; // the entries before the terms' energies
    std::vector<double> values{end.elastic, end.gravitational, dots[0], dots[1], dots[2],
                               work,        dots[3],           loaded};
    values.insert(values.end(), end.terms.begin(), end.terms.end());
    const std::vector<double> sums = reduce_everywhere(values);
    const double kw = sums[2], wd = sums[3], dd = sums[4], dissipated = sums[5];
    double potential = sums[0] + sums[1];
    for (std::size_t k = k_scalars; k < sums.size(); ++k) {
        potential += sums[k];
    }

    // 5. The target, then α: H(α) = DD α² − WD α + (P + KW) (spec §3.3); A-1 takes α = 1. In free flight
    //    α aims below the target by the centre of mass's implicit-Euler loss since the last contact (header).
    m_target.rebase(rebase);
    const double target = m_target.advance(m_steps_taken * h, h, dissipated);
    const bool free_flight = m_flight_mass > 0.0 && sums[6] == 0.0 && sums[7] == 0.0;
    if (free_flight) {
        const Vec3& g = problem.gravity;
        m_deferred += 0.5 * h * h * (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * m_flight_mass;
    } else {
        m_deferred = 0.0;
    }
    const double aim = target - m_deferred;
    const double alpha =
        m_fixed_alpha ? 1.0 : solve_alpha(dd, -wd, potential + kw, aim, m_alpha_min, m_alpha_max);

    // 6. vⁿ⁺¹ = w − α Dv (ghost rows from their owners).
    correct_velocity(alpha, v);
    m_control = EnergyControl{m_fixed_alpha ? std::nullopt : std::optional<double>(target), alpha, dissipated,
                              m_deferred};

    // 7. The end becomes the next step's start.
    std::swap(m_start_gradient, m_end_gradient);
    std::swap(m_start_term_gradients, m_end_term_gradients);
    m_start_term_energies.assign(sums.begin() + k_scalars, sums.end());
    m_start_term_weights = weights;
    ++m_steps_taken;
}

void ASearch::save(io::CheckpointWriter& out) const {
    // The cached start-of-step numbers (rather than a re-evaluation at xⁿ after the restart): they are
    // what the uninterrupted run uses, including each term's weight of the step that ended at xⁿ.
    const bool has_alpha = m_control && m_control->alpha;
    out.put_values("a_search/scalars", {m_target.value(), static_cast<double>(m_steps_taken),
                                        static_cast<double>(m_start_term_gradients.size()),
                                        has_alpha ? 1.0 : 0.0, has_alpha ? *m_control->alpha : 0.0,
                                        m_control ? m_control->dissipated : 0.0, m_deferred});
    out.put_values("a_search/term_energies", m_start_term_energies);
    out.put_values("a_search/term_weights", m_start_term_weights);
    out.put_node_field("a_search/start_gradient", m_start_gradient);
    for (std::size_t k = 0; k < m_start_term_gradients.size(); ++k) {
        out.put_node_field("a_search/start_term_gradient_" + std::to_string(k), m_start_term_gradients[k]);
    }
}

void ASearch::restore(const io::CheckpointReader& in) {
    // start() ran at x⁰ and sized the term fields; everything it computed is replaced but m_flight_mass,
    // which depends only on the masses and the constraints.
    const std::vector<double> scalars = in.values("a_search/scalars");
    // Six scalars: a checkpoint written before the deferred loss was kept (none is deferred then).
    const bool known = scalars.size() == 6 || scalars.size() == 7;
    INTACT_REQUIRE(known && static_cast<std::size_t>(scalars[2]) == m_start_term_gradients.size(),
                   "A-search checkpoint: " << (known ? scalars[2] : -1.0) << " terms saved, "
                                           << m_start_term_gradients.size() << " here");
    m_target.restore(scalars[0]);
    m_deferred = scalars.size() == 7 ? scalars[6] : 0.0;
    m_steps_taken = static_cast<int>(scalars[1]);
    m_control = EnergyControl{m_fixed_alpha ? std::nullopt : std::optional<double>(scalars[0]),
                              scalars[3] != 0.0 ? std::optional<double>(scalars[4]) : std::nullopt,
                              scalars[5], m_deferred};
    m_start_term_energies = in.values("a_search/term_energies");
    m_start_term_weights = in.values("a_search/term_weights");
    in.node_field("a_search/start_gradient", m_start_gradient);
    for (std::size_t k = 0; k < m_start_term_gradients.size(); ++k) {
        in.node_field("a_search/start_term_gradient_" + std::to_string(k), m_start_term_gradients[k]);
    }
}

} // namespace intact::solver
