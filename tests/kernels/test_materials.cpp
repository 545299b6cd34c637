// Elastic materials, the small-matrix helpers they use, and the elastic element: every derivative
// against central finite differences (near rest, large strain, near-degenerate, inverted), PSD
// projection, rest state and rigid motions. Kernels run on the default execution space; references and
// finite differences are computed on the host.
#include "kernels/elastic_element.hpp"
#include "kernels/material_fixed_corotated.hpp"
#include "kernels/material_linear.hpp"
#include "kernels/material_neo_hookean.hpp"
#include "kernels/material_stable_neo_hookean.hpp"
#include "kernels/material_stvk.hpp"
#include "kernels/small_matrix.hpp"
#include "kernels/tet_geometry.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
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

struct MaterialValues {
    std::vector<VecN<1>> energy;
    std::vector<Mat3> pk1;
    std::vector<Mat9> hessian;
    std::vector<Mat9> projected;
};

template <class Material>
MaterialValues evaluate_material(const Material& material, const std::vector<Mat3>& Fs) {
    const Table F = to_device("F", Fs);
    const int n = static_cast<int>(Fs.size());
    Table energy("energy", n, 1);
    Table pk1("pk1", n, 9);
    Table hessian("hessian", n, 81);
    Table projected("projected", n, 81);
    Kokkos::parallel_for(
        "intact::test::evaluate_material", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            const Mat3 Fc = Eigen::Map<const Mat3>(&F(c, 0));
            energy(c, 0) = material.energy(Fc);
            Eigen::Map<Mat3>(&pk1(c, 0)) = material.pk1(Fc);
            Eigen::Map<Mat9>(&hessian(c, 0)) = material.hessian(Fc);
            Eigen::Map<Mat9>(&projected(c, 0)) = material.projected_hessian(Fc);
        });
    return {from_device<VecN<1>>(energy), from_device<Mat3>(pk1), from_device<Mat9>(hessian),
            from_device<Mat9>(projected)};
}

struct SvdValues {
    std::vector<Mat3> U;
    std::vector<Vec3> sigma;
    std::vector<Mat3> V;
};

SvdValues evaluate_svd(const std::vector<Mat3>& Fs) {
    const Table F = to_device("F", Fs);
    const int n = static_cast<int>(Fs.size());
    Table U("U", n, 9);
    Table sigma("sigma", n, 3);
    Table V("V", n, 9);
    Kokkos::parallel_for(
        "intact::test::evaluate_svd", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            const Svd3 s = svd3(Eigen::Map<const Mat3>(&F(c, 0)));
            Eigen::Map<Mat3>(&U(c, 0)) = s.U;
            Eigen::Map<Vec3>(&sigma(c, 0)) = s.sigma;
            Eigen::Map<Mat3>(&V(c, 0)) = s.V;
        });
    return {from_device<Mat3>(U), from_device<Vec3>(sigma), from_device<Mat3>(V)};
}

template <int N> struct EigenValues {
    std::vector<VecN<N>> w;
    std::vector<MatN<N>> Q;
    std::vector<MatN<N>> projected;
};

template <int N> EigenValues<N> evaluate_symmetric_eigen(const std::vector<MatN<N>>& As) {
    const Table A = to_device("A", As);
    const int n = static_cast<int>(As.size());
    Table w("w", n, N);
    Table Q("Q", n, N * N);
    Table projected("projected", n, N * N);
    Kokkos::parallel_for(
        "intact::test::evaluate_symmetric_eigen", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            const MatN<N> Ac = Eigen::Map<const MatN<N>>(&A(c, 0));
            VecN<N> wc;
            MatN<N> Qc;
            symmetric_eigen<N>(Ac, wc, Qc);
            Eigen::Map<VecN<N>>(&w(c, 0)) = wc;
            Eigen::Map<MatN<N>>(&Q(c, 0)) = Qc;
            MatN<N> P = Ac;
            project_psd<N>(P);
            Eigen::Map<MatN<N>>(&projected(c, 0)) = P;
        });
    return {from_device<VecN<N>>(w), from_device<MatN<N>>(Q), from_device<MatN<N>>(projected)};
}

struct ElementValues {
    std::vector<VecN<1>> energy;
    std::vector<Vec12> gradient;
    std::vector<Mat12> hessian;
};

// Packs a tet's four points as one 12-vector (node-major).
Tet unpack(const Vec12& v) {
    return {v.segment<3>(0), v.segment<3>(3), v.segment<3>(6), v.segment<3>(9)};
}

template <class Material>
ElementValues
evaluate_elements(const Material& material, const std::vector<Tet>& rest, const std::vector<Tet>& current) {
    std::vector<Vec12> rest_packed;
    std::vector<Vec12> current_packed;
    for (std::size_t e = 0; e < rest.size(); ++e) {
        rest_packed.push_back(pack(rest[e]));
        current_packed.push_back(pack(current[e]));
    }
    const Table X = to_device("X", rest_packed);
    const Table x = to_device("x", current_packed);
    const int n = static_cast<int>(rest.size());
    Table energy("energy", n, 1);
    Table gradient("gradient", n, 12);
    Table hessian("hessian", n, 144);
    Kokkos::parallel_for(
        "intact::test::evaluate_elements", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 Xc[4];
            Vec3 xc[4];
            for (int a = 0; a < 4; ++a) {
                Xc[a] = Vec3(X(c, 3 * a), X(c, 3 * a + 1), X(c, 3 * a + 2));
                xc[a] = Vec3(x(c, 3 * a), x(c, 3 * a + 1), x(c, 3 * a + 2));
            }
            Vec12 g;
            Mat12 H;
            energy(c, 0) = elastic_element(material, xc, rest_shape_inverse(Xc), rest_volume(Xc), &g, &H);
            Eigen::Map<Vec12>(&gradient(c, 0)) = g;
            Eigen::Map<Mat12>(&hessian(c, 0)) = H;
        });
    return {from_device<VecN<1>>(energy), from_device<Vec12>(gradient), from_device<Mat12>(hessian)};
}

// ---- Host references -----------------------------------------------------------------------------

Mat3 random_rotation(std::mt19937& rng) {
    std::normal_distribution<double> n(0.0, 1.0);
    return Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized().toRotationMatrix();
}

Mat3 random_matrix(std::mt19937& rng, double scale) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Mat3 A;
    for (int k = 0; k < 9; ++k) {
        A.data()[k] = scale * u(rng);
    }
    return A;
}

struct Deformation {
    std::string name;
    Mat3 F;
};

// The deformation gradients every material is checked at; inverted ones (det F < 0) only when asked.
std::vector<Deformation> deformations(bool inverted) {
    std::mt19937 rng(20240611);
    const auto rotated = [&](double s0, double s1, double s2) {
        return Mat3(random_rotation(rng) * Vec3(s0, s1, s2).asDiagonal() * random_rotation(rng));
    };
    std::vector<Deformation> cases;
    cases.push_back({"identity", Mat3::Identity()});
    cases.push_back({"rotation", random_rotation(rng)});
    for (int k = 0; k < 3; ++k) {
        cases.push_back({"near_identity_" + std::to_string(k), Mat3::Identity() + random_matrix(rng, 0.05)});
    }
    cases.push_back({"moderate_random", Mat3::Identity() + random_matrix(rng, 0.3)});
    cases.push_back({"stretch_3x", rotated(3.0, 1.0, 1.0)});
    cases.push_back({"stretch_3x_all", rotated(3.0, 2.5, 2.0)});
    cases.push_back({"compression_0.3x", rotated(1.0, 1.0, 0.3)});
    cases.push_back({"uniform_compression_0.3x", Mat3(0.3 * random_rotation(rng))});
    Mat3 shear = Mat3::Identity();
    shear(0, 1) = 1.5;
    cases.push_back({"shear_1.5", shear});
    cases.push_back({"rotated_shear", Mat3(random_rotation(rng) * shear.transpose())});
    cases.push_back({"near_degenerate_J_1e-3", rotated(1.1, 0.9, 1e-3)});
    cases.push_back({"equal_small_J_1e-3", Mat3(0.1 * random_rotation(rng))});
    cases.push_back({"nearly_equal_sigma", rotated(1.2, 1.2 + 1e-9, 1.2 - 1e-9)});
    cases.push_back({"two_equal_sigma", rotated(1.3, 1.3, 0.8)});
    cases.push_back({"two_equal_small_sigma", rotated(1.5, 0.05, 0.05)});
    if (inverted) {
        cases.push_back({"inverted", rotated(1.2, 0.9, -0.5)});
        cases.push_back({"inverted_strongly", rotated(1.1, 0.7, -0.6)});
        cases.push_back({"inverted_nearly_equal", rotated(0.8, 0.8 + 1e-9, -0.2)});
        cases.push_back({"inverted_slightly", rotated(1.0, 0.95, -1e-3)});
    }
    return cases;
}

double smallest_singular_value(const Mat3& F) {
    return Eigen::JacobiSVD<Mat3>(F).singularValues()(2);
}

// Central differences of the energy: d psi / dF_ij.
template <class Material> Mat3 fd_pk1(const Material& m, const Mat3& F, double h) {
    Mat3 P;
    for (int k = 0; k < 9; ++k) {
        Mat3 Fp = F;
        Mat3 Fm = F;
        Fp.data()[k] += h;
        Fm.data()[k] -= h;
        P.data()[k] = (m.energy(Fp) - m.energy(Fm)) / (2.0 * h);
    }
    return P;
}

// Central differences of PK1: column k of d vec(P) / d vec(F).
template <class Material> Mat9 fd_hessian(const Material& m, const Mat3& F, double h) {
    Mat9 H;
    for (int k = 0; k < 9; ++k) {
        Mat3 Fp = F;
        Mat3 Fm = F;
        Fp.data()[k] += h;
        Fm.data()[k] -= h;
        H.col(k) = vec((m.pk1(Fp) - m.pk1(Fm)) / (2.0 * h));
    }
    return H;
}

// The nearest PSD matrix, by the host's eigen-solver.
template <int N> MatN<N> host_project(const MatN<N>& A) {
    Eigen::SelfAdjointEigenSolver<MatN<N>> solver(A);
    const VecN<N> w = solver.eigenvalues().cwiseMax(0.0);
    return solver.eigenvectors() * w.asDiagonal() * solver.eigenvectors().transpose();
}

template <int N> double min_eigenvalue(const MatN<N>& A) {
    return Eigen::SelfAdjointEigenSolver<MatN<N>>(A).eigenvalues().minCoeff();
}

template <int N> double spectral_norm(const MatN<N>& A) {
    return Eigen::SelfAdjointEigenSolver<MatN<N>>(A).eigenvalues().cwiseAbs().maxCoeff();
}

// ---- Small-matrix helpers --------------------------------------------------------------------------

TEST(SmallMatrix, SymmetricEigenMatchesHostAndProjectsToNearestPsd) {
    std::vector<MatN<9>> A9;
    std::vector<MatN<12>> A12;
    for (int k = 0; k < 6; ++k) {
        MatN<9> a = MatN<9>::Random();
        A9.push_back(a + a.transpose());
        MatN<12> b = MatN<12>::Random();
        A12.push_back(1e6 * (b + b.transpose()));
    }
    // Special shapes: diagonal, zero, repeated eigenvalues, already PSD, rank one.
    A9.push_back(VecN<9>::LinSpaced(-4.0, 4.0).asDiagonal());
    A9.push_back(MatN<9>::Zero());
    A9.push_back(MatN<9>::Identity());
    const VecN<12> r = VecN<12>::Random();
    A12.push_back(r * r.transpose());
    const MatN<12> m = MatN<12>::Random();
    A12.push_back(m * m.transpose());

    const auto check = [](const auto& As, const auto& result) {
        for (std::size_t c = 0; c < As.size(); ++c) {
            const auto& A = As[c];
            const auto& Q = result.Q[c];
            const double norm = std::max(spectral_norm(A), 1e-300);
            EXPECT_TRUE(near(Q.transpose() * Q, std::decay_t<decltype(A)>::Identity(), 0.0, 1e-13))
                << "case " << c;
            EXPECT_TRUE(near(Q * result.w[c].asDiagonal() * Q.transpose(), A, 0.0, 1e-13 * norm))
                << "case " << c;
            auto w_sorted = result.w[c];
            std::sort(w_sorted.data(), w_sorted.data() + w_sorted.size());
            using Solver = Eigen::SelfAdjointEigenSolver<std::decay_t<decltype(A)>>;
            EXPECT_TRUE(near(w_sorted, Solver(A).eigenvalues(), 0.0, 1e-13 * norm)) << "case " << c;
            EXPECT_TRUE(near(result.projected[c], host_project(A), 0.0, 1e-12 * norm)) << "case " << c;
            EXPECT_GE(min_eigenvalue(result.projected[c]), -1e-12 * norm) << "case " << c;
        }
    };
    check(A9, evaluate_symmetric_eigen<9>(A9));
    check(A12, evaluate_symmetric_eigen<12>(A12));
    // A PSD matrix is left as it is.
    EXPECT_TRUE(near(evaluate_symmetric_eigen<12>(A12).projected.back(), A12.back(), 1e-13, 0.0));
    // The Cholesky test that lets project_psd skip the eigensolve: true for a positive definite matrix
    // (m mᵀ of a random m), false for an indefinite one whose diagonal is positive, or a negative pivot late.
    EXPECT_TRUE(positive_definite<12>(A12.back()));
    MatN<2> indefinite;
    indefinite << 1.0, 2.0, 2.0, 1.0; // eigenvalues 3 and −1
    EXPECT_FALSE(positive_definite<2>(indefinite));
    MatN<12> late = MatN<12>::Identity();
    late(10, 11) = late(11, 10) = 1.5; // a 2×2 block with eigenvalues 2.5 and −0.5 at the end
    EXPECT_FALSE(positive_definite<12>(late));
}

TEST(SmallMatrix, Svd3IsSignedProperAndAccurate) {
    std::mt19937 rng(11);
    std::vector<Mat3> Fs;
    for (const Deformation& d : deformations(true)) {
        Fs.push_back(d.F);
    }
    for (int k = 0; k < 20; ++k) {
        Fs.push_back(random_matrix(rng, 2.0));
    }
    const Mat3 R = random_rotation(rng);
    const Vec3 a = Vec3::Random();
    const Vec3 b = Vec3::Random();
    Fs.push_back(Mat3::Zero());
    Fs.push_back(a * b.transpose());                                            // rank 1
    Fs.push_back(R * Vec3(2.0, 1.0, 0.0).asDiagonal());                         // rank 2
    Fs.push_back(Vec3(1.0, 1e-20, 1.0).asDiagonal());                           // tiny middle value
    Fs.push_back(Vec3(1.0, -1.0, 1.0).asDiagonal());                            // reflection
    Fs.push_back(R * Vec3(1.0, 1.0, -1.0).asDiagonal());                        // rotated reflection
    Fs.push_back(Mat3(R * Vec3(1.0, 1e-7, 1e-7).asDiagonal() * R.transpose())); // two tiny, equal
    const SvdValues s = evaluate_svd(Fs);
    for (std::size_t c = 0; c < Fs.size(); ++c) {
        const Mat3& F = Fs[c];
        const double norm = std::max(F.norm(), 1e-300);
        EXPECT_TRUE(near(s.U[c] * s.sigma[c].asDiagonal() * s.V[c].transpose(), F, 0.0, 1e-14 * norm))
            << "case " << c;
        EXPECT_TRUE(near(s.U[c].transpose() * s.U[c], Mat3::Identity(), 0.0, 1e-14)) << "case " << c;
        EXPECT_TRUE(near(s.V[c].transpose() * s.V[c], Mat3::Identity(), 0.0, 1e-14)) << "case " << c;
        EXPECT_NEAR(det(s.U[c]), 1.0, 1e-14) << "case " << c;
        EXPECT_NEAR(det(s.V[c]), 1.0, 1e-14) << "case " << c;
        EXPECT_GE(s.sigma[c](0), s.sigma[c](1) - 1e-15 * norm) << "case " << c;
        EXPECT_GE(s.sigma[c](1), std::abs(s.sigma[c](2)) - 1e-15 * norm) << "case " << c;
        if (det(F) != 0.0) {
            EXPECT_EQ(s.sigma[c](2) < 0.0, det(F) < 0.0) << "case " << c;
        }
        // Relative accuracy of every singular value against the host's two-sided Jacobi SVD.
        const Vec3 reference = Eigen::JacobiSVD<Mat3>(F).singularValues();
        for (int k = 0; k < 3; ++k) {
            EXPECT_NEAR(std::abs(s.sigma[c](k)), reference(k), 1e-12 * reference(k) + 1e-15 * norm)
                << "case " << c << " sigma " << k;
        }
    }
}

// ---- Materials -------------------------------------------------------------------------------------

template <class Material> struct MaterialTraits;
template <> struct MaterialTraits<NeoHookean> { static constexpr bool rotation_invariant = true; };
template <> struct MaterialTraits<StableNeoHookean> { static constexpr bool rotation_invariant = true; };
template <> struct MaterialTraits<FixedCorotated> { static constexpr bool rotation_invariant = true; };
template <> struct MaterialTraits<StVK> { static constexpr bool rotation_invariant = true; };
template <> struct MaterialTraits<LinearElastic> { static constexpr bool rotation_invariant = false; };

template <class Material> class MaterialTest : public ::testing::Test {};
using Materials = ::testing::Types<NeoHookean, StableNeoHookean, FixedCorotated, StVK, LinearElastic>;
TYPED_TEST_SUITE(MaterialTest, Materials);

// Two parameter sets: moderately and nearly incompressible.
std::vector<std::pair<double, double>> youngs_poisson() {
    return {{1e5, 0.3}, {2e4, 0.45}};
}

TYPED_TEST(MaterialTest, DerivativesMatchFiniteDifferences) {
    for (const auto& [E, nu] : youngs_poisson()) {
        const TypeParam m = lame_from_youngs<TypeParam>(E, nu);
        const auto cases = deformations(TypeParam::is_invertible);
        std::vector<Mat3> Fs;
        for (const Deformation& d : cases) {
            Fs.push_back(d.F);
        }
        const MaterialValues v = evaluate_material(m, Fs);
        const double stiffness = m.mu + m.lambda;
        for (std::size_t c = 0; c < cases.size(); ++c) {
            const Mat3& F = Fs[c];
            // Step relative to the smallest singular value, so it resolves 1/sigma behaviour at J ~ 1e-3.
            const double h = 1e-6 * std::min(1.0, smallest_singular_value(F));
            SCOPED_TRACE(cases[c].name + ", nu " + std::to_string(nu));
            EXPECT_TRUE(std::isfinite(v.energy[c](0)));
            EXPECT_NEAR(v.energy[c](0), m.energy(F), 1e-12 * std::abs(m.energy(F)) + 1e-12 * stiffness);
            EXPECT_TRUE(near(v.pk1[c], fd_pk1(m, F, h), 1e-6, 1e-9 * stiffness)) << "PK1 vs d energy / dF";
            EXPECT_TRUE(near(v.hessian[c], fd_hessian(m, F, h), 1e-6, 1e-9 * stiffness))
                << "Hessian vs d PK1 / dF";
            EXPECT_TRUE(near(v.hessian[c], v.hessian[c].transpose(), 1e-12, 0.0)) << "Hessian symmetric";
        }
    }
}

TYPED_TEST(MaterialTest, ProjectedHessianIsTheNearestPsdMatrix) {
    for (const auto& [E, nu] : youngs_poisson()) {
        const TypeParam m = lame_from_youngs<TypeParam>(E, nu);
        const auto cases = deformations(TypeParam::is_invertible);
        std::vector<Mat3> Fs;
        for (const Deformation& d : cases) {
            Fs.push_back(d.F);
        }
        const MaterialValues v = evaluate_material(m, Fs);
        for (std::size_t c = 0; c < cases.size(); ++c) {
            SCOPED_TRACE(cases[c].name + ", nu " + std::to_string(nu));
            const Mat9& H = v.hessian[c];
            const Mat9& P = v.projected[c];
            const double norm = spectral_norm(H);
            EXPECT_GE(min_eigenvalue(P), -1e-8 * norm) << "projected Hessian is PSD";
            EXPECT_TRUE(near(P, P.transpose(), 1e-12, 0.0)) << "projected Hessian symmetric";
            // The analytic eigensystem projection equals clamping the eigenvalues of the full Hessian.
            EXPECT_TRUE(near(P, host_project(H), 0.0, 1e-9 * norm)) << "projection vs host eigen-clamp";
            if (min_eigenvalue(H) >= 0.0) {
                EXPECT_TRUE(near(P, H, 0.0, 1e-9 * norm)) << "PSD Hessian left unchanged";
            }
        }
    }
}

TYPED_TEST(MaterialTest, RestStateHasZeroEnergyAndStress) {
    const TypeParam m = lame_from_youngs<TypeParam>(1e5, 0.4);
    std::mt19937 rng(3);
    std::vector<Mat3> Fs = {Mat3::Identity()};
    if (MaterialTraits<TypeParam>::rotation_invariant) {
        for (int k = 0; k < 4; ++k) {
            Fs.push_back(random_rotation(rng));
        }
    }
    const MaterialValues v = evaluate_material(m, Fs);
    const double stiffness = m.mu + m.lambda;
    for (std::size_t c = 0; c < Fs.size(); ++c) {
        EXPECT_NEAR(v.energy[c](0), 0.0, 1e-12 * stiffness) << "case " << c;
        EXPECT_TRUE(near(v.pk1[c], Mat3::Zero(), 0.0, 1e-11 * stiffness)) << "case " << c;
        // At rest every model's Hessian is PSD, so projection changes nothing.
        EXPECT_TRUE(near(v.projected[c], v.hessian[c], 0.0, 1e-10 * stiffness)) << "case " << c;
    }
    // Small-strain limit: every model's Hessian at F = I is the linear one, mu (I + K) + lambda vec(I)
    // vec(I)^T (stable neo-Hookean by its re-parameterisation).
    const Mat9 linear = lame_from_youngs<LinearElastic>(1e5, 0.4).hessian(Mat3::Identity());
    EXPECT_TRUE(near(v.hessian[0], linear, 1e-12, 0.0));
}

TEST(NeoHookean, EnergyIsInfiniteForInvertedOrFlatElements) {
    const NeoHookean m = lame_from_youngs<NeoHookean>(1e5, 0.4);
    const MaterialValues v =
        evaluate_material(m, {Vec3(1.0, 1.0, -0.5).asDiagonal(), Vec3(1.0, 1.0, 0.0).asDiagonal(),
                              Vec3(1.0, 1.0, 1e-12).asDiagonal()});
    EXPECT_TRUE(std::isinf(v.energy[0](0)) && v.energy[0](0) > 0.0);
    EXPECT_TRUE(std::isinf(v.energy[1](0)) && v.energy[1](0) > 0.0);
    EXPECT_TRUE(std::isfinite(v.energy[2](0)) && v.energy[2](0) > 1e3 * m.mu);
    EXPECT_TRUE(v.projected[0].allFinite());
}

TEST(StableNeoHookean, MatchesThePaperForm) {
    // psi = mu'/2 (I_C - 3) + lambda'/2 (J - alpha)^2 - mu'/2 ln(I_C + 1) - psi(I), mu' = 4/3 mu,
    // lambda' = lambda + 5/6 mu, alpha = 1 + 3 mu' / (4 lambda').
    const StableNeoHookean m = lame_from_youngs<StableNeoHookean>(1e5, 0.4);
    const double mu = 4.0 / 3.0 * m.mu;
    const double lambda = m.lambda + 5.0 / 6.0 * m.mu;
    const double alpha = 1.0 + 0.75 * mu / lambda;
    const auto paper = [&](const Mat3& F) {
        const double I_C = F.squaredNorm();
        const double J = F.determinant();
        return 0.5 * mu * (I_C - 3.0) + 0.5 * lambda * (J - alpha) * (J - alpha) -
               0.5 * mu * std::log(I_C + 1.0);
    };
    std::mt19937 rng(5);
    const Mat3 F = Mat3::Identity() + random_matrix(rng, 0.4);
    const MaterialValues v = evaluate_material(m, {F});
    EXPECT_NEAR(v.energy[0](0), paper(F) - paper(Mat3::Identity()), 1e-10 * mu);
}

TEST(FixedCorotated, MatchesPolarForm) {
    // psi = mu ||F - R||^2 + lambda/2 (J - 1)^2 with R the polar rotation (host SVD reference).
    const FixedCorotated m = lame_from_youngs<FixedCorotated>(1e5, 0.4);
    std::mt19937 rng(9);
    const Mat3 F = Mat3::Identity() + random_matrix(rng, 0.5);
    Eigen::JacobiSVD<Mat3> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Mat3 U = svd.matrixU();
    Mat3 V = svd.matrixV();
    if (U.determinant() * V.determinant() < 0.0) {
        U.col(2) = -U.col(2);
    }
    const Mat3 R = U * V.transpose();
    const double J = F.determinant();
    const MaterialValues v = evaluate_material(m, {F});
    EXPECT_NEAR(v.energy[0](0), m.mu * (F - R).squaredNorm() + 0.5 * m.lambda * (J - 1.0) * (J - 1.0),
                1e-10 * m.mu);
}

TEST(LinearElastic, ProjectionClampsNegativeModuli) {
    // An (unphysical) negative lambda with 2 mu + 3 lambda < 0: the volumetric mode must be clamped.
    const LinearElastic m{1.0, -2.0};
    const MaterialValues v = evaluate_material(m, {Mat3::Identity()});
    EXPECT_LT(min_eigenvalue(v.hessian[0]), -1.0);
    EXPECT_TRUE(near(v.projected[0], host_project(v.hessian[0]), 0.0, 1e-13));
}

// ---- Elastic element -----------------------------------------------------------------------------

struct ElementCase {
    Tet rest;
    Tet current;
};

std::vector<ElementCase> element_cases(bool inverted) {
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<ElementCase> cases;
    for (const Deformation& d : deformations(inverted)) {
        ElementCase e;
        // A skewed rest tet (either orientation) of size ~0.1, mapped by F plus a translation.
        e.rest = {Vec3(0.0, 0.0, 0.0), Vec3(0.1, 0.01, 0.0), Vec3(0.02, 0.12, -0.01),
                  Vec3(-0.01, 0.03, 0.09)};
        for (Vec3& X : e.rest) {
            X += 0.01 * Vec3(u(rng), u(rng), u(rng));
        }
        if (cases.size() % 2 == 1) {
            std::swap(e.rest[1], e.rest[2]);
        }
        const Vec3 t(u(rng), u(rng), u(rng));
        for (int a = 0; a < 4; ++a) {
            e.current[a] = d.F * e.rest[a] + t;
        }
        cases.push_back(e);
    }
    return cases;
}

template <class Material> double host_element_energy(const Material& m, const Tet& rest, const Vec12& x) {
    const Tet xt = unpack(x);
    return elastic_element(m, xt.data(), rest_shape_inverse(rest.data()), rest_volume(rest.data()), nullptr,
                           nullptr);
}

TYPED_TEST(MaterialTest, ElementGradientAndHessianMatchReferences) {
    const TypeParam m = lame_from_youngs<TypeParam>(1e5, 0.4);
    const auto cases = element_cases(TypeParam::is_invertible);
    std::vector<Tet> rest;
    std::vector<Tet> current;
    for (const ElementCase& e : cases) {
        rest.push_back(e.rest);
        current.push_back(e.current);
    }
    const ElementValues v = evaluate_elements(m, rest, current);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        SCOPED_TRACE("element case " + std::to_string(c));
        const Mat3 Dm_inv = rest_shape_inverse(rest[c].data());
        const double V = rest_volume(rest[c].data());
        const Mat3 F = deformation_gradient(current[c].data(), Dm_inv);
        const double scale = V * (m.mu + m.lambda);
        EXPECT_NEAR(v.energy[c](0), V * m.energy(F), 1e-12 * std::abs(V * m.energy(F)) + 1e-14 * scale);
        // Gradient against central differences in x; step relative to the smallest tet dimension.
        const double h = 1e-7 * std::min(1.0, smallest_singular_value(F));
        Vec12 fd;
        const Vec12 x = pack(current[c]);
        for (int k = 0; k < 12; ++k) {
            Vec12 xp = x;
            Vec12 xm = x;
            xp(k) += h;
            xm(k) -= h;
            fd(k) = (host_element_energy(m, rest[c], xp) - host_element_energy(m, rest[c], xm)) / (2.0 * h);
        }
        EXPECT_TRUE(near(v.gradient[c], fd, 1e-6, 1e-9 * scale)) << "gradient vs finite differences";
        // Hessian: symmetric, PSD, and V B^T A_proj B with the dense dF/dx.
        const Mat12& H = v.hessian[c];
        const Eigen::Matrix<double, 9, 12> B = deformation_gradient_jacobian(Dm_inv);
        const Mat12 reference = V * B.transpose() * m.projected_hessian(F) * B;
        const double norm = spectral_norm(reference);
        EXPECT_TRUE(near(H, H.transpose(), 1e-13, 0.0)) << "symmetric";
        EXPECT_GE(min_eigenvalue(H), -1e-8 * norm) << "PSD";
        EXPECT_TRUE(near(H, reference, 1e-12, 0.0)) << "sparse dF/dx contraction vs dense";
        // Forces balance (translation invariance); torques too for rotation-invariant models.
        Vec3 force = Vec3::Zero();
        Vec3 torque = Vec3::Zero();
        for (int a = 0; a < 4; ++a) {
            force += v.gradient[c].segment<3>(3 * a);
            torque += cross(current[c][a], Vec3(v.gradient[c].segment<3>(3 * a)));
        }
        const double g_max = v.gradient[c].cwiseAbs().maxCoeff();
        const double x_max = x.cwiseAbs().maxCoeff();
        EXPECT_LE(force.norm(), 1e-12 * g_max + 1e-13 * scale);
        if (MaterialTraits<TypeParam>::rotation_invariant) {
            EXPECT_LE(torque.norm(), 1e-11 * g_max * (1.0 + x_max) + 1e-13 * scale);
        }
    }
}

TYPED_TEST(MaterialTest, RigidMotionsGiveZeroEnergyAndGradient) {
    const TypeParam m = lame_from_youngs<TypeParam>(1e5, 0.4);
    std::mt19937 rng(23);
    const Tet X = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.1, 0.0), Vec3(0.2, 1.1, 0.1), Vec3(0.1, 0.2, 0.9)};
    std::vector<Tet> rest;
    std::vector<Tet> current;
    for (int k = 0; k < 4; ++k) {
        const Mat3 R =
            MaterialTraits<TypeParam>::rotation_invariant ? random_rotation(rng) : Mat3::Identity();
        const Vec3 t = 3.0 * Vec3::Random();
        Tet x;
        for (int a = 0; a < 4; ++a) {
            x[a] = R * X[a] + t;
        }
        rest.push_back(X);
        current.push_back(x);
    }
    const ElementValues v = evaluate_elements(m, rest, current);
    const double scale = rest_volume(X.data()) * (m.mu + m.lambda);
    for (std::size_t c = 0; c < rest.size(); ++c) {
        EXPECT_NEAR(v.energy[c](0), 0.0, 1e-12 * scale) << "case " << c;
        EXPECT_TRUE(near(v.gradient[c], Vec12::Zero(), 0.0, 1e-11 * scale)) << "case " << c;
        EXPECT_GE(min_eigenvalue(v.hessian[c]), -1e-10 * scale) << "case " << c;
    }
}

// Central differences of the element gradient at corners x (12, node-major), step h per coordinate.
template <class Material>
Mat12 fd_element_hessian(const Material& m, const Vec12& x, const Mat3& Dm_inv, double V, double h) {
    Mat12 fd;
    for (int k = 0; k < 12; ++k) {
        Vec12 xp = x;
        Vec12 xm = x;
        xp(k) += h;
        xm(k) -= h;
        Vec12 gp;
        Vec12 gm;
        const Tet tp = unpack(xp);
        const Tet tm = unpack(xm);
        elastic_element(m, tp.data(), Dm_inv, V, &gp, nullptr);
        elastic_element(m, tm.data(), Dm_inv, V, &gm, nullptr);
        fd.col(k) = (gp - gm) / (2.0 * h);
    }
    return fd;
}

TEST(ElasticElement, LinearHessianMatchesFiniteDifferencesOfGradient) {
    // The linear model's Hessian is PSD, so the element's projected Hessian is its exact Hessian.
    const LinearElastic m = lame_from_youngs<LinearElastic>(1e5, 0.3);
    const auto cases = element_cases(true);
    std::vector<Tet> rest;
    std::vector<Tet> current;
    for (const ElementCase& e : cases) {
        rest.push_back(e.rest);
        current.push_back(e.current);
    }
    const ElementValues v = evaluate_elements(m, rest, current);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const Mat3 Dm_inv = rest_shape_inverse(rest[c].data());
        const double V = rest_volume(rest[c].data());
        const Vec12 x = pack(current[c]);
        EXPECT_TRUE(near(v.hessian[c], fd_element_hessian(m, x, Dm_inv, V, 1e-6), 1e-6, 0.0)) << "case " << c;
    }
}

// Without the projection, the element Hessian is the exact second derivative for every material, in
// compressed and twisted elements where the projection changes it (a Newton iteration near its solution
// uses it; IpcSolver's basin).
TYPED_TEST(MaterialTest, UnprojectedElementHessianMatchesFiniteDifferencesOfGradient) {
    const TypeParam m = lame_from_youngs<TypeParam>(1e5, 0.3);
    int indefinite = 0;
    const auto cases = element_cases(TypeParam::is_invertible);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const ElementCase& e = cases[c];
        const Mat3 Dm_inv = rest_shape_inverse(e.rest.data());
        const double V = rest_volume(e.rest.data());
        const Vec12 x = pack(e.current);
        Vec12 g;
        Mat12 exact;
        elastic_element(m, e.current.data(), Dm_inv, V, &g, &exact, false);
        const Mat12 fd = fd_element_hessian(m, x, Dm_inv, V, 1e-7);
        const double scale = std::max(1.0, exact.norm());
        EXPECT_TRUE(near(exact, fd, 1e-5, 1e-6 * scale)) << "case " << c;
        indefinite += Eigen::SelfAdjointEigenSolver<Mat12>(exact).eigenvalues().minCoeff() < -1e-8 * scale;
    }
    if (!std::is_same_v<TypeParam, LinearElastic>) {
        // The cases include elements where the two differ, or the test would not test the switch.
        EXPECT_GT(indefinite, 0);
    }
}

TEST(ElasticElement, InvertedNeoHookeanElementIsInfiniteWithZeroDerivatives) {
    const NeoHookean m = lame_from_youngs<NeoHookean>(1e5, 0.4);
    const Tet X = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, 1.0)};
    const Tet x = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, -0.2)};
    const ElementValues v = evaluate_elements(m, {X}, {x});
    EXPECT_TRUE(std::isinf(v.energy[0](0)));
    EXPECT_TRUE(near(v.gradient[0], Vec12::Zero(), 0.0, 0.0));
    EXPECT_TRUE(near(v.hessian[0], Mat12::Zero(), 0.0, 0.0));
}

// V psi(F1) - V psi(F0) of neo-Hookean in long double, from H = F - I so that nothing of order 1 cancels:
// tr(F^T F) - 3 = 2 tr H + |H|^2 and ln J = log1p(tr H + i2(H) + det H).
long double neo_hookean_energy_from_displacement_gradient(const NeoHookean& m,
                                                          const std::array<std::array<long double, 3>, 3>& H,
                                                          long double volume) {
    long double trace = 0.0L, squares = 0.0L, i2 = 0.0L;
    for (int i = 0; i < 3; ++i) {
        trace += H[i][i];
        for (int j = 0; j < 3; ++j) {
            squares += H[i][j] * H[i][j];
        }
    }
    for (int i = 0; i < 3; ++i) {
        for (int j = i + 1; j < 3; ++j) {
            i2 += H[i][i] * H[j][j] - H[i][j] * H[j][i];
        }
    }
    const long double det = H[0][0] * (H[1][1] * H[2][2] - H[1][2] * H[2][1]) -
                            H[0][1] * (H[1][0] * H[2][2] - H[1][2] * H[2][0]) +
                            H[0][2] * (H[1][0] * H[2][1] - H[1][1] * H[2][0]);
    const long double log_J = std::log1p(trace + i2 + det);
    const long double mu = m.mu, lambda = m.lambda;
    return volume * (0.5L * mu * (2.0L * trace + squares) - mu * log_J + 0.5L * lambda * log_J * log_J);
}

TEST(ElasticElement, EnergyChangeOfATinyStepNearRestKeepsItsDigits) {
    // A stiff tet (E = 1e8 Pa, 0.1 m) strained by about 1e-4, then moved by 1e-9 m: the change (about
    // 1e-8 J) is within 1e4 of the rounding of psi itself (mu eps V, about 1e-12 J), so the plain difference
    // is off by 4e-5 to 4e-4; elastic_energy_change matches a long-double reference to 1e-7.
    const NeoHookean m = lame_from_youngs<NeoHookean>(1e8, 0.3);
    const Tet X = {Vec3(0.0, 0.0, 0.0), Vec3(0.1, 0.0, 0.0), Vec3(0.0, 0.1, 0.0), Vec3(0.0, 0.0, 0.1)};
    const Mat3 Dm_inv = rest_shape_inverse(X.data());
    const double V = rest_volume(X.data());
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 20; ++trial) {
        Tet x = X, step;
        for (int a = 0; a < 4; ++a) {
            x[a] += 1e-5 * Vec3(u(rng), u(rng), u(rng));
            step[a] = 1e-9 * Vec3(u(rng), u(rng), u(rng));
        }
        // Reference: H = (Ds - Dm) Dm^{-1} from the displacements, in long double.
        auto displacement_gradient = [&](const Tet& corners, const Tet* extra) {
            std::array<std::array<long double, 3>, 3> H{};
            for (int i = 0; i < 3; ++i) {
                for (int j = 0; j < 3; ++j) {
                    for (int k = 0; k < 3; ++k) {
                        long double du = static_cast<long double>(corners[k + 1](i)) - corners[0](i) -
                                         (static_cast<long double>(X[k + 1](i)) - X[0](i));
                        if (extra) {
                            du += static_cast<long double>((*extra)[k + 1](i)) - (*extra)[0](i);
                        }
                        H[i][j] += du * Dm_inv(k, j);
                    }
                }
            }
            return H;
        };
        const long double reference =
            neo_hookean_energy_from_displacement_gradient(m, displacement_gradient(x, &step), V) -
            neo_hookean_energy_from_displacement_gradient(m, displacement_gradient(x, nullptr), V);
        const double change = elastic_energy_change(m, x.data(), step.data(), Dm_inv, V);
        Tet moved = x;
        for (int a = 0; a < 4; ++a) {
            moved[a] += step[a];
        }
        const double direct = elastic_element(m, moved.data(), Dm_inv, V, nullptr, nullptr) -
                              elastic_element(m, x.data(), Dm_inv, V, nullptr, nullptr);
        const double error = std::abs(change - static_cast<double>(reference));
        EXPECT_LE(error, 1e-7 * std::abs(static_cast<double>(reference)))
            << "trial " << trial << ": change " << change << ", reference " << static_cast<double>(reference)
            << ", direct difference " << direct;
    }
}

TEST(ElasticElement, EnergyChangeOfALargeStepIsTheDifference) {
    const NeoHookean m = lame_from_youngs<NeoHookean>(1e5, 0.4);
    const Tet X = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, 1.0)};
    const Tet x = {Vec3(0.0, 0.0, 0.0), Vec3(1.1, 0.0, 0.0), Vec3(0.0, 0.9, 0.1), Vec3(0.0, 0.0, 1.0)};
    const Tet step = {Vec3(0.0, 0.0, 0.0), Vec3(0.05, 0.0, 0.0), Vec3(0.0, 0.0, 0.0), Vec3(0.0, 0.02, -0.03)};
    const Mat3 Dm_inv = rest_shape_inverse(X.data());
    const double V = rest_volume(X.data());
    Tet moved = x;
    for (int a = 0; a < 4; ++a) {
        moved[a] += step[a];
    }
    const double direct = elastic_element(m, moved.data(), Dm_inv, V, nullptr, nullptr) -
                          elastic_element(m, x.data(), Dm_inv, V, nullptr, nullptr);
    EXPECT_NEAR(elastic_energy_change(m, x.data(), step.data(), Dm_inv, V), direct, 1e-14 * std::abs(direct));
    const Tet inverting = {Vec3(0.0, 0.0, 0.0), Vec3(0.0, 0.0, 0.0), Vec3(0.0, 0.0, 0.0),
                           Vec3(0.0, 0.0, -1.5)};
    EXPECT_TRUE(std::isinf(elastic_energy_change(m, x.data(), inverting.data(), Dm_inv, V)));
}

TEST(ElasticElement, EnergyChangeOfASmallStepMatchesTheDifferenceForEveryMaterial) {
    // A stressed tet (strain about 0.1) and a step with ||dF|| about 5e-4: the stress integral of every
    // material's pk1 matches the energy difference, which is accurate here (its rounding, eps |psi|, is
    // 1e-11 of the change).
    const Tet X = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0), Vec3(0.0, 0.0, 1.0)};
    const Tet x = {Vec3(0.0, 0.0, 0.0), Vec3(1.08, 0.05, 0.0), Vec3(0.0, 0.93, 0.04), Vec3(0.03, 0.0, 1.1)};
    const Tet step = {Vec3(0.0, 0.0, 0.0), Vec3(3e-4, -1e-4, 2e-4), Vec3(-2e-4, 2e-4, 1e-4),
                      Vec3(1e-4, 3e-4, -2e-4)};
    const Mat3 Dm_inv = rest_shape_inverse(X.data());
    const double V = rest_volume(X.data());
    Tet moved = x;
    for (int a = 0; a < 4; ++a) {
        moved[a] += step[a];
    }
    const auto check = [&](const auto& material, const char* name) {
        const double direct = elastic_element(material, moved.data(), Dm_inv, V, nullptr, nullptr) -
                              elastic_element(material, x.data(), Dm_inv, V, nullptr, nullptr);
        const double change = elastic_energy_change(material, x.data(), step.data(), Dm_inv, V);
        EXPECT_NEAR(change, direct, 1e-8 * std::abs(direct)) << name;
    };
    check(lame_from_youngs<NeoHookean>(1e5, 0.4), "neo_hookean");
    check(lame_from_youngs<StableNeoHookean>(1e5, 0.4), "stable_neo_hookean");
    check(lame_from_youngs<FixedCorotated>(1e5, 0.4), "fixed_corotated");
    check(lame_from_youngs<StVK>(1e5, 0.4), "stvk");
    check(lame_from_youngs<LinearElastic>(1e5, 0.4), "linear");
}

} // namespace
