#pragma once
/// @file scene_mesh.hpp
/// @brief The whole scene as one host mesh (rank 0): bodies read or generated, transformed, validated.

#include "src/io/scene.hpp"
#include "src/mesh/tet_mesh.hpp"

#include <cstdint>
#include <vector>

namespace intact {

/// Per-node boundary condition.
enum class NodeConstraint : std::uint8_t {
    free = 0,   ///< unknown of the solve
    fixed = 1,  ///< held at its rest position
    moving = 2, ///< follows a prescribed constant velocity
};

/// All bodies concatenated in scene order: body b's nodes and tets follow those of bodies 0..b-1,
/// each in its file's order. Nodes no tetrahedron uses are dropped. Positions are in world coordinates.
struct SceneMesh {
    TetMesh mesh;
    std::vector<int> tet_body;              ///< body index of each tet
    std::vector<int> node_body;             ///< body index of each node
    std::vector<Vec3> velocity;             ///< initial velocity of each node, m/s
    std::vector<NodeConstraint> constraint; ///< per node
    std::vector<Vec3> prescribed_velocity;  ///< per node (moving nodes; zero otherwise)
    std::vector<TriMesh> obstacle_meshes;   ///< per obstacle; empty for planes
    Vec3 bbox_min{}, bbox_max{};            ///< bounding box of all body nodes
};

/// Read or generate every body's mesh, apply scale → rotate → translate, select fixed and moving nodes
/// (selectors apply in order, `fixed` first, then `moving`: a node in both moves; a selector that
/// catches no node is an error),
/// read obstacle meshes, and validate: every tet must have positive volume. Throws InputError naming
/// the body, its mesh file, the tet and the fix. Host, serial (called on rank 0).
SceneMesh build_scene_mesh(const io::Scene& scene);

/// Signed volume of tet (a, b, c, d): det[b-a, c-a, d-a] / 6.
double tet_signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// x' = R(S x) + t with R = Rz Ry Rx from Euler angles in degrees.
Vec3 transform_point(const Vec3& x, const Vec3& scale, const Vec3& rotate_deg, const Vec3& translate);

} // namespace intact
