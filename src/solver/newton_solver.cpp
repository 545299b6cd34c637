#include "src/solver/newton_solver.hpp"

#include "comm/collectives.hpp"

#include "kernels/barrier.hpp"
#include "src/core/error.hpp"

#include <cmath>
#include <limits>
#include <map>

namespace intact::solver {

namespace {

Kokkos::View<double*, MemSpace> make_free_mask(const std::vector<NodeConstraint>& constraint) {
    Kokkos::View<double*, MemSpace> mask("intact::solver::free_mask", constraint.size());
    auto host = Kokkos::create_mirror_view(mask);
    for (std::size_t i = 0; i < constraint.size(); ++i) {
        host(i) = constraint[i] == NodeConstraint::free ? 1.0 : 0.0;
    }
    Kokkos::deep_copy(mask, host);
    return mask;
}

} // namespace

NewtonSolver::NewtonSolver(const LocalMesh& mesh,
                           const io::Scene& scene,
                           comm::HaloExchange& halo,
                           const std::vector<NodeConstraint>& constrained)
    : m_comm(halo.plan().comm()), m_num_owned(mesh.num_owned_nodes), m_halo(halo), m_elastic(mesh, scene),
      m_matrix(mesh.num_owned_nodes, mesh.num_local_nodes(), mesh.tets), m_free(make_free_mask(constrained)),
      m_pcg(m_matrix, halo, m_free), m_gradient("intact::solver::gradient", mesh.num_local_nodes()),
      m_rhs("intact::solver::rhs", mesh.num_local_nodes()),
      m_direction("intact::solver::direction", mesh.num_local_nodes()),
      m_trial("intact::solver::trial", mesh.num_local_nodes()),
      m_boundary_step("intact::solver::boundary_step", mesh.num_local_nodes()),
      m_product("intact::solver::product", mesh.num_local_nodes()),
      m_step_start("intact::solver::step_start", mesh.num_local_nodes()) {}

std::pair<double, double> NewtonSolver::potential_energies(const NodeField& x, const Vec3& gravity) const {
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

std::pair<double, double> NewtonSolver::energy_change(const NodeField& x,
                                                      const NodeField& trial,
                                                      const std::vector<Vec3>& obstacle_trial,
                                                      const StepProblem& problem,
                                                      const std::pair<double, double>& contact_at_x) const {
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
    // [change, scale, barrier at the trial, friction at the trial]: this rank's parts, one reduction.
    double totals[4] = {change + ch2 * elastic.first, magnitude + ch2 * elastic.second, 0.0, 0.0};
    if (m_barrier) {
        m_surface->gather(trial, obstacle_trial, m_ts); // collective: before the reduction
        totals[2] = m_barrier->local_energy(m_ts);
        totals[3] = m_friction ? m_friction->local_energy(m_ts) : 0.0;
    }
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, totals, 4, MPI_DOUBLE, MPI_SUM, m_comm));
    if (m_barrier) {
        // Pair sets differ between x and the trial point; each energy is a global, owner-counted sum.
        totals[0] += m_kappa * (totals[2] - contact_at_x.first) + (totals[3] - contact_at_x.second);
        totals[1] += m_kappa * std::abs(contact_at_x.first) + std::abs(contact_at_x.second);
    }
    return {totals[0], totals[1]};
}

std::pair<double, double> NewtonSolver::contact_energies(const std::vector<Vec3>& xs) const {
    if (!m_barrier) {
        return {0.0, 0.0};
    }
    return {m_barrier->energy(xs), m_friction ? m_friction->energy(xs) : 0.0};
}

void NewtonSolver::assemble(const NodeField& x, const StepProblem& problem) {
    assemble_elastic(x, problem);
    if (m_barrier) {
        add_contact(x);
    }
}

void NewtonSolver::assemble_elastic(const NodeField& x, const StepProblem& problem) {
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

void NewtonSolver::enable_contact(contact::ContactSurface& surface,
                                  const contact::BarrierPotential& barrier,
                                  double length) {
    m_surface = &surface;
    m_barrier = &barrier;
    m_length = length;
    // κ bounds (IPC spec §4.1): at d = 1e-8 l the barrier's normal stiffness equals 1e11 × mean nodal mass.
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), m_elastic.lumped_mass());
    double total = 0.0;
    for (int i = 0; i < m_num_owned; ++i) {
        total += mass(i);
    }
    const double nodes = static_cast<double>(comm::allreduce_sum(m_comm, std::int64_t{m_num_owned}));
    const double mean_mass = comm::allreduce_sum(m_comm, total) / nodes;
    const double s_hat = barrier.dhat() * barrier.dhat();
    double s_ref = (1e-8 * length) * (1e-8 * length);
    if (s_ref >= s_hat) {
        s_ref = 0.5 * s_hat;
    }
    m_kappa_min = 1e11 * mean_mass / (4.0 * s_ref * kernels::barrier_second_derivative(s_ref, s_hat));
    m_kappa_max = 100.0 * m_kappa_min;
    m_kappa = m_kappa_min;
    m_obstacle_x = surface.obstacle_positions(0.0);
    m_obstacle_step.assign(m_obstacle_x.size(), Vec3{});
    m_obstacle_zero.assign(m_obstacle_x.size(), Vec3{});
    m_contact_gradient_device = NodeField("intact::solver::contact_gradient", m_free.extent(0));
    m_pcg.set_extra_operator([this](const NodeField& p, const NodeField& y) { apply_contact(p, y); });
}

void NewtonSolver::add_contact(const NodeField& x) {
    m_surface->update_ghosts(x, nullptr, m_barrier->dhat());
    m_surface->gather(x, m_obstacle_x, m_xs);
    m_contact_gradient.assign(3 * static_cast<std::size_t>(x.extent(0)), 0.0);
    std::vector<contact::ContactBlock> blocks;
    m_barrier->derivatives(m_xs, m_kappa, m_contact_gradient, &blocks);
    if (m_friction) {
        m_friction->derivatives(m_xs, m_contact_gradient, blocks);
    }

    // Diagonal blocks go into the matrix (so block Jacobi sees them), summed per row; the others act in
    // PCG through apply_contact, each assigned the slot of its row. Barrier and friction blocks may share
    // a row, so both are merged per row here and every device update below touches a row once.
    std::map<int, int> diagonal_slot, product_slot;
    std::vector<int> diagonal_rows;
    std::vector<double> diagonal_values;
    m_contact_blocks.clear();
    m_block_slot.clear();
    m_slot_rows.clear();
    for (const auto& block : blocks) {
        if (m_surface->local_of_surface(block.col) == block.row) {
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
            m_contact_blocks.push_back(block);
            m_block_slot.push_back(it->second);
        }
    }

    // Device updates: gradient rows, diagonal blocks; the slot rows for apply_contact.
    using HostInts = Kokkos::View<const int*, HostSpace, Kokkos::MemoryUnmanaged>;
    using HostBlocks =
        Kokkos::View<const double* [3][3], Kokkos::LayoutRight, HostSpace, Kokkos::MemoryUnmanaged>;
    using HostRows = Kokkos::View<const double* [3], Kokkos::LayoutRight, HostSpace, Kokkos::MemoryUnmanaged>;
    const auto gradient = m_gradient;
    const auto contact_gradient = m_contact_gradient_device;
    Kokkos::deep_copy(contact_gradient, HostRows(m_contact_gradient.data(), x.extent(0)));
    Kokkos::parallel_for(
        "intact::solver::add_contact_gradient", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                gradient(i, c) += contact_gradient(i, c);
            }
        });
    const auto num_diagonal = diagonal_rows.size();
    Kokkos::View<int*, MemSpace> rows("intact::solver::contact_diagonal_rows", num_diagonal);
    Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace> blocks_added(
        "intact::solver::contact_diagonal", num_diagonal);
    Kokkos::deep_copy(rows, HostInts(diagonal_rows.data(), num_diagonal));
    Kokkos::deep_copy(blocks_added, HostBlocks(diagonal_values.data(), num_diagonal));
    const auto values = m_matrix.values();
    const auto diagonal = m_matrix.diagonal();
    Kokkos::parallel_for(
        "intact::solver::add_contact_diagonal", Kokkos::RangePolicy<ExecSpace>(0, num_diagonal),
        KOKKOS_LAMBDA(const int k) {
            const int d = diagonal(rows(k));
            for (int p = 0; p < 3; ++p) {
                for (int q = 0; q < 3; ++q) {
                    values(d, p, q) += blocks_added(k, p, q);
                }
            }
        });
    m_slot_rows_device = Kokkos::View<int*, MemSpace>("intact::solver::contact_rows", m_slot_rows.size());
    Kokkos::deep_copy(m_slot_rows_device, HostInts(m_slot_rows.data(), m_slot_rows.size()));
    m_slot_products = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>(
        "intact::solver::contact_products", m_slot_rows.size());
    m_slot_products_host = Kokkos::create_mirror_view(m_slot_products);
}

void NewtonSolver::add_block_products(const std::vector<Vec3>& columns,
                                      bool obstacle_columns,
                                      const NodeField& y) {
    // y(row) += mask(row) Σ_blocks B · columns(col), summed on the host per row slot, added on the device.
    Kokkos::deep_copy(m_slot_products_host, 0.0);
    for (std::size_t k = 0; k < m_contact_blocks.size(); ++k) {
        const auto& block = m_contact_blocks[k];
        if (m_surface->is_obstacle(block.col) != obstacle_columns) {
            continue;
        }
        const Vec3& v = columns[static_cast<std::size_t>(
            obstacle_columns ? block.col - m_surface->num_body_vertices() : block.col)];
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
        "intact::solver::add_contact_products", Kokkos::RangePolicy<ExecSpace>(0, rows.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            for (int c = 0; c < 3; ++c) {
                y(rows(k), c) += mask(rows(k)) * products(k, c);
            }
        });
}

void NewtonSolver::apply_contact(const NodeField& p, const NodeField& y) {
    // Collective on every rank (the gather), whether or not this rank has blocks. PCG directions leave the
    // obstacles where they are: their columns do not act here.
    m_surface->gather(p, m_obstacle_zero, m_ps);
    add_block_products(m_ps, false, y);
}

void NewtonSolver::initialize_kappa(const NodeField& x, const StepProblem& problem) {
    // IPC spec §4.2: κ minimising ‖∇E + κ ∇B‖ over free DOFs, clamped to [κ_min, κ_max]; κ_min without
    // contact. ∇E is the elastic and inertial part only (friction is not lagged yet), and ∇B needs no
    // Hessian.
    assemble_elastic(x, problem);
    m_surface->update_ghosts(x, nullptr, m_barrier->dhat());
    m_surface->gather(x, m_obstacle_x, m_xs);
    std::vector<double> barrier_gradient(3 * static_cast<std::size_t>(x.extent(0)), 0.0);
    m_barrier->derivatives(m_xs, 1.0, barrier_gradient, nullptr);
    const auto gradient = Kokkos::create_mirror_view_and_copy(HostSpace(), m_gradient);
    const auto mask = Kokkos::create_mirror_view_and_copy(HostSpace(), m_free);
    double dots[2] = {0.0, 0.0};
    for (int i = 0; i < m_num_owned; ++i) {
        for (int c = 0; c < 3; ++c) {
            const double gb = mask(i) * barrier_gradient[static_cast<std::size_t>(3 * i + c)];
            dots[0] += gb * gradient(i, c);
            dots[1] += gb * gb;
        }
    }
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, dots, 2, MPI_DOUBLE, MPI_SUM, m_comm));
    const double raw = dots[1] > 0.0 ? -dots[0] / dots[1] : 0.0;
    m_kappa = std::min(m_kappa_max, std::max(m_kappa_min, raw));
}

bool NewtonSolver::snap_is_safe(const NodeField& x) {
    // The remaining boundary motion (in m_boundary_step) may be taken whole only if it inverts no
    // element and closes no contact gap by more than 80%.
    double alpha = comm::allreduce_min(m_comm, m_elastic.max_step(x, m_boundary_step));
    if (m_barrier) {
        m_surface->update_ghosts(x, &m_boundary_step, m_barrier->dhat());
        m_surface->gather(x, m_obstacle_x, m_xs);
        m_surface->gather(m_boundary_step, m_obstacle_step, m_ps);
        alpha = std::min(alpha, m_barrier->max_step(m_xs, m_ps));
    }
    return alpha >= 1.0;
}

NewtonResult
NewtonSolver::minimize(const NodeField& x, const StepProblem& problem, const NewtonSettings& settings) {
    NewtonResult result;
    const auto rhs = m_rhs;
    const auto gradient = m_gradient;
    const auto p = m_direction;
    const auto trial = m_trial;
    const auto delta = m_boundary_step;
    const auto product = m_product;
    const auto target = problem.target;
    const auto free = m_free;
    const int n = m_num_owned;
    const int local_rows = static_cast<int>(x.extent(0));

    double smallest = std::numeric_limits<double>::infinity();
    const std::vector<Vec3>& obstacle_target = problem.obstacle_target;
    if (m_barrier) {
        INTACT_REQUIRE(obstacle_target.size() == m_obstacle_x.size(),
                       "StepProblem::obstacle_target does not match the contact surface's obstacle rows");
        m_surface->begin_step(x);
        initialize_kappa(x, problem);
        smallest = m_barrier->min_squared_distance(m_xs);
        if (m_friction) {
            Kokkos::deep_copy(m_step_start, x);
            m_obstacle_start = m_obstacle_x;
            m_friction->lag(m_xs, m_xs, m_kappa, problem.h); // x is xᵗ here: the first lagging point
            result.friction_lags = 1;
        }
    }
    const double tiny = (1e-9 * m_length) * (1e-9 * m_length);

    // The friction lag loop (IPC spec §6.5) around the Newton loop; without friction it runs once.
    for (int lag = 1;; ++lag) {
        bool lag_converged = false;
        const int first = result.iterations;
        for (int it = 0; it < settings.max_iterations; ++it) {
            // 1. The boundary's remaining motion Δ (constrained rows, all local rows: no exchange needed).
            double remaining = 0.0;
            Kokkos::parallel_reduce(
                "intact::solver::boundary_step", Kokkos::RangePolicy<ExecSpace>(0, local_rows),
                KOKKOS_LAMBDA(const int i, double& largest) {
                    for (int c = 0; c < 3; ++c) {
                        const double d = free(i) == 0.0 ? target(i, c) - x(i, c) : 0.0;
                        delta(i, c) = d;
                        const double size = d < 0 ? -d : d;
                        largest = size > largest ? size : largest;
                    }
                },
                Kokkos::Max<double>(remaining));
            remaining = comm::allreduce_max(m_comm, remaining);
            for (std::size_t k = 0; k < m_obstacle_x.size(); ++k) { // replicated: the same on every rank
                for (std::size_t c = 0; c < 3; ++c) {
                    m_obstacle_step[k][c] = obstacle_target[k][c] - m_obstacle_x[k][c];
                    remaining = std::max(remaining, std::abs(m_obstacle_step[k][c]));
                }
            }
            if (remaining > 0.0 && remaining <= 1e-3 * settings.tolerance * problem.h && snap_is_safe(x)) {
                // A capped step leaves a geometric remainder that never reaches zero: once it is far below
                // the solve's own resolution (1e-3 of ‖Δx‖∞ tolerance), the boundary is put on its target.
                Kokkos::parallel_for(
                    "intact::solver::boundary_arrive", Kokkos::RangePolicy<ExecSpace>(0, local_rows),
                    KOKKOS_LAMBDA(const int i) {
                        for (int c = 0; c < 3; ++c) {
                            if (free(i) == 0.0) {
                                x(i, c) = target(i, c);
                            }
                            delta(i, c) = 0.0;
                        }
                    });
                m_obstacle_x = obstacle_target;
                std::fill(m_obstacle_step.begin(), m_obstacle_step.end(), Vec3{});
                remaining = 0.0;
            }

            // 2. Free part of the step: H_ff p = −(∇E + H Δ)_f.
            assemble(x, problem);
            m_pcg.apply(delta, product); // elements and contact: the boundary pushes through both
            if (m_barrier) {
                add_block_products(m_obstacle_step, true, product); // and so do the obstacles
            }
            Kokkos::parallel_for(
                "intact::solver::newton_rhs", Kokkos::RangePolicy<ExecSpace>(0, n),
                KOKKOS_LAMBDA(const int i) {
                    for (int c = 0; c < 3; ++c) {
                        rhs(i, c) = -gradient(i, c) - product(i, c);
                    }
                });
            const PcgResult linear = m_pcg.solve(rhs, p, settings.linear);
            result.linear_iterations += linear.iterations;

            // 3. Stop when the boundary has arrived and ‖p‖∞ / h is below the tolerance.
            double p_max = 0.0;
            Kokkos::parallel_reduce(
                "intact::solver::direction_max", Kokkos::RangePolicy<ExecSpace>(0, n),
                KOKKOS_LAMBDA(const int i, double& largest) {
                    for (int c = 0; c < 3; ++c) {
                        const double v = p(i, c) < 0 ? -p(i, c) : p(i, c);
                        largest = v > largest ? v : largest;
                    }
                },
                Kokkos::Max<double>(p_max));
            result.residual = comm::allreduce_max(m_comm, p_max) / problem.h;
            // At least one step is taken (IPC spec §7.1): at xᵗ the direction is about h v, so testing it
            // would stop slow bodies dead. A later lag stops without a step when the direction with the
            // updated lagged friction is already small: the lagging has converged.
            if (it >= (lag == 1 ? 1 : 0) && remaining == 0.0 && result.residual < settings.tolerance) {
                result.converged = true;
                lag_converged = it == 0;
                break;
            }

            // 4. Full step d = p + Δ, capped so no neo-Hookean element loses more than 80% of its volume.
            Kokkos::parallel_for(
                "intact::solver::full_step", Kokkos::RangePolicy<ExecSpace>(0, local_rows),
                KOKKOS_LAMBDA(const int i) {
                    for (int c = 0; c < 3; ++c) {
                        p(i, c) += delta(i, c);
                    }
                });
            double alpha = comm::allreduce_min(m_comm, m_elastic.max_step(x, p));
            if (m_barrier) {
                // Conservative CCD on the surface: no pair closes more than 80% of its gap (IPC spec §8).
                // The ghost plan now covers the whole segment x → x + p (and xᵗ, for the lagged friction
                // pairs).
                m_surface->update_ghosts(x, &p, m_barrier->dhat());
                m_surface->gather(x, m_obstacle_x, m_xs);
                m_surface->gather(p, m_obstacle_step, m_ps);
                alpha = std::min(alpha, m_barrier->max_step(m_xs, m_ps));
            }
            const auto contact_at_x = contact_energies(m_xs); // shared by every trial below
            bool accepted = false;
            for (int halvings = 0; halvings < 60 && !accepted; ++halvings) {
                const bool arrive = alpha == 1.0;
                Kokkos::parallel_for(
                    "intact::solver::trial_point", Kokkos::RangePolicy<ExecSpace>(0, local_rows),
                    KOKKOS_LAMBDA(const int i) {
                        for (int c = 0; c < 3; ++c) {
                            // Constrained rows land exactly on their target when the whole step is taken.
                            trial(i, c) = arrive && free(i) == 0.0 ? target(i, c) : x(i, c) + alpha * p(i, c);
                        }
                    });
                m_obstacle_trial.resize(m_obstacle_x.size());
                for (std::size_t k = 0; k < m_obstacle_x.size(); ++k) {
                    for (std::size_t c = 0; c < 3; ++c) {
                        m_obstacle_trial[k][c] = arrive ? obstacle_target[k][c]
                                                        : m_obstacle_x[k][c] + alpha * m_obstacle_step[k][c];
                    }
                }
                const auto [change, scale] = energy_change(x, trial, m_obstacle_trial, problem, contact_at_x);
                // While the boundary moves, any finite state is taken; afterwards E must not rise beyond
                // round-off of its terms.
                accepted = remaining > 0.0 ? std::isfinite(change) : change <= 1e-13 * scale;
                if (!accepted) {
                    alpha *= 0.5;
                }
            }
            // A step too small to change anything is a failure, not progress (a jammed contact, say).
            accepted = accepted && alpha > 1e-10;
            result.iterations = first + it + 1;
            if (!accepted) {
                result.line_search_failed = true;
                break;
            }
            Kokkos::deep_copy(x, trial);
            m_obstacle_x = m_obstacle_trial;
            if (m_barrier) {
                // κ doubles when a pair is already tiny and still closing (IPC spec §4.3, global-minimum
                // form).
                m_surface->gather(x, m_obstacle_x, m_xs);
                const double now = m_barrier->min_squared_distance(m_xs);
                if (smallest < tiny && now < tiny && now < smallest) {
                    m_kappa = std::min(2.0 * m_kappa, m_kappa_max);
                }
                smallest = now;
            }
        }
        if (!m_friction || !result.converged || lag_converged || lag >= settings.friction_iterations) {
            break;
        }
        // Lag again at the solution: pairs, normal forces and bases at x, slips still from xᵗ.
        m_surface->add_anchor(x);
        m_surface->update_ghosts(x, nullptr, m_barrier->dhat());
        m_surface->gather(m_step_start, m_obstacle_start, m_ps);
        m_surface->gather(x, m_obstacle_x, m_xs);
        m_friction->lag(m_ps, m_xs, m_kappa, problem.h);
        result.friction_lags = lag + 1;
        result.converged = false;
    }
    if (m_barrier) {
        m_surface->gather(x, m_obstacle_x, m_xs);
        std::int64_t count = 0;
        for (const auto& pair : m_barrier->active_pairs(m_xs)) {
            count += m_barrier->owns(pair) ? 1 : 0;
        }
        result.contact_pairs = comm::allreduce_sum(m_comm, count);
        result.min_distance = std::sqrt(m_barrier->min_squared_distance(m_xs));
        result.kappa = m_kappa;
    } else {
        result.min_distance = std::numeric_limits<double>::infinity();
    }
    return result;
}

} // namespace intact::solver
