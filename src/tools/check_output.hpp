#pragma once
/// @file check_output.hpp
/// @brief `intact check OUTPUT_DIR`: reads a written time series back and reports, for every step,
/// intersecting surface triangles, inverted or flat tetrahedra, and bodies touching or passing through
/// obstacles. Host-only, serial, no MPI; no Kokkos kernels (the offset check calls the closest-feature
/// distances of kernels/pair_distance.hpp on the host).
///
/// Each step's pieces are merged by their point array `global_id` into one tet mesh of the whole scene
/// (all bodies). Then:
/// - a tet is reported when det[x1-x0, x2-x0, x3-x0] <= 0, decided exactly (flat tets count);
/// - the boundary triangles of that mesh (faces of exactly one tet) are tested pairwise, exactly, after a
///   uniform-grid broad phase. Closed triangles are tested: touching counts as intersecting. Triangles of
///   different bodies and of the same body are treated alike. Adjacent triangles are never reported for
///   their shared vertices: a pair sharing an edge is skipped; a pair sharing one vertex is reported only
///   when the edge opposite that vertex in one triangle meets the other triangle (the triangles overlap
///   beyond the shared vertex);
/// - shells (VTK triangles) and rods (VTK lines) join those triangles: every shell triangle, and every
///   rod segment (a, b) as the degenerate triangle (a, b, b), by the same rule (a segment sharing one node
///   with an item is reported when its far end meets that item); so shell–shell, shell–solid,
///   rod–triangle (a segment crossing a triangle) and rod–rod crossings are found; and a shell or rod
///   vertex inside or on a tetrahedron (a sheet that passed wholly into a solid between two output steps)
///   is reported;
/// - contact offsets (scene.resolved.json `bodies[].contact_offset`; shells and rods): every pair the
///   simulator forms (a vertex and a triangle, two edges or segments, sharing no node; a vertex and a
///   plane) whose offset ξ (the sum of its two items' bodies' offsets, obstacles 0) is positive must be
///   at least ξ (1 − 1e-6) apart; a pair closer than that is reported (distances in floating point,
///   the kernels' closest-feature formulas). Without the file the offsets are taken as 0;
/// - obstacles, read from OUTPUT_DIR/scene.resolved.json (key `obstacles`), are placed at time 0 by
///   their `scale`, `rotate_deg` and `translate`, then at the step's time t (the .pvd `timestep`; 0 is
///   the scene's start) by their rigid motion (`velocity`, `angular_velocity` about `center`; the formula
///   the simulator moves obstacle rows with, kernels/rigid_motion.hpp; without rotation p + v t, each
///   coordinate rounded once). Where the step's written obstacles are there (steps/<step>/obstacles.vtu,
///   as Intact writes them: where the simulation held them, which after a step that ended short of its
///   obstacles' targets is behind their motion), their points are taken instead: mesh vertices as
///   written, a plane through its square's first corner. A body boundary triangle that meets (touching
///   counts) a triangle, a segment or a lone vertex of a mesh obstacle (segments and points as degenerate
///   triangles) is reported, decided exactly on those positions in the same broad phase; so is a mesh
///   obstacle vertex inside or on a body tetrahedron (a point that passed the surface between two output
///   steps). A body boundary vertex x on or behind a plane (n·(x − p(t)) <= 0, n pointing to the free side)
///   is reported, the sign decided exactly for the rounded p(t); testing the vertices suffices, as boundary
///   triangles are their convex hulls. Without scene.resolved.json (output of an older Intact, or a copy
///   without it) obstacles are not checked and the log says so.
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
    /// Pairs (body boundary triangle, triangle of a mesh obstacle) that meet, over all mesh obstacles.
    long long obstacle_triangle_pairs = 0;
    /// Pairs (body boundary vertex, plane obstacle) with the vertex on or behind the plane.
    long long vertices_behind_planes = 0;
    /// Vertices of mesh obstacles inside or on a body tetrahedron (each counted once).
    long long obstacle_vertices_inside = 0;
    /// Vertices of shells and rods inside or on a tetrahedron of another body (each counted once): a sheet
    /// or a rod that passed wholly into a solid between two output steps crosses no boundary triangle.
    long long codim_vertices_inside = 0;
    /// Pairs of items closer than their contact offsets (vertex–triangle, edge–edge and vertex–plane
    /// pairs of shells and rods with one another, with solids and with obstacles).
    long long offset_pairs = 0;
    /// Up to 5 of each kind, in this order: intersecting pairs, body-obstacle triangle pairs, vertices on or
    /// behind planes, vertices inside bodies, pairs closer than their contact offsets, bad tets. Each is one
    /// line naming scene-wide (global) node or tet ids and, for obstacles, `obstacles[k]` (the index in
    /// scene.resolved.json) and the obstacle triangle's 0-based index in its mesh file.
    std::vector<std::string> examples;
    /// True when every count above is zero.
    bool clean() const {
        return intersecting_pairs == 0 && inverted_tets == 0 && obstacle_triangle_pairs == 0 &&
               vertices_behind_planes == 0 && obstacle_vertices_inside == 0 && codim_vertices_inside == 0 &&
               offset_pairs == 0;
    }
};

/// Every step of a series, in the order of the .pvd.
struct CheckReport {
    std::vector<StepReport> steps;
    bool obstacles_checked = false; ///< scene.resolved.json was found (else only bodies were checked)
    int planes = 0;                 ///< plane obstacles checked
    int obstacle_meshes = 0;        ///< mesh obstacles checked
    /// True when no step has anything to report (also for a series with no steps).
    bool clean() const;
};

/// Check every step listed in `directory`/intact.pvd against itself and the obstacles listed in
/// `directory`/scene.resolved.json. Logs one line on the obstacles ("obstacles: P planes, M meshes in
/// '...'", "obstacles: none in '...'" or "obstacles not checked: '...' not found ..."), one line per step
/// ("step N t=T: X intersecting triangle pairs, Y inverted tetrahedra", followed, when the scene has
/// obstacles, by ", Z body-obstacle triangle pairs, W vertices on or behind planes"), the step's examples
/// indented below it, and a summary line ("... clean (...)" or "... NOT clean: ...").
/// Throws `InputError` naming the file and the fix when the .pvd, a listed .pvtu or a piece is missing or
/// unreadable, when a piece lacks the point array `global_id` or holds cells other than tetrahedra, and
/// naming also the key (e.g. `obstacles[1].mesh.file`) when scene.resolved.json is present but malformed
/// or an obstacle mesh it names cannot be read. A relative obstacle mesh path is taken relative to
/// `directory`. Memory: one step's merged mesh and all obstacle meshes at a time.
CheckReport check_output(const std::string& directory, std::ostream& log);

/// Sign of det[b-a, c-a, d-a]: +1 when (a, b, c, d) is a positively oriented tet in Intact's convention
/// (d on the side of plane abc that (b-a)×(c-a) points to), -1 when inverted, 0 when the four points are
/// coplanar. Exact (see the file comment for the input range).
int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// Whether the closed triangles `t` and `u` share at least one point (touching counts). Exact, also for
/// coplanar and degenerate (collinear or repeated-vertex) triangles.
bool triangles_intersect(const std::array<Vec3, 3>& t, const std::array<Vec3, 3>& u);

/// Whether two boundary triangles `s` and `t` (vertex indices into `x`) meet beyond mere adjacency, by the
/// rule of the file comment (sharing an edge: no; sharing one vertex: only when the opposite edge of one
/// meets the other; else triangles_intersect). Exact. Also used by the simulator's start-up check.
bool surface_triangles_meet(const std::array<int, 3>& s,
                            const std::array<int, 3>& t,
                            const std::vector<Vec3>& x);

} // namespace intact::tools
