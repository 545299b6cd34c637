#pragma once
/// @file codim_elements.hpp
/// @brief The elements of codimensional bodies (shells and rods) and their derived stencils: membrane
/// triangles and bending hinges of shells, stretching segments and bending vertices of rods.
///
/// Every list is in node indices of the mesh it belongs to (global ids on rank 0's scene mesh, local node
/// indices in a LocalMesh) with a body index per entry. In a LocalMesh each list holds its owned entries
/// first (`num_owned_*`), then the ghost entries a rank needs to assemble its owned rows completely.

#include <array>
#include <vector>

namespace intact {

struct CodimElements {
    std::vector<std::array<int, 3>> triangles; ///< shell membrane triangles
    std::vector<int> triangle_body;
    int num_owned_triangles = 0;

    /// (x0, x1) the shared edge, x2 the third corner of one triangle, x3 of the other (hinge_bending.hpp)
    std::vector<std::array<int, 4>> hinges;
    std::vector<int> hinge_body;
    int num_owned_hinges = 0;

    std::vector<std::array<int, 2>> segments; ///< rod stretching segments
    std::vector<int> segment_body;
    int num_owned_segments = 0;

    /// (previous, vertex, next) of an interior rod vertex (rod_energy.hpp)
    std::vector<std::array<int, 3>> rod_vertices;
    std::vector<int> rod_vertex_body;
    int num_owned_rod_vertices = 0;

    /// In a LocalMesh: the scene-wide element id of each triangle and segment (its index in
    /// partition_elements, after the tets), for output. Empty on the scene mesh.
    std::vector<long long> triangle_id;
    std::vector<long long> segment_id;

    /// Triangles, hinges, segments and rod vertices together (the stencils of CodimTerm).
    int num_stencils() const {
        return static_cast<int>(triangles.size() + hinges.size() + segments.size() + rod_vertices.size());
    }
    bool empty() const { return num_stencils() == 0; }
};

/// What hinges_of and rod_vertices_of could not turn into stencils.
struct CodimTopologyReport {
    int non_manifold_edges = 0; ///< edges of more than two triangles (no hinge)
    int rod_junctions = 0;      ///< vertices of more than two segments (no bending stencil)
};

/// Appends to `elements` one hinge per edge shared by exactly two of its triangles of the same body,
/// edges in increasing (smaller id, larger id) order, with the shared edge oriented as in the first
/// triangle (in list order) that holds it. Edges of one triangle have no hinge (boundary); edges of three
/// or more are counted in the report and get none. Host, serial.
CodimTopologyReport add_hinges(CodimElements& elements);

/// Appends to `elements` one bending stencil (previous, vertex, next) per vertex that exactly two
/// segments of the same body share, vertices in increasing order; `previous` is the other end of the
/// first segment (in list order), `next` of the second. Ends of a rod have none; vertices of three or more
/// segments (junctions) are counted in the report and get none: they join the rods as free hinges. Host,
/// serial.
CodimTopologyReport add_rod_vertices(CodimElements& elements);

} // namespace intact
