#pragma once
/// @file scene_solver.hpp
/// @brief The scene keys of the methods' own sections, `solver.bal` and `solver.stencil_descent`, read
/// into the Scene with their checks (errors name the key and the fix). Used by scene.cpp.

#include "src/io/json_reader.hpp"
#include "src/io/scene.hpp"

namespace intact::io::detail {

/// `solver.bal` (only with solver.type "bal") into scene.bal.
void read_bal_options(JsonObject& solver, Scene& scene);

/// The `solver.stencil_descent` object into `o`.
void read_stencil_descent(JsonObject sd, StencilDescentOptions& o);

} // namespace intact::io::detail
