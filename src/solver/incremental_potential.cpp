#include "src/solver/incremental_potential.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/solver/pcg.hpp"

#include <cmath>
#include <map>

namespace intact::solver {

IncrementalPotential::IncrementalPotential(const LocalMesh& mesh,
                                           const io::Scene& scene,
                                           comm::HaloExchange& halo,
                                           Kokkos::View<const double*, MemSpace> free_mask)
    : m_comm(halo.plan().comm()), m_num_owned(mesh.num_owned_nodes), m_elastic(mesh, scene),
      m_matrix(mesh.num_owned_nodes, mesh.num_local_nodes(), mesh.tets), m_free(std::move(free_mask)),
      m_gradient("intact::solver::gradient", mesh.num_local_nodes()),
      m_term_gradient_device("intact::solver::term_gradient", mesh.num_local_nodes()) {}

void IncrementalPotential::assemble(const NodeField& x, const StepProblem& problem) {
    assemble_elastic(x, problem);
    if (!m_terms.empty()) {
        add_terms(x);
    }
}

void IncrementalPotential::assemble_elastic(const NodeField& x, const StepProblem& problem) {
    m_elastic.evaluate(x);
    const auto x_hat = problem.x_hat;
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
    const double ch2 = problem.weight * problem.h * problem.h;
    const double gx = problem.gravity[0], gy = problem.gravity[1], gz = problem.gravity[2];

    // One owned row per work item: a deterministic sum over the element entries of that row.
    Kokkos::parallel_for(
        "intact::solver::assemble_rows", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int r) {
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

void IncrementalPotential::add_term_gradient(const std::vector<Vec3>& xs,
                                             std::vector<double>& gradient) const {
    std::vector<contact::ContactBlock> unused;
    for (const EnergyTerm* term : m_terms) {
        term->add_derivatives(xs, gradient, unused);
    }
}

void IncrementalPotential::add_terms(const NodeField& x) {
    INTACT_REQUIRE(m_contact, "IncrementalPotential: terms need a contact model");
    const auto& xs = m_contact->positions();
    m_term_gradient.assign(3 * static_cast<std::size_t>(x.extent(0)), 0.0);
    std::vector<contact::ContactBlock> blocks;
    for (const EnergyTerm* term : m_terms) {
        term->add_derivatives(xs, m_term_gradient, blocks);
    }

    // Diagonal blocks go into the matrix (so block Jacobi sees them), summed per row; the others act in
    // every product through `apply`, each assigned the slot of its row. Terms may share a row, so their
    // blocks are merged per row here and every device update below touches a row once.
    const contact::ContactSurface& surface = m_contact->surface();
    std::map<int, int> diagonal_slot, product_slot;
    std::vector<int> diagonal_rows;
    std::vector<double> diagonal_values;
    m_blocks.clear();
    m_block_slot.clear();
    m_slot_rows.clear();
    for (const auto& block : blocks) {
        if (surface.local_of_surface(block.col) == block.row) {
            const auto [it, added] =
                diagonal_slot.try_emplace(block.row, static_cast<int>(diagonal_rows.size()));
            if (added) {
                diagonal_rows.push_back(block.row);
                diagonal_values.resize(diagonal_values.size() + 9, 0.0);
            }
            for (int k = 0; k < 9; ++k) {
                diagonal_values[static_cast<std::size_t>(9 * it->second + k)] += (&block.value[0][0])[k];
            }
        } else {
            const auto [it, added] =
                product_slot.try_emplace(block.row, static_cast<int>(m_slot_rows.size()));
            if (added) {
                m_slot_rows.push_back(block.row);
            }
            m_blocks.push_back(block);
            m_block_slot.push_back(it->second);
        }
    }

    // Device updates: gradient rows, diagonal blocks; the slot rows for the products.
    using HostInts = Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>;
    using HostBlocks =
        Kokkos::View<const double* [3][3], Kokkos::LayoutRight, HostSpace, Kokkos::MemoryUnmanaged>;
    using HostRows = Kokkos::View<const double* [3], Kokkos::LayoutRight, HostSpace, Kokkos::MemoryUnmanaged>;
    const auto gradient = m_gradient;
    const auto term_gradient = m_term_gradient_device;
    Kokkos::deep_copy(term_gradient, HostRows(m_term_gradient.data(), x.extent(0)));
    Kokkos::parallel_for(
        "intact::solver::add_term_gradient", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                gradient(i, c) += term_gradient(i, c);
            }
        });
    const auto num_diagonal = diagonal_rows.size();
    Kokkos::View<int*, MemSpace> rows("intact::solver::term_diagonal_rows", num_diagonal);
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> blocks_added("intact::solver::term_diagonal",
                                                                             num_diagonal);
    Kokkos::deep_copy(rows, HostInts(diagonal_rows.data(), num_diagonal));
    Kokkos::deep_copy(blocks_added, HostBlocks(diagonal_values.data(), num_diagonal));
    const auto values = m_matrix.values();
    const auto diagonal = m_matrix.diagonal();
    Kokkos::parallel_for(
        "intact::solver::add_term_diagonal", Kokkos::RangePolicy<ExecSpace>(0, num_diagonal),
        KOKKOS_LAMBDA(const int k) {
            const int d = diagonal(rows(k));
            for (int p = 0; p < 3; ++p) {
                for (int q = 0; q < 3; ++q) {
                    values(d, p, q) += blocks_added(k, p, q);
                }
            }
        });
    m_slot_rows_device = Kokkos::View<int*, MemSpace>("intact::solver::term_rows", m_slot_rows.size());
    Kokkos::deep_copy(m_slot_rows_device, HostInts(m_slot_rows.data(), m_slot_rows.size()));
    m_slot_products = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>(
        "intact::solver::term_products", m_slot_rows.size());
    m_slot_products_host = Kokkos::create_mirror_view(m_slot_products);
}

void IncrementalPotential::add_block_products(const std::vector<Vec3>& columns,
                                              bool obstacle_columns,
                                              const NodeField& y) {
    // y(row) += mask(row) Σ_blocks B · columns(col), summed on the host per row slot, added on the device.
    const contact::ContactSurface& surface = m_contact->surface();
    Kokkos::deep_copy(m_slot_products_host, 0.0);
    for (std::size_t k = 0; k < m_blocks.size(); ++k) {
        const auto& block = m_blocks[k];
        if (surface.is_obstacle(block.col) != obstacle_columns) {
            continue;
        }
        const Vec3& v = columns[static_cast<std::size_t>(
            obstacle_columns ? block.col - surface.num_body_vertices() : block.col)];
        const int slot = m_block_slot[k];
        for (int r = 0; r < 3; ++r) {
            m_slot_products_host(slot, r) +=
                block.value[r][0] * v[0] + block.value[r][1] * v[1] + block.value[r][2] * v[2];
        }
    }
    Kokkos::deep_copy(m_slot_products, m_slot_products_host);
    const auto rows = m_slot_rows_device;
    const auto products = m_slot_products;
    const auto mask = m_free;
    Kokkos::parallel_for(
        "intact::solver::add_term_products", Kokkos::RangePolicy<ExecSpace>(0, rows.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                y(rows(k), c) += mask(rows(k)) * products(k, c);
            }
        });
}

void IncrementalPotential::apply(const NodeField& p, const NodeField& y) {
    spmv(m_matrix, p, y, m_free);
    if (!m_terms.empty()) {
        // Collective on every rank (the gather), whether or not this rank has blocks. Directions leave
        // the obstacles where they are: their columns do not act here.
        m_contact->gather_direction(p);
        add_block_products(m_contact->direction(), false, y);
    }
}

void IncrementalPotential::add_obstacle_push(const std::vector<Vec3>& obstacle_step, const NodeField& y) {
    if (!m_terms.empty()) {
        add_block_products(obstacle_step, true, y);
    }
}

std::vector<double> IncrementalPotential::term_energies(const std::vector<Vec3>& xs) const {
    std::vector<double> energies;
    for (const EnergyTerm* term : m_terms) {
        energies.push_back(term->local_energy(xs));
    }
    if (!energies.empty()) {
        INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, energies.data(), static_cast<int>(energies.size()),
                                       MPI_DOUBLE, MPI_SUM, m_comm));
    }
    return energies;
}

std::pair<double, double> IncrementalPotential::energy_change(const NodeField& x,
                                                              const NodeField& trial,
                                                              const StepProblem& problem,
                                                              const std::vector<double>& at_x) const {
    const auto mass = m_elastic.lumped_mass();
    const auto x_hat = problem.x_hat;
    const double gx = problem.gravity[0], gy = problem.gravity[1], gz = problem.gravity[2];
    const double ch2 = problem.weight * problem.h * problem.h;
    double change = 0.0;
    double magnitude = 0.0;
    // Per node: ½ m (|y − x̂|² − |x − x̂|²) − c h² m g·(y − x), written with y − x so nothing cancels.
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
            sum_change += 0.5 * mass(i) * inertia - ch2 * mass(i) * work;
            sum_magnitude += 0.5 * mass(i) * before;
        },
        change, magnitude);
    const auto elastic = m_elastic.energy_change(x, trial);
    // [change, scale, each term at the trial]: this rank's parts, one reduction.
    std::vector<double> totals{change + ch2 * elastic.first, magnitude + ch2 * elastic.second};
    for (const EnergyTerm* term : m_terms) {
        totals.push_back(term->local_energy(m_contact->trial()));
    }
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, totals.data(), static_cast<int>(totals.size()), MPI_DOUBLE,
                                   MPI_SUM, m_comm));
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

std::pair<double, double> IncrementalPotential::potential_energies(const NodeField& x,
                                                                   const Vec3& gravity) const {
    const auto mass = m_elastic.lumped_mass();
    const double gx = gravity[0], gy = gravity[1], gz = gravity[2];
    double gravitational = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::gravity_energy", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum -= mass(i) * (gx * x(i, 0) + gy * x(i, 1) + gz * x(i, 2));
        },
        gravitational);
    const double elastic = m_elastic.energy(x);
    return {comm::allreduce_sum(m_comm, elastic), comm::allreduce_sum(m_comm, gravitational)};
}

} // namespace intact::solver
