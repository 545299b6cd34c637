#pragma once
/// @file line_search.hpp
/// @brief Backtracking line search on the energy change (IPC spec §7.3).
///
/// From the largest safe α (StepBound), halve α until the step is accepted: E(x + α d) ≤ E(x) up to
/// round-off of E's terms (Armijo constant 0), or, while prescribed motion is still under way (it does
/// work, so E may rise), any finite energy. A step shorter than `min_step` changes nothing and counts as
/// a failure (a jammed contact, say), not as progress.

#include <functional>
#include <utility>

namespace intact::solver {

struct LineSearchSettings {
    int max_halvings = 60;
    double min_step = 1e-10;  ///< α at or below this is a failed search
    double round_off = 1e-13; ///< a change below round_off × Σ|terms| counts as no increase
};

struct LineSearchResult {
    double alpha = 0.0; ///< the accepted α (or the last one tried)
    bool accepted = false;
};

/// `change(α)` evaluates the trial point x + α d and returns {E(trial) − E(x), Σ|terms of E(x)|}; it is
/// collective, and so is this function. On acceptance the caller's trial holds x + α d.
LineSearchResult backtrack(double alpha,
                           bool boundary_moving,
                           const std::function<std::pair<double, double>(double)>& change,
                           const LineSearchSettings& settings = {});

} // namespace intact::solver
