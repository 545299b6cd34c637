// ConstraintSet: pairs keyed by kind and rows keep their per-pair state through assign, insert and remove,
// against a std::map reference on random sorted lists (overlapping, disjoint, empty).
#include "src/contact/constraint_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <vector>

namespace {

using namespace intact;
using Key = std::array<int, 5>; // kind, rows

contact::PairList upload(const std::vector<Key>& keys) {
    contact::PairList list;
    list.kind = Kokkos::View<int*, MemSpace>("kind", keys.size() + 1);
    list.rows = Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>("rows", keys.size() + 1);
    auto kind = Kokkos::create_mirror_view(list.kind);
    auto rows = Kokkos::create_mirror_view(list.rows);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        kind(i) = keys[i][0];
        for (int k = 0; k < 4; ++k) {
            rows(i, k) = keys[i][static_cast<std::size_t>(k + 1)];
        }
    }
    Kokkos::deep_copy(list.kind, kind);
    Kokkos::deep_copy(list.rows, rows);
    list.count = static_cast<int>(keys.size());
    return list;
}

// Sorted random keys from a small universe, so lists overlap.
std::vector<Key> random_keys(std::mt19937& rng, int n) {
    std::uniform_int_distribution<int> kind(0, 2), row(0, 6);
    std::vector<Key> keys;
    for (int i = 0; i < n; ++i) {
        keys.push_back({kind(rng), row(rng), row(rng), row(rng), 0});
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

// The set's pairs with their λ, on the host.
std::map<Key, double> contents(const contact::ConstraintSet& set) {
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), set.pairs().kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), set.pairs().rows);
    const auto lambda = Kokkos::create_mirror_view_and_copy(HostSpace(), set.state().lambda);
    std::map<Key, double> out;
    Key previous{-1, -1, -1, -1, -1};
    for (int i = 0; i < set.size(); ++i) {
        const Key key{kind(i), rows(i, 0), rows(i, 1), rows(i, 2), rows(i, 3)};
        EXPECT_LT(previous, key) << "the set must stay sorted without duplicates";
        previous = key;
        out[key] = lambda(i);
    }
    return out;
}

// Give every pair of the set λ = f(key), on the device via the host.
void set_lambda(contact::ConstraintSet& set, std::map<Key, double>& reference, double salt) {
    const auto keys = contents(set);
    auto lambda = Kokkos::create_mirror_view(set.state().lambda);
    int i = 0;
    for (const auto& [key, value] : keys) {
        lambda(i++) = reference[key] =
            salt + key[0] + 10 * key[1] + 100 * key[2] + 1000 * key[3] + 1e4 * key[4];
    }
    Kokkos::deep_copy(set.state().lambda, lambda);
}

TEST(ConstraintSet, StateFollowsItsPairThroughAssignInsertAndRemove) {
    std::mt19937 rng(11);
    for (int round = 0; round < 30; ++round) {
        contact::ConstraintSet set;
        std::map<Key, double> reference;
        // assign: exactly the list, new pairs at zero
        const auto first = random_keys(rng, 40);
        set.assign(upload(first));
        for (const auto& [key, value] : contents(set)) {
            EXPECT_EQ(value, 0.0);
        }
        EXPECT_EQ(set.size(), static_cast<int>(first.size()));
        set_lambda(set, reference, round);

        // assign again: kept pairs keep λ, dropped ones are gone, new ones start at zero
        const auto second = random_keys(rng, round % 5 == 0 ? 0 : 40);
        set.assign(upload(second));
        std::map<Key, double> expected;
        for (const auto& key : second) {
            expected[key] = reference.count(key) ? reference[key] : 0.0;
        }
        EXPECT_EQ(contents(set), expected);
        set_lambda(set, reference, 2.0 * round);

        // insert: union, the present pairs keep λ
        const auto more = random_keys(rng, 30);
        set.insert(upload(more));
        expected.clear();
        for (const auto& key : second) {
            expected[key] = reference[key];
        }
        for (const auto& key : more) {
            expected.emplace(key, 0.0);
        }
        EXPECT_EQ(contents(set), expected);

        // remove every third pair
        Kokkos::View<int*, MemSpace> drop("drop", static_cast<std::size_t>(set.size()));
        auto drop_host = Kokkos::create_mirror_view(drop);
        std::map<Key, double> kept;
        int i = 0;
        for (const auto& [key, value] : expected) {
            drop_host(i) = i % 3 == 0 ? 1 : 0;
            if (i % 3 != 0) {
                kept[key] = value;
            }
            ++i;
        }
        Kokkos::deep_copy(drop, drop_host);
        set.remove(drop);
        EXPECT_EQ(contents(set), kept);
    }
}

} // namespace
