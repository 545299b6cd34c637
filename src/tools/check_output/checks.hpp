#pragma once
/// @file checks.hpp
/// @brief Private to the output checker (src/tools/check_output/): the checks of one merged step.
/// Host only, serial.

#include "src/tools/check_output.hpp"
#include "src/tools/check_output/obstacles.hpp"
#include "src/tools/check_output/series.hpp"

#include <vector>

namespace intact::tools::detail {

/// Counts and examples of one merged step at time `time`, with the obstacles at that time.
void check_scene(const SceneMesh& scene,
                 const std::vector<Obstacle>& obstacles,
                 double time,
                 StepReport& report);

} // namespace intact::tools::detail
