// Tet geometry: volume, Dm^{-1}, F of affine maps, dF/dx and its sparse contractions, lumped mass, and
// the inversion-aware step bound. Kernels run on the default execution space.
#include "kernels/small_matrix.hpp"
#include "kernels/tet_geometry.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
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
using Tet = std::array<Vec3, 4>;

// ---- Device launches (free functions: a CUDA lambda may not live in a TEST body) ----------------

struct GeometryValues {
    std::vector<VecN<4>> scalars; // signed volume of X, rest volume, signed volume of x, lumped mass
    std::vector<Mat3> Dm_inv;
    std::vector<Mat3> F;
    std::vector<Eigen::Matrix<double, 9, 12>> dFdx;
    std::vector<Vec12> gradient; // gradient_from_pk1(G, P)
    std::vector<Mat12> hessian;  // hessian_from_dpdf(G, A)
};

GeometryValues evaluate_geometry(const std::vector<Tet>& rest,
                                 const std::vector<Tet>& current,
                                 const std::vector<Mat3>& P,
                                 const std::vector<Mat9>& A,
                                 double density) {
    std::vector<Vec12> X_rows;
    std::vector<Vec12> x_rows;
    for (std::size_t e = 0; e < rest.size(); ++e) {
        X_rows.push_back(pack(rest[e]));
        x_rows.push_back(pack(current[e]));
    }
    const Table X = to_device("X", X_rows);
    const Table x = to_device("x", x_rows);
    const Table P_in = to_device("P", P);
    const Table A_in = to_device("A", A);
    const int n = static_cast<int>(rest.size());
    Table scalars("scalars", n, 4);
    Table Dm_inv("Dm_inv", n, 9);
    Table F("F", n, 9);
    Table dFdx("dFdx", n, 108);
    Table gradient("gradient", n, 12);
    Table hessian("hessian", n, 144);
    Kokkos::parallel_for(
        "intact::test::evaluate_geometry", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 Xc[4];
            Vec3 xc[4];
            unpack_row(X, c, Xc);
            unpack_row(x, c, xc);
            const Mat3 inv = rest_shape_inverse(Xc);
            const double V = rest_volume(Xc);
            scalars(c, 0) = signed_volume(Xc);
            scalars(c, 1) = V;
            scalars(c, 2) = signed_volume(xc);
            scalars(c, 3) = lumped_nodal_mass(density, V);
            Eigen::Map<Mat3>(&Dm_inv(c, 0)) = inv;
            Eigen::Map<Mat3>(&F(c, 0)) = deformation_gradient(xc, inv);
            Eigen::Map<Eigen::Matrix<double, 9, 12>>(&dFdx(c, 0)) = deformation_gradient_jacobian(inv);
            const Mat43 G = shape_function_gradients(inv);
            Eigen::Map<Vec12>(&gradient(c, 0)) = gradient_from_pk1(G, Eigen::Map<const Mat3>(&P_in(c, 0)));
            Eigen::Map<Mat12>(&hessian(c, 0)) = hessian_from_dpdf(G, Eigen::Map<const Mat9>(&A_in(c, 0)));
        });
    return {from_device<VecN<4>>(scalars), from_device<Mat3>(Dm_inv),
            from_device<Mat3>(F),          from_device<Eigen::Matrix<double, 9, 12>>(dFdx),
            from_device<Vec12>(gradient),  from_device<Mat12>(hessian)};
}

std::vector<double> evaluate_step_bound(const std::vector<Tet>& x,
                                        const std::vector<Tet>& p,
                                        double fraction,
                                        double limit = intact::kernels::infinity()) {
    std::vector<Vec12> x_rows;
    std::vector<Vec12> p_rows;
    for (std::size_t e = 0; e < x.size(); ++e) {
        x_rows.push_back(pack(x[e]));
        p_rows.push_back(pack(p[e]));
    }
    const Table xt = to_device("x", x_rows);
    const Table pt = to_device("p", p_rows);
    const int n = static_cast<int>(x.size());
    Table alpha("alpha", n, 1);
    Kokkos::parallel_for(
        "intact::test::evaluate_step_bound", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            Vec3 xc[4];
            Vec3 pc[4];
            unpack_row(xt, c, xc);
            unpack_row(pt, c, pc);
            alpha(c, 0) = max_step_keeping_volume(xc, pc, fraction, limit);
        });
    std::vector<double> result;
    for (const VecN<1>& a : from_device<VecN<1>>(alpha)) {
        result.push_back(a(0));
    }
    return result;
}

// ---- Host references -----------------------------------------------------------------------------

const Tet k_unit_tet = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, 1.0)};

Tet affine(const Mat3& A, const Vec3& t, const Tet& X) {
    Tet x;
    for (int a = 0; a < 4; ++a) {
        x[a] = A * X[a] + t;
    }
    return x;
}

Tet random_tet(std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Tet X = k_unit_tet;
    for (Vec3& p : X) {
        p += 0.25 * Vec3(u(rng), u(rng), u(rng));
    }
    return X;
}

double ratio_along(const Tet& x, const Tet& p, double alpha) {
    Tet y;
    for (int a = 0; a < 4; ++a) {
        y[a] = x[a] + alpha * p[a];
    }
    return det(shape_matrix(y.data())) / det(shape_matrix(x.data()));
}

// ---- Tests -----------------------------------------------------------------------------------------

TEST(TetGeometry, VolumesShapeInverseAffineFAndMass) {
    std::mt19937 rng(1);
    std::vector<Tet> rest;
    std::vector<Tet> current;
    std::vector<Mat3> maps;
    std::vector<Mat3> P;
    std::vector<Mat9> A;
    for (int e = 0; e < 8; ++e) {
        Tet X = e == 0 ? k_unit_tet : random_tet(rng);
        if (e % 2 == 1) {
            std::swap(X[1], X[2]); // negatively oriented rest tet
        }
        const Mat3 map = Mat3::Identity() + 0.5 * Mat3::Random();
        rest.push_back(X);
        current.push_back(affine(map, Vec3::Random(), X));
        maps.push_back(map);
        P.push_back(Mat3::Random());
        const Mat9 a = Mat9::Random();
        A.push_back(a + a.transpose());
    }
    const double density = 1200.0;
    const GeometryValues v = evaluate_geometry(rest, current, P, A, density);

    EXPECT_DOUBLE_EQ(v.scalars[0](0), 1.0 / 6.0) << "unit right tet";
    EXPECT_DOUBLE_EQ(v.scalars[0](1), 1.0 / 6.0);
    EXPECT_TRUE(near(v.Dm_inv[0], Mat3::Identity(), 0.0, 1e-15));
    for (std::size_t e = 0; e < rest.size(); ++e) {
        SCOPED_TRACE("tet " + std::to_string(e));
        const Mat3 Dm = shape_matrix(rest[e].data());
        const double signed_v = v.scalars[e](0);
        EXPECT_NEAR(signed_v, det(Dm) / 6.0, 1e-15);
        EXPECT_EQ(signed_v < 0.0, e % 2 == 1);
        EXPECT_DOUBLE_EQ(v.scalars[e](1), std::abs(signed_v));
        // An affine map scales the signed volume by det A.
        EXPECT_NEAR(v.scalars[e](2), det(maps[e]) * signed_v, 1e-14);
        EXPECT_TRUE(near(v.Dm_inv[e] * Dm, Mat3::Identity(), 0.0, 1e-14));
        EXPECT_TRUE(near(v.F[e], maps[e], 0.0, 1e-14)) << "F of an affine map is its matrix";
        EXPECT_DOUBLE_EQ(4.0 * v.scalars[e](3), density * v.scalars[e](1)) << "lumped mass sums to rho V";

        // dvec(F)/dx: F is linear in x, so one central difference is exact up to round-off.
        Eigen::Matrix<double, 9, 12> fd;
        for (int k = 0; k < 12; ++k) {
            Tet xp = current[e];
            Tet xm = current[e];
            xp[k / 3](k % 3) += 1e-3;
            xm[k / 3](k % 3) -= 1e-3;
            fd.col(k) = vec(deformation_gradient(xp.data(), v.Dm_inv[e]) -
                            deformation_gradient(xm.data(), v.Dm_inv[e])) /
                        2e-3;
        }
        EXPECT_TRUE(near(v.dFdx[e], fd, 1e-10, 0.0));
        // Each column of dF/dx touches 3 entries, and the sparse contractions equal the dense products.
        for (int k = 0; k < 12; ++k) {
            EXPECT_LE((v.dFdx[e].col(k).array() != 0.0).count(), 3);
        }
        EXPECT_TRUE(near(v.gradient[e], v.dFdx[e].transpose() * vec(P[e]), 1e-14, 0.0));
        const Mat12 dense = v.dFdx[e].transpose() * A[e] * v.dFdx[e];
        EXPECT_TRUE(near(v.hessian[e], dense, 1e-13, 0.0));
        EXPECT_TRUE(near(v.hessian[e], v.hessian[e].transpose(), 0.0, 0.0));
    }
}

TEST(TetGeometry, StepBoundHitsTheVolumeFractionOfACollapsingTet) {
    std::mt19937 rng(2);
    std::vector<Tet> x;
    std::vector<Tet> p;
    std::vector<double> expected;
    // 1. Apex moving linearly onto the base plane: the volume is linear in alpha and vanishes at
    //    alpha_c = 2, so it reaches 0.2 of itself at 0.8 alpha_c.
    x.push_back(k_unit_tet);
    p.push_back({Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3(0.3, 0.1, -0.5)});
    expected.push_back(1.6);
    // 2. Uniform shrink about the centroid at rate s: volume (1 - s alpha)^3, a true cubic.
    for (const double s : {1.0, 0.25, 7.0}) {
        const Tet X = random_tet(rng);
        const Vec3 centre = 0.25 * (X[0] + X[1] + X[2] + X[3]);
        Tet d;
        for (int a = 0; a < 4; ++a) {
            d[a] = -s * (X[a] - centre) + Vec3(1.0, 2.0, 3.0); // plus a translation, which changes nothing
        }
        x.push_back(X);
        p.push_back(d);
        expected.push_back((1.0 - std::cbrt(0.2)) / s);
    }
    // 3. Same collapse with the tet's orientation reversed (negative det Ds).
    Tet flipped = k_unit_tet;
    std::swap(flipped[1], flipped[2]);
    x.push_back(flipped);
    p.push_back({Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3(0.3, 0.1, -0.5)});
    expected.push_back(1.6);
    // 4. A tet passing through a flat state the far side: volume ratio 1 - alpha, then root at 0.8.
    x.push_back(k_unit_tet);
    p.push_back({Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3(0.0, 0.0, -1.0)});
    expected.push_back(0.8);

    const std::vector<double> alpha = evaluate_step_bound(x, p, 0.2);
    for (std::size_t c = 0; c < x.size(); ++c) {
        EXPECT_NEAR(alpha[c], expected[c], 1e-12 * expected[c]) << "case " << c;
        EXPECT_NEAR(ratio_along(x[c], p[c], alpha[c]), 0.2, 1e-12) << "case " << c;
    }
}

TEST(TetGeometry, StepBoundIsTheFirstCrossingAndInfiniteWithoutOne) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Tet> x;
    std::vector<Tet> p;
    for (int c = 0; c < 200; ++c) {
        x.push_back(random_tet(rng));
        Tet d;
        const double scale = std::pow(10.0, 2.0 * u(rng));
        for (Vec3& da : d) {
            da = scale * Vec3(u(rng), u(rng), u(rng));
        }
        p.push_back(d);
    }
    // Pure growth, pure translation and a rotation-free shear never shrink the volume to 0.2.
    const Tet X = random_tet(rng);
    x.push_back(X);
    p.push_back(X); // x + alpha x: volume (1 + alpha)^3
    x.push_back(X);
    p.push_back({Vec3(1.0, 2.0, 3.0), Vec3(1.0, 2.0, 3.0), Vec3(1.0, 2.0, 3.0), Vec3(1.0, 2.0, 3.0)});
    Mat3 shear = Mat3::Zero();
    shear(0, 1) = 1.0;
    x.push_back(X);
    p.push_back(affine(shear, Vec3::Zero(), X)); // det(I + alpha shear) = 1
    const std::size_t first_no_root = x.size() - 3;

    const std::vector<double> alpha = evaluate_step_bound(x, p, 0.2);
    int with_root = 0;
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("case " + std::to_string(c));
        if (c >= first_no_root) {
            EXPECT_TRUE(std::isinf(alpha[c]) && alpha[c] > 0.0);
        }
        // Up to the bound (or over [0, 1e3] when there is none) the volume keeps more than 0.2 of itself.
        const double end = std::isinf(alpha[c]) ? 1e3 : alpha[c];
        for (int s = 0; s < 1000; ++s) {
            EXPECT_GT(ratio_along(x[c], p[c], end * s / 1000.0), 0.2);
        }
        if (!std::isinf(alpha[c])) {
            ++with_root;
            EXPECT_GT(alpha[c], 0.0);
            EXPECT_NEAR(ratio_along(x[c], p[c], alpha[c]), 0.2, 1e-9);
        }
    }
    EXPECT_GT(with_root, 50) << "the random directions should collapse many tets";

    // With a limit the cubic is skipped where a cheap bound shows no root below it: min(limit, alpha) is
    // unchanged, bit for bit, and some cases take the shortcut (they return the limit exactly).
    for (const double limit : {1.0, 0.1, 0.01}) {
        const std::vector<double> limited = evaluate_step_bound(x, p, 0.2, limit);
        int shortcuts = 0;
        for (std::size_t c = 0; c < x.size(); ++c) {
            EXPECT_EQ(std::min(limit, limited[c]), std::min(limit, alpha[c]))
                << "case " << c << ", " << limit;
            shortcuts += limited[c] == limit && alpha[c] != limit ? 1 : 0;
        }
        EXPECT_GT(shortcuts, 0) << limit;
    }

    // Other fractions, and a flat tet that allows no step at all.
    const Tet flat = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(1.0, 1.0, 0.0)};
    const std::vector<double> half = evaluate_step_bound({k_unit_tet, flat}, {p[0], p[0]}, 0.5);
    EXPECT_NEAR(ratio_along(k_unit_tet, p[0], half[0]), 0.5, 1e-9);
    EXPECT_EQ(half[1], 0.0);
}

} // namespace
