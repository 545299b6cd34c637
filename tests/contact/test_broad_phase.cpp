// Broad phase (src/contact/broad_phase.hpp): SpatialHash against brute-force O(n²) box overlap on random
// and hand-made boxes (points, touching and identical boxes, boxes on cell boundaries, boxes covering many
// cells or more than the cap, negative and far-away coordinates, empty boxes), for query and query_self,
// at several cell sizes and caps; sortedness, no duplicates, repeatability; the device-result queries; and
// the box builders (all rows and subsets, capacity kept).
#include "src/contact/broad_phase.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace {

using intact::MemSpace;
using intact::contact::BoxList;
using intact::contact::SpatialHash;

struct Box {
    std::array<double, 3> lo, hi;
};
using Pairs = std::vector<std::array<int, 2>>;

// ---- Host ↔ device (free functions: kernels are not launched from TEST bodies) --------------------

BoxList to_device(const std::vector<Box>& boxes) {
    const int n = static_cast<int>(boxes.size());
    BoxList list{Kokkos::View<double* [3], MemSpace>("lo", n), Kokkos::View<double* [3], MemSpace>("hi", n)};
    auto lo = Kokkos::create_mirror_view(list.lo);
    auto hi = Kokkos::create_mirror_view(list.hi);
    for (int i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
            lo(i, d) = boxes[static_cast<std::size_t>(i)].lo[static_cast<std::size_t>(d)];
            hi(i, d) = boxes[static_cast<std::size_t>(i)].hi[static_cast<std::size_t>(d)];
        }
    }
    Kokkos::deep_copy(list.lo, lo);
    Kokkos::deep_copy(list.hi, hi);
    return list;
}

std::vector<Box> to_host(const BoxList& list) {
    auto lo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.lo);
    auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.hi);
    std::vector<Box> boxes(static_cast<std::size_t>(list.size()));
    for (int i = 0; i < list.size(); ++i) {
        for (int d = 0; d < 3; ++d) {
            boxes[static_cast<std::size_t>(i)].lo[static_cast<std::size_t>(d)] = lo(i, d);
            boxes[static_cast<std::size_t>(i)].hi[static_cast<std::size_t>(d)] = hi(i, d);
        }
    }
    return boxes;
}

Pairs query(SpatialHash& hash, const std::vector<Box>& a, const std::vector<Box>& b) {
    return hash.query(to_device(a), to_device(b));
}

Pairs query_self(SpatialHash& hash, const std::vector<Box>& a) {
    return hash.query_self(to_device(a));
}

using Points = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;

Points points_to_device(const std::vector<std::array<double, 3>>& xs) {
    Points view("points", xs.size());
    auto host = Kokkos::create_mirror_view(view);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        for (int d = 0; d < 3; ++d) {
            host(i, d) = xs[i][static_cast<std::size_t>(d)];
        }
    }
    Kokkos::deep_copy(view, host);
    return view;
}

template <int K>
Kokkos::View<int* [K], MemSpace> ids_to_device(const std::vector<std::array<int, K>>& ids) {
    Kokkos::View<int* [K], MemSpace> view("ids", ids.size());
    auto host = Kokkos::create_mirror_view(view);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        for (int k = 0; k < K; ++k) {
            host(i, k) = ids[i][static_cast<std::size_t>(k)];
        }
    }
    Kokkos::deep_copy(view, host);
    return view;
}

// Boxes of primitives with K vertices through the device builders.
template <int K>
std::vector<Box> built_boxes(const std::vector<std::array<int, K>>& ids,
                             const std::vector<std::array<double, 3>>& xs,
                             const std::vector<std::array<double, 3>>& steps,
                             double r) {
    const Points x = points_to_device(xs);
    const Points step = steps.empty() ? Points() : points_to_device(steps);
    BoxList boxes;
    if constexpr (K == 1) {
        intact::contact::vertex_boxes(x, step, r, boxes);
    } else if constexpr (K == 2) {
        intact::contact::edge_boxes(ids_to_device<2>(ids), x, step, r, boxes);
    } else {
        intact::contact::triangle_boxes(ids_to_device<3>(ids), x, step, r, boxes);
    }
    return to_host(boxes);
}

// Pairs of a device-result query, copied to the host, with the check that each first index's pairs are
// contiguous and in ascending order of the first index (the documented grouping); sorted afterwards.
Pairs device_query(SpatialHash& hash, const std::vector<Box>& a, const std::vector<Box>* b, bool& grouped) {
    const BoxList la = to_device(a);
    const intact::contact::DevicePairs found =
        b ? hash.query_on_device(la, to_device(*b)) : hash.query_self_on_device(la);
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), found.pairs);
    Pairs pairs(static_cast<std::size_t>(found.count));
    grouped = true;
    for (int k = 0; k < found.count; ++k) {
        pairs[static_cast<std::size_t>(k)] = {host(k, 0), host(k, 1)};
        grouped = grouped && (k == 0 || host(k - 1, 0) <= host(k, 0));
    }
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

// Boxes of the subset `ids` of the vertices / edges / triangles through the subset builders, into a list
// that already has rows (its capacity is kept).
template <int K>
std::vector<Box> built_subset_boxes(const std::vector<std::array<int, K>>& items,
                                    const std::vector<int>& ids,
                                    const std::vector<std::array<double, 3>>& xs,
                                    const std::vector<std::array<double, 3>>& steps,
                                    double r,
                                    BoxList& boxes) {
    const Points x = points_to_device(xs);
    const Points step = steps.empty() ? Points() : points_to_device(steps);
    Kokkos::View<int*, MemSpace> subset("ids", ids.size());
    Kokkos::deep_copy(
        subset, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(ids.data(), ids.size()));
    if constexpr (K == 1) {
        intact::contact::vertex_boxes(subset, x, step, r, boxes);
    } else {
        Kokkos::View<int* [K], Kokkos::LayoutRight, MemSpace> rows("rows", items.size());
        auto host = Kokkos::create_mirror_view(rows);
        for (std::size_t i = 0; i < items.size(); ++i) {
            for (int k = 0; k < K; ++k) {
                host(i, k) = items[i][static_cast<std::size_t>(k)];
            }
        }
        Kokkos::deep_copy(rows, host);
        if constexpr (K == 2) {
            intact::contact::edge_boxes(rows, subset, x, step, r, boxes);
        } else {
            intact::contact::triangle_boxes(rows, subset, x, step, r, boxes);
        }
    }
    return to_host(boxes);
}

// ---- Reference ------------------------------------------------------------------------------------

// Closed boxes overlap when their intersection is not empty (an empty box, lo > hi, overlaps nothing).
bool overlap(const Box& a, const Box& b) {
    for (std::size_t d = 0; d < 3; ++d) {
        if (!(std::max(a.lo[d], b.lo[d]) <= std::min(a.hi[d], b.hi[d]))) {
            return false;
        }
    }
    return true;
}

Pairs brute(const std::vector<Box>& a, const std::vector<Box>& b) {
    Pairs pairs;
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (std::size_t j = 0; j < b.size(); ++j) {
            if (overlap(a[i], b[j])) {
                pairs.push_back({static_cast<int>(i), static_cast<int>(j)});
            }
        }
    }
    return pairs;
}

Pairs brute_self(const std::vector<Box>& a) {
    Pairs pairs;
    for (std::size_t i = 0; i < a.size(); ++i) {
        for (std::size_t j = i + 1; j < a.size(); ++j) {
            if (overlap(a[i], a[j])) {
                pairs.push_back({static_cast<int>(i), static_cast<int>(j)});
            }
        }
    }
    return pairs;
}

// The first difference between two pair lists, for a readable failure.
::testing::AssertionResult same_pairs(const Pairs& got, const Pairs& want) {
    for (std::size_t k = 0; k < std::min(got.size(), want.size()); ++k) {
        if (got[k] != want[k]) {
            return ::testing::AssertionFailure()
                   << "pair " << k << ": got (" << got[k][0] << ", " << got[k][1] << "), want (" << want[k][0]
                   << ", " << want[k][1] << ")";
        }
    }
    if (got.size() != want.size()) {
        return ::testing::AssertionFailure() << got.size() << " pairs, want " << want.size();
    }
    return ::testing::AssertionSuccess();
}

// A mix of boxes around the origin (negative coordinates included), in cell units: mostly about one cell,
// some points (zero size), some spanning many cells, some larger than `huge` cells, copies of earlier
// boxes, and boxes touching an earlier one exactly on one face. With `snap`, corners lie on a grid of
// half cells so that faces and points sit exactly on cell boundaries.
std::vector<Box> random_boxes(int n, double cell, double huge, bool snap, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double extent = 0.5 * std::cbrt(static_cast<double>(n)) * cell; // about one box per cell
    auto coordinate = [&](double x) { return snap ? 0.5 * cell * std::round(2.0 * x / cell) : x; };
    std::vector<Box> boxes;
    for (int i = 0; i < n; ++i) {
        const double kind = unit(rng);
        Box box{};
        if (!boxes.empty() && kind < 0.08) { // a copy
            box = boxes[static_cast<std::size_t>(rng() % boxes.size())];
        } else if (!boxes.empty() && kind < 0.2) { // touching an earlier box on one face
            const Box& other = boxes[static_cast<std::size_t>(rng() % boxes.size())];
            const std::size_t axis = rng() % 3;
            for (std::size_t d = 0; d < 3; ++d) {
                const double size = coordinate(unit(rng) * cell);
                box.lo[d] = coordinate(other.lo[d] + unit(rng) * (other.hi[d] - other.lo[d]));
                box.hi[d] = box.lo[d] + size;
            }
            box.lo[axis] = other.hi[axis];
            box.hi[axis] = other.hi[axis] + coordinate(unit(rng) * cell);
        } else {
            double size = cell;
            if (kind < 0.3) {
                size = 0.0; // a point
            } else if (kind < 0.33) {
                size = 4.0 * cell; // dozens of cells
            } else if (kind < 0.34) {
                size = huge * cell; // over the cap
            }
            for (std::size_t d = 0; d < 3; ++d) {
                box.lo[d] = coordinate(-extent + 2.0 * extent * unit(rng));
                box.hi[d] = box.lo[d] + coordinate(size * unit(rng));
            }
        }
        boxes.push_back(box);
    }
    return boxes;
}

bool sorted_unique(const Pairs& pairs) {
    for (std::size_t k = 1; k < pairs.size(); ++k) {
        if (!(pairs[k - 1] < pairs[k])) {
            return false;
        }
    }
    return true;
}

// ---- Tests ----------------------------------------------------------------------------------------

TEST(BroadPhase, MatchesBruteForceOnRandomBoxes) {
    int checked = 0;
    for (const bool snap : {false, true}) {
        for (const double cell : {0.25, 1.0}) {
            for (const long long cap : {1LL, 27LL, 512LL}) {
                const auto a = random_boxes(700, 1.0, 30.0, snap, 17u + static_cast<unsigned>(cap));
                const auto b = random_boxes(500, 1.0, 30.0, snap, 91u + static_cast<unsigned>(cap));
                SpatialHash hash(cell, cap);
                const Pairs ab = query(hash, a, b);
                const Pairs want_ab = brute(a, b);
                EXPECT_TRUE(same_pairs(ab, want_ab))
                    << "query, cell " << cell << ", cap " << cap << ", snap " << snap;
                const Pairs aa = query_self(hash, a);
                const Pairs want_aa = brute_self(a);
                EXPECT_TRUE(same_pairs(aa, want_aa))
                    << "query_self, cell " << cell << ", cap " << cap << ", snap " << snap;
                EXPECT_TRUE(sorted_unique(ab));
                EXPECT_TRUE(sorted_unique(aa));
                // The cases are not trivial: pairs exist, and many more than the boxes themselves.
                EXPECT_GT(want_ab.size(), a.size());
                EXPECT_GT(want_aa.size(), a.size());
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 12);
}

TEST(BroadPhase, HandMadeBoxes) {
    // Cell 1: boxes on cell faces and corners, touching only at a face, an edge or a corner, points on a
    // box face, identical boxes, a box inside another, and boxes apart by a tiny gap.
    const std::vector<Box> boxes = {
        {{0, 0, 0}, {1, 1, 1}},                   // 0
        {{1, 0, 0}, {2, 1, 1}},                   // 1: face with 0
        {{1, 1, 1}, {2, 2, 2}},                   // 2: corner with 0, edge with 1
        {{0, 0, 0}, {1, 1, 1}},                   // 3: copy of 0
        {{0.5, 0.5, 1}, {0.5, 0.5, 1}},           // 4: point on 0's top face
        {{-1, -1, -1}, {-1e-12, 5, 5}},           // 5: a hair short of 0
        {{-3, -3, -3}, {3, 3, 3}},                // 6: holds everything but 7
        {{2 + 1e-9, 0, 0}, {3, 1, 1}},            // 7: a hair off 1 (and inside 6 from x = 2)
        {{-2.5, -2.5, -2.5}, {-2.5, -2.5, -2.5}}, // 8: point inside 6 only
    };
    const Pairs want = brute_self(boxes);
    for (const double cell : {1.0, 0.5, 0.3, 7.0}) {
        SpatialHash hash(cell, 8);
        EXPECT_TRUE(same_pairs(query_self(hash, boxes), want)) << "cell " << cell;
        EXPECT_TRUE(same_pairs(query(hash, boxes, boxes), brute(boxes, boxes))) << "cell " << cell;
    }
    // The face, edge, corner and point contacts are there; the near misses are not.
    const auto has = [&](int i, int j) {
        return std::find(want.begin(), want.end(), std::array<int, 2>{i, j}) != want.end();
    };
    EXPECT_TRUE(has(0, 1) && has(0, 2) && has(1, 2) && has(0, 3) && has(0, 4) && has(6, 8));
    EXPECT_FALSE(has(0, 5) || has(1, 7) || has(0, 8) || has(7, 8));
}

TEST(BroadPhase, FarAwayAndEmptyBoxes) {
    // Boxes 2^21 cells apart share packed cell keys; coordinates beyond 2^40 cells are clamped; a box with
    // lo > hi is empty.
    const double wrap = 2097152.0; // 2^21
    const std::vector<Box> boxes = {
        {{0.2, 0.2, 0.2}, {0.8, 0.8, 0.8}},
        {{wrap + 0.2, 0.2, 0.2}, {wrap + 0.8, 0.8, 0.8}},
        {{0.2, wrap + 0.2, -wrap + 0.2}, {0.8, wrap + 0.8, -wrap + 0.8}},
        {{1e15, 1e15, 1e15}, {1e15 + 1, 1e15, 1e15}},
        {{1e15 + 0.5, 1e15, 1e15}, {1e15 + 2, 1e15, 1e15}},
        {{2e15, 1e15, 1e15}, {2e15, 1e15, 1e15}},
        {{-1e20, 0.5, 0.5}, {1e20, 0.5, 0.5}},
        {{0.5, 0.5, 0.5}, {0.4, 0.6, 0.6}}, // empty
        {{0.3, 0.3, 0.3}, {0.3, 0.3, 0.3}},
    };
    SpatialHash hash(1.0);
    const Pairs want = brute_self(boxes);
    EXPECT_TRUE(same_pairs(query_self(hash, boxes), want));
    EXPECT_TRUE(same_pairs(query(hash, boxes, boxes), brute(boxes, boxes)));
    EXPECT_EQ(want, (Pairs{{0, 6}, {0, 8}, {1, 6}, {3, 4}}));
}

TEST(BroadPhase, EmptyListsAndNoOverlap) {
    SpatialHash hash(0.5);
    const std::vector<Box> none;
    const std::vector<Box> one = {{{0, 0, 0}, {1, 1, 1}}};
    const std::vector<Box> apart = {{{0, 0, 0}, {1, 1, 1}}, {{3, 0, 0}, {4, 1, 1}}};
    EXPECT_TRUE(query(hash, none, one).empty());
    EXPECT_TRUE(query(hash, one, none).empty());
    EXPECT_TRUE(query_self(hash, none).empty());
    EXPECT_TRUE(query_self(hash, one).empty());
    EXPECT_TRUE(query_self(hash, apart).empty());
    EXPECT_EQ(query(hash, one, one), (Pairs{{0, 0}}));
}

TEST(BroadPhase, RepeatableAndReusable) {
    // The same hash object, reused over lists of different sizes (growing and shrinking its buffers),
    // gives identical answers every time.
    const auto big = random_boxes(2000, 1.0, 30.0, false, 5u);
    const auto small = random_boxes(50, 1.0, 30.0, true, 6u);
    SpatialHash hash(0.7);
    const Pairs first = query_self(hash, big);
    const Pairs first_small = query_self(hash, small);
    ASSERT_FALSE(first.empty());
    ASSERT_FALSE(first_small.empty());
    for (int r = 0; r < 4; ++r) {
        EXPECT_EQ(query_self(hash, big), first);
        EXPECT_EQ(query_self(hash, small), first_small);
        EXPECT_TRUE(same_pairs(query(hash, small, big), brute(small, big)));
    }
    EXPECT_TRUE(same_pairs(first, brute_self(big)));
}

TEST(BroadPhase, BuildersSweepAndInflate) {
    const std::vector<std::array<double, 3>> xs = {{0, 0, 0}, {1, -2, 0.5}, {-1, 3, 2}, {0.25, 0.5, -4}};
    const std::vector<std::array<double, 3>> steps = {{1, 1, 1}, {-3, 0, 0}, {0, 0, -5}, {0, 0, 0}};
    const double r = 0.125;

    const auto points = built_boxes<1>({}, xs, {}, r);
    ASSERT_EQ(points.size(), 4u);
    for (std::size_t v = 0; v < 4; ++v) {
        for (std::size_t d = 0; d < 3; ++d) {
            EXPECT_EQ(points[v].lo[d], xs[v][d] - r);
            EXPECT_EQ(points[v].hi[d], xs[v][d] + r);
        }
    }
    const auto swept_points = built_boxes<1>({}, xs, steps, 0.0);
    EXPECT_EQ(swept_points[1].lo, (std::array<double, 3>{-2, -2, 0.5}));
    EXPECT_EQ(swept_points[1].hi, (std::array<double, 3>{1, -2, 0.5}));

    const auto edges = built_boxes<2>({{{0, 2}}, {{3, 1}}}, xs, steps, r);
    ASSERT_EQ(edges.size(), 2u);
    EXPECT_EQ(edges[0].lo, (std::array<double, 3>{-1 - r, 0 - r, -3 - r}));
    EXPECT_EQ(edges[0].hi, (std::array<double, 3>{1 + r, 3 + r, 2 + r}));
    EXPECT_EQ(edges[1].lo, (std::array<double, 3>{-2 - r, -2 - r, -4 - r}));
    EXPECT_EQ(edges[1].hi, (std::array<double, 3>{1 + r, 0.5 + r, 0.5 + r}));

    const auto triangles = built_boxes<3>({{{0, 1, 2}}, {{1, 2, 3}}}, xs, {}, 0.0);
    ASSERT_EQ(triangles.size(), 2u);
    EXPECT_EQ(triangles[0].lo, (std::array<double, 3>{-1, -2, 0}));
    EXPECT_EQ(triangles[0].hi, (std::array<double, 3>{1, 3, 2}));
    EXPECT_EQ(triangles[1].lo, (std::array<double, 3>{-1, -2, -4}));
    EXPECT_EQ(triangles[1].hi, (std::array<double, 3>{1, 3, 2}));
}

TEST(BroadPhase, DeviceQueriesFindTheSamePairs) {
    // query_on_device / query_self_on_device: the pair set of the host queries (brute force), grouped by the
    // first index; the count only crosses to the host.
    for (const double cell : {0.25, 1.0}) {
        for (const long long cap : {1LL, 512LL}) {
            const auto a = random_boxes(600, 1.0, 30.0, cell > 0.5, 3u + static_cast<unsigned>(cap));
            const auto b = random_boxes(400, 1.0, 30.0, cell > 0.5, 7u + static_cast<unsigned>(cap));
            SpatialHash hash(cell, cap);
            bool grouped = false;
            EXPECT_TRUE(same_pairs(device_query(hash, a, &b, grouped), brute(a, b)))
                << "cell " << cell << ", cap " << cap;
            EXPECT_TRUE(grouped);
            EXPECT_TRUE(same_pairs(device_query(hash, a, nullptr, grouped), brute_self(a)))
                << "cell " << cell << ", cap " << cap;
            EXPECT_TRUE(grouped);
            EXPECT_EQ(device_query(hash, a, nullptr, grouped), query_self(hash, a));
        }
    }
    SpatialHash hash(1.0);
    bool grouped = false;
    EXPECT_TRUE(device_query(hash, {}, nullptr, grouped).empty());
}

TEST(BroadPhase, SubsetBuildersMatchFullBuildersAndKeepCapacity) {
    const std::vector<std::array<double, 3>> xs = {{0, 0, 0}, {1, -2, 0.5}, {-1, 3, 2}, {0.25, 0.5, -4}};
    const std::vector<std::array<double, 3>> steps = {{1, 1, 1}, {-3, 0, 0}, {0, 0, -5}, {0, 0, 0}};
    const std::vector<std::array<int, 2>> edges = {{{0, 2}}, {{3, 1}}, {{1, 2}}};
    const std::vector<std::array<int, 3>> triangles = {{{0, 1, 2}}, {{1, 2, 3}}, {{0, 2, 3}}};
    const double r = 0.125;
    for (const bool swept : {false, true}) {
        const auto& step = swept ? steps : std::vector<std::array<double, 3>>{};
        const auto all_points = built_boxes<1>({}, xs, step, r);
        const auto all_edges = built_boxes<2>(edges, xs, step, r);
        const auto all_triangles = built_boxes<3>(triangles, xs, step, r);
        BoxList list;
        for (const std::vector<int>& ids :
             {std::vector<int>{2, 0, 3}, std::vector<int>{1}, std::vector<int>{}}) {
            const auto points = built_subset_boxes<1>({}, ids, xs, step, r, list);
            ASSERT_EQ(points.size(), ids.size());
            EXPECT_GE(static_cast<int>(list.lo.extent(0)), 3); // the first call's capacity is kept
            for (std::size_t k = 0; k < ids.size(); ++k) {
                EXPECT_EQ(points[k].lo, all_points[static_cast<std::size_t>(ids[k])].lo);
                EXPECT_EQ(points[k].hi, all_points[static_cast<std::size_t>(ids[k])].hi);
            }
            const auto edge_list = built_subset_boxes<2>(
                edges, std::vector<int>(ids.begin(), ids.end() - (ids.size() == 3)), xs, step, r, list);
            for (std::size_t k = 0; k < edge_list.size(); ++k) {
                EXPECT_EQ(edge_list[k].lo, all_edges[static_cast<std::size_t>(ids[k])].lo);
                EXPECT_EQ(edge_list[k].hi, all_edges[static_cast<std::size_t>(ids[k])].hi);
            }
            const auto triangle_list = built_subset_boxes<3>(
                triangles, std::vector<int>(ids.begin(), ids.end() - (ids.size() == 3)), xs, step, r, list);
            for (std::size_t k = 0; k < triangle_list.size(); ++k) {
                EXPECT_EQ(triangle_list[k].lo, all_triangles[static_cast<std::size_t>(ids[k])].lo);
                EXPECT_EQ(triangle_list[k].hi, all_triangles[static_cast<std::size_t>(ids[k])].hi);
            }
        }
    }
}

} // namespace
