#include "src/solver/newton_solver.hpp"

#include "comm/collectives.hpp"

#include <cmath>
#include <limits>

namespace intact::solver {

namespace {

Kokkos::View<double*, MemSpace> free_mask(const std::vector<NodeConstraint>& constraint) {
    Kokkos::View<double*, MemSpace> mask("intact::solver::free_mask", constraint.size());
    auto host = Kokkos::create_mirror_view(mask);
    for (std::size_t i = 0; i < constraint.size(); ++i) {
        host(i) = constraint[i] == NodeConstraint::free ? 1.0 : 0.0;
    }
    Kokkos::deep_copy(mask, host);
    return mask;
}

} // namespace

NewtonSolver::NewtonSolver(const LocalMesh& mesh, const io::Scene& scene, comm::HaloExchange<>& halo,
                           const std::vector<NodeConstraint>& constrained)
    : m_comm(halo.plan().comm()), m_num_owned(mesh.num_owned_nodes), m_halo(halo), m_elastic(mesh, scene),
      m_matrix(mesh.num_owned_nodes, mesh.num_local_nodes(), mesh.tets), m_free(free_mask(constrained)),
      m_pcg(m_matrix, halo, m_free), m_gradient("intact::solver::gradient", mesh.num_local_nodes()),
      m_rhs("intact::solver::rhs", mesh.num_local_nodes()),
      m_direction("intact::solver::direction", mesh.num_local_nodes()),
      m_trial("intact::solver::trial", mesh.num_local_nodes()) {}

std::pair<double, double> NewtonSolver::potential_energies(const NodeField& x, const Vec3& gravity) const {
    const auto mass = m_elastic.lumped_mass();
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    double gravitational = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::gravity_energy", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i, double& sum) { sum -= mass(i) * (gx * x(i, 0) + gy * x(i, 1) + gz * x(i, 2)); },
        gravitational);
    const double elastic = m_elastic.energy(x);
    return {comm::allreduce_sum(m_comm, elastic), comm::allreduce_sum(m_comm, gravitational)};
}

double NewtonSolver::total_energy(const NodeField& x, const NodeField& x_hat, double h, double weight,
                                  const Vec3& gravity) const {
    const auto mass = m_elastic.lumped_mass();
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    const double ch2 = weight * h * h;
    double nodal = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::inertia_energy", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i, double& sum) {
            const double d0 = x(i, 0) - x_hat(i, 0), d1 = x(i, 1) - x_hat(i, 1), d2 = x(i, 2) - x_hat(i, 2);
            sum += 0.5 * mass(i) * (d0 * d0 + d1 * d1 + d2 * d2) -
                   ch2 * mass(i) * (gx * x(i, 0) + gy * x(i, 1) + gz * x(i, 2));
        },
        nodal);
    const double elastic = m_elastic.energy(x);
    // An inverted neo-Hookean element makes the energy +∞ on its rank; the sum carries it to all ranks.
    return comm::allreduce_sum(m_comm, nodal + ch2 * elastic);
}

void NewtonSolver::assemble(const NodeField& x, const NodeField& x_hat, double h, double weight,
                            const Vec3& gravity) {
    m_elastic.evaluate(x);
    const auto mass = m_elastic.lumped_mass();
    const auto element_gradient = m_elastic.gradients();
    const auto element_hessian = m_elastic.hessians();
    const auto node_offsets = m_matrix.node_source_offsets();
    const auto node_sources = m_matrix.node_sources();
    const auto row_offsets = m_matrix.row_offsets();
    const auto diagonal = m_matrix.diagonal();
    const auto block_offsets = m_matrix.source_offsets();
    const auto block_sources = m_matrix.sources();
    const auto values = m_matrix.values();
    const auto gradient = m_gradient;
    const double ch2 = weight * h * h;
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];

    // One owned row per work item: a deterministic sum over the element entries of that row.
    Kokkos::parallel_for(
        "intact::solver::assemble_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned), KOKKOS_LAMBDA(const int r) {
            double g[3] = {0.0, 0.0, 0.0};
            for (int j = node_offsets(r); j < node_offsets(r + 1); ++j) {
                const int e = node_sources(j) / 4;
                const int a = node_sources(j) % 4;
                for (int c = 0; c < 3; ++c) {
                    g[c] += element_gradient(e, 3 * a + c);
                }
            }
            const double m = mass(r);
            gradient(r, 0) = m * (x(r, 0) - x_hat(r, 0)) + ch2 * (g[0] - m * gx);
            gradient(r, 1) = m * (x(r, 1) - x_hat(r, 1)) + ch2 * (g[1] - m * gy);
            gradient(r, 2) = m * (x(r, 2) - x_hat(r, 2)) + ch2 * (g[2] - m * gz);
            for (int k = row_offsets(r); k < row_offsets(r + 1); ++k) {
                double block[3][3] = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
                for (int j = block_offsets(k); j < block_offsets(k + 1); ++j) {
                    const int code = block_sources(j);
                    const int e = code / 16;
                    const int a = (code / 4) % 4;
                    const int b = code % 4;
                    for (int p = 0; p < 3; ++p) {
                        for (int q = 0; q < 3; ++q) {
                            block[p][q] += element_hessian(e, 3 * a + p, 3 * b + q);
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

NewtonResult NewtonSolver::minimize(const NodeField& x, const NodeField& x_hat, double h, double weight,
                                    const Vec3& gravity, const NewtonSettings& settings) {
    NewtonResult result;
    const auto rhs = m_rhs;
    const auto gradient = m_gradient;
    const auto direction = m_direction;
    const auto trial = m_trial;
    const int n = m_num_owned;
    double energy = total_energy(x, x_hat, h, weight, gravity);

    for (int it = 0; it < settings.max_iterations; ++it) {
        // 1. Gradient and projected Hessian; direction from H p = −∇E.
        assemble(x, x_hat, h, weight, gravity);
        Kokkos::parallel_for(
            "intact::solver::negate_gradient", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
                for (int c = 0; c < 3; ++c) {
                    rhs(i, c) = -gradient(i, c);
                }
            });
        const PcgResult linear = m_pcg.solve(rhs, direction, settings.linear);
        result.linear_iterations += linear.iterations;

        // 2. Stop on ‖p‖∞ / h (constrained rows of p are zero).
        double p_max = 0.0;
        Kokkos::parallel_reduce(
            "intact::solver::direction_max", Kokkos::RangePolicy<ExecSpace>(0, n),
            KOKKOS_LAMBDA(const int i, double& m) {
                for (int c = 0; c < 3; ++c) {
                    const double v = direction(i, c) < 0 ? -direction(i, c) : direction(i, c);
                    m = v > m ? v : m;
                }
            },
            Kokkos::Max<double>(p_max));
        p_max = comm::allreduce_max(m_comm, p_max);
        result.residual = p_max / h;
        if (result.residual < settings.tolerance) {
            result.converged = true;
            break;
        }

        // 3. Backtracking from the inversion-safe bound.
        double alpha = comm::allreduce_min(m_comm, m_elastic.max_step(x, direction));
        double trial_energy = std::numeric_limits<double>::infinity();
        const int local_rows = static_cast<int>(x.extent(0));
        for (int halvings = 0; halvings < 60; ++halvings) {
            Kokkos::parallel_for(
                "intact::solver::trial_point", Kokkos::RangePolicy<ExecSpace>(0, local_rows),
                KOKKOS_LAMBDA(const int i) {
                    for (int c = 0; c < 3; ++c) {
                        trial(i, c) = x(i, c) + alpha * direction(i, c);
                    }
                });
            trial_energy = total_energy(trial, x_hat, h, weight, gravity);
            if (trial_energy <= energy) {
                break;
            }
            alpha *= 0.5;
        }
        result.iterations = it + 1;
        if (!(trial_energy <= energy)) {
            result.line_search_failed = true;
            break;
        }
        Kokkos::deep_copy(x, trial);
        energy = trial_energy;
    }
    return result;
}

} // namespace intact::solver
