// K2 and K3 of a sweep: every stencil's local step from the frozen state, assembled per owned row as
// the step of the sweep's color (Gauss–Seidel) or the mean of its stencils' steps (Jacobi); the warm
// start's update; and the tests' views of one stencil (its local system, its lone step's energy change).

#include "src/solver/stencil_descent.hpp"

#include "src/solver/stencil_descent/local_step.hpp"

#include <algorithm>

namespace intact::solver {

using namespace stencil_detail;

std::pair<std::array<double, 12>, std::array<double, 144>> StencilDescent::local_system(int k) const {
    const StencilData d = m_data;
    Kokkos::View<double[12 + 144], MemSpace> out("intact::solver::stencil_local_system");
    Kokkos::parallel_for(
        "intact::solver::stencil_local_system", Kokkos::RangePolicy<ExecSpace>(0, 1),
        KOKKOS_LAMBDA(const int) {
            int nodes[4];
            stencil_nodes(d, k, nodes);
            Vec12 g;
            Mat12 H;
            double m_min = 0.0;
            stencil_system(d, k, nodes, g, H, m_min);
            for (int i = 0; i < 12; ++i) {
                out(i) = g(i);
                for (int j = 0; j < 12; ++j) {
                    out(12 + 12 * i + j) = H(i, j);
                }
            }
        });
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::pair<std::array<double, 12>, std::array<double, 144>> system{};
    for (std::size_t i = 0; i < 12; ++i) {
        system.first[i] = host(i);
    }
    for (std::size_t i = 0; i < 144; ++i) {
        system.second[i] = host(12 + i);
    }
    return system;
}

std::array<double, 2>
StencilDescent::lone_step_change(int k, const NodeField& x, const StepProblem& problem) {
    const StencilData d = m_data;
    const NodeField delta = m_delta;
    Kokkos::deep_copy(delta, 0.0);
    Kokkos::View<double, MemSpace> slope("intact::solver::stencil_lone_slope");
    Kokkos::parallel_for(
        "intact::solver::stencil_lone_step", Kokkos::RangePolicy<ExecSpace>(0, 1), KOKKOS_LAMBDA(const int) {
            int nodes[4];
            stencil_nodes(d, k, nodes);
            const Vec12 step = stencil_local_step(d, k);
            double sum = 0.0;
            for (int a = 0; a < 4; ++a) {
                const int v = nodes[a];
                if (v < 0 || v >= d.num_local || slot_of(nodes, v) != a) {
                    continue;
                }
                for (int i = 0; i < 3; ++i) {
                    delta(v, i) = d.free(v) * step(3 * a + i);
                    sum += d.gradient(v, i) * delta(v, i);
                }
            }
            slope() = sum;
        });
    const StepProblem* solving = m_problem; // null outside a solve: layout rebuilds read it
    m_problem = &problem;
    load_update();
    const auto [others, elastic] = update_energy_change(x, 1.0);
    m_problem = solving;
    double host_slope = 0.0;
    Kokkos::deep_copy(host_slope, slope);
    return {others + elastic, host_slope};
}

void StencilDescent::pair_steps() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_pair_steps", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const Vec12 step = stencil_local_step(d, d.num_elements + p);
            for (int i = 0; i < 12; ++i) {
                d.pair_steps(p, i) = step(i);
            }
        });
}

void StencilDescent::sweep_update(int scheme, int color, const NodeField& delta) {
    // The element stencils' steps come batch by batch in ascending global element id, and each batch is
    // summed into step_sum per owned vertex, in its entries' order, before the next batch: so every sum
    // adds the same terms in the same order as with all steps at once, on every rank count and batch
    // size, and no step is kept per element (96 bytes each). The barrier and codimensional stencils' steps
    // come in the first batch's launch (a launch of their own would wait for its slowest thread after the
    // elements').
    const StencilData d = m_data;
    const auto jacobi = m_jacobi;
    const int num_layout_elements = static_cast<int>(d.element_order.extent(0));
    for (int lo = 0; lo < num_layout_elements || lo == 0; lo += d.step_batch) {
        const int hi = std::min(num_layout_elements, lo + d.step_batch);
        const int jacobi_stencils = lo == 0 ? d.num_pairs + d.num_codim : 0;
        Kokkos::parallel_for(
            "intact::solver::stencil_local_steps",
            Kokkos::RangePolicy<ExecSpace>(0, hi - lo + jacobi_stencils), KOKKOS_LAMBDA(const int k) {
                if (k >= hi - lo) {
                    const int p = k - (hi - lo);
                    const Vec12 step = stencil_local_step(d, d.num_elements + p);
                    for (int i = 0; i < 12; ++i) {
                        if (p < d.num_pairs) {
                            d.pair_steps(p, i) = step(i);
                        } else {
                            d.codim_steps(p - d.num_pairs, i) = step(i);
                        }
                    }
                    return;
                }
                const int e = d.element_order(lo + k);
                if (e >= d.num_elements) {
                    return; // a layout element beyond the LocalMesh's: no stencil of this rank
                }
                const Vec12 step = stencil_local_step(d, e);
                for (int i = 0; i < 12; ++i) {
                    d.batch_steps(k, i) = step(i);
                }
            });
        Kokkos::parallel_for(
            "intact::solver::stencil_step_sums", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
            KOKKOS_LAMBDA(const int v) {
                if (lo == 0) {
                    for (int i = 0; i < 3; ++i) {
                        d.step_sum(v, i) = 0.0;
                    }
                    jacobi(v) = 1;
                }
                for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                    const int e = d.entry_element(k);
                    const int slot = d.element_position(e) - lo;
                    if (slot < 0 || e >= d.num_elements) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    // The color's stencils share no vertex: at most one is v's Gauss–Seidel step.
                    const bool committed = d.color(scheme, e) == color;
                    const int s = d.entry_corner(k);
                    for (int i = 0; i < 3; ++i) {
                        const double step = d.batch_steps(slot, 3 * s + i);
                        d.step_sum(v, i) += step;
                        if (committed) {
                            delta(v, i) = step;
                        }
                    }
                    if (committed) {
                        jacobi(v) = 0;
                    }
                }
            });
    }
    Kokkos::parallel_for(
        "intact::solver::stencil_commit", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            double sum[3] = {d.step_sum(v, 0), d.step_sum(v, 1), d.step_sum(v, 2)};
            int count = 0;
            for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                count += d.entry_element(k) < d.num_elements ? 1 : 0;
            }
            for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                const int p = d.pair_entries(k, 0);
                const int s = d.pair_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    sum[i] += d.pair_steps(p, 3 * s + i);
                }
                ++count;
            }
            int first = 0, last = 0;
            codim_range(d, v, first, last);
            for (int k = first; k < last; ++k) {
                const int c = d.codim_entries(k, 0);
                const int s = d.codim_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    sum[i] += d.codim_steps(c, 3 * s + i);
                }
                ++count;
            }
            for (int i = 0; i < 3; ++i) {
                const double mean = count > 0 ? sum[i] / count : 0.0;
                delta(v, i) = d.free(v) * (jacobi(v) ? mean : delta(v, i));
            }
        });
}

void StencilDescent::warm_start_update(const NodeField& delta) {
    // Spec §4 step 4: a vertex in no pair takes the closed-form minimiser of inertia and load, x̂ + c h²
    // (g + f / m) − x; a vertex in pairs the mean of its barrier stencils' steps (Jacobi).
    pair_steps();
    const StencilData d = m_data;
    const auto jacobi = m_jacobi;
    Kokkos::parallel_for(
        "intact::solver::stencil_warm_start_update", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            const int count = d.pair_offsets(v + 1) - d.pair_offsets(v);
            for (int i = 0; i < 3; ++i) {
                double step = 0.0;
                if (count == 0) {
                    step = d.x_hat(v, i) + d.h2c * (d.gravity[i] + d.force(v, i) / d.mass(v)) - d.x(v, i);
                } else {
                    for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                        step += d.pair_steps(d.pair_entries(k, 0), 3 * d.pair_entries(k, 1) + i);
                    }
                    step /= count;
                }
                delta(v, i) = d.free(v) * step;
            }
            jacobi(v) = count == 0 ? 0 : 1;
        });
}

} // namespace intact::solver
