#include "src/io/scene_codim.hpp"

#include "src/core/error.hpp"

#include <cmath>
#include <sstream>

namespace intact::io::detail {

void require_positive(const JsonObject& object,
                      const std::string& key,
                      double value,
                      const std::string& fix) {
    if (!(value > 0.0)) {
        std::ostringstream problem;
        problem << "must be > 0, got " << value;
        object.fail(key, problem.str(), fix);
    }
}

BodyType read_body_type(JsonObject& body) {
    const std::string type = body.optional<std::string>("type", "solid");
    if (type == "shell") {
        return BodyType::shell;
    }
    if (type == "rod") {
        return BodyType::rod;
    }
    if (type != "solid") {
        body.fail("type", "unknown body type '" + type + "'",
                  "use \"solid\" (tetrahedra, the default), \"shell\" (triangles: cloth, sheets) or \"rod\" "
                  "(segments: ropes, hair)");
    }
    return BodyType::solid;
}

void read_generated_codim_mesh(JsonObject& mesh, BodyType type, MeshSource& source) {
    if (mesh.has("sheet")) {
        if (type != BodyType::shell) {
            mesh.fail("sheet", "is a shell mesh, but the body's type is not \"shell\"",
                      "set the body's \"type\": \"shell\", or give a mesh of its own type");
        }
        JsonObject sheet = mesh.object("sheet");
        source.is_sheet = true;
        source.sheet_length = sheet.required<double>("length");
        require_positive(sheet, "length", source.sheet_length, "give the sheet's extent along x in metres");
        source.sheet_width = sheet.required<double>("width");
        require_positive(sheet, "width", source.sheet_width, "give the sheet's extent along y in metres");
        source.sheet_cells_x = sheet.optional<int>("cells_x", 1);
        source.sheet_cells_y = sheet.optional<int>("cells_y", 1);
        if (source.sheet_cells_x < 1 || source.sheet_cells_y < 1) {
            sheet.fail(source.sheet_cells_x < 1 ? "cells_x" : "cells_y", "must be >= 1",
                       "give the number of cells along the axis, e.g. 20");
        }
        sheet.finish();
        return;
    }
    if (mesh.has("rod")) {
        if (type != BodyType::rod) {
            mesh.fail("rod", "is a rod mesh, but the body's type is not \"rod\"",
                      "set the body's \"type\": \"rod\", or give a mesh of its own type");
        }
        JsonObject rod = mesh.object("rod");
        source.is_rod = true;
        source.rod_start = rod.required<Vec3>("start");
        source.rod_end = rod.required<Vec3>("end");
        source.rod_segments = rod.optional<int>("segments", 1);
        if (source.rod_segments < 1) {
            rod.fail("segments", "must be >= 1", "give the number of segments, e.g. 20");
        }
        if (source.rod_start == source.rod_end) {
            rod.fail("end", "equals start", "give a rod of positive length");
        }
        rod.finish();
        return;
    }
    mesh.fail("file", "is missing",
              type == BodyType::shell
                  ? "give a triangle mesh file (.obj faces) or \"sheet\": {\"length\": .., \"width\": .., "
                    "\"cells_x\": .., \"cells_y\": ..}"
                  : "give a segment mesh file (.obj lines) or \"rod\": {\"start\": [..], \"end\": [..], "
                    "\"segments\": ..}");
}

void read_codim_material_keys(JsonObject& material, BodyType type, Material& out) {
    if (type == BodyType::shell) {
        out.thickness = material.required<double>("thickness");
        require_positive(material, "thickness", out.thickness,
                         "give the shell's thickness in metres, e.g. 1e-3 for cloth");
    } else if (type == BodyType::rod) {
        out.radius = material.required<double>("radius");
        require_positive(material, "radius", out.radius, "give the rod's radius in metres, e.g. 1e-3");
    } else {
        return; // a solid's material has no such keys: finish() reports them as unknown
    }
    if (material.has("bending_stiffness")) {
        out.bending_stiffness = material.required<double>("bending_stiffness");
        require_positive(material, "bending_stiffness", out.bending_stiffness,
                         type == BodyType::shell
                             ? "give k_b in J (N m), or leave it out for E h^3 / (12 (1 - nu^2))"
                             : "give E I in N m^2, or leave it out for E pi r^4 / 4");
    }
}

double read_contact_offset(JsonObject& body, BodyType type, const Material& material) {
    if (type == BodyType::solid) {
        if (body.has("contact_offset")) {
            body.fail("contact_offset", "applies to shells and rods only",
                      "leave it out: a solid's contact surface is its boundary; for a wider gap raise "
                      "contact.dhat");
        }
        return 0.0;
    }
    const double fallback = type == BodyType::shell ? 0.5 * material.thickness : material.radius;
    const double offset = body.optional<double>("contact_offset", fallback);
    if (!(offset >= 0.0) || !std::isfinite(offset)) {
        std::ostringstream problem;
        problem << "must be a finite distance >= 0, got " << offset;
        body.fail("contact_offset", problem.str(),
                  type == BodyType::shell
                      ? "give the gap kept on each side of the sheet in metres, or leave it "
                        "out for half the thickness (0: an infinitely thin sheet)"
                      : "give the gap kept around the rod's centre line in metres, or leave "
                        "it out for the radius (0: an infinitely thin rod)");
    }
    return offset;
}

} // namespace intact::io::detail
