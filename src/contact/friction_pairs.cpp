#include "src/contact/friction_pairs.hpp"

#include "kernels/barrier.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/friction.hpp"
#include "kernels/pair_distance.hpp"
#include "src/contact/pair_geometry.hpp"
#include "src/core/grow.hpp"

#include <cmath>

namespace intact::contact {

namespace {

using Coefficients = kernels::VecN<4>;

// Coefficients and basis of the point–point or point–edge sub-case of a point–triangle or edge–edge
// case, on the stencil slots it uses (FrictionPotential's sub_case_basis).
template <class Case>
KOKKOS_INLINE_FUNCTION void
sub_case_basis(const kernels::Vec3 (&x)[4], Case which, Coefficients& c, kernels::Mat32& P) {
    int pp[2] = {0, 0};
    int pe[3] = {0, 0, 0};
    kernels::detail::sub_case_slots(which, pp, pe);
    c.setZero();
    if (kernels::detail::is_point_point(which)) {
        const auto k = kernels::point_point_closest_point_coefficients(x[pp[0]], x[pp[1]]);
        c(pp[0]) = k(0);
        c(pp[1]) = k(1);
        P = kernels::point_point_tangent_basis(x[pp[0]], x[pp[1]]);
    } else {
        const auto k = kernels::point_edge_closest_point_coefficients(x[pe[0]], x[pe[1]], x[pe[2]]);
        c(pe[0]) = k(0);
        c(pe[1]) = k(1);
        c(pe[2]) = k(2);
        P = kernels::point_edge_tangent_basis(x[pe[0]], x[pe[1]], x[pe[2]]);
    }
}

// Displacements since the step's start of a lagged pair's stencil (rows past count are zero).
KOKKOS_INLINE_FUNCTION Eigen::Matrix<double, 4, 3>
stencil_displacement(const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace>& rows,
                     const Kokkos::View<const int*, MemSpace>& count,
                     const ConstSurfaceField& xs,
                     const ConstSurfaceField& start,
                     int i) {
    Eigen::Matrix<double, 4, 3> dx = Eigen::Matrix<double, 4, 3>::Zero();
    for (int j = 0; j < count(i); ++j) {
        const int r = rows(i, j);
        for (int c = 0; c < 3; ++c) {
            dx(j, c) = xs(r, c) - start(r, c);
        }
    }
    return dx;
}

} // namespace

void barrier_normal_forces(const PairList& active,
                           const ConstSurfaceField& xs,
                           const SurfaceTopology& topology,
                           double s_hat,
                           double kappa,
                           Kokkos::View<double*, MemSpace>& out) {
    grow(out, active.count, "intact::contact::normal_force");
    const auto force = out;
    Kokkos::parallel_for(
        "intact::contact::barrier_normal_forces", Kokkos::RangePolicy<ExecSpace>(0, active.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            for (int k = 0; k < 4; ++k) {
                rows[k] = active.rows(i, k);
            }
            const int kind = active.kind(i);
            if (kind == k_point_plane) {
                const double d = plane_signed_distance(rows, xs, topology);
                force(i) = -2.0 * kappa * d * kernels::barrier_first_derivative(d * d, s_hat);
                return;
            }
            kernels::Vec3 x[4];
            pair_positions(kind, rows, xs, x);
            const double s = pair_squared_distance(kind, rows, xs, topology);
            const double weight =
                kind == k_edge_edge
                    ? kernels::edge_edge_mollifier(x[0], x[1], x[2], x[3],
                                                   pair_mollifier_threshold(kind, rows, topology))
                    : 1.0;
            force(i) = -2.0 * kappa * weight * ::sqrt(s) * kernels::barrier_first_derivative(s, s_hat);
        });
}

void FrictionPairs::reserve(int n) {
    grow(m_rows, n, "intact::contact::friction_rows");
    grow(m_count, n, "intact::contact::friction_count");
    grow(m_normal_force, n, "intact::contact::friction_normal_force");
    grow(m_pair_mu, n, "intact::contact::friction_mu");
    grow(m_coefficients, n, "intact::contact::friction_coefficients");
    grow(m_basis, n, "intact::contact::friction_basis");
    grow(m_owned, n, "intact::contact::friction_owned");
}

void FrictionPairs::lag(const PairList& active,
                        const ConstSurfaceField& xs_start,
                        const ConstSurfaceField& xs_lag,
                        const SurfaceTopology& topology,
                        const Kokkos::View<const double*, MemSpace>& normal_force,
                        double h) {
    if (m_start.extent(0) != xs_start.extent(0)) {
        m_start =
            SurfaceField(Kokkos::view_alloc(Kokkos::WithoutInitializing, "intact::contact::friction_start"),
                         xs_start.extent(0));
    }
    Kokkos::deep_copy(m_start, xs_start);
    m_eps_v_h = m_epsv * h;
    reserve(active.count);
    m_size = active.count;
    const auto rows_out = m_rows;
    const auto count_out = m_count;
    const auto force_out = m_normal_force;
    const auto mu_out = m_pair_mu;
    const double mu = m_mu;
    const auto coefficients = m_coefficients;
    const auto basis = m_basis;
    const auto owned = m_owned;
    Kokkos::parallel_for(
        "intact::contact::friction_lag", Kokkos::RangePolicy<ExecSpace>(0, active.count),
        KOKKOS_LAMBDA(const int i) {
            int rows[4];
            for (int k = 0; k < 4; ++k) {
                rows[k] = active.rows(i, k);
            }
            const int kind = active.kind(i);
            owned(i) = owns_pair(kind, rows, topology) ? 1 : 0;
            force_out(i) = normal_force(i);
            mu_out(i) = pair_friction(kind, rows, topology, mu);
            Coefficients c = Coefficients::Zero();
            kernels::Mat32 P;
            if (kind == k_point_plane) {
                // Slip of the point relative to the plane's row; basis ⟂ n, as for a point–point pair
                // along n.
                const kernels::Vec3 n(topology.plane_normal(rows[1], 0), topology.plane_normal(rows[1], 1),
                                      topology.plane_normal(rows[1], 2));
                c(0) = 1.0;
                c(1) = -1.0;
                P = kernels::point_point_tangent_basis(kernels::Vec3::Zero(), n);
            } else {
                kernels::Vec3 x[4];
                pair_positions(kind, rows, xs_lag, x);
                if (kind == k_point_triangle) {
                    const auto which = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
                    if (which == kernels::PointTriangleCase::interior) {
                        c = kernels::point_triangle_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                        P = kernels::point_triangle_tangent_basis(x[0], x[1], x[2], x[3]);
                    } else {
                        sub_case_basis(x, which, c, P);
                    }
                } else {
                    const auto which = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
                    if (which == kernels::EdgeEdgeCase::interior) {
                        c = kernels::edge_edge_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                        P = kernels::edge_edge_tangent_basis(x[0], x[1], x[2], x[3]);
                    } else {
                        sub_case_basis(x, which, c, P);
                    }
                }
            }
            int stencil[4];
            count_out(i) = pair_stencil_rows(kind, rows, stencil);
            for (int k = 0; k < 4; ++k) {
                rows_out(i, k) = stencil[k];
                coefficients(i, k) = c(k);
            }
            for (int r = 0; r < 3; ++r) {
                for (int q = 0; q < 2; ++q) {
                    basis(i, r, q) = P(r, q);
                }
            }
        });
}

void FrictionPairs::lag(const PairList& active,
                        const ConstSurfaceField& xs_start,
                        const ConstSurfaceField& xs_lag,
                        const SurfaceTopology& topology,
                        double s_hat,
                        double kappa,
                        double h) {
    barrier_normal_forces(active, xs_lag, topology, s_hat, kappa, m_barrier_force);
    lag(active, xs_start, xs_lag, topology, m_barrier_force, h);
}

double FrictionPairs::local_energy(const ConstSurfaceField& xs) const {
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> rows = m_rows;
    const Kokkos::View<const int*, MemSpace> count = m_count;
    const auto force = m_normal_force;
    const auto coefficients = m_coefficients;
    const auto basis = m_basis;
    const auto owned = m_owned;
    const ConstSurfaceField start = m_start;
    const auto mu = m_pair_mu;
    const double eps_v_h = m_eps_v_h;
    double total = 0.0;
    Kokkos::parallel_reduce(
        "intact::contact::friction_energy", Kokkos::RangePolicy<ExecSpace>(0, m_size),
        KOKKOS_LAMBDA(const int i, double& sum) {
            if (!owned(i)) {
                return;
            }
            Coefficients c;
            kernels::Mat32 P;
            for (int k = 0; k < 4; ++k) {
                c(k) = coefficients(i, k);
            }
            for (int r = 0; r < 3; ++r) {
                for (int q = 0; q < 2; ++q) {
                    P(r, q) = basis(i, r, q);
                }
            }
            const auto dx = stencil_displacement(rows, count, xs, start, i);
            sum += kernels::friction_pair_potential<4>(mu(i), force(i), c, P, dx, eps_v_h);
        },
        total);
    return total;
}

void FrictionPairs::derivatives(const ConstSurfaceField& xs, PairStencils& out) const {
    out.resize(m_size, true);
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> rows = m_rows;
    const Kokkos::View<const int*, MemSpace> count = m_count;
    const auto force = m_normal_force;
    const auto coefficients = m_coefficients;
    const auto basis = m_basis;
    const ConstSurfaceField start = m_start;
    const auto mu = m_pair_mu;
    const double eps_v_h = m_eps_v_h;
    const auto out_rows = out.rows;
    const auto out_count = out.count;
    const auto out_gradient = out.gradient;
    const auto out_hessian = out.hessian;
    Kokkos::parallel_for(
        "intact::contact::friction_derivatives", Kokkos::RangePolicy<ExecSpace>(0, m_size),
        KOKKOS_LAMBDA(const int i) {
            Coefficients c;
            kernels::Mat32 P;
            for (int k = 0; k < 4; ++k) {
                c(k) = coefficients(i, k);
                out_rows(i, k) = rows(i, k);
            }
            for (int r = 0; r < 3; ++r) {
                for (int q = 0; q < 2; ++q) {
                    P(r, q) = basis(i, r, q);
                }
            }
            out_count(i) = count(i);
            const auto dx = stencil_displacement(rows, count, xs, start, i);
            kernels::VecN<12> g;
            kernels::MatN<12> H;
            kernels::friction_pair_gradient_hessian<4>(mu(i), force(i), c, P, dx, eps_v_h, g, H);
            for (int j = 0; j < 12; ++j) {
                out_gradient(i, j) = g(j);
                for (int k = 0; k < 12; ++k) {
                    out_hessian(i, j, k) = H(j, k);
                }
            }
        });
}

} // namespace intact::contact
