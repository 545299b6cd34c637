#pragma once
/// @file hessian_projection.hpp
/// @brief How a contact pair's barrier Hessian is made positive semi-definite.

namespace intact::contact {

/// How a point–triangle or edge–edge pair's Hessian is made PSD: by its closest-feature case (exact and
/// cheaper, kernels/pair_projection.hpp), by the plain 12×12 projection (the host path's, for tests), or
/// not at all. Unprojected, the Hessian keeps the barrier's negative curvature across the pair; Newton
/// near a solution then converges quadratically where the projected Hessian, which overestimates that
/// curvature, converges linearly (IpcSolver uses it only there, and only while PCG meets no negative
/// curvature).
enum class HessianProjection { by_case, full, none };

} // namespace intact::contact
