#pragma once
/// @file types.hpp
/// @brief The Kokkos spaces and View types every module uses (plus the index types of ids.hpp).

#include "src/core/ids.hpp"

#include <Kokkos_Core.hpp>

namespace intact {

/// Where kernels run and fields live: chosen by the Kokkos build (CUDA, OpenMP or Serial).
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostSpace = Kokkos::HostSpace;

/// Per-node 3-vector field, one row per local node (owned, then ghosts).
using NodeField = Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>;

} // namespace intact
