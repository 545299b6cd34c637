#pragma once
/// @file broad_phase.hpp
/// @brief Private to the output checker (src/tools/check_output/): the uniform-grid broad phase that
/// visits every pair of overlapping boxes once, in a deterministic order. Host only, header-only (a
/// template on the visitor).

#include "src/core/ids.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace intact::tools::detail {

struct Box {
    Vec3 lo;
    Vec3 hi;
};

inline bool boxes_overlap(const Box& a, const Box& b) {
    for (int k = 0; k < 3; ++k) {
        if (a.hi[k] < b.lo[k] || b.hi[k] < a.lo[k]) {
            return false;
        }
    }
    return true;
}

/// A box covering more grid cells than this is tested against every other box instead.
constexpr std::int64_t k_large_box_cells = 512;
/// Cells per axis at most, so cell coordinates and the grid stay bounded for scattered input.
constexpr double k_max_cells_per_axis = 1 << 20;

using Cell = std::array<std::int64_t, 3>;

/// Calls visit(i, j), i < j, once for every pair of boxes that overlap (closed boxes), in a deterministic
/// order. Uniform grid with the mean box size as cell size; a pair is visited in the first cell (in every
/// coordinate) that both boxes cover. Boxes must be finite.
template <class Visit> void for_each_overlapping_pair(const std::vector<Box>& boxes, Visit&& visit) {
    const std::size_t n = boxes.size();
    if (n < 2) {
        return;
    }
    Vec3 lo = boxes[0].lo;
    Vec3 hi = boxes[0].hi;
    double size_sum = 0.0;
    for (const Box& box : boxes) {
        double size = 0.0;
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], box.lo[k]);
            hi[k] = std::max(hi[k], box.hi[k]);
            size = std::max(size, box.hi[k] - box.lo[k]);
        }
        size_sum += size;
    }
    const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    double h = std::max(size_sum / static_cast<double>(n), span / k_max_cells_per_axis);
    if (!(h > 0.0) || !std::isfinite(h)) {
        h = 1.0; // every box is the same point
    }
    // Monotone in x, so overlapping boxes share a cell.
    const auto cell_of = [&](const Vec3& x) {
        Cell cell;
        for (int k = 0; k < 3; ++k) {
            cell[k] = static_cast<std::int64_t>(std::floor((x[k] - lo[k]) / h));
        }
        return cell;
    };

    struct Entry {
        Cell cell;
        int box;
    };
    std::vector<Cell> first(n);
    std::vector<Entry> entries;
    entries.reserve(8 * n);
    std::vector<int> large;
    std::vector<char> is_large(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        first[i] = cell_of(boxes[i].lo);
        const Cell last = cell_of(boxes[i].hi);
        const std::int64_t count =
            (last[0] - first[i][0] + 1) * (last[1] - first[i][1] + 1) * (last[2] - first[i][2] + 1);
        if (count > k_large_box_cells) {
            large.push_back(static_cast<int>(i));
            is_large[i] = 1;
            continue;
        }
        for (std::int64_t z = first[i][2]; z <= last[2]; ++z) {
            for (std::int64_t y = first[i][1]; y <= last[1]; ++y) {
                for (std::int64_t x = first[i][0]; x <= last[0]; ++x) {
                    entries.push_back({{x, y, z}, static_cast<int>(i)});
                }
            }
        }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.cell != b.cell ? a.cell < b.cell : a.box < b.box;
    });

    for (std::size_t begin = 0; begin < entries.size();) {
        std::size_t end = begin + 1;
        while (end < entries.size() && entries[end].cell == entries[begin].cell) {
            ++end;
        }
        for (std::size_t s = begin; s < end; ++s) {
            for (std::size_t t = s + 1; t < end; ++t) {
                const int i = entries[s].box;
                const int j = entries[t].box;
                const Cell shared_first = {std::max(first[i][0], first[j][0]),
                                           std::max(first[i][1], first[j][1]),
                                           std::max(first[i][2], first[j][2])};
                if (shared_first == entries[s].cell && boxes_overlap(boxes[i], boxes[j])) {
                    visit(i, j);
                }
            }
        }
        begin = end;
    }
    for (const int i : large) {
        for (std::size_t j = 0; j < n; ++j) {
            const int other = static_cast<int>(j);
            if (other == i || (is_large[j] && other < i)) {
                continue;
            }
            if (boxes_overlap(boxes[i], boxes[j])) {
                visit(std::min(i, other), std::max(i, other));
            }
        }
    }
}

} // namespace intact::tools::detail
