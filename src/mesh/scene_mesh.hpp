#pragma once
/// @file scene_mesh.hpp
/// @brief The whole scene as one host mesh (rank 0): bodies read or generated, transformed, validated.

#include "src/io/scene.hpp"
#include "src/mesh/codim_elements.hpp"
#include "src/mesh/tet_mesh.hpp"

#include <cstdint>
#include <vector>

namespace intact {

/// Per-node boundary condition.
enum class NodeConstraint : std::uint8_t {
    free = 0,   ///< unknown of the solve
    fixed = 1,  ///< held at its rest position
    moving = 2, ///< follows a prescribed rigid motion (Scene::moving_selectors()[motion])
};

/// All bodies concatenated in scene order: body b's nodes and elements follow those of bodies 0..b-1,
/// each in its file's order. Nodes no element uses are dropped. Positions are in world coordinates.
/// Shells and rods have no tets: their triangles, hinges, segments and rod vertices are in `codim`.
struct SceneMesh {
    TetMesh mesh;
    std::vector<int> tet_body;               ///< body index of each tet
    CodimElements codim;                     ///< elements of shells and rods (scene node ids)
    std::vector<int> node_body;              ///< body index of each node
    std::vector<double> body_contact_offset; ///< per body: its contact offset, m (io::Body)
    std::vector<Vec3> velocity;              ///< initial velocity of each node, m/s
    std::vector<NodeConstraint> constraint;  ///< per node
    std::vector<int> motion; ///< per node: index in Scene::moving_selectors() (moving nodes), else −1
    std::vector<TriMesh> obstacle_meshes; ///< per obstacle, placed at time 0; empty for planes
    Vec3 bbox_min{}, bbox_max{};          ///< bounding box of all body nodes
};

/// Read or generate every body's mesh, apply scale → rotate (about the origin or the scaled mesh's
/// centroid) → translate, give initial velocities (velocity + spin about the centre of mass), select
/// fixed and moving nodes (selectors apply in order, `fixed` first, then `moving`: a node in both moves,
/// the last moving box wins; a selector, force boxes included, that catches no node is an error), read
/// and place obstacle meshes (triangles, segments, points), and validate: every tet must have positive
/// volume, every obstacle triangle area and segment length. Throws InputError naming the body or
/// obstacle, its mesh file, the item and the fix. Host, serial (called on rank 0).
SceneMesh build_scene_mesh(const io::Scene& scene);

/// The elements METIS partitions, one dual graph for all bodies: the tets, then the shells' triangles
/// (corner 3 is −1), then the rods' segments (corners 2 and 3 are −1). Hinges and rod vertices are not
/// partitioned: they follow the nodes (distribute.hpp).
std::vector<std::array<int, 4>> partition_elements(const SceneMesh& scene_mesh);

/// Signed volume of tet (a, b, c, d): det[b-a, c-a, d-a] / 6.
double tet_signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// x' = R(S x − pivot) + pivot + t with R = Rz Ry Rx from Euler angles in degrees.
Vec3 transform_point(const Vec3& x,
                     const Vec3& scale,
                     const Vec3& rotate_deg,
                     const Vec3& translate,
                     const Vec3& pivot = Vec3{});

/// The unit normal of a plane after transform_point: R S⁻¹ n, normalised.
Vec3 transform_normal(const Vec3& n, const Vec3& scale, const Vec3& rotate_deg);

/// A plane obstacle placed at time 0: the scene's point and normal under its scale, rotate_deg and
/// translate.
void place_plane(const io::Obstacle& obstacle, Vec3& point, Vec3& normal);

} // namespace intact
