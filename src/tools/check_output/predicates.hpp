#pragma once
/// @file predicates.hpp
/// @brief Private to the output checker (src/tools/check_output/): the exact predicates the checks use
/// besides the public orient3d and triangles_intersect (check_output.hpp). Host only.

#include "src/core/ids.hpp"

namespace intact::tools::detail {

/// Sign of n·(x − q): +1 when x lies on the side of the plane through q that n points to, 0 on the plane.
/// Exact for the given doubles (n need not be unit length).
int plane_side(const Vec3& x, const Vec3& q, const Vec3& n);

/// Closed segment ab meets the closed triangle pqr. Exact; any degeneracy allowed.
bool segment_meets_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r);

/// Whether all three coordinates are finite.
bool finite(const Vec3& x);

} // namespace intact::tools::detail
