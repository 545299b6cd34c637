// Smoothed lagged friction: the f0 / f1 mollifiers (f0' = f1, C^1 at y = h eps_v, the y -> 0 limits),
// closest-point coefficients and orthonormal tangent bases of PT / EE / PE / PP pairs (including
// degenerate contacts), and the per-pair friction gradient and PSD Hessian for 2-, 3- and 4-vertex
// stencils against central finite differences of the potential. Kernels run on the default execution
// space; references and finite differences run on the host.
#include "kernels/friction.hpp"
#include "kernels/small_matrix.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Eigen/Eigenvalues>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace intact::kernels;
using intact::ExecSpace;
using intact::kernels::test::from_device;
using intact::kernels::test::near;
using intact::kernels::test::pack;
using intact::kernels::test::Table;
using intact::kernels::test::to_device;
using intact::kernels::test::unpack_row;
using Stencil = std::array<Vec3, 4>;
template <int NV> using Displacements = Eigen::Matrix<double, NV, 3>;

// ---- Device launches (free functions: a CUDA lambda may not live in a TEST body) ----------------

/// Rows (f0, f1, f1', f1 / y, (f1' y - f1) / y^3) at each (y, eps_v_h).
std::vector<VecN<5>> evaluate_mollifiers(const std::vector<VecN<2>>& y_eps) {
    const Table in = to_device("y_eps", y_eps);
    const int n = static_cast<int>(y_eps.size());
    Table out("f", n, 5);
    Kokkos::parallel_for(
        "intact::test::evaluate_friction_mollifiers", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            const double y = in(c, 0);
            const double eps = in(c, 1);
            out(c, 0) = friction_f0(y, eps);
            out(c, 1) = friction_f1(y, eps);
            out(c, 2) = friction_f1_derivative(y, eps);
            out(c, 3) = friction_f1_over_y(y, eps);
            out(c, 4) = friction_df1_y_minus_f1_over_y3(y, eps);
        });
    return from_device<VecN<5>>(out);
}

/// Coefficients and bases of every pair type on each stencil: PT (x0; x1 x2 x3), EE (x0 x1; x2 x3),
/// PE (x0; x1 x2), PP (x0, x1).
struct Frames {
    std::vector<VecN<4>> pt_c;
    std::vector<Mat32> pt_P;
    std::vector<VecN<4>> ee_c;
    std::vector<Mat32> ee_P;
    std::vector<VecN<3>> pe_c;
    std::vector<Mat32> pe_P;
    std::vector<VecN<2>> pp_c;
    std::vector<Mat32> pp_P;
};

Frames evaluate_frames(const std::vector<Stencil>& stencils) {
    std::vector<Vec12> rows;
    for (const Stencil& s : stencils) {
        rows.push_back(pack(s));
    }
    const Table x = to_device("x", rows);
    const int n = static_cast<int>(stencils.size());
    Table pt_c("pt_c", n, 4);
    Table pt_P("pt_P", n, 6);
    Table ee_c("ee_c", n, 4);
    Table ee_P("ee_P", n, 6);
    Table pe_c("pe_c", n, 3);
    Table pe_P("pe_P", n, 6);
    Table pp_c("pp_c", n, 2);
    Table pp_P("pp_P", n, 6);
    Kokkos::parallel_for(
        "intact::test::evaluate_frames", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 v[4];
            for (int a = 0; a < 4; ++a) {
                v[a] = Vec3(x(c, 3 * a), x(c, 3 * a + 1), x(c, 3 * a + 2));
            }
            Eigen::Map<VecN<4>>(&pt_c(c, 0)) =
                point_triangle_closest_point_coefficients(v[0], v[1], v[2], v[3]);
            Eigen::Map<Mat32>(&pt_P(c, 0)) = point_triangle_tangent_basis(v[0], v[1], v[2], v[3]);
            Eigen::Map<VecN<4>>(&ee_c(c, 0)) = edge_edge_closest_point_coefficients(v[0], v[1], v[2], v[3]);
            Eigen::Map<Mat32>(&ee_P(c, 0)) = edge_edge_tangent_basis(v[0], v[1], v[2], v[3]);
            Eigen::Map<VecN<3>>(&pe_c(c, 0)) = point_edge_closest_point_coefficients(v[0], v[1], v[2]);
            Eigen::Map<Mat32>(&pe_P(c, 0)) = point_edge_tangent_basis(v[0], v[1], v[2]);
            Eigen::Map<VecN<2>>(&pp_c(c, 0)) = point_point_closest_point_coefficients(v[0], v[1]);
            Eigen::Map<Mat32>(&pp_P(c, 0)) = point_point_tangent_basis(v[0], v[1]);
        });
    return {from_device<VecN<4>>(pt_c), from_device<Mat32>(pt_P),   from_device<VecN<4>>(ee_c),
            from_device<Mat32>(ee_P),   from_device<VecN<3>>(pe_c), from_device<Mat32>(pe_P),
            from_device<VecN<2>>(pp_c), from_device<Mat32>(pp_P)};
}

/// One friction pair: inputs and device results.
template <int NV> struct FrictionPair {
    double mu_n; // mu * N (the potential depends on the product only)
    VecN<NV> c;
    Mat32 P;
    Displacements<NV> dx;
    double eps_v_h;
    double potential = 0.0;
    VecN<3 * NV> gradient = VecN<3 * NV>::Zero();
    MatN<3 * NV> hessian = MatN<3 * NV>::Zero();
};

template <int NV> void evaluate_friction_pairs(std::vector<FrictionPair<NV>>& pairs) {
    std::vector<VecN<2>> scalars;
    std::vector<VecN<NV>> cs;
    std::vector<Mat32> Ps;
    std::vector<Displacements<NV>> dxs;
    for (const FrictionPair<NV>& p : pairs) {
        scalars.push_back(VecN<2>(p.mu_n, p.eps_v_h));
        cs.push_back(p.c);
        Ps.push_back(p.P);
        dxs.push_back(p.dx);
    }
    const Table s_in = to_device("scalars", scalars);
    const Table c_in = to_device("c", cs);
    const Table P_in = to_device("P", Ps);
    const Table dx_in = to_device("dx", dxs);
    const int n = static_cast<int>(pairs.size());
    Table potential("potential", n, 1);
    Table gradient("gradient", n, 3 * NV);
    Table hessian("hessian", n, 9 * NV * NV);
    Kokkos::parallel_for(
        "intact::test::evaluate_friction_pairs", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int k) {
            const VecN<NV> c = Eigen::Map<const VecN<NV>>(&c_in(k, 0));
            const Mat32 P = Eigen::Map<const Mat32>(&P_in(k, 0));
            const Displacements<NV> dx = Eigen::Map<const Displacements<NV>>(&dx_in(k, 0));
            // mu = 1 and N = mu N: the kernel sees the product.
            potential(k, 0) = friction_pair_potential<NV>(1.0, s_in(k, 0), c, P, dx, s_in(k, 1));
            VecN<3 * NV> g;
            MatN<3 * NV> H;
            friction_pair_gradient_hessian<NV>(1.0, s_in(k, 0), c, P, dx, s_in(k, 1), g, H);
            Eigen::Map<VecN<3 * NV>>(&gradient(k, 0)) = g;
            Eigen::Map<MatN<3 * NV>>(&hessian(k, 0)) = H;
        });
    const std::vector<VecN<1>> e = from_device<VecN<1>>(potential);
    const std::vector<VecN<3 * NV>> g = from_device<VecN<3 * NV>>(gradient);
    const std::vector<MatN<3 * NV>> H = from_device<MatN<3 * NV>>(hessian);
    for (int k = 0; k < n; ++k) {
        pairs[k].potential = e[k](0);
        pairs[k].gradient = g[k];
        pairs[k].hessian = H[k];
    }
}

// ---- Host helpers -----------------------------------------------------------------------------------

Vec3 random_vec(std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    return Vec3(u(rng), u(rng), u(rng));
}

/// 3-vector sum_j c_j x_j.
template <int NV> Vec3 combine(const VecN<NV>& c, const Vec3* x) {
    Vec3 r = Vec3::Zero();
    for (int j = 0; j < NV; ++j) {
        r += c(j) * x[j];
    }
    return r;
}

::testing::AssertionResult orthonormal(const Mat32& P) {
    return near(Eigen::Matrix2d(P.transpose() * P), Eigen::Matrix2d::Identity(), 0.0, 1e-14);
}

// ---- Tests: mollifiers ---------------------------------------------------------------------------

TEST(FrictionMollifiers, ValuesLimitsAndContinuity) {
    const double eps = 3e-4; // eps_v h, e.g. 1e-2 m/s * 0.03 s
    std::vector<VecN<2>> in;
    for (const double r : {0.0, 0.25, 0.5, 1.0 - 1e-9, 1.0, 1.0 + 1e-9, 2.0, 10.0}) {
        in.push_back(VecN<2>(r * eps, eps));
    }
    const std::vector<VecN<5>> f = evaluate_mollifiers(in);
    // y = 0: f0 = eps / 3, f1 = 0, f1' = 2 / eps, f1 / y -> 2 / eps, the divergent factor returns 0.
    EXPECT_DOUBLE_EQ(f[0](0), eps / 3.0);
    EXPECT_EQ(f[0](1), 0.0);
    EXPECT_DOUBLE_EQ(f[0](2), 2.0 / eps);
    EXPECT_DOUBLE_EQ(f[0](3), 2.0 / eps);
    EXPECT_EQ(f[0](4), 0.0);
    // y = eps / 2: f1 = 3/4, f0 = -eps/24 + eps/4 + eps/3, f1' = 1 / eps, (f1' y - f1) / y^3 = -1/(eps^2 y).
    EXPECT_DOUBLE_EQ(f[2](1), 0.75);
    EXPECT_DOUBLE_EQ(f[2](0), eps * (-1.0 / 24.0 + 0.25 + 1.0 / 3.0));
    EXPECT_DOUBLE_EQ(f[2](2), 1.0 / eps);
    EXPECT_DOUBLE_EQ(f[2](3), 1.5 / eps);
    EXPECT_DOUBLE_EQ(f[2](4), -1.0 / (eps * eps * 0.5 * eps));
    // Across y = eps: f0 -> eps, f1 -> 1, f1' -> 0 from both sides (f1 is C^1), f1 / y -> 1 / eps.
    for (int c = 3; c <= 5; ++c) {
        EXPECT_NEAR(f[c](0), eps, 1e-8 * eps);
        EXPECT_NEAR(f[c](1), 1.0, 1e-8);
        EXPECT_NEAR(f[c](2), 0.0, 1e-8 / eps);
        EXPECT_NEAR(f[c](3), 1.0 / eps, 1e-8 / eps);
        EXPECT_NEAR(f[c](4), -1.0 / (eps * eps * eps), 1e-8 / (eps * eps * eps));
    }
    EXPECT_EQ(f[4](0), eps);
    // Sliding: f0 = y, f1 = 1, f1' = 0.
    EXPECT_EQ(f[7](0), 10.0 * eps);
    EXPECT_EQ(f[7](1), 1.0);
    EXPECT_EQ(f[7](2), 0.0);
    EXPECT_DOUBLE_EQ(f[7](4), -1.0 / std::pow(10.0 * eps, 3));
}

TEST(FrictionMollifiers, DerivativesMatchFiniteDifferences) {
    for (const double eps : {1e-6, 3e-4, 1.0}) {
        std::vector<VecN<2>> in;
        for (double r = 0.01; r < 5.0; r += 0.0731) {
            in.push_back(VecN<2>(r * eps, eps));
        }
        const std::vector<VecN<5>> f = evaluate_mollifiers(in);
        for (std::size_t c = 0; c < in.size(); ++c) {
            const double y = in[c](0);
            SCOPED_TRACE("y / eps = " + std::to_string(y / eps));
            const double h = 1e-7 * y;
            const double fd0 = (friction_f0(y + h, eps) - friction_f0(y - h, eps)) / (2.0 * h);
            const double fd1 = (friction_f1(y + h, eps) - friction_f1(y - h, eps)) / (2.0 * h);
            EXPECT_NEAR(f[c](1), fd0, 1e-6) << "f0' = f1";
            EXPECT_NEAR(f[c](2), fd1, 1e-6 / eps) << "f1'";
            EXPECT_NEAR(f[c](3), f[c](1) / y, 1e-14 / y) << "f1 / y";
            EXPECT_NEAR(f[c](4), (f[c](2) * y - f[c](1)) / (y * y * y), 1e-9 / (y * y * y))
                << "(f1' y - f1) / y^3";
            EXPECT_GE(f[c](1), 0.0);
            EXPECT_LE(f[c](1), 1.0);
            EXPECT_GE(f[c](2), 0.0) << "f1 monotone";
        }
    }
}

// ---- Tests: bases and coefficients ---------------------------------------------------------------

TEST(FrictionFrames, CoefficientsGiveTheClosestPointVectorAndBasesAreTangent) {
    std::mt19937 rng(21);
    std::vector<Stencil> x;
    for (int c = 0; c < 200; ++c) {
        x.push_back({random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)});
    }
    x.push_back(
        {Vec3(0.2, 0.3, 0.0), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0)}); // coplanar PT
    x.push_back({Vec3(0.5, 0.0, 1.0), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0),
                 Vec3(0.0, 1.0, 0.0)}); // above an edge
    const Frames f = evaluate_frames(x);
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("stencil " + std::to_string(c));
        const Vec3* v = x[c].data();
        // PT: r = p - (its projection onto the plane), along the normal; P spans the plane.
        const Vec3 n = cross(v[2] - v[1], v[3] - v[1]).normalized();
        const Vec3 r_pt = combine<4>(f.pt_c[c], v);
        EXPECT_NEAR(r_pt.dot(n), (v[0] - v[1]).dot(n), 1e-13);
        EXPECT_LE((r_pt - r_pt.dot(n) * n).norm(), 1e-13);
        EXPECT_NEAR(f.pt_c[c].sum(), 0.0, 1e-13);
        EXPECT_DOUBLE_EQ(f.pt_c[c](0), 1.0);
        EXPECT_TRUE(orthonormal(f.pt_P[c]));
        EXPECT_LE((f.pt_P[c].transpose() * n).norm(), 1e-14);
        // EE: r joins the closest points of the lines, so it is orthogonal to both edges.
        const Vec3 ea = v[1] - v[0];
        const Vec3 eb = v[3] - v[2];
        const Vec3 r_ee = combine<4>(f.ee_c[c], v);
        EXPECT_LE(std::abs(r_ee.dot(ea)), 1e-12);
        EXPECT_LE(std::abs(r_ee.dot(eb)), 1e-12);
        EXPECT_NEAR(f.ee_c[c].sum(), 0.0, 1e-12);
        EXPECT_TRUE(orthonormal(f.ee_P[c]));
        EXPECT_LE((f.ee_P[c].transpose() * cross(ea, eb).normalized()).norm(), 1e-14);
        // PE: r = p - (closest point on the line) is orthogonal to the edge, and to P.
        const Vec3 e = v[2] - v[1];
        const Vec3 r_pe = combine<3>(f.pe_c[c], v);
        EXPECT_LE(std::abs(r_pe.dot(e)), 1e-13);
        EXPECT_NEAR(r_pe.squaredNorm(), cross(v[0] - v[1], e).squaredNorm() / e.squaredNorm(), 1e-13);
        EXPECT_TRUE(orthonormal(f.pe_P[c]));
        EXPECT_LE((f.pe_P[c].transpose() * r_pe).norm(), 1e-13 * r_pe.norm());
        // PP: r = p0 - p1, P orthogonal to it.
        const Vec3 r_pp = combine<2>(f.pp_c[c], v);
        EXPECT_TRUE(near(r_pp, Vec3(v[0] - v[1]), 0.0, 0.0));
        EXPECT_TRUE(orthonormal(f.pp_P[c]));
        EXPECT_LE((f.pp_P[c].transpose() * r_pp).norm(), 1e-14 * r_pp.norm());
    }
}

TEST(FrictionFrames, DegenerateContactsStillGiveOrthonormalBases) {
    // Point on the edge's line (PE distance 0), coincident points (PP), parallel edges (EE), each along
    // a coordinate axis and along a skew direction.
    std::vector<Stencil> x = {
        {Vec3(0.5, 0.0, 0.0), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0)},
        {Vec3(0.5, 0.5, 0.5), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 1.0, 1.0), Vec3(0.0, 1.0, 0.0)},
        {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 0.3, 0.1), Vec3(2.0, 0.3, 0.1)},
    };
    const Frames f = evaluate_frames(x);
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("stencil " + std::to_string(c));
        EXPECT_TRUE(orthonormal(f.pe_P[c]));
        EXPECT_LE(std::abs(f.pe_P[c].col(1).dot(x[c][2] - x[c][1])), 1e-14)
            << "second column across the edge";
        EXPECT_TRUE(orthonormal(f.pt_P[c]));
    }
    EXPECT_TRUE(orthonormal(f.ee_P[2])) << "parallel edges";
    // Coincident PP points.
    const Frames g =
        evaluate_frames({{Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, 0.3), Vec3::Zero(), Vec3::Ones()}});
    EXPECT_TRUE(orthonormal(g.pp_P[0]));
}

// ---- Tests: per-pair gradient and Hessian ----------------------------------------------------------

template <int NV> double host_potential(const FrictionPair<NV>& p, const Displacements<NV>& dx) {
    return friction_pair_potential<NV>(1.0, p.mu_n, p.c, p.P, dx, p.eps_v_h);
}

template <int NV> VecN<3 * NV> host_gradient(const FrictionPair<NV>& p, const Displacements<NV>& dx) {
    VecN<3 * NV> g;
    MatN<3 * NV> H;
    friction_pair_gradient_hessian<NV>(1.0, p.mu_n, p.c, p.P, dx, p.eps_v_h, g, H);
    return g;
}

/// Pairs on random stencils of NV vertices with coefficients and bases of the matching pair type and
/// displacements whose tangential magnitude y sweeps 0, the static zone, y = eps and sliding.
template <int NV> std::vector<FrictionPair<NV>> make_pairs(std::mt19937& rng) {
    std::vector<FrictionPair<NV>> pairs;
    const double eps = 1e-3;
    // y / eps_v h; -1 stands for a motion along the contact normal only (y at round-off level).
    const double ratios[] = {-1.0, 0.0, 1e-3, 0.3, 0.7, 1.0 - 1e-6, 1.0 + 1e-6, 1.7, 50.0};
    for (int trial = 0; trial < 6; ++trial) {
        Stencil x = {random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)};
        FrictionPair<NV> p;
        if constexpr (NV == 4) {
            if (trial % 2 == 0) {
                p.c = point_triangle_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                p.P = point_triangle_tangent_basis(x[0], x[1], x[2], x[3]);
            } else {
                p.c = edge_edge_closest_point_coefficients(x[0], x[1], x[2], x[3]);
                p.P = edge_edge_tangent_basis(x[0], x[1], x[2], x[3]);
            }
        } else if constexpr (NV == 3) {
            p.c = point_edge_closest_point_coefficients(x[0], x[1], x[2]);
            p.P = point_edge_tangent_basis(x[0], x[1], x[2]);
        } else {
            p.c = point_point_closest_point_coefficients(x[0], x[1]);
            p.P = point_point_tangent_basis(x[0], x[1]);
        }
        p.mu_n = 0.3 * std::pow(10.0, trial - 3); // mu N over several decades
        p.eps_v_h = eps;
        for (const double ratio : ratios) {
            Displacements<NV> dx;
            if (ratio < 0.0) {
                // A common translation plus motion along the normal: sum_j c_j = 0 and P^T n = 0.
                const Vec3 normal = cross(p.P.col(0), p.P.col(1));
                for (int j = 0; j < NV; ++j) {
                    dx.row(j) = (1e-3 * (j + 1) * normal + Vec3(0.1, -0.2, 0.3)).transpose();
                }
            } else if (ratio == 0.0) {
                dx.setZero();
            } else {
                // Random displacements, rescaled so that |u| = ratio * eps_v h.
                for (int j = 0; j < NV; ++j) {
                    dx.row(j) = random_vec(rng).transpose();
                }
                dx *= ratio * eps / friction_tangent_displacement<NV>(p.c, p.P, dx).norm();
            }
            p.dx = dx;
            pairs.push_back(p);
        }
    }
    return pairs;
}

template <int NV> void check_friction_pairs(unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<FrictionPair<NV>> pairs = make_pairs<NV>(rng);
    // Plus a pair without normal force: everything vanishes.
    FrictionPair<NV> zero = pairs[3];
    zero.mu_n = 0.0;
    pairs.push_back(zero);
    evaluate_friction_pairs<NV>(pairs);
    constexpr int n_dof = 3 * NV;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const FrictionPair<NV>& p = pairs[k];
        const VecN<2> u = friction_tangent_displacement<NV>(p.c, p.P, p.dx);
        const double y = u.norm();
        SCOPED_TRACE("NV " + std::to_string(NV) + ", pair " + std::to_string(k) +
                     ", y / eps = " + std::to_string(y / p.eps_v_h) + ", mu N = " + std::to_string(p.mu_n));
        EXPECT_NEAR(p.potential, p.mu_n * friction_f0(y, p.eps_v_h), 1e-15 * p.mu_n * p.eps_v_h);
        // Spec formula: grad = mu N T (f1(y) / y) u with T block j = c_j P.
        Eigen::Matrix<double, n_dof, 2> T;
        for (int j = 0; j < NV; ++j) {
            T.template block<3, 2>(3 * j, 0) = p.c(j) * p.P;
        }
        const VecN<n_dof> g_spec = p.mu_n * friction_f1_over_y(y, p.eps_v_h) * T * u;
        EXPECT_TRUE(near(p.gradient, g_spec, 1e-14, 1e-300));
        // Finite differences in the displacements (step relative to the larger of y and eps_v h).
        const double h = 1e-7 * std::max(y, p.eps_v_h);
        VecN<n_dof> g_fd;
        MatN<n_dof> H_fd;
        for (int i = 0; i < n_dof; ++i) {
            Displacements<NV> dp = p.dx;
            Displacements<NV> dm = p.dx;
            dp(i / 3, i % 3) += h;
            dm(i / 3, i % 3) -= h;
            g_fd(i) = (host_potential<NV>(p, dp) - host_potential<NV>(p, dm)) / (2.0 * h);
            H_fd.col(i) = (host_gradient<NV>(p, dp) - host_gradient<NV>(p, dm)) / (2.0 * h);
        }
        const double g_scale = p.mu_n * 1e-8; // |gradient| <~ mu N |c|: absolute floor for y = 0
        EXPECT_TRUE(near(p.gradient, g_fd, 1e-6, g_scale)) << "gradient";
        EXPECT_TRUE(near(p.hessian, H_fd, 1e-6, 1e-8 * p.mu_n / p.eps_v_h)) << "Hessian";
        EXPECT_TRUE(near(p.hessian, MatN<n_dof>(p.hessian.transpose()), 0.0, 0.0)) << "symmetric";
        const Eigen::SelfAdjointEigenSolver<MatN<n_dof>> eig(p.hessian);
        EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12 * p.hessian.norm()) << "PSD";
        if (p.mu_n == 0.0) {
            EXPECT_EQ(p.gradient.norm(), 0.0);
            EXPECT_EQ(p.hessian.norm(), 0.0);
        }
        // At y = 0 the Hessian is the limit mu N (2 / eps_v h) T T^T.
        if (y == 0.0) {
            EXPECT_TRUE(
                near(p.hessian, MatN<n_dof>(p.mu_n * 2.0 / p.eps_v_h * T * T.transpose()), 1e-14, 0.0));
        }
    }
}

TEST(FrictionPair, PointPointGradientAndHessianMatchFiniteDifferences) {
    check_friction_pairs<2>(31);
}

TEST(FrictionPair, PointEdgeGradientAndHessianMatchFiniteDifferences) {
    check_friction_pairs<3>(32);
}

TEST(FrictionPair, PointTriangleAndEdgeEdgeGradientAndHessianMatchFiniteDifferences) {
    check_friction_pairs<4>(33);
}

} // namespace
