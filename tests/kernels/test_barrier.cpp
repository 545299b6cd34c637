// The IPC barrier on squared distances: hand values, b' and b'' against central finite differences,
// sign and convexity inside the support, C^2 clamping at s = ŝ, blow-up at s -> 0, and the out-of-domain
// convention for s <= 0. Kernels run on the default execution space.
#include "kernels/barrier.hpp"
#include "kernels/small_matrix.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace intact::kernels;
using intact::ExecSpace;
using intact::kernels::test::from_device;
using intact::kernels::test::Table;
using intact::kernels::test::to_device;

// ---- Device launch (free function: a CUDA lambda may not live in a TEST body) -------------------

/// (b, b', b'') at each (s, ŝ).
std::vector<Vec3> evaluate_barrier(const std::vector<VecN<2>>& s_and_s_hat) {
    const Table in = to_device("s", s_and_s_hat);
    const int n = static_cast<int>(s_and_s_hat.size());
    Table out("b", n, 3);
    Kokkos::parallel_for(
        "intact::test::evaluate_barrier", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            out(c, 0) = barrier(in(c, 0), in(c, 1));
            out(c, 1) = barrier_first_derivative(in(c, 0), in(c, 1));
            out(c, 2) = barrier_second_derivative(in(c, 0), in(c, 1));
        });
    return from_device<Vec3>(out);
}

const double k_s_hats[] = {1e-8, 1e-4, 1.0, 25.0};

// ---- Tests -----------------------------------------------------------------------------------------

TEST(Barrier, HandValues) {
    std::vector<VecN<2>> in;
    for (const double s_hat : k_s_hats) {
        in.push_back(VecN<2>(0.5 * s_hat, s_hat));
        in.push_back(VecN<2>(0.25 * s_hat, s_hat));
    }
    const std::vector<Vec3> b = evaluate_barrier(in);
    for (std::size_t c = 0; c < in.size(); c += 2) {
        const double s_hat = in[c](1);
        // s = ŝ/2 (ŝ/s = 2): b = ŝ^2 ln2 / 4, b' = (ŝ/2)(2 ln(1/2) - 2 + 1), b'' = (2 + 2) 2 - 2 ln(1/2) - 3.
        EXPECT_NEAR(b[c](0), 0.25 * s_hat * s_hat * std::log(2.0), 1e-15 * s_hat * s_hat);
        EXPECT_NEAR(b[c](1), 0.5 * s_hat * (-2.0 * std::log(2.0) - 1.0), 1e-15 * s_hat);
        EXPECT_NEAR(b[c](2), 8.0 + 2.0 * std::log(2.0) - 3.0, 1e-14);
        // s = ŝ/4 (ŝ/s = 4): b = (9/16) ŝ^2 ln 4, b'' = (4 + 2) 4 - 2 ln(1/4) - 3.
        EXPECT_NEAR(b[c + 1](0), 9.0 / 16.0 * s_hat * s_hat * std::log(4.0), 1e-15 * s_hat * s_hat);
        EXPECT_NEAR(b[c + 1](2), 6.0 * 4.0 + 2.0 * std::log(4.0) - 3.0, 1e-13);
    }
}

TEST(Barrier, DerivativesMatchFiniteDifferencesAndHaveTheRightSigns) {
    std::vector<VecN<2>> in;
    std::vector<double> ratios;
    for (const double s_hat : k_s_hats) {
        for (double r = 1e-6; r < 1.0; r *= 1.7) {
            in.push_back(VecN<2>(r * s_hat, s_hat));
            ratios.push_back(r);
        }
        for (const double r : {0.9, 0.99, 0.999, 0.9999}) {
            in.push_back(VecN<2>(r * s_hat, s_hat));
            ratios.push_back(r);
        }
    }
    const std::vector<Vec3> b = evaluate_barrier(in);
    for (std::size_t c = 0; c < in.size(); ++c) {
        const double s = in[c](0);
        const double s_hat = in[c](1);
        SCOPED_TRACE("s / s_hat = " + std::to_string(ratios[c]) + ", s_hat = " + std::to_string(s_hat));
        EXPECT_GT(b[c](0), 0.0);
        EXPECT_LT(b[c](1), 0.0) << "b' < 0 inside: contact forces only push";
        EXPECT_GT(b[c](2), 0.0) << "b'' > 0 inside: convex";
        const double h = 1e-7 * s;
        const double fd1 = (barrier(s + h, s_hat) - barrier(s - h, s_hat)) / (2.0 * h);
        const double fd2 =
            (barrier_first_derivative(s + h, s_hat) - barrier_first_derivative(s - h, s_hat)) / (2.0 * h);
        // Round-off of the differences is ~1e-16 |b| / h; the scale below covers it.
        EXPECT_NEAR(b[c](1), fd1, 1e-6 * std::abs(b[c](1)) + 1e-9 * std::abs(b[c](0)) / s) << "b'";
        EXPECT_NEAR(b[c](2), fd2, 1e-6 * std::abs(b[c](2)) + 1e-9 * std::abs(b[c](1)) / s) << "b''";
    }
}

TEST(Barrier, ClampedC2AtSHatAndUnboundedAtZero) {
    for (const double s_hat : k_s_hats) {
        SCOPED_TRACE("s_hat = " + std::to_string(s_hat));
        std::vector<VecN<2>> in;
        for (const double r : {1.0, 1.5, 1e3, 1.0 - 1e-4, 1.0 - 1e-6, 1e-100, 1e-300}) {
            in.push_back(VecN<2>(r * s_hat, s_hat));
        }
        in.push_back(VecN<2>(0.0, s_hat));
        in.push_back(VecN<2>(-1e-3 * s_hat, s_hat));
        const std::vector<Vec3> b = evaluate_barrier(in);
        for (int c = 0; c < 3; ++c) {
            EXPECT_EQ(b[c](0), 0.0);
            EXPECT_EQ(b[c](1), 0.0);
            EXPECT_EQ(b[c](2), 0.0);
        }
        // Approaching ŝ from inside, with δ = 1 - s/ŝ: b ≈ ŝ^2 δ^3, b' ≈ -3 ŝ δ^2, b'' ≈ 6 δ, so all three
        // vanish continuously at the clamp.
        for (int c = 3; c < 5; ++c) {
            const double delta = 1.0 - in[c](0) / s_hat;
            EXPECT_LE(std::abs(b[c](0)), 2.0 * s_hat * s_hat * delta * delta * delta);
            EXPECT_LE(std::abs(b[c](1)), 4.0 * s_hat * delta * delta);
            EXPECT_LE(std::abs(b[c](2)), 7.0 * delta);
        }
        // s -> 0+: b grows like ŝ^2 ln(ŝ / s) without bound; b' -> -inf.
        EXPECT_GT(b[5](0), 200.0 * s_hat * s_hat);
        EXPECT_GT(b[6](0), b[5](0));
        EXPECT_LT(b[6](1), b[5](1));
        EXPECT_TRUE(std::isfinite(b[6](0)));
        // s <= 0 is outside the domain (touching or intersecting): +inf, -inf, +inf.
        for (int c = 7; c < 9; ++c) {
            EXPECT_TRUE(std::isinf(b[c](0)) && b[c](0) > 0.0);
            EXPECT_TRUE(std::isinf(b[c](1)) && b[c](1) < 0.0);
            EXPECT_TRUE(std::isinf(b[c](2)) && b[c](2) > 0.0);
        }
    }
}

TEST(Barrier, IsMonotoneDecreasingOnASweep) {
    const double s_hat = 1e-4;
    std::vector<VecN<2>> in;
    for (int k = 1; k <= 2000; ++k) {
        in.push_back(VecN<2>(s_hat * k / 2000.0, s_hat));
    }
    const std::vector<Vec3> b = evaluate_barrier(in);
    for (std::size_t c = 1; c < in.size(); ++c) {
        EXPECT_LT(b[c](0), b[c - 1](0)) << "at s = " << in[c](0);
        EXPECT_GT(b[c](1), b[c - 1](1)) << "b' increasing (b convex) at s = " << in[c](0);
    }
}

} // namespace
