#include "src/solver/pcg.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"

#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

namespace intact::solver {

namespace {

using InverseBlocks = Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace>;

// Row `row` of D⁻¹ᵢ r for node i's inverted diagonal block and a residual row (r0, r1, r2).
KOKKOS_INLINE_FUNCTION double
jacobi_row(const InverseBlocks& inverse, int i, int row, double r0, double r1, double r2) {
    return inverse(i, row, 0) * r0 + inverse(i, row, 1) * r1 + inverse(i, row, 2) * r2;
}

// z = D⁻¹ r on owned rows, D⁻¹ the inverted diagonal blocks.
void apply_block_jacobi(const InverseBlocks& inverse, const NodeField& r, const NodeField& z, int n) {
    Kokkos::parallel_for(
        "intact::solver::pcg_precondition", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
            for (int row = 0; row < 3; ++row) {
                z(i, row) = jacobi_row(inverse, i, row, r(i, 0), r(i, 1), r(i, 2));
            }
        });
}

// This rank's (r·r, r·z) over owned rows.
std::pair<double, double> residual_dots(int n, const NodeField& r, const NodeField& z) {
    double rr = 0.0, rz = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::pcg_residual_dots", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int i, double& sum_rr, double& sum_rz) {
            for (int c = 0; c < 3; ++c) {
                sum_rr += r(i, c) * r(i, c);
                sum_rz += r(i, c) * z(i, c);
            }
        },
        rr, rz);
    return {rr, rz};
}

// x += α p on owned rows.
void add_step(double alpha, const NodeField& p, const NodeField& x, int n) {
    Kokkos::parallel_for(
        "intact::solver::pcg_add_step", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                x(i, c) += alpha * p(i, c);
            }
        });
}

} // namespace

void spmv(const BlockMatrix& matrix,
          const NodeField& x,
          const NodeField& y,
          const Kokkos::View<const double*, MemSpace>& mask) {
    const auto offsets = matrix.row_offsets();
    const auto cols = matrix.cols();
    const auto values = matrix.values();
    INTACT_ASSERT(values.extent(0) == cols.extent(0), "spmv: the matrix has no values (never assembled)");
    Kokkos::parallel_for(
        "intact::solver::spmv", Kokkos::RangePolicy<ExecSpace>(0, matrix.num_rows()),
        KOKKOS_LAMBDA(const int r) {
            double y0 = 0.0, y1 = 0.0, y2 = 0.0;
            for (int k = offsets(r); k < offsets(r + 1); ++k) {
                const int c = cols(k);
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

double dot(MPI_Comm comm, int num_owned, const NodeField& a, const NodeField& b) {
    double local = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::dot", Kokkos::RangePolicy<ExecSpace>(0, num_owned),
        KOKKOS_LAMBDA(const int i, double& sum) {
            sum += a(i, 0) * b(i, 0) + a(i, 1) * b(i, 1) + a(i, 2) * b(i, 2);
        },
        local);
    return comm::allreduce_sum(comm, local);
}

std::pair<double, double> Preconditioner::update_residual(
    double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const {
    Kokkos::parallel_for(
        "intact::solver::pcg_update_residual", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                r(i, c) -= alpha * q(i, c);
            }
        });
    apply(r, z);
    return residual_dots(n, r, z);
}

BlockJacobi::BlockJacobi(const BlockMatrix& matrix, Kokkos::View<const double*, MemSpace> mask)
    : m_matrix(matrix), m_mask(std::move(mask)),
      m_inverse("intact::solver::pcg_inverse_diagonal", matrix.num_rows()) {}

void BlockJacobi::setup() {
    // Invert each owned node's 3×3 diagonal block (identity on constrained nodes).
    const auto values = m_matrix.values();
    const auto diagonal = m_matrix.diagonal();
    const auto mask = m_mask;
    const auto inverse = m_inverse;
    Kokkos::parallel_for(
        "intact::solver::pcg_block_jacobi", Kokkos::RangePolicy<ExecSpace>(0, m_matrix.num_rows()),
        KOKKOS_LAMBDA(const int i) {
            const int k = diagonal(i);
            const double a = values(k, 0, 0), bb = values(k, 0, 1), c = values(k, 0, 2);
            const double d = values(k, 1, 0), e = values(k, 1, 1), f = values(k, 1, 2);
            const double g = values(k, 2, 0), h = values(k, 2, 1), l = values(k, 2, 2);
            const double c00 = e * l - f * h, c01 = c * h - bb * l, c02 = bb * f - c * e;
            const double det = a * c00 + d * c01 + g * c02;
            const bool usable = mask(i) != 0.0 && det > 0.0;
            const double s = usable ? 1.0 / det : 0.0;
            inverse(i, 0, 0) = usable ? s * c00 : mask(i);
            inverse(i, 0, 1) = s * c01;
            inverse(i, 0, 2) = s * c02;
            inverse(i, 1, 0) = s * (f * g - d * l);
            inverse(i, 1, 1) = usable ? s * (a * l - c * g) : mask(i);
            inverse(i, 1, 2) = s * (c * d - a * f);
            inverse(i, 2, 0) = s * (d * h - e * g);
            inverse(i, 2, 1) = s * (bb * g - a * h);
            inverse(i, 2, 2) = usable ? s * (a * e - bb * d) : mask(i);
        });
}

void BlockJacobi::apply(const NodeField& r, const NodeField& z) const {
    apply_block_jacobi(m_inverse, r, z, m_matrix.num_rows());
}

std::pair<double, double> BlockJacobi::update_residual(
    double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const {
    const auto inverse = m_inverse;
    double rr = 0.0, rz = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::pcg_update_residual", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int i, double& sum_rr, double& sum_rz) {
            // Everything in registers first: the sums are references the stores below could alias.
            const double r0 = r(i, 0) - alpha * q(i, 0);
            const double r1 = r(i, 1) - alpha * q(i, 1);
            const double r2 = r(i, 2) - alpha * q(i, 2);
            const double z0 = jacobi_row(inverse, i, 0, r0, r1, r2);
            const double z1 = jacobi_row(inverse, i, 1, r0, r1, r2);
            const double z2 = jacobi_row(inverse, i, 2, r0, r1, r2);
            r(i, 0) = r0;
            r(i, 1) = r1;
            r(i, 2) = r2;
            z(i, 0) = z0;
            z(i, 1) = z1;
            z(i, 2) = z2;
            // Added term by term, as the unfused kernels add them: the same sums to the bit on the host
            // backends (a GPU reduction's tree may depend on the kernel).
            sum_rr += r0 * r0;
            sum_rz += r0 * z0;
            sum_rr += r1 * r1;
            sum_rz += r1 * z1;
            sum_rr += r2 * r2;
            sum_rz += r2 * z2;
        },
        rr, rz);
    return {rr, rz};
}

Pcg::Pcg(int num_owned, int num_local, comm::HaloExchange& halo, Kokkos::View<const double*, MemSpace> mask)
    : m_num_owned(num_owned), m_halo(halo), m_mask(std::move(mask)), m_r("intact::solver::pcg_r", num_local),
      m_z("intact::solver::pcg_z", num_local), m_p("intact::solver::pcg_p", num_local),
      m_q("intact::solver::pcg_q", num_local) {}

PcgResult Pcg::solve(const LinearOperator& A,
                     Preconditioner& M,
                     const NodeField& b,
                     const NodeField& x,
                     const PcgSettings& settings) {
    const MPI_Comm comm = m_halo.plan().comm();
    const int n = m_num_owned;
    const auto mask = m_mask;
    const auto r = m_r, z = m_z, p = m_p, q = m_q;

    // 1. The preconditioner for the current matrix values.
    M.setup();
    // 2. r = mask ⊙ (b − A x) (x = 0 without a warm start), z = M⁻¹ r, p = z.
    Kokkos::deep_copy(p, 0.0);
    if (settings.warm_start) {
        m_halo.gather(x);
        A(x, q);
    } else {
        Kokkos::deep_copy(x, 0.0);
    }
    const bool warm = settings.warm_start;
    Kokkos::parallel_for(
        "intact::solver::pcg_start", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                r(i, c) = mask(i) * (warm ? b(i, c) - q(i, c) : b(i, c));
            }
        });
    // The tolerance is relative to ‖mask ⊙ b‖, warm start or not.
    double sums[2] = {0.0, 0.0};
    Kokkos::parallel_reduce(
        "intact::solver::pcg_norms", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int i, double& rr, double& bb) {
            // Summed as dot() sums, so a cold start's ‖b‖ is bit for bit the ‖r‖ it replaces.
            rr += r(i, 0) * r(i, 0) + r(i, 1) * r(i, 1) + r(i, 2) * r(i, 2);
            const double b0 = mask(i) * b(i, 0), b1 = mask(i) * b(i, 1), b2 = mask(i) * b(i, 2);
            bb += b0 * b0 + b1 * b1 + b2 * b2;
        },
        sums[0], sums[1]);
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm));
    const double b_norm = std::sqrt(sums[1]);
    PcgResult result;
    if (b_norm == 0.0 || std::sqrt(sums[0]) <= settings.tolerance * b_norm) {
        if (b_norm == 0.0) {
            Kokkos::deep_copy(x, 0.0);
        }
        result.converged = true;
        result.relative_residual = b_norm == 0.0 ? 0.0 : std::sqrt(sums[0]) / b_norm;
        m_halo.gather(x);
        return result;
    }
    M.apply(r, z);
    Kokkos::deep_copy(Kokkos::subview(p, std::make_pair(0, n), Kokkos::ALL),
                      Kokkos::subview(z, std::make_pair(0, n), Kokkos::ALL));
    double rz = dot(comm, n, r, z);

    // 3. Iterate: one halo gather (p) and two allreduces per iteration (p·q, then r·r with r·z), and
    //    three vector kernels besides the operator: p·q, the residual update with the preconditioner and
    //    both sums (update_residual), and x += α p fused with the new direction (x is one step behind r
    //    until then).
    double r_norm = std::sqrt(sums[0]);
    double lowest = r_norm; // the residual stall test: the lowest ‖r‖ so far, and when
    int lowest_at = -1;
    // The energy stall test: φ(x₀) − φ(x_k) for the last stall_window + 1 values of k (a ring).
    const int window = settings.stall_window;
    std::vector<double> decrease(window > 0 && settings.stall_test == StallTest::energy ? window + 1 : 0,
                                 0.0);
    for (int it = 0; it < settings.max_iterations; ++it) {
        m_halo.gather(p);
        A(p, q);
        const double pq = dot(comm, n, p, q);
        if (!(pq > 0.0)) {
            // Not SPD along p (should not happen after PSD projection). On the first iteration of a cold
            // start fall back to the preconditioned residual, a descent direction; otherwise keep the
            // current iterate.
            if (it == 0 && !warm) {
                Kokkos::deep_copy(Kokkos::subview(x, std::make_pair(0, n), Kokkos::ALL),
                                  Kokkos::subview(z, std::make_pair(0, n), Kokkos::ALL));
            }
            result.breakdown = true;
            if (settings.report_curvature) {
                const auto metric = settings.curvature_metric;
                double pmp = 0.0;
                Kokkos::parallel_reduce(
                    "intact::solver::pcg_breakdown_metric", Kokkos::RangePolicy<ExecSpace>(0, n),
                    KOKKOS_LAMBDA(const int i, double& sum) {
                        sum +=
                            mask(i) * metric(i) * (p(i, 0) * p(i, 0) + p(i, 1) * p(i, 1) + p(i, 2) * p(i, 2));
                    },
                    pmp);
                pmp = comm::allreduce_sum(comm, pmp);
                result.breakdown_curvature = pmp > 0.0 ? pq / pmp : -std::numeric_limits<double>::infinity();
            }
            break;
        }
        const double alpha = rz / pq;
        result.iterations = it + 1;
        double dots[2];
        std::tie(dots[0], dots[1]) = M.update_residual(alpha, q, r, z, n);
        INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, dots, 2, MPI_DOUBLE, MPI_SUM, comm));
        const double rz_new = dots[1];
        r_norm = std::sqrt(dots[0]);
        bool stop = r_norm <= settings.tolerance * b_norm;
        if (!decrease.empty()) {
            // Stalled: φ fell by at most tolerance² of its whole decrease over the last window (the
            // A-norm error is then about tolerance of the solution's, as ‖r‖ ≤ tolerance ‖b‖ asks).
            const double total = decrease[it % (window + 1)] + 0.5 * alpha * rz;
            decrease[(it + 1) % (window + 1)] = total;
            const double before = decrease[(it + 2) % (window + 1)]; // the value `window` iterations back
            if (!stop && it + 1 >= window &&
                total - before <= settings.tolerance * settings.tolerance * total) {
                result.stalled = true;
                stop = true;
            }
        } else if (!stop && window > 0) {
            // Stalled: no new lowest ‖r‖ in the last window (CG's residual is not monotone, so comparing
            // with the one iterate `window` back would stop on a mere oscillation).
            if (r_norm < lowest) {
                lowest = r_norm;
                lowest_at = it;
            } else if (it - lowest_at >= window) {
                result.stalled = true;
                stop = true;
            }
        }
        if (stop) {
            add_step(alpha, p, x, n);
            break;
        }
        const double beta = rz_new / rz;
        rz = rz_new;
        Kokkos::parallel_for(
            "intact::solver::pcg_step_and_direction", Kokkos::RangePolicy<ExecSpace>(0, n),
            KOKKOS_LAMBDA(const int i) {
                for (int c = 0; c < 3; ++c) {
                    const double pc = p(i, c);
                    x(i, c) += alpha * pc;
                    p(i, c) = z(i, c) + beta * pc;
                }
            });
    }
    result.relative_residual = r_norm / b_norm;
    result.converged = r_norm <= settings.tolerance * b_norm;
    m_halo.gather(x);
    return result;
}

} // namespace intact::solver
