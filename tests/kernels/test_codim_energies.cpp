// Energies of codimensional bodies (shell membranes, hinges, rod stretching and bending) and the
// second-order forward differentiation they use: every gradient and Hessian against central finite
// differences (near rest, large strain, compressed, near-degenerate), PSD projection, rigid motions and
// closed forms (uniaxial membrane stress, the fold angle, the rod's turning angle). Kernels run on the
// default execution space; finite differences are computed on the host.
#include "kernels/hinge_bending.hpp"
#include "kernels/rod_energy.hpp"
#include "kernels/second_order_dual.hpp"
#include "kernels/shell_membrane.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace intact::kernels;
using intact::ExecSpace;
using intact::kernels::test::from_device;
using intact::kernels::test::near;
using intact::kernels::test::Table;
using intact::kernels::test::to_device;

// ---- Element functors: energy of a packed stencil (3 coordinates per vertex) ---------------------

template <class Material> struct Membrane {
    static constexpr int size = 9;
    Material material;
    Mat2 Dm_inv;
    double weight;
    KOKKOS_INLINE_FUNCTION double operator()(const VecN<9>& q, VecN<9>* g, MatN<9>* h, bool project) const {
        const Vec3 x[3] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6)};
        return membrane_element(material, x, Dm_inv, weight, g, h, project);
    }
};

struct Hinge {
    static constexpr int size = 12;
    double rest_angle;
    double weight;
    KOKKOS_INLINE_FUNCTION double
    operator()(const VecN<12>& q, VecN<12>* g, MatN<12>* h, bool project) const {
        const Vec3 x[4] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6), q.segment<3>(9)};
        return hinge_element(x, rest_angle, weight, g, h, project);
    }
};

struct RodStretch {
    static constexpr int size = 6;
    double rest_length;
    double stiffness;
    KOKKOS_INLINE_FUNCTION double operator()(const VecN<6>& q, VecN<6>* g, MatN<6>* h, bool project) const {
        const Vec3 x[2] = {q.segment<3>(0), q.segment<3>(3)};
        return rod_stretch_element(x, rest_length, stiffness, g, h, project);
    }
};

struct RodBend {
    static constexpr int size = 9;
    double rest_curvature;
    double weight;
    KOKKOS_INLINE_FUNCTION double operator()(const VecN<9>& q, VecN<9>* g, MatN<9>* h, bool project) const {
        const Vec3 x[3] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6)};
        return rod_bend_element(x, rest_curvature, weight, g, h, project);
    }
};

// A test function of 3 inputs through every Dual2 operation: f = atan2(x0 x1, √x2 − x0) / x1 + x2.
struct DualProbe {
    static constexpr int size = 3;
    KOKKOS_INLINE_FUNCTION double
    operator()(const VecN<3>& q, VecN<3>* g, MatN<3>* h, bool /*project*/) const {
        const Dual2<3> x0 = Dual2<3>::variable(q(0), 0);
        const Dual2<3> x1 = Dual2<3>::variable(q(1), 1);
        const Dual2<3> x2 = Dual2<3>::variable(q(2), 2);
        const Dual2<3> f = dual_atan2(x0 * x1, dual_sqrt(x2) - x0) / x1 + x2;
        if (g) {
            *g = f.g;
        }
        if (h) {
            *h = f.h;
        }
        return f.v;
    }
};

// ---- Device launch (a free function: a CUDA lambda may not live in a TEST body) ------------------

template <int N> struct Values {
    std::vector<VecN<1>> energy;
    std::vector<VecN<N>> gradient;
    std::vector<MatN<N>> hessian;   // unprojected
    std::vector<MatN<N>> projected; // PSD-projected
};

template <class Element>
Values<Element::size> evaluate(const Element& element, const std::vector<VecN<Element::size>>& cases) {
    constexpr int N = Element::size;
    const Table q = to_device("q", cases);
    const int n = static_cast<int>(cases.size());
    Table energy("energy", n, 1);
    Table gradient("gradient", n, N);
    Table hessian("hessian", n, N * N);
    Table projected("projected", n, N * N);
    Kokkos::parallel_for(
        "intact::test::evaluate_codim_element", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            const VecN<N> qc = Eigen::Map<const VecN<N>>(&q(c, 0));
            VecN<N> g;
            MatN<N> h;
            MatN<N> p;
            energy(c, 0) = element(qc, &g, &h, false);
            element(qc, nullptr, &p, true);
            Eigen::Map<VecN<N>>(&gradient(c, 0)) = g;
            Eigen::Map<MatN<N>>(&hessian(c, 0)) = h;
            Eigen::Map<MatN<N>>(&projected(c, 0)) = p;
        });
    return {from_device<VecN<1>>(energy), from_device<VecN<N>>(gradient), from_device<MatN<N>>(hessian),
            from_device<MatN<N>>(projected)};
}

// ---- Host references -------------------------------------------------------------------------------

// What the projected Hessian must be: not checked (no projection), PSD and some other matrix (the hinge's
// Gauss–Newton term), PSD and equal to the Hessian where that is PSD (a projection in another space, such
// as the membrane's in F, which is PSD but not the nearest PSD matrix), or the nearest PSD matrix.
enum class Projection { none, approximation, psd, nearest };

// Central differences of the energy (gradient) and of the gradient (Hessian), step eps · scale.
template <class Element>
void expect_derivatives_match_fd(const Element& element,
                                 const std::vector<VecN<Element::size>>& cases,
                                 double scale,
                                 double rtol,
                                 Projection projection = Projection::nearest) {
    constexpr int N = Element::size;
    const Values<N> values = evaluate(element, cases);
    const double eps = 1e-6 * scale;
    for (std::size_t c = 0; c < cases.size(); ++c) {
        VecN<N> fd_gradient;
        MatN<N> fd_hessian;
        for (int i = 0; i < N; ++i) {
            VecN<N> plus = cases[c];
            VecN<N> minus = cases[c];
            plus(i) += eps;
            minus(i) -= eps;
            fd_gradient(i) =
                (element(plus, nullptr, nullptr, false) - element(minus, nullptr, nullptr, false)) /
                (2.0 * eps);
            VecN<N> g_plus;
            VecN<N> g_minus;
            element(plus, &g_plus, nullptr, false);
            element(minus, &g_minus, nullptr, false);
            fd_hessian.col(i) = (g_plus - g_minus) / (2.0 * eps);
        }
        EXPECT_TRUE(near(values.gradient[c], fd_gradient, rtol, 1e-9 * values.energy[c](0) / scale))
            << "gradient, case " << c;
        EXPECT_TRUE(near(values.hessian[c], fd_hessian, rtol, 1e-9 * values.energy[c](0) / (scale * scale)))
            << "Hessian, case " << c;
        EXPECT_TRUE(near(values.hessian[c], values.hessian[c].transpose(), 1e-12, 0.0))
            << "symmetry, case " << c;
        if (projection == Projection::none) {
            continue;
        }
        // The projection: PSD, and equal to the Hessian where that is PSD already.
        Eigen::SelfAdjointEigenSolver<MatN<N>> exact(values.hessian[c]);
        Eigen::SelfAdjointEigenSolver<MatN<N>> projected(values.projected[c]);
        const double norm = values.hessian[c].norm();
        EXPECT_GE(projected.eigenvalues().minCoeff(), -1e-10 * norm) << "projected PSD, case " << c;
        if (projection == Projection::approximation) {
            continue;
        }
        if (exact.eigenvalues().minCoeff() >= 0.0) {
            EXPECT_TRUE(near(values.projected[c], values.hessian[c], 1e-9, 1e-12 * norm)) << "case " << c;
        } else if (projection == Projection::nearest) {
            // Nearest PSD matrix: the negative eigenvalues clamped at zero.
            const VecN<N> clamped = exact.eigenvalues().cwiseMax(0.0);
            const MatN<N> reference =
                exact.eigenvectors() * clamped.asDiagonal() * exact.eigenvectors().transpose();
            EXPECT_TRUE(near(values.projected[c], reference, 1e-7, 1e-10 * norm))
                << "nearest PSD, case " << c;
        }
    }
}

// A random proper rotation.
Mat3 random_rotation(std::mt19937& rng) {
    std::normal_distribution<double> normal;
    Eigen::Quaterniond q(normal(rng), normal(rng), normal(rng), normal(rng));
    q.normalize();
    return q.toRotationMatrix();
}

template <int N> VecN<N> perturbed(const VecN<N>& q, double amplitude, std::mt19937& rng) {
    std::uniform_real_distribution<double> uniform(-amplitude, amplitude);
    VecN<N> out = q;
    for (int i = 0; i < N; ++i) {
        out(i) += uniform(rng);
    }
    return out;
}

// Applies x ↦ R x + t to every vertex of a packed stencil.
template <int N> VecN<N> moved_rigidly(const VecN<N>& q, const Mat3& R, const Vec3& t) {
    VecN<N> out;
    for (int a = 0; a < N / 3; ++a) {
        out.template segment<3>(3 * a) = R * q.template segment<3>(3 * a) + t;
    }
    return out;
}

// Rest triangle in a tilted plane (not the xy plane, so the rest frame is exercised).
VecN<9> rest_triangle() {
    VecN<9> q;
    q << 0.1, 0.0, 0.05, 1.1, 0.2, -0.1, 0.3, 0.9, 0.2;
    return q;
}

template <class Material> Membrane<Material> membrane_on(const Material& material, const VecN<9>& rest) {
    const Vec3 X[3] = {rest.segment<3>(0), rest.segment<3>(3), rest.segment<3>(6)};
    return {material, triangle_rest_inverse(X), 2e-3 * triangle_area(X)};
}

// ---- Tests ------------------------------------------------------------------------------------------

TEST(SecondOrderDual, MatchesFiniteDifferencesThroughEveryOperation) {
    std::vector<VecN<3>> cases = {VecN<3>(0.3, 1.2, 2.0), VecN<3>(-0.7, 0.4, 0.5), VecN<3>(1.5, -2.0, 4.0)};
    expect_derivatives_match_fd(DualProbe{}, cases, 1.0, 1e-6, Projection::none);
}

TEST(ShellMembrane, RestFrameReproducesTheRestTriangle) {
    const VecN<9> rest = rest_triangle();
    const auto element = membrane_on(MembraneStVK{1e5, 3e4}, rest);
    const Values<9> values = evaluate(element, {rest});
    EXPECT_NEAR(values.energy[0](0), 0.0, 1e-14);
    EXPECT_LT(values.gradient[0].norm(), 1e-10);
}

template <class Material> void check_membrane_derivatives(const Material& material) {
    std::mt19937 rng(7);
    const VecN<9> rest = rest_triangle();
    const auto element = membrane_on(material, rest);
    std::vector<VecN<9>> cases;
    cases.push_back(perturbed(rest, 0.02, rng)); // near rest
    cases.push_back(perturbed(moved_rigidly(rest, random_rotation(rng), Vec3(1, 2, 3)), 0.3, rng)); // large
    VecN<9> compressed = rest;
    compressed.segment<3>(3) = rest.segment<3>(0) + 0.5 * (rest.segment<3>(3) - rest.segment<3>(0));
    cases.push_back(compressed); // edge halved: compression
    VecN<9> sliver = rest;
    sliver.segment<3>(6) = 0.5 * (rest.segment<3>(0) + rest.segment<3>(3)) + Vec3(0.0, 0.0, 0.02);
    cases.push_back(sliver); // near-degenerate (area ratio about 0.04)
    expect_derivatives_match_fd(element, cases, 1.0, 2e-5, Projection::psd);
}

TEST(ShellMembrane, StVKDerivativesMatchFiniteDifferences) {
    check_membrane_derivatives(MembraneStVK{1e5, 3e4});
}

TEST(ShellMembrane, NeoHookeanDerivativesMatchFiniteDifferences) {
    check_membrane_derivatives(MembraneNeoHookean{1e5, 3e4});
}

TEST(ShellMembrane, EnergyIsInvariantUnderRigidMotionAndOutOfPlaneFlips) {
    std::mt19937 rng(3);
    const VecN<9> rest = rest_triangle();
    const auto element = membrane_on(MembraneNeoHookean{2e5, 5e4}, rest);
    const VecN<9> deformed = perturbed(rest, 0.1, rng);
    const VecN<9> moved = moved_rigidly(deformed, random_rotation(rng), Vec3(-1, 0.5, 2));
    const Values<9> values =
        evaluate(element, {deformed, moved, moved_rigidly(rest, random_rotation(rng), Vec3(3, 3, 3))});
    EXPECT_NEAR(values.energy[1](0), values.energy[0](0), 1e-12 * values.energy[0](0));
    EXPECT_NEAR(values.energy[2](0), 0.0, 1e-12);
    // Net force and torque vanish (translation and rotation invariance).
    Vec3 force = Vec3::Zero();
    Vec3 torque = Vec3::Zero();
    for (int a = 0; a < 3; ++a) {
        force += values.gradient[1].segment<3>(3 * a);
        torque += cross(Vec3(moved.segment<3>(3 * a)), Vec3(values.gradient[1].segment<3>(3 * a)));
    }
    EXPECT_LT(force.norm(), 1e-9 * values.gradient[1].norm());
    EXPECT_LT(torque.norm(), 1e-9 * values.gradient[1].norm());
}

// Uniaxial stress: stretch s along x, lateral stretch t chosen so that S_yy = 0. With the plane-stress λ,
// StVK gives S_xx = E (s² − 1)/2 and the neo-Hookean membrane P_xx = μ(s − 1/s) + λ ln(st)/s.
TEST(ShellMembrane, UniaxialStressMatchesTheClosedForm) {
    const double E = 2e6;
    const double nu = 0.3;
    const double mu = E / (2.0 * (1.0 + nu));
    const double lambda3d = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    const double lambda = plane_stress_lambda(mu, lambda3d);
    EXPECT_NEAR(lambda, E * nu / (1.0 - nu * nu), 1e-9 * E);
    const MembraneStVK stvk{mu, lambda};
    for (double s : {1.01, 1.2, 1.5}) {
        const double exx = 0.5 * (s * s - 1.0);
        const double eyy = -lambda * exx / (2.0 * mu + lambda);
        const double t = std::sqrt(1.0 + 2.0 * eyy);
        Mat32 F = Mat32::Zero();
        F(0, 0) = s;
        F(1, 1) = t;
        const Mat32 P = stvk.pk1(F);
        EXPECT_NEAR(P(0, 0), s * E * exx, 1e-9 * E) << "s = " << s;
        EXPECT_NEAR(P(1, 1), 0.0, 1e-9 * E);
        EXPECT_NEAR(P(0, 1), 0.0, 1e-9 * E);
    }
    const MembraneNeoHookean nh{mu, lambda};
    Mat32 F = Mat32::Zero();
    F(0, 0) = 1.3;
    F(1, 1) = 0.9;
    const Mat32 P = nh.pk1(F);
    EXPECT_NEAR(P(0, 0), mu * (1.3 - 1.0 / 1.3) + lambda * std::log(1.3 * 0.9) / 1.3, 1e-9 * E);
    EXPECT_NEAR(P(1, 1), mu * (0.9 - 1.0 / 0.9) + lambda * std::log(1.3 * 0.9) / 0.9, 1e-9 * E);
}

// Two unit right triangles on the edge (0,0,0)-(1,0,0), folded by a known angle α about it.
VecN<12> folded_hinge(double alpha) {
    VecN<12> q;
    q.segment<3>(0) = Vec3(0, 0, 0);
    q.segment<3>(3) = Vec3(1, 0, 0);
    q.segment<3>(6) = Vec3(0.4, 1, 0);
    q.segment<3>(9) = Vec3(0.6, -std::cos(alpha), std::sin(alpha));
    return q;
}

TEST(HingeBending, AngleIsTheFoldAngleWithItsSign) {
    for (double alpha : {0.0, 0.3, -0.8, 2.5}) {
        const VecN<12> q = folded_hinge(alpha);
        const Vec3 x[4] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6), q.segment<3>(9)};
        EXPECT_NEAR(std::fabs(dihedral_angle(x)), std::fabs(alpha), 1e-14) << alpha;
    }
    const VecN<12> a = folded_hinge(0.3);
    const VecN<12> b = folded_hinge(-0.3);
    const Vec3 xa[4] = {a.segment<3>(0), a.segment<3>(3), a.segment<3>(6), a.segment<3>(9)};
    const Vec3 xb[4] = {b.segment<3>(0), b.segment<3>(3), b.segment<3>(6), b.segment<3>(9)};
    EXPECT_NEAR(dihedral_angle(xa), -dihedral_angle(xb), 1e-14);
    // Rigid motions do not change it.
    std::mt19937 rng(5);
    const VecN<12> m = moved_rigidly(a, random_rotation(rng), Vec3(1, -2, 0.5));
    const Vec3 xm[4] = {m.segment<3>(0), m.segment<3>(3), m.segment<3>(6), m.segment<3>(9)};
    EXPECT_NEAR(dihedral_angle(xm), dihedral_angle(xa), 1e-13);
}

TEST(HingeBending, DerivativesMatchFiniteDifferences) {
    std::mt19937 rng(11);
    const VecN<12> rest = folded_hinge(0.2);
    const Vec3 X[4] = {rest.segment<3>(0), rest.segment<3>(3), rest.segment<3>(6), rest.segment<3>(9)};
    const Hinge element{dihedral_angle(X), hinge_weight(X, 0.7)};
    std::vector<VecN<12>> cases = {
        perturbed(rest, 0.05, rng), perturbed(folded_hinge(1.4), 0.05, rng),
        perturbed(folded_hinge(-2.0), 0.05, rng),
        moved_rigidly(perturbed(folded_hinge(0.9), 0.1, rng), random_rotation(rng), Vec3(2, 0, 1))};
    // Near-degenerate: triangle B almost collapsed onto the edge.
    VecN<12> thin = folded_hinge(0.5);
    thin.segment<3>(9) = Vec3(0.6, -0.01 * std::cos(0.5), 0.01 * std::sin(0.5));
    cases.push_back(thin);
    expect_derivatives_match_fd(element, cases, 1.0, 2e-5, Projection::approximation);
    // The gradient alone (closed form) and the Gauss–Newton Hessian 2w ∇θ∇θᵀ, against the gradient the
    // forward differentiation gives with the exact Hessian.
    const Values<12> values = evaluate(element, cases);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const Vec3 x[4] = {cases[c].segment<3>(0), cases[c].segment<3>(3), cases[c].segment<3>(6),
                           cases[c].segment<3>(9)};
        VecN<12> closed;
        element(cases[c], &closed, nullptr, true);
        EXPECT_TRUE(near(closed, values.gradient[c], 1e-10, 1e-14)) << "closed-form gradient, case " << c;
        const VecN<12> angle = dihedral_angle_gradient(x);
        const MatN<12> gauss_newton = 2.0 * element.weight * angle * angle.transpose();
        EXPECT_TRUE(near(values.projected[c], gauss_newton, 1e-10, 1e-14)) << "Gauss-Newton, case " << c;
        // The angle's closed-form Hessian against forward differentiation.
        const Dual2<12> dual = dihedral_angle_dual(x);
        EXPECT_TRUE(near(dihedral_angle_hessian(x), dual.h, 1e-10, 1e-12 * dual.h.norm()))
            << "closed-form Hessian of the angle, case " << c;
    }
    // The flat rest state of a flat hinge has zero energy and gradient.
    const VecN<12> flat = folded_hinge(0.0);
    const Hinge flat_element{0.0, 1.0};
    const Values<12> flat_values = evaluate(flat_element, {flat});
    EXPECT_EQ(flat_values.energy[0](0), 0.0);
    EXPECT_LT(flat_values.gradient[0].norm(), 1e-14);
}

TEST(HingeBending, WeightIsHalfTheStiffnessTimesEdgeSquaredOverArea) {
    const VecN<12> q = folded_hinge(0.0);
    const Vec3 X[4] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6), q.segment<3>(9)};
    // |ē| = 1, both triangles of area 1/2: w = k_b · 1 / (2 · 1).
    EXPECT_NEAR(hinge_weight(X, 3.0), 1.5, 1e-14);
}

TEST(RodEnergy, StretchDerivativesMatchFiniteDifferencesAndHookesLaw) {
    std::mt19937 rng(13);
    const RodStretch element{0.5, 200.0};
    VecN<6> rest;
    rest << 0.0, 0.0, 0.0, 0.3, 0.4, 0.0; // length 0.5
    VecN<6> stretched = rest;
    stretched.segment<3>(3) *= 1.2;
    VecN<6> compressed = rest;
    compressed.segment<3>(3) *= 0.7;
    expect_derivatives_match_fd(element, {perturbed(rest, 0.05, rng), stretched, compressed}, 1.0, 2e-5);
    // Tension k_s ε along the segment.
    const Values<6> values = evaluate(element, {stretched});
    EXPECT_NEAR(values.gradient[0].segment<3>(3).norm(), 200.0 * 0.2, 1e-10);
    EXPECT_NEAR(values.energy[0](0), 0.5 * 200.0 * 0.5 * 0.04, 1e-12);
}

VecN<9> bent_rod(double phi, double l0, double l1) {
    VecN<9> q;
    q.segment<3>(0) = Vec3(-l0, 0, 0);
    q.segment<3>(3) = Vec3(0, 0, 0);
    q.segment<3>(6) = l1 * Vec3(std::cos(phi), std::sin(phi), 0);
    return q;
}

TEST(RodEnergy, CurvatureIsTwiceTheTangentOfHalfTheTurningAngle) {
    for (double phi : {0.0, 0.1, 1.0, 2.5}) {
        const VecN<9> q = bent_rod(phi, 0.3, 0.7);
        const Vec3 x[3] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6)};
        EXPECT_NEAR(rod_curvature(x), 2.0 * std::tan(0.5 * phi), 1e-12) << phi;
    }
    const VecN<9> q = bent_rod(0.0, 0.3, 0.7);
    const Vec3 X[3] = {q.segment<3>(0), q.segment<3>(3), q.segment<3>(6)};
    EXPECT_NEAR(rod_bend_weight(X, 2.0), 2.0 / (2.0 * 0.5), 1e-14);
}

TEST(RodEnergy, BendDerivativesMatchFiniteDifferences) {
    std::mt19937 rng(17);
    // Straight rest state (smooth energy).
    const RodBend straight{0.0, 0.8};
    expect_derivatives_match_fd(straight,
                                {perturbed(bent_rod(0.0, 0.3, 0.7), 0.02, rng),
                                 perturbed(bent_rod(0.7, 0.3, 0.7), 0.05, rng),
                                 moved_rigidly(bent_rod(2.0, 0.5, 0.4), random_rotation(rng), Vec3(1, 1, 1))},
                                1.0, 2e-5);
    // Curved rest state, away from the straight cone.
    const RodBend curved{2.0 * std::tan(0.25), 0.8};
    expect_derivatives_match_fd(curved,
                                {perturbed(bent_rod(0.5, 0.3, 0.7), 0.02, rng),
                                 perturbed(bent_rod(1.5, 0.3, 0.7), 0.05, rng),
                                 perturbed(bent_rod(0.05, 0.3, 0.7), 0.001, rng)},
                                1.0, 2e-5);
    // Folded back: infinite energy.
    const VecN<9> folded = bent_rod(M_PI, 0.3, 0.7);
    const Vec3 x[3] = {folded.segment<3>(0), folded.segment<3>(3), folded.segment<3>(6)};
    EXPECT_FALSE(is_finite(rod_bend_element(x, 0.0, 1.0, nullptr, nullptr)));
}

} // namespace
