#include "src/solver/decade_warm_start.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace intact::solver {

namespace {

// Per-group sums r·z, z·w, r·r over owned rows, an array reduction of 3K values (Kokkos core API).
struct GroupSums {
    using value_type = double[];
    int value_count;
    int num_groups;
    NodeField r, z, w, group;
    KOKKOS_INLINE_FUNCTION void operator()(const int i, double* sums) const {
        const int g = static_cast<int>(group(i, 0));
        double rz = 0.0, zw = 0.0, rr = 0.0;
        for (int c = 0; c < 3; ++c) {
            rz += r(i, c) * z(i, c);
            zw += z(i, c) * w(i, c);
            rr += r(i, c) * r(i, c);
        }
        sums[g] += rz;
        sums[num_groups + g] += zw;
        sums[2 * num_groups + g] += rr;
    }
    KOKKOS_INLINE_FUNCTION void init(double* sums) const {
        for (int k = 0; k < value_count; ++k) {
            sums[k] = 0.0;
        }
    }
    KOKKOS_INLINE_FUNCTION void join(double* dst, const double* src) const {
        for (int k = 0; k < value_count; ++k) {
            dst[k] += src[k];
        }
    }
    KOKKOS_INLINE_FUNCTION void join(volatile double* dst, const volatile double* src) const {
        for (int k = 0; k < value_count; ++k) {
            dst[k] += src[k];
        }
    }
};

} // namespace

DecadeWarmStart::DecadeWarmStart(IncrementalPotential& potential, comm::HaloExchange& halo)
    : m_potential(potential), m_halo(halo),
      m_stiffness("intact::solver::node_stiffness", potential.matrix().num_cols()),
      m_groups("intact::solver::stiffness_groups", potential.matrix().num_cols()),
      m_r("intact::solver::warm_r", potential.matrix().num_cols()),
      m_z("intact::solver::warm_z", potential.matrix().num_cols()),
      m_w("intact::solver::warm_w", potential.matrix().num_cols()),
      m_p("intact::solver::warm_p", potential.matrix().num_cols()),
      m_s("intact::solver::warm_s", potential.matrix().num_cols()),
      m_alpha("intact::solver::warm_alpha", k_max_groups), m_beta("intact::solver::warm_beta", k_max_groups),
      m_trace_sum(potential.num_owned()) {}

void DecadeWarmStart::sum_pair_stiffness() {
    // Each pair's trace(H⁺) / k on column 0 of each of its k vertices, summed per owned row.
    const auto& stencils = m_potential.term_stencils();
    m_traces.resize(stencils.size());
    std::vector<const contact::PairStencils*> lists;
    for (std::size_t t = 0; t < stencils.size(); ++t) {
        const contact::PairStencils& in = stencils[t];
        contact::PairStencils& out = m_traces[t];
        out.resize(in.size, false);
        const auto rows = in.rows, out_rows = out.rows;
        const auto count = in.count, out_count = out.count;
        const auto hessian = in.hessian;
        const auto gradient = out.gradient;
        const bool has_hessian = in.has_hessian;
        Kokkos::parallel_for(
            "intact::solver::pair_stiffness", Kokkos::RangePolicy<ExecSpace>(0, in.size),
            KOKKOS_LAMBDA(const int i) {
                const int k = count(i);
                double trace = 0.0;
                for (int d = 0; has_hessian && d < 3 * k; ++d) {
                    trace += hessian(i, d, d);
                }
                out_count(i) = k;
                for (int a = 0; a < 4; ++a) {
                    out_rows(i, a) = rows(i, a);
                    gradient(i, 3 * a) = a < k ? trace / k : 0.0;
                    gradient(i, 3 * a + 1) = 0.0;
                    gradient(i, 3 * a + 2) = 0.0;
                }
            });
        lists.push_back(&out);
    }
    Kokkos::deep_copy(m_stiffness, 0.0);
    if (!lists.empty()) {
        m_trace_sum.assemble(lists, m_potential.contact()->topology(), m_stiffness, nullptr);
    }
}

void DecadeWarmStart::add_element_stiffness(double ch2) {
    // e_j += 3 m_j + c h² Σ trace(H_e⁺) / 4 over node j's elements, in the matrix's fixed order.
    const auto stiffness = m_stiffness;
    const auto mass = m_potential.lumped_mass();
    const auto hessians = m_potential.elastic().hessians();
    const auto stencil_hessians = m_potential.codim().hessians();
    const int num_tets = m_potential.matrix().num_tets();
    const auto offsets = m_potential.matrix().node_source_offsets();
    const auto sources = m_potential.matrix().node_sources();
    Kokkos::parallel_for(
        "intact::solver::element_stiffness", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int r) {
            double sum = 0.0;
            for (int j = offsets(r); j < offsets(r + 1); ++j) {
                const int e = sources(j) / 4;
                double trace = 0.0;
                for (int d = 0; d < 12; ++d) {
                    trace += e < num_tets ? hessians(e, d, d) : stencil_hessians(e - num_tets, d, d);
                }
                sum += 0.25 * trace;
            }
            stiffness(r, 0) += 3.0 * mass(r) + ch2 * sum;
        });
}

std::pair<double, double> DecadeWarmStart::local_decade_range() const {
    const auto stiffness = m_stiffness;
    const auto free = m_potential.free_mask();
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -std::numeric_limits<double>::infinity();
    Kokkos::parallel_reduce(
        "intact::solver::decade_range", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int r, double& lo, double& hi) {
            if (free(r) == 0.0) {
                return;
            }
            const double g = ::floor(::log10(stiffness(r, 0)));
            lo = g < lo ? g : lo;
            hi = g > hi ? g : hi;
        },
        Kokkos::Min<double>(lowest), Kokkos::Max<double>(highest));
    return {lowest, highest};
}

void DecadeWarmStart::assign_groups(double lowest) {
    const auto stiffness = m_stiffness;
    const auto groups = m_groups;
    const auto free = m_potential.free_mask();
    const double top = m_num_groups - 1;
    Kokkos::parallel_for(
        "intact::solver::assign_groups", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int r) {
            // Prescribed rows are zero in every PCG vector: any group will do.
            const double g = free(r) == 0.0 ? 0.0 : ::floor(::log10(stiffness(r, 0))) - lowest;
            groups(r, 0) = g < top ? g : top;
            groups(r, 1) = 0.0;
            groups(r, 2) = 0.0;
        });
}

void DecadeWarmStart::setup(double ch2) {
    // 1. e_j of owned rows.
    sum_pair_stiffness();
    add_element_stiffness(ch2);
    // 2. Global decades (one allreduce), groups of owned rows, then of ghost and contact-surface rows.
    const auto [lo, hi] = local_decade_range();
    double range[2] = {lo, -hi};
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MIN, m_halo.plan().comm()));
    const bool any = std::isfinite(range[0]);
    const double lowest = any ? range[0] : 0.0;
    m_num_groups = any ? std::min(k_max_groups, static_cast<int>(-range[1] - range[0]) + 1) : 1;
    assign_groups(lowest);
    m_halo.gather(m_groups);
    if (m_potential.contact() && !m_potential.terms().empty()) {
        // Made here: methods build their NewtonSystem before they give the potential its contact model.
        if (m_surface_groups.extent(0) == 0) {
            m_surface_groups = m_potential.contact()->surface().make_field("intact::solver::surface_groups");
            m_obstacle_groups =
                m_potential.contact()->surface().make_field("intact::solver::obstacle_groups");
            Kokkos::deep_copy(m_obstacle_groups, -1.0); // obstacle columns never match a node's group
        }
        m_potential.contact()->fill(m_groups, m_obstacle_groups, m_surface_groups);
    }
}

void DecadeWarmStart::apply_masked_elements(const NodeField& x, const NodeField& y) const {
    const BlockMatrix& matrix = m_potential.matrix();
    const auto offsets = matrix.row_offsets();
    const auto cols = matrix.cols();
    const auto values = matrix.values();
    const auto groups = m_groups;
    const auto mask = m_potential.free_mask();
    Kokkos::parallel_for(
        "intact::solver::masked_spmv", Kokkos::RangePolicy<ExecSpace>(0, matrix.num_rows()),
        KOKKOS_LAMBDA(const int r) {
            double y0 = 0.0, y1 = 0.0, y2 = 0.0;
            const double g = groups(r, 0);
            for (int k = offsets(r); k < offsets(r + 1); ++k) {
                const int c = cols(k);
                if (groups(c, 0) != g) {
                    continue;
                }
                const double x0 = x(c, 0), x1 = x(c, 1), x2 = x(c, 2);
                y0 += values(k, 0, 0) * x0 + values(k, 0, 1) * x1 + values(k, 0, 2) * x2;
                y1 += values(k, 1, 0) * x0 + values(k, 1, 1) * x1 + values(k, 1, 2) * x2;
                y2 += values(k, 2, 0) * x0 + values(k, 2, 1) * x1 + values(k, 2, 2) * x2;
            }
            const double m = mask(r);
            y(r, 0) = m * y0;
            y(r, 1) = m * y1;
            y(r, 2) = m * y2;
        });
}

void DecadeWarmStart::apply_masked_contact(const NodeField& y) const {
    // The contact blocks of each owned slot whose column row is in the slot row's group; one slot per
    // row, so no two work items write the same row.
    const contact::ContactMatrix& matrix = m_potential.contact_matrix();
    const auto slot_rows = matrix.slot_rows();
    const auto block_offsets = matrix.block_offsets();
    const auto block_cols = matrix.block_cols();
    const auto block_values = matrix.block_values();
    const auto p = m_potential.contact()->direction();
    const auto groups = m_groups;
    const auto surface_groups = m_surface_groups;
    const auto mask = m_potential.free_mask();
    Kokkos::parallel_for(
        "intact::solver::masked_contact_spmv", Kokkos::RangePolicy<ExecSpace>(0, matrix.num_slots()),
        KOKKOS_LAMBDA(const int s) {
            const int r = slot_rows(s);
            const double g = groups(r, 0);
            double sum[3] = {0.0, 0.0, 0.0};
            for (int k = block_offsets(s); k < block_offsets(s + 1); ++k) {
                const int c = block_cols(k);
                if (surface_groups(c, 0) != g) {
                    continue;
                }
                for (int a = 0; a < 3; ++a) {
                    for (int b = 0; b < 3; ++b) {
                        sum[a] += block_values(k, a, b) * p(c, b);
                    }
                }
            }
            for (int a = 0; a < 3; ++a) {
                y(r, a) += mask(r) * sum[a];
            }
        });
}

void DecadeWarmStart::apply_masked(const NodeField& x, const NodeField& y) {
    apply_masked_elements(x, y);
    if (m_potential.contact() && !m_potential.terms().empty()) {
        m_potential.contact()->gather_direction(x); // collective on every rank
        apply_masked_contact(y);
    }
}

void DecadeWarmStart::group_sums(const NodeField& r,
                                 const NodeField& z,
                                 const NodeField& w,
                                 std::vector<double>& sums) const {
    const int count = 3 * m_num_groups;
    sums.assign(static_cast<std::size_t>(count), 0.0);
    GroupSums functor{count, m_num_groups, r, z, w, m_groups};
    Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> result(sums.data(),
                                                                                             sums.size());
    Kokkos::parallel_reduce("intact::solver::group_sums",
                            Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()), functor, result);
    INTACT_CHECK_MPI(
        MPI_Allreduce(MPI_IN_PLACE, sums.data(), count, MPI_DOUBLE, MPI_SUM, m_halo.plan().comm()));
}

void DecadeWarmStart::update_iterate(const NodeField& x, const NodeField& r) const {
    const auto alpha = m_alpha;
    const auto groups = m_groups;
    const auto p = m_p, s = m_s;
    Kokkos::parallel_for(
        "intact::solver::warm_update", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            const double a = alpha(static_cast<int>(groups(i, 0)));
            for (int c = 0; c < 3; ++c) {
                x(i, c) += a * p(i, c);
                r(i, c) -= a * s(i, c);
            }
        });
}

void DecadeWarmStart::update_directions() const {
    const auto beta = m_beta;
    const auto groups = m_groups;
    const auto p = m_p, s = m_s, z = m_z, w = m_w;
    Kokkos::parallel_for(
        "intact::solver::warm_directions", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_owned()),
        KOKKOS_LAMBDA(const int i) {
            const double b = beta(static_cast<int>(groups(i, 0)));
            for (int c = 0; c < 3; ++c) {
                p(i, c) = z(i, c) + b * p(i, c);
                s(i, c) = w(i, c) + b * s(i, c);
            }
        });
}

int DecadeWarmStart::solve(const BlockJacobi& jacobi, const NodeField& b, const NodeField& x) {
    // Chronopoulos–Gear CG per group: after r, z = M⁻¹ r and w = H_G z, the sums γ = r·z, δ = z·w and
    // r·r of every group arrive in one allreduce; then β = γ/γ_old, α = γ / (δ − β γ / α_old),
    // p = z + β p, s = w + β s (= H_G p), x += α p, r −= α s.
    const int n = m_potential.num_owned();
    const int K = m_num_groups;
    const auto mask = m_potential.free_mask();
    const auto r = m_r;
    Kokkos::deep_copy(x, 0.0);
    Kokkos::parallel_for(
        "intact::solver::warm_residual", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                r(i, c) = mask(i) * b(i, c);
            }
        });
    std::vector<double> sums;
    std::vector<double> gamma(K, 0.0), alpha(K, 0.0), beta(K, 0.0), target(K, 0.0);
    std::vector<char> running(K, 0);
    const auto alpha_host = Kokkos::create_mirror_view(m_alpha);
    const auto beta_host = Kokkos::create_mirror_view(m_beta);
    int iterations = 0;
    for (int it = 0;; ++it) {
        jacobi.apply(r, m_z);
        m_halo.gather(m_z);
        apply_masked(m_z, m_w);
        group_sums(r, m_z, m_w, sums);
        bool any = false;
        for (int g = 0; g < K; ++g) {
            const double rz = sums[g], zw = sums[K + g], rr = sums[2 * K + g];
            if (it == 0) {
                target[g] = k_tolerance * k_tolerance * rr;
                running[g] = rr > 0.0;
            }
            running[g] = running[g] && rr > target[g] && it < k_max_iterations;
            const double b_g = it == 0 || !running[g] ? 0.0 : rz / gamma[g];
            const double denominator = it == 0 ? zw : zw - b_g * rz / alpha[g];
            running[g] = running[g] && denominator > 0.0 && std::isfinite(denominator);
            alpha[g] = running[g] ? rz / denominator : 0.0;
            beta[g] = b_g;
            gamma[g] = rz;
            any = any || running[g];
            alpha_host(g) = alpha[g];
            beta_host(g) = running[g] ? beta[g] : 0.0;
        }
        if (!any) {
            break;
        }
        Kokkos::deep_copy(m_alpha, alpha_host);
        Kokkos::deep_copy(m_beta, beta_host);
        if (it == 0) {
            Kokkos::deep_copy(m_p, m_z);
            Kokkos::deep_copy(m_s, m_w);
        } else {
            update_directions();
        }
        update_iterate(x, r);
        iterations = it + 1;
    }
    m_halo.gather(x);
    return iterations;
}

} // namespace intact::solver
