#pragma once
/// @file geometry_probe.hpp
/// @brief `intact geometry`: a line-oriented probe of the contact geometry (squared distances and their
/// gradients, the IPC barrier, raw additive CCD) for checking Intact against other codes. Host, serial.
///
/// Input: one query per line, whitespace-separated; empty lines and lines starting with '#' are skipped.
/// Output: one line per query, numbers separated by one space, each printed with "%.17g":
/// - `pt_dist px py pz t0x t0y t0z t1x t1y t1z t2x t2y t2z` → s g_1 … g_12: the squared point–triangle
///   distance s and ∂s/∂(p, t0, t1, t2).
/// - `ee_dist a0 a1 b0 b1` (12 numbers) → s g_1 … g_12: the squared segment–segment distance (no
///   parallel-edge mollifier) and ∂s/∂(a0, a1, b0, b1).
/// - `barrier d dhat` → b b' b'': b(d) = −(d − d̂)² ln(d/d̂) for 0 < d < d̂ (IPC eq. 6) and its first two
///   derivatives in the unsquared distance d; 0 0 0 for d ≥ d̂.
/// - `pt_ccd_raw` / `ee_ccd_raw` + 24 numbers (p, t0, t1, t2 or a0, a1, b0, b1 at t = 0, then the same at
///   t = 1) + min_separation + t_max → hit toi: additive CCD (kernels/ccd_additive.hpp) with its default
///   parameters; hit is 0 or 1 and toi is t_max when there is no hit.
/// Gradients use the envelope identity ∇_{x_j} s = 2 w_j r (spec §5.7), with r the vector between the
/// closest points and w_j the signed closest-point weights of the closest feature.

#include <iosfwd>

namespace intact::tools {

/// Answer every query of `in` on `out`. A bad line (unknown command, wrong number count, unparsable
/// number, value out of range) prints `error: <what> (line N)` in place of its answer and reading goes
/// on. @return 0 when every query was answered, 1 otherwise.
int run_geometry_probe(std::istream& in, std::ostream& out);

} // namespace intact::tools
