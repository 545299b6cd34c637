#pragma once
// Small meshes and scenes built in code, shared by tests.
#include "src/mesh/box_mesh.hpp"

#include <nlohmann/json.hpp>

namespace intact::test {

/// A valid scene document with one box body of nx × ny × nz cells.
inline nlohmann::json box_scene(int nx = 4, int ny = 3, int nz = 2) {
    return nlohmann::json::parse(R"({
        "time": {"dt": 0.01, "steps": 3},
        "bodies": [{
            "name": "block",
            "mesh": {"box": {"min": [0, 0, 0], "max": [1, 0.75, 0.5], "cells": [)" +
                                 std::to_string(nx) + "," + std::to_string(ny) + "," + std::to_string(nz) +
                                 R"(]}},
            "material": {"model": "neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 1000}
        }]
    })");
}

} // namespace intact::test
