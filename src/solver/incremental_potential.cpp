#include "src/solver/incremental_potential.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/solver/pcg.hpp"

#include <array>
#include <cmath>

namespace intact::solver {

namespace {

/// mass = solid + codim, node by node (a free function: CUDA's extended lambdas may not sit in a
/// constructor).
void add_lumped_masses(Kokkos::View<const double*, MemSpace> solid,
                       Kokkos::View<const double*, MemSpace> codim,
                       Kokkos::View<double*, MemSpace> mass) {
    Kokkos::parallel_for(
        "intact::solver::add_lumped_masses",
        Kokkos::RangePolicy<ExecSpace>(0, static_cast<int>(mass.extent(0))),
        KOKKOS_LAMBDA(const int n) { mass(n) = solid(n) + codim(n); });
}

} // namespace

IncrementalPotential::IncrementalPotential(const LocalMesh& mesh,
                                           const io::Scene& scene,
                                           comm::HaloExchange& halo,
                                           Kokkos::View<const double*, MemSpace> free_mask)
    : m_comm(halo.plan().comm()), m_num_owned(mesh.num_owned_nodes), m_num_local(mesh.num_local_nodes()),
      m_tets(mesh.tets), m_elastic(mesh, scene),
      m_codim(mesh.rest_position, mesh.codim, codim_materials(scene)),
      m_mass("intact::solver::lumped_mass_all", mesh.num_local_nodes()), m_free(std::move(free_mask)),
      m_gradient("intact::solver::gradient", mesh.num_local_nodes()), m_contact_matrix(mesh.num_owned_nodes),
      m_gradient_matrix(mesh.num_owned_nodes) {
    add_lumped_masses(m_elastic.lumped_mass(), m_codim.lumped_mass(), m_mass);
}

double IncrementalPotential::elastic_energy(const NodeField& x) const {
    return m_elastic.energy(x) + (m_codim.num_stencils() > 0 ? m_codim.energy(x) : 0.0);
}

void IncrementalPotential::add_term(EnergyTerm& term) {
    m_terms.push_back(&term);
    m_stencils.emplace_back();
    INTACT_REQUIRE(static_cast<int>(m_terms.size()) <= contact::ContactMatrix::k_max_lists,
                   "IncrementalPotential: at most " << contact::ContactMatrix::k_max_lists
                                                    << " energy terms");
}

void IncrementalPotential::use_terms(const std::vector<EnergyTerm*>& terms) {
    m_terms.clear();
    m_stencils.clear();
    for (EnergyTerm* term : terms) {
        add_term(*term);
    }
}

const BlockMatrix& IncrementalPotential::matrix() const {
    return block_matrix();
}

BlockMatrix& IncrementalPotential::block_matrix() const {
    if (!m_matrix) {
        m_matrix.emplace(m_num_owned, m_num_local, m_tets, BlockMatrix::ValueStorage::deferred,
                         m_codim.host_stencils());
    }
    return *m_matrix;
}

void IncrementalPotential::assemble(const NodeField& x, const StepProblem& problem) {
    assemble_elastic(x, problem);
    if (!m_terms.empty()) {
        add_terms();
    }
}

void IncrementalPotential::assemble_elastic(const NodeField& x, const StepProblem& problem, bool hessian) {
    m_elastic.evaluate(x, hessian);
    if (m_codim.num_stencils() > 0) {
        m_codim.evaluate(x, hessian);
    }
    BlockMatrix& matrix = block_matrix();
    if (hessian) {
        matrix.allocate_values(); // deferred: a solver that never assembles (stencil descent) needs none
    }
    const auto x_hat = problem.x_hat;
    const auto mass = m_mass;
    const auto element_gradient = m_elastic.gradients();
    const auto element_hessian = m_elastic.hessians();
    const auto stencil_gradient = m_codim.gradients();
    const auto stencil_hessian = m_codim.hessians();
    const int num_tets = matrix.num_tets();
    const auto node_offsets = matrix.node_source_offsets();
    const auto node_sources = matrix.node_sources();
    const auto row_offsets = matrix.row_offsets();
    const auto diagonal = matrix.diagonal();
    const auto block_offsets = matrix.source_offsets();
    const auto block_sources = matrix.sources();
    const auto values = matrix.values();
    const auto gradient = m_gradient;
    const double ch2 = problem.weight * problem.h * problem.h;
    const double gx = problem.gravity[0], gy = problem.gravity[1], gz = problem.gravity[2];
    const auto force = problem.force;
    const bool forced = force.extent(0) > 0;

    // One owned row per work item: a deterministic sum over the element entries of that row.
    Kokkos::parallel_for(
        "intact::solver::assemble_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int r) {
            double g[3] = {0.0, 0.0, 0.0};
            for (int j = node_offsets(r); j < node_offsets(r + 1); ++j) {
                const int e = node_sources(j) / 4;
                const int a = node_sources(j) % 4;
                for (int c = 0; c < 3; ++c) {
                    g[c] += e < num_tets ? element_gradient(e, 3 * a + c)
                                         : stencil_gradient(e - num_tets, 3 * a + c);
                }
            }
            const double m = mass(r);
            gradient(r, 0) = m * (x(r, 0) - x_hat(r, 0)) + ch2 * (g[0] - m * gx);
            gradient(r, 1) = m * (x(r, 1) - x_hat(r, 1)) + ch2 * (g[1] - m * gy);
            gradient(r, 2) = m * (x(r, 2) - x_hat(r, 2)) + ch2 * (g[2] - m * gz);
            if (forced) {
                for (int c = 0; c < 3; ++c) {
                    gradient(r, c) -= ch2 * force(r, c);
                }
            }
            for (int k = row_offsets(r); hessian && k < row_offsets(r + 1); ++k) {
                double block[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
                for (int j = block_offsets(k); j < block_offsets(k + 1); ++j) {
                    const int code = block_sources(j);
                    const int e = code / 16;
                    const int a = (code / 4) % 4;
                    const int b = code % 4;
                    for (int p = 0; p < 3; ++p) {
                        for (int q = 0; q < 3; ++q) {
                            block[p][q] += e < num_tets ? element_hessian(e, 3 * a + p, 3 * b + q)
                                                        : stencil_hessian(e - num_tets, 3 * a + p, 3 * b + q);
                        }
                    }
                }
                const double inertia = k == diagonal(r) ? m : 0.0;
                for (int p = 0; p < 3; ++p) {
                    for (int q = 0; q < 3; ++q) {
                        values(k, p, q) = ch2 * block[p][q] + (p == q ? inertia : 0.0);
                    }
                }
            }
        });
}

void IncrementalPotential::add_terms() {
    INTACT_REQUIRE(m_contact, "IncrementalPotential: terms need a contact model");
    std::vector<const contact::PairStencils*> lists;
    for (std::size_t k = 0; k < m_terms.size(); ++k) {
        m_terms[k]->derivatives(true, m_stencils[k]);
        lists.push_back(&m_stencils[k]);
    }
    // Gradient rows and diagonal blocks go into the gradient and the matrix (so block Jacobi sees them);
    // the other blocks act in every product through `apply`.
    m_contact_matrix.assemble(lists, m_contact->topology(), m_gradient, &block_matrix());
}

void IncrementalPotential::gradient_of(const contact::PairStencils& stencils, const NodeField& out) {
    INTACT_REQUIRE(m_contact, "IncrementalPotential: stencils need a contact model");
    Kokkos::deep_copy(out, 0.0);
    m_gradient_matrix.assemble({&stencils}, m_contact->topology(), out, nullptr);
}

void IncrementalPotential::apply(const NodeField& p, const NodeField& y) {
    spmv(block_matrix(), p, y, m_free);
    if (!m_terms.empty()) {
        // Collective on every rank (the gather), whether or not this rank has blocks. Directions leave
        // the obstacles where they are: their columns do not act here.
        m_contact->gather_direction(p);
        m_contact_matrix.apply(m_contact->direction(), y, m_free);
    }
}

void IncrementalPotential::apply_boundary(const NodeField& delta,
                                          const contact::ConstSurfaceField& obstacle_step,
                                          const NodeField& y) {
    spmv(block_matrix(), delta, y, m_free);
    if (!m_terms.empty()) {
        m_contact->gather_step(delta, obstacle_step);
        m_contact_matrix.apply(m_contact->step(), y, m_free);
    }
}

std::vector<double> IncrementalPotential::term_energies(const contact::ConstSurfaceField& xs) const {
    std::vector<double> energies;
    for (EnergyTerm* term : m_terms) {
        energies.push_back(term->local_energy(xs));
    }
    if (!energies.empty()) {
        INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, energies.data(), static_cast<int>(energies.size()),
                                       MPI_DOUBLE, MPI_SUM, m_comm));
    }
    return energies;
}

std::pair<double, double> IncrementalPotential::nodal_energy_change(const NodeField& x,
                                                                    const NodeField& trial,
                                                                    const StepProblem& problem) const {
    const auto mass = m_mass;
    const auto x_hat = problem.x_hat;
    const double gx = problem.gravity[0], gy = problem.gravity[1], gz = problem.gravity[2];
    const double ch2 = problem.weight * problem.h * problem.h;
    const auto force = problem.force;
    const bool forced = force.extent(0) > 0;
    double change = 0.0;
    double magnitude = 0.0;
    // Per node: ½ m (|y − x̂|² − |x − x̂|²) − c h² (m g + f)·(y − x), written with y − x so nothing
    // cancels.
    Kokkos::parallel_reduce(
        "intact::solver::nodal_energy_change", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i, double& sum_change, double& sum_magnitude) {
            double inertia = 0.0, before = 0.0, work = 0.0;
            const double g[3] = {gx, gy, gz};
            for (int c = 0; c < 3; ++c) {
                const double step = trial(i, c) - x(i, c);
                const double offset = x(i, c) - x_hat(i, c);
                inertia += step * (2.0 * offset + step);
                before += offset * offset;
                work += g[c] * step;
            }
            double applied = 0.0;
            if (forced) {
                for (int c = 0; c < 3; ++c) {
                    applied += force(i, c) * (trial(i, c) - x(i, c));
                }
            }
            sum_change += 0.5 * mass(i) * inertia - ch2 * (mass(i) * work + applied);
            sum_magnitude += 0.5 * mass(i) * before;
        },
        change, magnitude);
    return {change, magnitude};
}

std::pair<double, double> IncrementalPotential::energy_change(const NodeField& x,
                                                              const NodeField& trial,
                                                              const StepProblem& problem,
                                                              const std::vector<double>& at_x) const {
    const double ch2 = problem.weight * problem.h * problem.h;
    const auto [change, magnitude] = nodal_energy_change(x, trial, problem);
    auto elastic = m_elastic.energy_change(x, trial);
    if (m_codim.num_stencils() > 0) {
        const auto codim = m_codim.energy_change(x, trial);
        elastic.first += codim.first;
        elastic.second += codim.second;
    }
    // [change, scale, each term at the trial]: this rank's parts, one reduction.
    // (a fixed array: this runs for every line-search trial)
    std::array<double, 2 + contact::ContactMatrix::k_max_lists> totals{change + ch2 * elastic.first,
                                                                       magnitude + ch2 * elastic.second};
    for (std::size_t k = 0; k < m_terms.size(); ++k) {
        totals[2 + k] = m_terms[k]->local_energy(m_contact->trial());
    }
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, totals.data(), static_cast<int>(2 + m_terms.size()),
                                   MPI_DOUBLE, MPI_SUM, m_comm));
    if (!m_terms.empty()) {
        // Pair sets differ between x and the trial point; each energy is a global, owner-counted sum.
        double term_change = 0.0, term_scale = 0.0;
        for (std::size_t k = 0; k < m_terms.size(); ++k) {
            const double w = m_terms[k]->weight();
            term_change += w * (totals[2 + k] - at_x[k]);
            term_scale += w * std::abs(at_x[k]);
        }
        totals[0] += term_change;
        totals[1] += term_scale;
    }
    return {totals[0], totals[1]};
}

void IncrementalPotential::potential_gradient(const NodeField& x, const Vec3& gravity, const NodeField& out) {
    m_elastic.evaluate(x, false);
    if (m_codim.num_stencils() > 0) {
        m_codim.evaluate(x, false);
    }
    const BlockMatrix& matrix = block_matrix();
    const auto mass = m_mass;
    const auto element_gradient = m_elastic.gradients();
    const auto stencil_gradient = m_codim.gradients();
    const int num_tets = matrix.num_tets();
    const auto node_offsets = matrix.node_source_offsets();
    const auto node_sources = matrix.node_sources();
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    // The row sums of assemble_elastic, in the same order.
    Kokkos::parallel_for(
        "intact::solver::potential_gradient_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int r) {
            double g[3] = {0.0, 0.0, 0.0};
            for (int j = node_offsets(r); j < node_offsets(r + 1); ++j) {
                const int e = node_sources(j) / 4;
                const int a = node_sources(j) % 4;
                for (int c = 0; c < 3; ++c) {
                    g[c] += e < num_tets ? element_gradient(e, 3 * a + c)
                                         : stencil_gradient(e - num_tets, 3 * a + c);
                }
            }
            out(r, 0) = g[0] - mass(r) * gx;
            out(r, 1) = g[1] - mass(r) * gy;
            out(r, 2) = g[2] - mass(r) * gz;
        });
}

std::pair<double, double> IncrementalPotential::potential_energies(const NodeField& x,
                                                                   const Vec3& gravity) const {
    const auto mass = m_mass;
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    double gravitational = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::gravity_energy", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum -= mass(i) * (gx * x(i, 0) + gy * x(i, 1) + gz * x(i, 2));
        },
        gravitational);
    const double elastic = elastic_energy(x);
    return {comm::allreduce_sum(m_comm, elastic), comm::allreduce_sum(m_comm, gravitational)};
}

} // namespace intact::solver
