#include "src/solver/energy_model.hpp"

#include "src/core/error.hpp"

namespace intact::solver {

namespace {

// field(owned rows) *= factor.
void scale_rows(const NodeField& field, int rows, double factor) {
    Kokkos::parallel_for(
        "intact::solver::scale_rows", Kokkos::RangePolicy<ExecSpace>(0, rows), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                field(i, c) *= factor;
            }
        });
}

} // namespace

double work_rows(const NodeField& g, const NodeField& x, const NodeField& start, int rows) {
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::work_rows", Kokkos::RangePolicy<ExecSpace>(0, rows),
        KOKKOS_LAMBDA(const int i, double& total) {
            for (int c = 0; c < 3; ++c) {
                total += g(i, c) * (x(i, c) - start(i, c));
            }
        },
        sum);
    return sum;
}

SceneEnergyModel::SceneEnergyModel(IncrementalPotential& potential,
                                   comm::HaloExchange& halo,
                                   const Vec3& gravity)
    : m_potential(potential), m_halo(halo), m_gravity(gravity),
      m_scratch("intact::solver::dissipative_gradient", potential.num_local()) {}

std::vector<EnergyTerm*> SceneEnergyModel::terms(bool conservative) const {
    std::vector<EnergyTerm*> selected;
    for (EnergyTerm* term : m_potential.terms()) {
        if (term->conservative() == conservative) {
            selected.push_back(term);
        }
    }
    return selected;
}

int SceneEnergyModel::num_terms() const {
    return static_cast<int>(terms(true).size());
}

std::vector<double> SceneEnergyModel::term_weights() const {
    std::vector<double> weights;
    for (EnergyTerm* term : terms(true)) {
        weights.push_back(term->weight());
    }
    return weights;
}

std::vector<bool> SceneEnergyModel::stored_terms() const {
    std::vector<bool> stored;
    for (EnergyTerm* term : terms(true)) {
        stored.push_back(term->stores_energy());
    }
    return stored;
}

LocalEnergies SceneEnergyModel::conservative(const NodeField& x,
                                             double ch2,
                                             const NodeField& gradient,
                                             const std::vector<NodeField>& term_gradients) {
    LocalEnergies energies;
    energies.elastic = m_potential.elastic_energy(x);
    const auto mass = m_potential.lumped_mass();
    const double gx = m_gravity[0], gy = m_gravity[1], gz = m_gravity[2];
    Kokkos::parallel_reduce(
        "intact::solver::gravity_energy_rows", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum -= mass(i) * (gx * x(i, 0) + gy * x(i, 1) + gz * x(i, 2));
        },
        energies.gravitational);
    if (gradient.extent(0) > 0) {
        m_potential.potential_gradient(x, m_gravity, gradient);
    }
    const auto selected = terms(true);
    INTACT_REQUIRE(term_gradients.empty() || term_gradients.size() == selected.size(),
                   "SceneEnergyModel: one gradient field per conservative term");
    for (std::size_t k = 0; k < selected.size(); ++k) {
        // The term's energy and derivatives at the contact model's positions, which the caller made x.
        EnergyTerm& term = *selected[k];
        energies.terms.push_back(term.weight() * term.local_energy(m_potential.contact()->positions()) / ch2);
        if (!term_gradients.empty()) {
            term.derivatives(false, m_stencils);
            m_potential.gradient_of(m_stencils, term_gradients[k]);
            scale_rows(term_gradients[k], m_potential.num_owned(), 1.0 / ch2);
        }
    }
    return energies;
}

std::vector<double> SceneEnergyModel::stored_slopes(const NodeField& x, const NodeField& start, double ch2) {
    std::vector<double> slopes;
    for (EnergyTerm* term : terms(true)) {
        if (term->stores_energy()) {
            term->derivatives(false, m_stencils);
            m_potential.gradient_of(m_stencils, m_scratch);
            slopes.push_back(work_rows(m_scratch, x, start, m_potential.num_owned()) / ch2);
        }
    }
    return slopes;
}

double SceneEnergyModel::dissipated_work(const NodeField& x, const NodeField& start, double ch2) {
    double work = 0.0;
    for (EnergyTerm* term : terms(false)) {
        term->derivatives(false, m_stencils);
        m_potential.gradient_of(m_stencils, m_scratch);
        work += work_rows(m_scratch, x, start, m_potential.num_owned()) / ch2;
    }
    return work;
}

} // namespace intact::solver
