#include "tests/contact/host_friction_potential.hpp"

#include "comm/collectives.hpp"
#include "kernels/barrier.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/friction.hpp"
#include "kernels/pair_distance.hpp"

#include <cmath>
#include <map>

namespace intact::contact {

namespace {

// Coefficients and basis of a point–point / point–edge sub-case on stencil slots.
void point_point(const kernels::Vec3* x, int a, int b, Eigen::Matrix<double, 4, 1>& c, kernels::Mat32& P) {
    c.setZero();
    const auto k = kernels::point_point_closest_point_coefficients(x[a], x[b]);
    c(a) = k(0);
    c(b) = k(1);
    P = kernels::point_point_tangent_basis(x[a], x[b]);
}

void point_edge(
    const kernels::Vec3* x, int p, int e0, int e1, Eigen::Matrix<double, 4, 1>& c, kernels::Mat32& P) {
    c.setZero();
    const auto k = kernels::point_edge_closest_point_coefficients(x[p], x[e0], x[e1]);
    c(p) = k(0);
    c(e0) = k(1);
    c(e1) = k(2);
    P = kernels::point_edge_tangent_basis(x[p], x[e0], x[e1]);
}

// Coefficients and basis of a point–point or point–edge sub-case of a PT or EE case.
template <class Case>
void sub_case_basis(const kernels::Vec3* x, Case which, Eigen::Matrix<double, 4, 1>& c, kernels::Mat32& P) {
    int pp[2] = {0, 0}, pe[3] = {0, 0, 0};
    kernels::detail::sub_case_slots(which, pp, pe);
    if (kernels::detail::is_point_point(which)) {
        point_point(x, pp[0], pp[1], c, P);
    } else {
        point_edge(x, pe[0], pe[1], pe[2], c, P);
    }
}

} // namespace

FrictionPotential::FrictionPotential(
    MPI_Comm comm, const ContactSurface& surface, const BarrierPotential& barrier, double mu, double epsv)
    : m_comm(comm), m_surface(surface), m_barrier(barrier), m_mu(mu), m_epsv(epsv) {}

void FrictionPotential::lag(const std::vector<Vec3>& xs_start,
                            const std::vector<Vec3>& xs_lag,
                            double kappa,
                            double h) {
    m_start = xs_start;
    m_eps_v_h = m_epsv * h;
    m_pairs.clear();
    const double s_hat = m_barrier.dhat() * m_barrier.dhat();
    for (const auto& pair : m_barrier.active_pairs(xs_lag)) {
        Lagged lagged;
        lagged.owned = m_barrier.owns(pair);
        lagged.v = pair.v;
        if (pair.kind == BarrierPotential::Kind::point_plane) {
            // Slip of the vertex relative to the plane's row (a moving plane drags the vertex along).
            const Vec3& n = m_surface.planes()[static_cast<std::size_t>(pair.v[1])].normal;
            const Vec3& p = xs_lag[static_cast<std::size_t>(pair.v[0])];
            const Vec3& q = xs_lag[static_cast<std::size_t>(pair.v[2])];
            const double d = n[0] * (p[0] - q[0]) + n[1] * (p[1] - q[1]) + n[2] * (p[2] - q[2]);
            lagged.count = 2;
            lagged.v = {pair.v[0], pair.v[2], 0, 0};
            lagged.normal_force = -2.0 * kappa * d * kernels::barrier_first_derivative(d * d, s_hat);
            lagged.c.setZero();
            lagged.c(0) = 1.0;
            lagged.c(1) = -1.0;
            // Basis ⟂ n: the same construction as a point–point pair along n.
            const kernels::Vec3 zero = kernels::Vec3::Zero();
            lagged.P = kernels::point_point_tangent_basis(zero, kernels::from_array(n));
            m_pairs.push_back(lagged);
            continue;
        }
        kernels::Vec3 x[4];
        for (int k = 0; k < 4; ++k) {
            x[k] = kernels::from_array(xs_lag[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])]);
        }
        lagged.count = 4;
        double s = 0.0;
        double weight = 1.0;
        if (pair.kind == BarrierPotential::Kind::point_triangle) {
            const auto which = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
            s = kernels::point_triangle_distance(x[0], x[1], x[2], x[3], which);
            if (which == kernels::PointTriangleCase::interior) {
                lagged.c = kernels::point_triangle_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                lagged.P = kernels::point_triangle_tangent_basis(x[0], x[1], x[2], x[3]);
            } else {
                sub_case_basis(x, which, lagged.c, lagged.P);
            }
        } else {
            const auto which = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
            s = kernels::edge_edge_distance(x[0], x[1], x[2], x[3], which);
            if (which == kernels::EdgeEdgeCase::interior) {
                lagged.c = kernels::edge_edge_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                lagged.P = kernels::edge_edge_tangent_basis(x[0], x[1], x[2], x[3]);
            } else {
                sub_case_basis(x, which, lagged.c, lagged.P);
            }
            weight =
                kernels::edge_edge_mollifier(x[0], x[1], x[2], x[3], m_barrier.mollifier_threshold(pair));
        }
        const double d = std::sqrt(s);
        lagged.normal_force = -2.0 * kappa * weight * d * kernels::barrier_first_derivative(s, s_hat);
        m_pairs.push_back(lagged);
    }
}

double FrictionPotential::local_energy(const std::vector<Vec3>& xs) const {
    double total = 0.0;
    for (const auto& pair : m_pairs) {
        if (!pair.owned) {
            continue;
        }
        Eigen::Matrix<double, 4, 3> dx = Eigen::Matrix<double, 4, 3>::Zero();
        for (int j = 0; j < pair.count; ++j) {
            const auto i = static_cast<std::size_t>(pair.v[static_cast<std::size_t>(j)]);
            for (int c = 0; c < 3; ++c) {
                dx(j, c) = xs[i][static_cast<std::size_t>(c)] - m_start[i][static_cast<std::size_t>(c)];
            }
        }
        total += kernels::friction_pair_potential<4>(m_mu, pair.normal_force, pair.c, pair.P, dx, m_eps_v_h);
    }
    return total;
}

double FrictionPotential::energy(const std::vector<Vec3>& xs) const {
    return comm::allreduce_sum(m_comm, local_energy(xs));
}

void FrictionPotential::derivatives(const std::vector<Vec3>& xs,
                                    std::vector<double>& gradient,
                                    std::vector<ContactBlock>& blocks) const {
    std::map<std::pair<int, int>, std::array<double, 9>> sums;
    for (const auto& pair : m_pairs) {
        Eigen::Matrix<double, 4, 3> dx = Eigen::Matrix<double, 4, 3>::Zero();
        for (int j = 0; j < pair.count; ++j) {
            const auto i = static_cast<std::size_t>(pair.v[static_cast<std::size_t>(j)]);
            for (int c = 0; c < 3; ++c) {
                dx(j, c) = xs[i][static_cast<std::size_t>(c)] - m_start[i][static_cast<std::size_t>(c)];
            }
        }
        kernels::VecN<12> g;
        kernels::MatN<12> H;
        kernels::friction_pair_gradient_hessian<4>(m_mu, pair.normal_force, pair.c, pair.P, dx, m_eps_v_h, g,
                                                   H);
        for (int a = 0; a < pair.count; ++a) {
            const int va = pair.v[static_cast<std::size_t>(a)];
            const int row = m_surface.local_of_surface(va);
            if (!m_barrier.owns_vertex(va)) {
                continue;
            }
            for (int c = 0; c < 3; ++c) {
                gradient[static_cast<std::size_t>(3 * row + c)] += g(3 * a + c);
            }
            for (int b = 0; b < pair.count; ++b) {
                auto& target = sums[{row, pair.v[static_cast<std::size_t>(b)]}];
                for (int p = 0; p < 3; ++p) {
                    for (int q = 0; q < 3; ++q) {
                        target[static_cast<std::size_t>(3 * p + q)] += H(3 * a + p, 3 * b + q);
                    }
                }
            }
        }
    }
    for (const auto& [key, values] : sums) {
        ContactBlock block{key.first, key.second, {}};
        for (int p = 0; p < 3; ++p) {
            for (int q = 0; q < 3; ++q) {
                block.value[p][q] = values[static_cast<std::size_t>(3 * p + q)];
            }
        }
        blocks.push_back(block);
    }
}

} // namespace intact::contact
