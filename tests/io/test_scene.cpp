// Scene parsing and validation: values, defaults, overrides and every kind of bad input.
#include "src/core/error.hpp"
#include "src/io/json_reader.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "tests/test_meshes.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using intact::InputError;
using intact::io::parse_scene;
namespace fs = std::filesystem;

// The message of the InputError thrown by `work`, or a failure when none is thrown.
template <class Work> std::string error_of(Work&& work) {
    try {
        work();
    } catch (const InputError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no InputError thrown";
    return {};
}

// Parse `document` and expect an error that names the file, the key path and a fix.
void expect_scene_error(const nlohmann::json& document, const std::string& key, const std::string& words) {
    const std::string message = error_of([&] { parse_scene(document, "dir/scene.json"); });
    EXPECT_NE(message.find("scene 'dir/scene.json'"), std::string::npos) << message;
    EXPECT_NE(message.find("key '" + key + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(words), std::string::npos) << message;
    EXPECT_NE(message.find("fix:"), std::string::npos) << message;
}

fs::path scratch_dir(const std::string& name) {
    const fs::path dir = fs::path(INTACT_BINARY_DIR) / "test_output" / "scene" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

TEST(Scene, ReadsValuesAndFillsDefaults) {
    auto document = intact::test::box_scene(4, 3, 2);
    document["bodies"][0]["translate"] = {1.0, 2.0, 3.0};
    document["bodies"][0]["scale"] = 2.0;
    document["bodies"][0]["fixed"] = {{{"box", {{"min", {0, 0, 0}}, {"max", {0, 1, 1}}}}}};
    const auto scene = parse_scene(document, "dir/scene.json");
    EXPECT_DOUBLE_EQ(scene.dt, 0.01);
    EXPECT_EQ(scene.steps, 3);
    ASSERT_EQ(scene.bodies.size(), 1u);
    const auto& body = scene.bodies[0];
    EXPECT_EQ(body.name, "block");
    EXPECT_TRUE(body.mesh.is_box);
    EXPECT_EQ(body.mesh.box_cells, (std::array<int, 3>{4, 3, 2}));
    EXPECT_EQ(body.scale, (intact::Vec3{2.0, 2.0, 2.0}));
    EXPECT_EQ(body.translate, (intact::Vec3{1.0, 2.0, 3.0}));
    EXPECT_EQ(body.material.model, "neo_hookean");
    EXPECT_DOUBLE_EQ(body.material.youngs_modulus, 1e5);
    ASSERT_EQ(body.fixed.size(), 1u);
    EXPECT_EQ(scene.gravity, (intact::Vec3{0.0, 0.0, -9.81}));
    EXPECT_TRUE(scene.contact.enabled);
    EXPECT_EQ(scene.integrator, "implicit_euler");
    EXPECT_EQ(scene.output_every, 1);
    // The resolved scene holds defaults too.
    EXPECT_EQ(scene.resolved["output"]["dir"], "output");
    EXPECT_EQ(scene.resolved["contact"]["friction"], 0.0);
    EXPECT_EQ(scene.resolved["bodies"][0]["velocity"], nlohmann::json::array({0.0, 0.0, 0.0}));
}

TEST(Scene, EndTimeGivesStepCount) {
    auto document = intact::test::box_scene();
    document["time"] = {{"dt", 0.1}, {"end", 1.0}};
    EXPECT_EQ(parse_scene(document, "s.json").steps, 10);
}

TEST(Scene, OverridesApplyBeforeValidation) {
    auto document = intact::test::box_scene();
    intact::io::apply_override(document, "time.dt=0.5", "s.json");
    intact::io::apply_override(document, "bodies.0.material.density=250", "s.json");
    intact::io::apply_override(document, "bodies.0.velocity=[0,0,-1]", "s.json");
    intact::io::apply_override(document, "output.dir=results/a", "s.json");
    const auto scene = parse_scene(document, "s.json");
    EXPECT_DOUBLE_EQ(scene.dt, 0.5);
    EXPECT_DOUBLE_EQ(scene.bodies[0].material.density, 250.0);
    EXPECT_EQ(scene.bodies[0].velocity, (intact::Vec3{0.0, 0.0, -1.0}));
    EXPECT_EQ(scene.output_dir, "results/a");
    const std::string message =
        error_of([&] { intact::io::apply_override(document, "bodies.3.name=x", "s.json"); });
    EXPECT_NE(message.find("bodies.3"), std::string::npos) << message;
    EXPECT_NE(error_of([&] { intact::io::apply_override(document, "novalue", "s.json"); }).find("key=value"),
              std::string::npos);
}

TEST(Scene, RejectsUnknownKeys) {
    auto document = intact::test::box_scene();
    document["time"]["dtt"] = 0.1;
    expect_scene_error(document, "time.dtt", "unknown key");
    document = intact::test::box_scene();
    document["bodies"][0]["material"]["young"] = 1.0;
    expect_scene_error(document, "bodies[0].material.young", "unknown key");
    document = intact::test::box_scene();
    document["colour"] = "red";
    expect_scene_error(document, "colour", "unknown key");
}

TEST(Scene, RejectsWrongTypes) {
    auto document = intact::test::box_scene();
    document["time"]["dt"] = "0.01";
    expect_scene_error(document, "time.dt", "must be a number");
    document = intact::test::box_scene();
    document["gravity"] = {0, -9.81};
    expect_scene_error(document, "gravity", "array of 3 numbers");
    document = intact::test::box_scene();
    document["bodies"][0]["mesh"]["box"]["cells"] = {2.5, 1, 1};
    expect_scene_error(document, "bodies[0].mesh.box.cells", "3 integers");
    document = intact::test::box_scene();
    document["contact"] = {{"enabled", "yes"}};
    expect_scene_error(document, "contact.enabled", "true or false");
    document = intact::test::box_scene();
    document["bodies"] = nlohmann::json::object();
    expect_scene_error(document, "bodies", "must be an array");
    document = intact::test::box_scene();
    document["solver"] = {{"acceleration_tolerance", "1e-3"}};
    expect_scene_error(document, "solver.acceleration_tolerance", "must be a number");
}

TEST(Scene, RejectsImpossibleValues) {
    const std::vector<std::tuple<std::string, nlohmann::json, std::string, std::string>> cases{
        {"/time/dt", -0.01, "time.dt", "must be > 0"},
        {"/time/dt", 0.0, "time.dt", "must be > 0"},
        {"/bodies/0/material/poisson_ratio", 0.5, "bodies[0].material.poisson_ratio", "(-1, 0.5)"},
        {"/bodies/0/material/poisson_ratio", -1.0, "bodies[0].material.poisson_ratio", "(-1, 0.5)"},
        {"/bodies/0/material/youngs_modulus", 0.0, "bodies[0].material.youngs_modulus", "must be > 0"},
        {"/bodies/0/material/youngs_modulus", -5.0, "bodies[0].material.youngs_modulus", "must be > 0"},
        {"/bodies/0/material/density", 0.0, "bodies[0].material.density", "must be > 0"},
        {"/bodies/0/material/model", "rubber", "bodies[0].material.model", "unknown material model"},
        {"/bodies/0/scale", -1.0, "bodies[0].scale", "must be > 0"},
        {"/output/every", 0, "output.every", "must be >= 1"},
        {"/integrator/type", "rk4", "integrator.type", "unknown integrator"},
        {"/contact/friction", -0.1, "contact.friction", "must be >= 0"},
        {"/solver/acceleration_tolerance", 0.0, "solver.acceleration_tolerance", "must be > 0"},
        {"/solver/acceleration_tolerance", -1e-3, "solver.acceleration_tolerance", "must be > 0"},
    };
    for (const auto& [pointer, value, key, words] : cases) {
        auto document = intact::test::box_scene();
        document[nlohmann::json::json_pointer(pointer)] = value;
        SCOPED_TRACE(key);
        expect_scene_error(document, key, words);
    }
}

TEST(Scene, ReadsAndValidatesIntegratorSettings) {
    auto document = intact::test::box_scene();
    document["integrator"] = {{"type", "a_search"},
                              {"alpha_max", 1.2},
                              {"energy",
                               {{"scale", 0.95},
                                {"ground_energy", 2.0},
                                {"schedule", {{{"from", 1.0}, {"decay_time", 1.0}}, {{"from", 1.5}}}}}}};
    const auto scene = parse_scene(document, "s.json");
    EXPECT_EQ(scene.integrator, "a_search");
    EXPECT_EQ(scene.integrator_settings.alpha_min, 0.0);
    EXPECT_EQ(scene.integrator_settings.alpha_max, 1.2);
    EXPECT_EQ(scene.integrator_settings.energy.scale, 0.95);
    ASSERT_EQ(scene.integrator_settings.energy.schedule.size(), 2u);
    EXPECT_EQ(*scene.integrator_settings.energy.schedule[0].decay_time, 1.0);
    EXPECT_FALSE(scene.integrator_settings.energy.schedule[1].decay_time);
    document["integrator"] = {{"type", "a_search"}, {"energy", {{"decay_time", 2.0}, {"decay_start", 0.5}}}};
    const auto decay = parse_scene(document, "s.json").integrator_settings.energy.schedule;
    ASSERT_EQ(decay.size(), 1u);
    EXPECT_EQ(decay[0].from, 0.5);
    document["integrator"] = {{"type", "newmark"}, {"beta", 0.3}, {"gamma", 0.6}};
    EXPECT_EQ(parse_scene(document, "s.json").integrator_settings.gamma, 0.6);

    const std::vector<std::tuple<nlohmann::json, std::string, std::string>> cases{
        {{{"type", "bdf2"}, {"beta", 0.3}}, "integrator.beta", "applies to integrator.type \"newmark\" only"},
        {{{"type", "a1"}, {"energy", {{"scale", 1.0}}}}, "integrator.energy", "\"a_search\" only"},
        {{{"type", "newmark"}, {"beta", 0.0}}, "integrator.beta", "(0, 0.5]"},
        {{{"type", "newmark"}, {"gamma", 0.4}}, "integrator.gamma", "[0.5, 1]"},
        {{{"type", "a_search"}, {"alpha_min", 1.2}}, "integrator.alpha_max", "alpha_min <= alpha_max"},
        {{{"type", "a_search"}, {"energy", {{"decay_time", -1.0}}}}, "integrator.energy.decay_time", "> 0"},
        {{{"type", "a_search"}, {"energy", {{"decay_start", 1.0}}}},
         "integrator.energy.decay_start",
         "needs decay_time"},
        {{{"type", "a_search"}, {"energy", {{"decay_time", 1.0}, {"schedule", nlohmann::json::array()}}}},
         "integrator.energy.schedule",
         "cannot be combined"},
        {{{"type", "a_search"}, {"energy", {{"schedule", {{{"from", 1.0}}, {{"from", 0.5}}}}}}},
         "integrator.energy.schedule[1].from",
         "increase"},
        {{{"type", "a_search"}, {"energy", {{"scale", 0.0}}}}, "integrator.energy.scale", "> 0"},
        {{{"type", "a_search"}, {"energy", {{"tau", 1.0}}}}, "integrator.energy.tau", "unknown key"},
    };
    for (const auto& [integrator, key, words] : cases) {
        document["integrator"] = integrator;
        SCOPED_TRACE(key);
        expect_scene_error(document, key, words);
    }
}

TEST(Scene, RequiresEssentialKeys) {
    auto document = intact::test::box_scene();
    document["time"].erase("dt");
    expect_scene_error(document, "time.dt", "required");
    document = intact::test::box_scene();
    document["time"]["end"] = 1.0;
    expect_scene_error(document, "time.end", "exactly one");
    document = intact::test::box_scene();
    document["bodies"] = nlohmann::json::array();
    expect_scene_error(document, "bodies", "at least one body");
    document = intact::test::box_scene();
    document["bodies"][0].erase("material");
    expect_scene_error(document, "bodies[0].material", "required");
}

TEST(Scene, MissingSceneFileAndBadJson) {
    EXPECT_NE(
        error_of([] { intact::io::load_scene("/nonexistent/scene.json"); }).find("/nonexistent/scene.json"),
        std::string::npos);
    const auto dir = scratch_dir("bad_json");
    std::ofstream(dir / "s.json") << "{ \"time\": { \"dt\": 0.01, } }";
    const std::string message = error_of([&] { intact::io::load_scene((dir / "s.json").string()); });
    EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
    EXPECT_NE(message.find("s.json"), std::string::npos) << message;
}

TEST(Scene, RejectsRepeatedKeysAndOutOfRangeNumbers) {
    const auto dir = scratch_dir("repeated");
    std::ofstream(dir / "twice.json") << R"({"time": {"dt": -1, "dt": 0.01, "steps": 1}, "bodies": []})";
    std::string message = error_of([&] { intact::io::load_scene((dir / "twice.json").string()); });
    EXPECT_NE(message.find("key 'dt'"), std::string::npos) << message;
    EXPECT_NE(message.find("appears twice"), std::string::npos) << message;
    std::ofstream(dir / "huge.json") << R"({"time": {"dt": 1e999, "steps": 1}, "bodies": []})";
    message = error_of([&] { intact::io::load_scene((dir / "huge.json").string()); });
    EXPECT_NE(message.find("huge.json"), std::string::npos) << message;
    auto document = intact::test::box_scene();
    document["time"]["steps"] = 5000000000LL;
    expect_scene_error(document, "time.steps", "out of range");
    document = intact::test::box_scene();
    document["bodies"][0]["mesh"]["box"]["cells"] = {4294967297LL, 1, 1};
    expect_scene_error(document, "bodies[0].mesh.box.cells", "out of range");
    document = intact::test::box_scene();
    document["time"] = {{"dt", 1e-9}, {"end", 1e10}};
    expect_scene_error(document, "time.end", "more than 2147483647 steps");
}

TEST(Scene, UnknownKeyMessageListsTheValidKeys) {
    auto document = intact::test::box_scene();
    document["bodies"][0]["mesh"]["box"]["cellz"] = {1, 1, 1};
    const std::string message = error_of([&] { parse_scene(document, "dir/scene.json"); });
    EXPECT_NE(message.find("cellz"), std::string::npos) << message;
    EXPECT_NE(message.find("cells"), std::string::npos) << message; // the key the user meant
}

TEST(SceneMesh, MissingMeshFileNamesSceneKeyAndFile) {
    auto document = intact::test::box_scene();
    document["bodies"][0]["mesh"] = {{"file", "meshes/none.msh"}};
    const auto scene = parse_scene(document, "dir/scene.json");
    EXPECT_EQ(scene.bodies[0].mesh.file, "dir/meshes/none.msh"); // relative to the scene's folder
    const std::string message = error_of([&] { intact::build_scene_mesh(scene); });
    EXPECT_NE(message.find("bodies[0].mesh.file"), std::string::npos) << message;
    EXPECT_NE(message.find("dir/meshes/none.msh"), std::string::npos) << message;
}

TEST(SceneMesh, UnparseableMeshNamesFile) {
    const auto dir = scratch_dir("garbage_mesh");
    std::ofstream(dir / "broken.msh") << "$MeshFormat\nthis is not a mesh\n";
    auto document = intact::test::box_scene();
    document["bodies"][0]["mesh"] = {{"file", "broken.msh"}};
    const auto scene = parse_scene(document, (dir / "scene.json").string());
    const std::string message = error_of([&] { intact::build_scene_mesh(scene); });
    EXPECT_NE(message.find("broken.msh"), std::string::npos) << message;
    EXPECT_NE(message.find("bodies[0].mesh.file"), std::string::npos) << message;
}

// A MEDIT mesh with two tets: the second is inverted (or flat, when `flat`).
void write_two_tets(const fs::path& path, bool flat) {
    std::ofstream out(path);
    out << "MeshVersionFormatted 2\nDimension 3\nVertices\n5\n"
        << "0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n"
        << (flat ? "1 1 0 0\n" : "0 0 -1 0\n") << "Tetrahedra\n2\n1 2 3 4 1\n1 2 3 5 1\nEnd\n";
}

TEST(SceneMesh, RejectsInvertedAndFlatTetrahedra) {
    const auto dir = scratch_dir("inverted");
    write_two_tets(dir / "inverted.mesh", false);
    write_two_tets(dir / "flat.mesh", true);
    for (const std::string name : {"inverted", "flat"}) {
        auto document = intact::test::box_scene();
        document["bodies"][0]["mesh"] = {{"file", name + ".mesh"}};
        const auto scene = parse_scene(document, (dir / "scene.json").string());
        const std::string message = error_of([&] { intact::build_scene_mesh(scene); });
        EXPECT_NE(message.find("tetrahedron 1"), std::string::npos) << message;
        EXPECT_NE(message.find(name == "inverted" ? "negative volume" : "zero volume"), std::string::npos)
            << message;
        EXPECT_NE(message.find(name + ".mesh"), std::string::npos) << message;
        EXPECT_NE(message.find("fix:"), std::string::npos) << message;
    }
}

TEST(SceneMesh, TransformsAndSelectsBoundaryNodes) {
    auto document = intact::test::box_scene(2, 2, 2);
    document["bodies"][0]["rotate_deg"] = {0, 0, 90};
    document["bodies"][0]["translate"] = {10, 0, 0};
    // After rotating 90 degrees about z, x in [0,1] maps to y in [0,1]; the face y = 0 becomes x = 10.
    document["bodies"][0]["fixed"] = {{{"box", {{"min", {9.99, -1, -1}}, {"max", {10.01, 2, 2}}}}}};
    document["bodies"][0]["moving"] = {
        {{"box", {{"min", {-100, 0.99, -1}}, {"max", {100, 1.01, 2}}}}, {"velocity", {0, 1, 0}}}};
    const auto mesh = intact::build_scene_mesh(parse_scene(document, "s.json"));
    int fixed = 0;
    int moving = 0;
    for (std::size_t n = 0; n < mesh.mesh.nodes.size(); ++n) {
        const auto& x = mesh.mesh.nodes[n];
        EXPECT_GE(x[0], 10.0 - 0.75 - 1e-12);
        EXPECT_LE(x[0], 10.0 + 1e-12);
        fixed += mesh.constraint[n] == intact::NodeConstraint::fixed;
        moving += mesh.constraint[n] == intact::NodeConstraint::moving;
    }
    // 3 × 3 nodes on each face; the 3 nodes on the shared edge are moving (selectors apply in order,
    // fixed first, then moving).
    EXPECT_EQ(fixed, 6);
    EXPECT_EQ(moving, 9);
    // A selector that catches nothing is an error naming it.
    document["bodies"][0]["fixed"] = {{{"box", {{"min", {50, 50, 50}}, {"max", {51, 51, 51}}}}}};
    const std::string message = error_of([&] { intact::build_scene_mesh(parse_scene(document, "s.json")); });
    EXPECT_NE(message.find("bodies[0].fixed[0].box"), std::string::npos) << message;
}

} // namespace
