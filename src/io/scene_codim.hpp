#pragma once
/// @file scene_codim.hpp
/// @brief The scene keys of codimensional bodies (shells and rods): `bodies[].type`, the generated
/// `sheet` and `rod` meshes, the material keys `thickness`, `radius` and `bending_stiffness`, the
/// `contact_offset`, and the start-up check of what the chosen method supports (docs/codim.md). Used by
/// scene.cpp.

#include "src/io/json_reader.hpp"
#include "src/io/scene.hpp"

namespace intact::io::detail {

/// `value` > 0, else an InputError naming the object's key, the value and `fix` (scene.cpp uses it too).
void require_positive(const JsonObject& object, const std::string& key, double value, const std::string& fix);

/// `type`: "solid" (default), "shell" or "rod".
BodyType read_body_type(JsonObject& body);

/// Reads the generated `sheet` (shells) or `rod` (rods) of a body's `mesh` object, which has no `file`,
/// into `source`; neither there is an error. Errors name the key and the fix.
void read_generated_codim_mesh(JsonObject& mesh, BodyType type, MeshSource& source);

/// The material keys only codimensional bodies have: shells `thickness` (m, required) and
/// `bending_stiffness` (J, optional); rods `radius` (m, required) and `bending_stiffness` (N m²,
/// optional).
void read_codim_material_keys(JsonObject& material, BodyType type, Material& out);

/// A body's `contact_offset` (m, >= 0): shells default to half their thickness, rods to their radius;
/// a solid may not give one (its contact surface is its boundary). Call after the material is read.
double read_contact_offset(JsonObject& body, BodyType type, const Material& material);

} // namespace intact::io::detail
