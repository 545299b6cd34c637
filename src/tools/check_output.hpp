#pragma once
/// @file check_output.hpp
/// @brief `intact check OUTPUT_DIR`: reads a written time series back and reports, for every step,
/// intersecting surface triangles and inverted or flat tetrahedra. Host-only, serial, no Kokkos, no MPI.
///
/// Each step's pieces are merged by their point array `global_id` into one tet mesh of the whole scene
/// (all bodies). Then:
/// - a tet is reported when det[x1-x0, x2-x0, x3-x0] <= 0, decided exactly (flat tets count);
/// - the boundary triangles of that mesh (faces of exactly one tet) are tested pairwise, exactly, after a
///   uniform-grid broad phase. Closed triangles are tested: touching counts as intersecting. Triangles of
///   different bodies and of the same body are treated alike. Adjacent triangles are never reported for
///   their shared vertices: a pair sharing an edge is skipped; a pair sharing one vertex is reported only
///   when the edge opposite that vertex in one triangle meets the other triangle (the triangles overlap
///   beyond the shared vertex).
///
/// The predicates are exact for finite inputs whose products neither overflow nor underflow (coordinates
/// between about 1e-90 and 1e90 in magnitude, or zero): a floating-point filter with Shewchuk's error
/// bound, and exact expansion arithmetic when the filter cannot decide.

#include "src/core/ids.hpp"

#include <array>
#include <ostream>
#include <string>
#include <vector>

namespace intact::tools {

/// What one output step contains that should not be there.
struct StepReport {
    int step_index = 0;               ///< the N of steps/step_NNNNNN.pvtu (position in the .pvd otherwise)
    double time = 0.0;                ///< the step's `timestep` in the .pvd, seconds
    std::string file;                 ///< the step's .pvtu, as a path
    long long intersecting_pairs = 0; ///< unordered pairs of boundary triangles that meet
    long long inverted_tets = 0;      ///< tets with signed volume <= 0 (or non-finite node positions)
    /// Up to 5 intersecting pairs, then up to 5 bad tets, each one line naming scene-wide (global) ids.
    std::vector<std::string> examples;
};

/// Every step of a series, in the order of the .pvd.
struct CheckReport {
    std::vector<StepReport> steps;
    /// True when no step has an intersecting pair or a bad tet (also for a series with no steps).
    bool clean() const;
};

/// Check every step listed in `directory`/intact.pvd. Logs one line per step ("step N t=T: X intersecting
/// triangle pairs, Y inverted tetrahedra"), the step's examples indented below it, and a summary line.
/// Throws `InputError` naming the file and the fix when the .pvd, a listed .pvtu or a piece is missing or
/// unreadable, or when a piece lacks the point array `global_id` or holds cells other than tetrahedra.
/// Memory: one step's merged mesh at a time.
CheckReport check_output(const std::string& directory, std::ostream& log);

/// Sign of det[b-a, c-a, d-a]: +1 when (a, b, c, d) is a positively oriented tet in Intact's convention
/// (d on the side of plane abc that (b-a)×(c-a) points to), -1 when inverted, 0 when the four points are
/// coplanar. Exact (see the file comment for the input range).
int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// Whether the closed triangles `t` and `u` share at least one point (touching counts). Exact, also for
/// coplanar and degenerate (collinear or repeated-vertex) triangles.
bool triangles_intersect(const std::array<Vec3, 3>& t, const std::array<Vec3, 3>& u);

} // namespace intact::tools
