// Additive CCD (kernels/ccd_additive.hpp): the closest-point distances it advances with, hand-made
// trajectories (grazing, tunnelling, crossing and parallel edges, degenerate motion, touching starts,
// min_distance), the iteration cap, and random trajectories against a dense sampling of the distance.
// CCD kernels run on the default execution space.
#include "kernels/ccd_additive.hpp"
#include "kernels/small_matrix.hpp"
#include "src/contact/pair_toi.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace intact::kernels;
using intact::ExecSpace;
using intact::kernels::test::Table;

enum class Kind { point_triangle, edge_edge, point_edge, point_point };

/// One CCD query: vertices at t = 0 and t = 1 (layout as accd::PairKind; unused entries zero).
struct CcdQuery {
    Kind kind = Kind::point_triangle;
    std::array<Vec3, 4> x0{Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
    std::array<Vec3, 4> x1{Vec3::Zero(), Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
    double min_distance = 0.0;
    double t_max = 1.0;
    int max_iterations = k_accd_max_iterations;
};

struct CcdAnswer {
    bool hit = false;
    double toi = -1.0;
};

constexpr int k_row_width = 28; // kind, 24 coordinates, min_distance, t_max, max_iterations

// ---- Device launch (a free function: a CUDA lambda may not live in a TEST body) ------------------

std::vector<CcdAnswer> run_ccd(const std::vector<CcdQuery>& queries) {
    const int n = static_cast<int>(queries.size());
    Table in("ccd_in", n, k_row_width);
    Table out("ccd_out", n, 2);
    auto host = Kokkos::create_mirror_view(in);
    for (int c = 0; c < n; ++c) {
        const CcdQuery& q = queries[c];
        host(c, 0) = static_cast<double>(q.kind);
        for (int v = 0; v < 4; ++v) {
            for (int k = 0; k < 3; ++k) {
                host(c, 1 + 3 * v + k) = q.x0[v](k);
                host(c, 13 + 3 * v + k) = q.x1[v](k);
            }
        }
        host(c, 25) = q.min_distance;
        host(c, 26) = q.t_max;
        host(c, 27) = q.max_iterations;
    }
    Kokkos::deep_copy(in, host);
    Kokkos::parallel_for(
        "intact::test::run_ccd", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 a[4];
            Vec3 b[4];
            for (int v = 0; v < 4; ++v) {
                a[v] = Vec3(in(c, 1 + 3 * v), in(c, 2 + 3 * v), in(c, 3 + 3 * v));
                b[v] = Vec3(in(c, 13 + 3 * v), in(c, 14 + 3 * v), in(c, 15 + 3 * v));
            }
            const double xi = in(c, 25);
            const double t_max = in(c, 26);
            const int iterations = static_cast<int>(in(c, 27));
            const int kind = static_cast<int>(in(c, 0));
            const double s = k_accd_conservative_rescaling;
            double toi = -1.0;
            bool hit = false;
            if (kind == static_cast<int>(Kind::point_triangle)) {
                hit = point_triangle_ccd(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], xi, t_max, toi, s,
                                         iterations);
            } else if (kind == static_cast<int>(Kind::edge_edge)) {
                hit = edge_edge_ccd(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], xi, t_max, toi, s,
                                    iterations);
            } else if (kind == static_cast<int>(Kind::point_edge)) {
                hit = point_edge_ccd(a[0], a[1], a[2], b[0], b[1], b[2], xi, t_max, toi, s, iterations);
            } else {
                hit = point_point_ccd(a[0], a[1], b[0], b[1], xi, t_max, toi, s, iterations);
            }
            out(c, 0) = hit ? 1.0 : 0.0;
            out(c, 1) = toi;
        });
    auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::vector<CcdAnswer> answers(n);
    for (int c = 0; c < n; ++c) {
        answers[c].hit = result(c, 0) != 0.0;
        answers[c].toi = result(c, 1);
    }
    return answers;
}

CcdAnswer run_one(const CcdQuery& q) {
    return run_ccd({q})[0];
}

// ---- Host reference: the pair distance along the trajectory --------------------------------------

double distance_at(const CcdQuery& q, double t) {
    Vec3 x[4];
    for (int v = 0; v < 4; ++v) {
        x[v] = (1.0 - t) * q.x0[v] + t * q.x1[v];
    }
    switch (q.kind) {
    case Kind::point_triangle:
        return std::sqrt(accd::pair_distance_squared<accd::PairKind::point_triangle>(x));
    case Kind::edge_edge:
        return std::sqrt(accd::pair_distance_squared<accd::PairKind::edge_edge>(x));
    case Kind::point_edge:
        return std::sqrt(accd::pair_distance_squared<accd::PairKind::point_edge>(x));
    default:
        return std::sqrt(accd::pair_distance_squared<accd::PairKind::point_point>(x));
    }
}

/// Checks the CCD contract against the distance sampled at `samples` + 1 times in [0, t_max]:
/// a sample at distance <= min_distance needs a hit with toi <= its time; a hit needs every sample
/// before toi to stay farther than min_distance; no hit reports toi = t_max.
::testing::AssertionResult honours_contract(const CcdQuery& q, const CcdAnswer& a, int samples) {
    if (a.hit && !(a.toi >= 0.0 && a.toi <= q.t_max)) {
        return ::testing::AssertionFailure() << "toi " << a.toi << " outside [0, " << q.t_max << "]";
    }
    if (!a.hit && a.toi != q.t_max) {
        return ::testing::AssertionFailure() << "no hit but toi " << a.toi << " != t_max";
    }
    for (int k = 0; k <= samples; ++k) {
        const double t = q.t_max * k / samples;
        const double d = distance_at(q, t);
        if (d <= q.min_distance && (!a.hit || a.toi > t)) {
            return ::testing::AssertionFailure()
                   << "distance " << d << " <= " << q.min_distance << " at t = " << t
                   << " but hit = " << a.hit << ", toi = " << a.toi;
        }
        if (a.hit && t < a.toi && d <= q.min_distance) {
            return ::testing::AssertionFailure() << "contact at t = " << t << " before toi " << a.toi;
        }
    }
    return ::testing::AssertionSuccess();
}

CcdQuery point_triangle(const Vec3& p0, const Vec3& p1, double min_distance = 0.0) {
    CcdQuery q;
    q.kind = Kind::point_triangle;
    q.x0 = {p0, Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
    q.x1 = {p1, Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)};
    q.min_distance = min_distance;
    return q;
}

CcdQuery edge_edge(const std::array<Vec3, 4>& x0, const std::array<Vec3, 4>& x1, double min_distance = 0.0) {
    CcdQuery q;
    q.kind = Kind::edge_edge;
    q.x0 = x0;
    q.x1 = x1;
    q.min_distance = min_distance;
    return q;
}

// ---- Closest-point distances ----------------------------------------------------------------------

/// Brute-force minimum over a grid of the primitives' parameters (an upper bound of the distance that
/// converges with the grid).
double brute_point_triangle(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, int n) {
    double best = infinity();
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; i + j <= n; ++j) {
            const double b1 = double(i) / n;
            const double b2 = double(j) / n;
            best = std::min(best, (p - ((1 - b1 - b2) * t0 + b1 * t1 + b2 * t2)).norm());
        }
    }
    return best;
}

double brute_edge_edge(const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, int n) {
    double best = infinity();
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            const double s = double(i) / n;
            const double t = double(j) / n;
            best = std::min(best, ((1 - s) * a0 + s * a1 - (1 - t) * b0 - t * b1).norm());
        }
    }
    return best;
}

TEST(AccdDistance, HandCases) {
    double b1;
    double b2;
    // Above the interior, beside an edge, beyond a vertex.
    EXPECT_DOUBLE_EQ(
        accd::point_triangle_closest(Vec3(0.2, 0.3, 2), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), b1, b2),
        4.0);
    EXPECT_DOUBLE_EQ(b1, 0.2);
    EXPECT_DOUBLE_EQ(b2, 0.3);
    EXPECT_DOUBLE_EQ(
        accd::point_triangle_closest(Vec3(0.5, -1, 1), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), b1, b2),
        2.0);
    EXPECT_DOUBLE_EQ(b1, 0.5);
    EXPECT_DOUBLE_EQ(b2, 0.0);
    EXPECT_DOUBLE_EQ(
        accd::point_triangle_closest(Vec3(2, 2, 0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), b1, b2),
        4.5); // nearest point (0.5, 0.5, 0) on the hypotenuse
    // Degenerate triangle (all on a line): the distance to the segment it covers.
    EXPECT_DOUBLE_EQ(
        accd::point_triangle_closest(Vec3(0.5, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(2, 0, 0), b1, b2),
        1.0);
    double ga;
    double gb;
    // Crossing edges, parallel overlapping edges, parallel disjoint edges, a zero-length edge.
    EXPECT_DOUBLE_EQ(
        accd::edge_edge_closest(Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0), ga, gb), 1.0);
    EXPECT_DOUBLE_EQ(ga, 0.5);
    EXPECT_DOUBLE_EQ(gb, 0.5);
    EXPECT_DOUBLE_EQ(
        accd::edge_edge_closest(Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(1, 0, 0.5), Vec3(3, 0, 0.5), ga, gb),
        0.25);
    EXPECT_DOUBLE_EQ(
        accd::edge_edge_closest(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(3, 0, 0), Vec3(4, 0, 0), ga, gb), 4.0);
    EXPECT_DOUBLE_EQ(
        accd::edge_edge_closest(Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 1, 0), Vec3(0.5, 1, 0), ga, gb), 1.0);
}

TEST(AccdDistance, MatchesBruteForceOnRandomPrimitives) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const auto random_point = [&] { return Vec3(u(rng), u(rng), u(rng)); };
    const int n = 300;
    for (int trial = 0; trial < 200; ++trial) {
        const Vec3 p = random_point();
        const Vec3 t0 = random_point();
        const Vec3 t1 = random_point();
        const Vec3 t2 = random_point();
        double b1;
        double b2;
        const double d = std::sqrt(accd::point_triangle_closest(p, t0, t1, t2, b1, b2));
        const double brute = brute_point_triangle(p, t0, t1, t2, n);
        // The grid minimum is within one grid cell (diameter <= 2 * 2 sqrt(3) / n) of the true one.
        EXPECT_LE(d, brute + 1e-14);
        EXPECT_GE(d, brute - 8.0 / n);
        EXPECT_NEAR(d, (p - ((1 - b1 - b2) * t0 + b1 * t1 + b2 * t2)).norm(), 1e-12);

        const Vec3 a0 = random_point();
        const Vec3 a1 = random_point();
        double ga;
        double gb;
        const double e = std::sqrt(accd::edge_edge_closest(a0, a1, t0, t1, ga, gb));
        const double brute_e = brute_edge_edge(a0, a1, t0, t1, n);
        EXPECT_LE(e, brute_e + 1e-14);
        EXPECT_GE(e, brute_e - 8.0 / n);
        EXPECT_NEAR(e, ((1 - ga) * a0 + ga * a1 - (1 - gb) * t0 - gb * t1).norm(), 1e-12);
    }
}

// ---- Hand-made trajectories ----------------------------------------------------------------------

TEST(Accd, GrazingPointMissesTriangleEdge) {
    // Falls past the edge y = 0 at distance 0.2 (more than the gap 0.1 d0): certainly no hit.
    const CcdQuery q = point_triangle(Vec3(0.5, -0.2, 1), Vec3(0.5, -0.2, -1));
    const CcdAnswer a = run_one(q);
    EXPECT_FALSE(a.hit);
    EXPECT_EQ(a.toi, 1.0);
    // Slides in the plane along the edge, 0.2 outside it.
    const CcdAnswer b = run_one(point_triangle(Vec3(-0.5, -0.2, 0), Vec3(1.5, -0.2, 0)));
    EXPECT_FALSE(b.hit);
    // Misses by 1e-6 only: ACCD may report a (conservative) hit, but never one at or after the closest
    // approach (t = 0.5) and never with a contact before toi.
    const CcdQuery close = point_triangle(Vec3(0.5, -1e-6, 1), Vec3(0.5, -1e-6, -1));
    const CcdAnswer c = run_one(close);
    EXPECT_TRUE(honours_contract(close, c, 4000));
    if (c.hit) {
        EXPECT_LT(c.toi, 0.5);
    }
}

TEST(Accd, FastPointTunnellingThroughThinTriangleHits) {
    CcdQuery q;
    q.kind = Kind::point_triangle;
    // A sliver (1e-3 wide) and a point crossing it at 1000 units per step: contact at t = 1/1001.
    q.x0 = {Vec3(0.5, 2e-4, 1), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 1e-3, 0)};
    q.x1 = {Vec3(0.5, 2e-4, -1000), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 1e-3, 0)};
    const CcdAnswer a = run_one(q);
    ASSERT_TRUE(a.hit);
    EXPECT_LE(a.toi, 1.0 / 1001.0);
    EXPECT_GT(a.toi, 0.8 / 1001.0);
    EXPECT_TRUE(honours_contract(q, a, 100000));
}

TEST(Accd, PointMovingInsideTrianglePlaneHits) {
    // Exactly in the plane z = 0, entering the triangle through the edge x = 0 at t = 0.5.
    const CcdQuery q = point_triangle(Vec3(-1, 0.25, 0), Vec3(1, 0.25, 0));
    const CcdAnswer a = run_one(q);
    ASSERT_TRUE(a.hit);
    EXPECT_LE(a.toi, 0.5);
    EXPECT_GT(a.toi, 0.4);
}

TEST(Accd, CrossingEdgesHit) {
    // Edge a sweeps down through the static edge b; they cross at t = 0.5.
    const CcdQuery q = edge_edge({Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0)},
                                 {Vec3(-1, 0, -1), Vec3(1, 0, -1), Vec3(0, -1, 0), Vec3(0, 1, 0)});
    const CcdAnswer a = run_one(q);
    ASSERT_TRUE(a.hit);
    EXPECT_LE(a.toi, 0.5);
    EXPECT_GE(a.toi, 0.4);
    EXPECT_TRUE(honours_contract(q, a, 10000));
}

TEST(Accd, ParallelEdgesSlidingPastDoNotHit) {
    // Along their common direction at constant distance 0.1.
    const CcdQuery along = edge_edge({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(-0.5, 0, 0.1), Vec3(0.5, 0, 0.1)},
                                     {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, 0.1), Vec3(1.5, 0, 0.1)});
    const CcdAnswer a = run_one(along);
    EXPECT_FALSE(a.hit);
    EXPECT_EQ(a.toi, 1.0);
    // Sideways, passing over at height 0.3 (d0 = sqrt(1.09), gap 0.1 d0 < 0.3).
    const CcdQuery across = edge_edge({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0.3), Vec3(1, -1, 0.3)},
                                      {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0.3), Vec3(1, 1, 0.3)});
    EXPECT_FALSE(run_one(across).hit);
}

TEST(Accd, ParallelEdgesCollide) {
    // Parallel, overlapping in x, edge b comes down from z = 1 to z = -1: contact at t = 0.5.
    const CcdQuery q = edge_edge({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, 1), Vec3(1.5, 0, 1)},
                                 {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, 0, -1), Vec3(1.5, 0, -1)});
    const CcdAnswer a = run_one(q);
    ASSERT_TRUE(a.hit);
    EXPECT_LE(a.toi, 0.5);
    EXPECT_GE(a.toi, 0.4);
}

TEST(Accd, NoRelativeMotionAtPositiveDistanceDoesNotHit) {
    EXPECT_FALSE(run_one(point_triangle(Vec3(0.2, 0.2, 1e-3), Vec3(0.2, 0.2, 1e-3))).hit);
    // A common translation of all four vertices changes no distance.
    const Vec3 shift(3, -2, 5);
    const std::array<Vec3, 4> x0{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0.5, -1, 1e-4), Vec3(0.5, 1, 1e-4)};
    std::array<Vec3, 4> x1;
    for (int v = 0; v < 4; ++v) {
        x1[v] = x0[v] + shift;
    }
    const CcdAnswer a = run_one(edge_edge(x0, x1));
    EXPECT_FALSE(a.hit);
    EXPECT_EQ(a.toi, 1.0);
}

TEST(Accd, StartingInContactHitsAtZero) {
    // The point on the triangle, moving away; the edges touching at their midpoints, separating.
    const CcdAnswer a = run_one(point_triangle(Vec3(0.2, 0.2, 0), Vec3(0.2, 0.2, 1)));
    EXPECT_TRUE(a.hit);
    EXPECT_EQ(a.toi, 0.0);
    const CcdAnswer b = run_one(edge_edge({Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3(0, -1, 0), Vec3(0, 1, 0)},
                                          {Vec3(-1, 0, 1), Vec3(1, 0, 1), Vec3(0, -1, 0), Vec3(0, 1, 0)}));
    EXPECT_TRUE(b.hit);
    EXPECT_EQ(b.toi, 0.0);
    // Within min_distance from the start.
    const CcdAnswer c = run_one(point_triangle(Vec3(0.2, 0.2, 0.05), Vec3(0.2, 0.2, 1), 0.1));
    EXPECT_TRUE(c.hit);
    EXPECT_EQ(c.toi, 0.0);
}

TEST(Accd, MinDistanceStopsEarlier) {
    // Head-on: the point reaches the plane at t = 0.5, and distance 0.2 at t = 0.4.
    const CcdQuery touch = point_triangle(Vec3(0.2, 0.2, 1), Vec3(0.2, 0.2, -1));
    const CcdQuery thick = point_triangle(Vec3(0.2, 0.2, 1), Vec3(0.2, 0.2, -1), 0.2);
    const CcdAnswer a = run_one(touch);
    const CcdAnswer b = run_one(thick);
    ASSERT_TRUE(a.hit);
    ASSERT_TRUE(b.hit);
    EXPECT_LE(a.toi, 0.5);
    EXPECT_LE(b.toi, 0.4);
    EXPECT_LT(b.toi, a.toi);
    EXPECT_GT(b.toi, 0.3);
    EXPECT_TRUE(honours_contract(thick, b, 10000));
}

TEST(Accd, TmaxLimitsTheTestedInterval) {
    // Contact at t = 0.5 is outside [0, 0.3].
    CcdQuery q = point_triangle(Vec3(0.2, 0.2, 1), Vec3(0.2, 0.2, -1));
    q.t_max = 0.3;
    const CcdAnswer a = run_one(q);
    EXPECT_FALSE(a.hit);
    EXPECT_EQ(a.toi, 0.3);
}

TEST(Accd, IterationCapFallsBackToAConservativeHit) {
    // Sliding over the triangle at constant height 0.01: about 60 steps of 0.018 and no hit; with 3
    // steps allowed, the result is a hit at the time reached (0.054), before which there is no contact.
    CcdQuery q = point_triangle(Vec3(0.1, 0.1, 0.01), Vec3(0.6, 0.1, 0.01));
    q.max_iterations = 3;
    const CcdAnswer a = run_one(q);
    EXPECT_TRUE(a.hit);
    EXPECT_NEAR(a.toi, 3 * 0.018, 1e-6);
    q.max_iterations = k_accd_max_iterations;
    EXPECT_FALSE(run_one(q).hit);
}

TEST(Accd, PointEdgeAndPointPoint) {
    CcdQuery pe;
    pe.kind = Kind::point_edge;
    pe.x0 = {Vec3(0.5, 1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3::Zero()};
    pe.x1 = {Vec3(0.5, -1, 0), Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3::Zero()};
    const CcdAnswer a = run_one(pe);
    ASSERT_TRUE(a.hit);
    EXPECT_LE(a.toi, 0.5);
    pe.x0[0] = Vec3(1.5, 1, 0);
    pe.x1[0] = Vec3(1.5, -1, 0);
    EXPECT_FALSE(run_one(pe).hit);

    CcdQuery pp;
    pp.kind = Kind::point_point;
    pp.x0 = {Vec3(-1, 0, 0), Vec3(1, 0, 0), Vec3::Zero(), Vec3::Zero()};
    pp.x1 = {Vec3(1, 0, 0), Vec3(-1, 0, 0), Vec3::Zero(), Vec3::Zero()};
    const CcdAnswer b = run_one(pp);
    ASSERT_TRUE(b.hit);
    EXPECT_LE(b.toi, 0.5);
    pp.x1 = {Vec3(1, 1, 0), Vec3(-1, -1, 0), Vec3::Zero(), Vec3::Zero()};
    EXPECT_FALSE(run_one(pp).hit); // closest approach 0.89 at t = 0.4, more than the gap 0.2
}

// ---- Random trajectories against dense sampling ---------------------------------------------------

/// Random queries in three equal groups: free trajectories in [-1, 1]^3 (min_distance 0, 0.01, 0.1 or
/// 0.3); trajectories built to touch at a known time t* (returned in `contact_time`, negative for the
/// others); and near misses: a touching trajectory whose first primitive (the point, or edge a) is
/// shifted by up to 0.2, tested with a min_distance in [0, 0.2] (contacts and misses near the threshold).
std::vector<CcdQuery> random_queries(Kind kind, int count, unsigned seed, std::vector<double>& contact_time) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto random_point = [&] { return Vec3(u(rng), u(rng), u(rng)); };
    const double thickness[4] = {0.0, 0.01, 0.1, 0.3};
    std::vector<CcdQuery> queries;
    contact_time.clear();
    for (int c = 0; c < count; ++c) {
        CcdQuery q;
        q.kind = kind;
        for (int v = 0; v < 4; ++v) {
            q.x0[v] = random_point();
            q.x1[v] = random_point();
        }
        double t_star = -1.0;
        if (c % 3 == 0) {
            q.min_distance = thickness[(c / 3) % 4];
        } else {
            // Make vertex 0 (PT) or a point of edge a (EE) meet the other primitive at t*.
            t_star = 0.1 + 0.8 * unit(rng);
            const auto at = [&](int v) { return (1.0 - t_star) * q.x0[v] + t_star * q.x1[v]; };
            if (kind == Kind::point_triangle) {
                double b1 = unit(rng);
                double b2 = unit(rng);
                if (b1 + b2 > 1.0) {
                    b1 = 1.0 - b1;
                    b2 = 1.0 - b2;
                }
                const Vec3 target = (1 - b1 - b2) * at(1) + b1 * at(2) + b2 * at(3);
                q.x1[0] = q.x0[0] + (target - q.x0[0]) / t_star;
            } else {
                const double ga = 0.1 + 0.9 * unit(rng); // away from 0: a1 at t = 1 stays bounded
                const double gb = unit(rng);
                const Vec3 target = (1 - gb) * at(2) + gb * at(3);
                // (1 - ga) a0(t*) + ga a1(t*) = target, solved for a1 at t = 1.
                const Vec3 a1_star = (target - (1 - ga) * at(0)) / ga;
                q.x1[1] = q.x0[1] + (a1_star - q.x0[1]) / t_star;
            }
            if (c % 3 == 2) {
                const Vec3 shift = 0.2 * unit(rng) * random_point().normalized();
                const int moved = kind == Kind::point_triangle ? 1 : 2;
                for (int v = 0; v < moved; ++v) {
                    q.x0[v] += shift;
                    q.x1[v] += shift;
                }
                q.min_distance = 0.2 * unit(rng);
                t_star = -1.0;
            }
        }
        queries.push_back(q);
        contact_time.push_back(t_star);
    }
    return queries;
}

void check_random(Kind kind, unsigned seed) {
    std::vector<double> contact_time;
    const std::vector<CcdQuery> queries = random_queries(kind, 900, seed, contact_time);
    const std::vector<CcdAnswer> answers = run_ccd(queries);
    int hits = 0;
    int sampled_contacts = 0;
    for (std::size_t c = 0; c < queries.size(); ++c) {
        for (int k = 0; k <= 200; ++k) {
            if (distance_at(queries[c], k / 200.0) <= queries[c].min_distance) {
                ++sampled_contacts;
                break;
            }
        }
        EXPECT_TRUE(honours_contract(queries[c], answers[c], 2000)) << "query " << c;
        if (contact_time[c] >= 0.0) {
            EXPECT_TRUE(answers[c].hit) << "query " << c << " touches at t = " << contact_time[c];
            EXPECT_LE(answers[c].toi, contact_time[c]) << "query " << c;
        }
        hits += answers[c].hit;
    }
    // Both branches of the contract are exercised: contacts the sampling sees (beyond the constructed
    // ones) and misses.
    EXPECT_GT(sampled_contacts, static_cast<int>(queries.size()) / 6);
    EXPECT_LT(hits, static_cast<int>(queries.size()));
}

TEST(PairStepBound, APairWithinTheClosestGapComesNoCloser) {
    // A point above the plane z = 0 at x = 1: 1e-13 m is within k_closest_gap (1e-12 of 1 m).
    using intact::contact::pair_time_of_impact_at;
    const Vec3 up(0.0, 0.0, 1.0), zero = Vec3::Zero();
    const auto plane_bound = [&](double z, double dz) {
        const Vec3 start[4] = {Vec3(1.0, 0.0, z), zero, zero, zero};
        const Vec3 step[4] = {Vec3(0.0, 0.0, dz), zero, zero, zero};
        return pair_time_of_impact_at(intact::contact::k_point_plane, start, step, up, z);
    };
    EXPECT_DOUBLE_EQ(plane_bound(1e-3, -1e-2), 0.08); // 80% of the gap
    EXPECT_EQ(plane_bound(1e-13, -1e-2), 0.0);        // held
    EXPECT_EQ(plane_bound(1e-13, 1e-2), 1.0);         // free to leave
    // Without the floor, 300 steps that each close 80% of the gap took it to round-off.
    double z = 1e-3;
    for (int k = 0; k < 300; ++k) {
        z += plane_bound(z, -1.0) * -1.0;
    }
    EXPECT_GT(z, 1e-14);
    // A point 1e-13 m above a triangle's interior: held when it approaches, free when it leaves.
    const auto triangle_bound = [&](double z0, double dz) {
        const Vec3 start[4] = {Vec3(0.2, 0.2, z0), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0),
                               Vec3(0.0, 1.0, 0.0)};
        const Vec3 step[4] = {Vec3(0.0, 0.0, dz), zero, zero, zero};
        return pair_time_of_impact_at(intact::contact::k_point_triangle, start, step, up, z0);
    };
    EXPECT_EQ(triangle_bound(1e-13, -1e-2), 0.0); // held (its end, through the triangle, is farther)
    EXPECT_EQ(triangle_bound(1e-13, 1e-2), 1.0);
    const double bound = triangle_bound(1e-3, -1e-2); // ACCD keeps at least 20% of the gap
    EXPECT_GT(bound, 0.05);
    EXPECT_LE(bound, 0.08);
}

TEST(Accd, RandomPointTriangleTrajectoriesMatchDenseSampling) {
    check_random(Kind::point_triangle, 11);
}

TEST(Accd, RandomEdgeEdgeTrajectoriesMatchDenseSampling) {
    check_random(Kind::edge_edge, 12);
}

} // namespace
