// The barrier with a contact offset ξ (pair_potential.hpp): b acts on the squared gap (d − ξ)², so its
// value, gradient and (unprojected) Hessian over the stencil are checked against central finite
// differences of the value and the gradient, for point–triangle (interior, edge and vertex cases),
// edge–edge and point–plane pairs; it is +∞ where d ≤ ξ, 0 where d ≥ ξ + d̂, and ξ = 0 is the pair
// without an offset, bit for bit. Kernels run on the default execution space.
#include "src/contact/pair_potential.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

namespace {

using intact::ExecSpace;
using intact::contact::BarrierPhi;
using intact::contact::HessianProjection;
using intact::kernels::Mat12;
using intact::kernels::Vec12;
using intact::kernels::Vec3;
using intact::kernels::test::Table;

constexpr int k_plane = -1; // a point–plane pair: x0 the point, x1 a point of the plane z = x1.z, n = +z

struct Evaluation {
    double value = 0.0;
    Vec12 gradient = Vec12::Zero();
    Mat12 hessian = Mat12::Zero();
};

// ---- Device launch (free function: a CUDA lambda may not live in a TEST body) -------------------

/// w b of each stencil (12 coordinates, vertex-major) as a pair of `kind` (k_point_triangle,
/// k_edge_edge or k_plane) with offset ξ, d̂² = s_hat, its gradient and unprojected Hessian.
std::vector<Evaluation> evaluate(
    int kind, const std::vector<Vec12>& stencils, double offset, double s_hat, bool with_offset_argument) {
    const Table in = intact::kernels::test::to_device("stencils", stencils);
    const int n = static_cast<int>(stencils.size());
    Table out("out", n, 1 + 12 + 144);
    Kokkos::parallel_for(
        "intact::test::offset_pair_potential", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            Vec3 x[4];
            intact::kernels::test::unpack_row(in, c, x);
            Vec12 g;
            Mat12 H;
            double value = 0.0;
            const BarrierPhi phi{s_hat};
            if (kind == k_plane) {
                value = intact::contact::plane_potential(x[0], x[1], Vec3(0.0, 0.0, 1.0), phi,
                                                         intact::contact::k_hessian, g, H, offset);
            } else if (with_offset_argument) {
                value = intact::contact::pair_potential(kind, x, phi, 1e-9, intact::contact::k_hessian,
                                                        HessianProjection::none, g, H, offset);
            } else {
                value = intact::contact::pair_potential(kind, x, phi, 1e-9, intact::contact::k_hessian,
                                                        HessianProjection::none, g, H);
            }
            out(c, 0) = value;
            for (int i = 0; i < 12; ++i) {
                out(c, 1 + i) = g(i);
                for (int j = 0; j < 12; ++j) {
                    out(c, 13 + 12 * i + j) = H(i, j);
                }
            }
        });
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::vector<Evaluation> result(stencils.size());
    for (int c = 0; c < n; ++c) {
        auto& e = result[static_cast<std::size_t>(c)];
        e.value = host(c, 0);
        for (int i = 0; i < 12; ++i) {
            e.gradient(i) = host(c, 1 + i);
            for (int j = 0; j < 12; ++j) {
                e.hessian(i, j) = host(c, 13 + 12 * i + j);
            }
        }
    }
    return result;
}

Vec12 stencil(const std::array<Vec3, 4>& x) {
    return intact::kernels::test::pack(x);
}

/// Central differences of the value (against the gradient) and of the gradient (against the Hessian)
/// at x with step h; the largest relative errors, relative to the largest entry of each.
void expect_derivatives_match(
    int kind, const Vec12& x, double offset, double s_hat, double h, const char* what) {
    std::vector<Vec12> points{x};
    for (int i = 0; i < 12; ++i) {
        for (const double sign : {1.0, -1.0}) {
            Vec12 y = x;
            y(i) += sign * h;
            points.push_back(y);
        }
    }
    const auto e = evaluate(kind, points, offset, s_hat, true);
    ASSERT_TRUE(std::isfinite(e[0].value) && e[0].value > 0.0) << what << ": the pair must be active";
    Vec12 fd_gradient;
    Mat12 fd_hessian;
    for (int i = 0; i < 12; ++i) {
        fd_gradient(i) = (e[1 + 2 * i].value - e[2 + 2 * i].value) / (2.0 * h);
        fd_hessian.col(i) = (e[1 + 2 * i].gradient - e[2 + 2 * i].gradient) / (2.0 * h);
    }
    const double g_scale = e[0].gradient.cwiseAbs().maxCoeff();
    const double h_scale = e[0].hessian.cwiseAbs().maxCoeff();
    const double g_error = (fd_gradient - e[0].gradient).cwiseAbs().maxCoeff() / g_scale;
    const double h_error = (fd_hessian - e[0].hessian).cwiseAbs().maxCoeff() / h_scale;
    EXPECT_GT(g_scale, 0.0) << what;
    EXPECT_LT(g_error, 1e-6) << what << ": gradient vs central differences of the value";
    EXPECT_LT(h_error, 1e-6) << what << ": Hessian vs central differences of the gradient";
}

const double k_offset = 0.01; // ξ (m)
const double k_dhat = 0.005;  // d̂ (m)

// A point at distance ξ + d̂/2 from the unit right triangle in the plane z = 0 in three closest-feature
// cases, an edge crossing another at that distance, and a point above a plane.
std::array<Vec3, 4> point_triangle(const Vec3& p) {
    return {p, Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0)};
}

// ---- Tests -----------------------------------------------------------------------------------------

TEST(PairOffset, DerivativesMatchFiniteDifferences) {
    const double d = k_offset + 0.5 * k_dhat;
    const double s_hat = k_dhat * k_dhat;
    const double h = 1e-7;
    using intact::contact::k_edge_edge;
    using intact::contact::k_point_triangle;
    expect_derivatives_match(k_point_triangle, stencil(point_triangle(Vec3(0.2, 0.3, d))), k_offset, s_hat, h,
                             "point-triangle interior");
    const double r = d / std::sqrt(2.0);
    expect_derivatives_match(k_point_triangle, stencil(point_triangle(Vec3(0.4, -r, r))), k_offset, s_hat, h,
                             "point-triangle edge case");
    const double q = d / std::sqrt(3.0);
    expect_derivatives_match(k_point_triangle, stencil(point_triangle(Vec3(-q, -q, q))), k_offset, s_hat, h,
                             "point-triangle vertex case");
    expect_derivatives_match(
        k_edge_edge,
        stencil({Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.1, 0.0), Vec3(0.5, -0.5, d), Vec3(0.45, 0.5, d + 0.001)}),
        k_offset, s_hat, h, "edge-edge interior");
    expect_derivatives_match(k_plane,
                             stencil({Vec3(0.3, 0.2, d), Vec3(1.0, -2.0, 0.0), Vec3::Zero(), Vec3::Zero()}),
                             k_offset, s_hat, h, "point-plane");
}

TEST(PairOffset, BarrierActsOnTheGapOfTheOffsetSurfaces) {
    const double s_hat = k_dhat * k_dhat;
    using intact::contact::k_point_triangle;
    // Heights above the triangle: inside the offset, on it, just inside and just outside ξ + d̂.
    const std::vector<double> heights{0.5 * k_offset, k_offset, k_offset + 0.999 * k_dhat,
                                      k_offset + 1.001 * k_dhat, k_offset + 0.5 * k_dhat};
    std::vector<Vec12> points;
    for (const double z : heights) {
        points.push_back(stencil(point_triangle(Vec3(0.2, 0.3, z))));
    }
    const auto e = evaluate(k_point_triangle, points, k_offset, s_hat, true);
    EXPECT_TRUE(std::isinf(e[0].value) && e[0].value > 0.0);
    EXPECT_TRUE(std::isinf(e[1].value) && e[1].value > 0.0);
    EXPECT_GT(e[2].value, 0.0);
    EXPECT_EQ(e[3].value, 0.0);
    // The value at gap g is the unoffset barrier's at distance g: b(g², d̂²).
    const double g = 0.5 * k_dhat;
    EXPECT_NEAR(e[4].value, intact::kernels::barrier(g * g, s_hat), 1e-12 * std::abs(e[4].value));
    // The force pushes the point up, away from the triangle.
    EXPECT_LT(e[4].gradient(2), 0.0);
}

TEST(PairOffset, ZeroOffsetIsThePairWithoutOffsetBitForBit) {
    const double s_hat = k_dhat * k_dhat;
    std::vector<Vec12> points;
    for (const double z : {0.001, 0.002, 0.004}) {
        points.push_back(stencil(point_triangle(Vec3(0.2, 0.3, z))));
        points.push_back(stencil(point_triangle(Vec3(-0.001, 0.3, z))));
    }
    using intact::contact::k_point_triangle;
    const auto with = evaluate(k_point_triangle, points, 0.0, s_hat, true);
    const auto without = evaluate(k_point_triangle, points, 0.0, s_hat, false);
    for (std::size_t c = 0; c < points.size(); ++c) {
        EXPECT_EQ(with[c].value, without[c].value);
        EXPECT_TRUE(with[c].gradient == without[c].gradient);
        EXPECT_TRUE(with[c].hessian == without[c].hessian);
    }
}

} // namespace
