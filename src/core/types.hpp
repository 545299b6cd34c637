#pragma once
/// @file types.hpp
/// @brief Index types, small host vectors and the Kokkos spaces every module uses.

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

namespace intact {

/// Index of a node or element in the whole scene (all bodies, all ranks).
using GlobalId = std::int64_t;
/// Index of a node or element in one rank's local arrays (owned entries first, ghosts after).
using LocalId = int;

/// A 3-vector on the host (scene values, mesh coordinates before they reach a View).
using Vec3 = std::array<double, 3>;

/// Where kernels run and fields live: chosen by the Kokkos build (CUDA, OpenMP or Serial).
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostSpace = Kokkos::HostSpace;

/// Per-node 3-vector field, one row per local node (owned, then ghosts).
using NodeField = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;

} // namespace intact
