#include "src/solver/line_search.hpp"

#include <cmath>

namespace intact::solver {

LineSearchResult backtrack(double alpha,
                           bool boundary_moving,
                           const std::function<std::pair<double, double>(double)>& change,
                           const LineSearchSettings& settings) {
    LineSearchResult result;
    for (int halvings = 0; halvings < settings.max_halvings && !result.accepted; ++halvings) {
        const auto [delta, scale] = change(alpha);
        result.accepted = boundary_moving ? std::isfinite(delta) : delta <= settings.round_off * scale;
        if (!result.accepted) {
            alpha *= 0.5;
        }
    }
    result.alpha = alpha;
    result.accepted = result.accepted && alpha > settings.min_step;
    return result;
}

} // namespace intact::solver
