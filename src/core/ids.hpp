#pragma once
/// @file ids.hpp
/// @brief Index types shared by every module (no Kokkos, so partition/ can use them).

#include <array>
#include <cstdint>

namespace intact {

/// Index of a node or element in the whole scene (all bodies, all ranks).
using GlobalId = std::int64_t;
/// Index of a node or element in one rank's local arrays (owned entries first, ghosts after).
using LocalId = int;

/// A 3-vector on the host (scene values, mesh coordinates before they reach a View).
using Vec3 = std::array<double, 3>;

} // namespace intact
