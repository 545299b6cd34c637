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

TEST(Scene, MissingRequiredKeyNamesItsNearMissAndNoValidKey) {
    // A misspelled required key is reported missing before the object's other keys are read: the near
    // miss is named, and the valid keys not read yet are not called unrecognised.
    auto document = intact::test::box_scene();
    auto& material = document["bodies"][0]["material"];
    material["youngs_modulous"] = material["youngs_modulus"];
    material.erase("youngs_modulus");
    expect_scene_error(document, "bodies[0].material.youngs_modulus",
                       "'youngs_modulous' here looks like a misspelling");
    const std::string message = error_of([&] { parse_scene(document, "dir/scene.json"); });
    EXPECT_EQ(message.find("unrecognised"), std::string::npos) << message;
    EXPECT_NE(message.find("rename 'youngs_modulous' to \"youngs_modulus\""), std::string::npos) << message;
    // A transposition is one edit; a misspelled object key is named too.
    material["youngs_modulus"] = 1e5;
    material.erase("youngs_modulous");
    material["desnity"] = material["density"];
    material.erase("density");
    expect_scene_error(document, "bodies[0].material.density", "'desnity' here looks like a misspelling");
    auto object_key = intact::test::box_scene();
    object_key["bodies"][0]["materal"] = object_key["bodies"][0]["material"];
    object_key["bodies"][0].erase("material");
    expect_scene_error(object_key, "bodies[0].material", "'materal' here looks like a misspelling");
    // Nothing near: the keys not read yet are listed.
    material.erase("desnity");
    material["colour"] = "red";
    expect_scene_error(document, "bodies[0].material.density", "keys not read yet: 'colour'");
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

TEST(Scene, ReadsAndValidatesBalSettings) {
    auto document = intact::test::box_scene();
    document["solver"] = {{"type", "bal"},
                          {"preconditioner", "decade_warm_start"},
                          {"bal",
                           {{"augment_distance", 2e-6},
                            {"sigma_rule", "max"},
                            {"stall_window", 50},
                            {"stall_test", "residual"},
                            {"friction_update", "per_iteration"}}}};
    const auto scene = parse_scene(document, "s.json");
    EXPECT_EQ(scene.solver, "bal");
    EXPECT_EQ(scene.preconditioner, "decade_warm_start");
    EXPECT_EQ(*scene.bal.augment_distance, 2e-6);
    EXPECT_EQ(scene.bal.sigma_rule, "max");
    EXPECT_EQ(scene.bal.sigma_growth, 1.2);
    EXPECT_EQ(scene.bal.sigma_jump, 100.0);
    EXPECT_EQ(scene.bal.tolerance, 1e-4);
    EXPECT_EQ(scene.bal.pcg_tolerance, 1e-4);
    EXPECT_EQ(scene.bal.stall_window, 50);
    EXPECT_EQ(scene.bal.stall_test, "residual");
    EXPECT_EQ(scene.bal.friction_update, "per_iteration");
    const auto defaults = parse_scene(intact::test::box_scene(), "s.json");
    EXPECT_EQ(defaults.preconditioner, "rigid_coarse");
    EXPECT_EQ(defaults.bal.sigma_rule, "min");
    EXPECT_EQ(defaults.bal.stall_test, "energy");
    EXPECT_EQ(defaults.bal.friction_update, "per_solve");

    const std::vector<std::tuple<std::string, nlohmann::json, std::string, std::string>> cases{
        {"/solver/preconditioner", "ilu", "solver.preconditioner", "unknown preconditioner"},
        {"/solver/bal/augment_distance", 0.0, "solver.bal.augment_distance", "must be > 0"},
        {"/solver/bal/sigma_growth", 0.9, "solver.bal.sigma_growth", "must be >= 1"},
        {"/solver/bal/sigma_jump", 0.5, "solver.bal.sigma_jump", "must be >= 1"},
        {"/solver/bal/sigma_rule", "avg", "solver.bal.sigma_rule", "unknown rule"},
        {"/solver/bal/tolerance", 1.0, "solver.bal.tolerance", "must be in (0, 1)"},
        {"/solver/bal/pcg_tolerance", 0.0, "solver.bal.pcg_tolerance", "must be in (0, 1)"},
        {"/solver/bal/stall_window", 0, "solver.bal.stall_window", "must be >= 1"},
        {"/solver/bal/stall_test", "gradient", "solver.bal.stall_test", "unknown value"},
        {"/solver/bal/friction_update", "never", "solver.bal.friction_update", "unknown value"},
        {"/solver/bal/sigma", 1.0, "solver.bal.sigma", "unknown key"},
    };
    for (const auto& [pointer, value, key, words] : cases) {
        auto bad = intact::test::box_scene();
        bad["solver"] = {{"type", "bal"}};
        bad[nlohmann::json::json_pointer(pointer)] = value;
        SCOPED_TRACE(key);
        expect_scene_error(bad, key, words);
    }
    auto wrong = intact::test::box_scene();
    wrong["solver"] = {{"type", "ipc"}, {"bal", {{"tolerance", 1e-3}}}};
    expect_scene_error(wrong, "solver.bal", "solver.type is 'ipc'");
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

TEST(Scene, ReadsMotionForceSpinAndObstacleKeys) {
    auto document = intact::test::box_scene(2, 2, 2);
    auto& body = document["bodies"][0];
    body["rotate_about"] = "center";
    body["angular_velocity"] = {0, 0, 3};
    body["moving"] = {{{"box", {{"min", {0, 0, 0}}, {"max", {0.1, 1, 1}}}},
                       {"angular_velocity", {1, 0, 0}},
                       {"center", {0, 0.5, 0.5}},
                       {"start", 0.1},
                       {"end", 0.3}}};
    body["forces"] = {
        {{"box", {{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}}, {"force", {0, 0, -2}}, {"end", 1.0}}};
    document["contact"] = {{"friction", 0.3}};
    document["obstacles"] = {{{"plane", {{"point", {0, 0, -1}}, {"normal", {0, 0, 2}}}},
                              {"rotate_deg", {90, 0, 0}},
                              {"friction", 0.0}},
                             {{"mesh", {{"file", "blade.obj"}}},
                              {"scale", 2},
                              {"translate", {1, 2, 3}},
                              {"angular_velocity", {0, 0, 1}},
                              {"center", {1, 1, 1}}}};
    const auto scene = parse_scene(document, "dir/scene.json");
    const auto& b = scene.bodies[0];
    EXPECT_TRUE(b.rotate_about_center);
    EXPECT_EQ(b.angular_velocity, (intact::Vec3{0, 0, 3}));
    ASSERT_EQ(b.moving.size(), 1u);
    EXPECT_EQ(b.moving[0].motion.velocity, (intact::Vec3{0, 0, 0}));
    EXPECT_EQ(b.moving[0].motion.center, (intact::Vec3{0, 0.5, 0.5}));
    EXPECT_DOUBLE_EQ(b.moving[0].window.start, 0.1);
    ASSERT_TRUE(b.moving[0].window.end.has_value());
    EXPECT_DOUBLE_EQ(*b.moving[0].window.end, 0.3);
    // The window's share of a step: whole, partly, none.
    EXPECT_EQ(b.moving[0].window.active_seconds(0.15, 0.01), 0.01);
    EXPECT_NEAR(b.moving[0].window.active_seconds(0.295, 0.01), 0.005, 1e-15);
    EXPECT_EQ(b.moving[0].window.active_seconds(0.05, 0.01), 0.0);
    EXPECT_NEAR(b.moving[0].window.active_before(1.0), 0.2, 1e-15);
    ASSERT_EQ(b.forces.size(), 1u);
    EXPECT_EQ(b.forces[0].force, (intact::Vec3{0, 0, -2}));
    EXPECT_EQ(b.forces[0].window.start, 0.0);
    EXPECT_EQ(scene.obstacles[1].scale, (intact::Vec3{2, 2, 2}));
    EXPECT_EQ(scene.obstacles[1].motion.angular_velocity, (intact::Vec3{0, 0, 1}));
    EXPECT_FALSE(scene.obstacles[1].friction.has_value());
    EXPECT_DOUBLE_EQ(scene.obstacle_friction(0), 0.0);
    EXPECT_DOUBLE_EQ(scene.obstacle_friction(1), 0.3);
    EXPECT_TRUE(scene.has_friction());
    // The resolved scene states every obstacle's placement, motion and μ (what `intact check` reads).
    const auto& resolved = scene.resolved["obstacles"][1];
    EXPECT_EQ(resolved["translate"], nlohmann::json({1.0, 2.0, 3.0}));
    EXPECT_EQ(resolved["center"], nlohmann::json({1.0, 1.0, 1.0}));
    EXPECT_EQ(resolved["friction"], 0.3);
    EXPECT_EQ(scene.resolved["obstacles"][0]["angular_velocity"], nlohmann::json({0.0, 0.0, 0.0}));
}

TEST(Scene, RejectsBadMotionForceAndObstacleValues) {
    const auto moving = [](nlohmann::json entry) {
        auto document = intact::test::box_scene(2, 2, 2);
        entry["box"] = {{"min", {0, 0, 0}}, {"max", {1, 1, 1}}};
        document["bodies"][0]["moving"] = {entry};
        return document;
    };
    expect_scene_error(moving({}), "bodies[0].moving[0].velocity", "needs a velocity, an angular_velocity");
    expect_scene_error(moving({{"angular_velocity", {0, 0, 1}}}), "bodies[0].moving[0].center",
                       "required with angular_velocity");
    expect_scene_error(moving({{"velocity", {0, 0, 1}}, {"center", {0, 0, 0}}}), "bodies[0].moving[0].center",
                       "no effect without angular_velocity");
    expect_scene_error(moving({{"velocity", {0, 0, 1}}, {"start", -1.0}}), "bodies[0].moving[0].start",
                       ">= 0");
    expect_scene_error(moving({{"velocity", {0, 0, 1}}, {"start", 0.5}, {"end", 0.5}}),
                       "bodies[0].moving[0].end", "after start");
    expect_scene_error(moving({{"angular_velocity", "fast"}, {"center", {0, 0, 0}}}),
                       "bodies[0].moving[0].angular_velocity", "array of 3 numbers");

    auto forces = intact::test::box_scene(2, 2, 2);
    forces["bodies"][0]["forces"] = {{{"box", {{"min", {0, 0, 0}}, {"max", {1, 1, 1}}}}}};
    expect_scene_error(forces, "bodies[0].forces[0].force", "required");
    forces["bodies"][0]["forces"][0]["force"] = {1, 0};
    expect_scene_error(forces, "bodies[0].forces[0].force", "array of 3 numbers");
    forces["bodies"][0]["forces"][0]["force"] = {1, 0, 0};
    forces["bodies"][0]["forces"][0]["end"] = -1.0;
    expect_scene_error(forces, "bodies[0].forces[0].end", "after start");
    forces["bodies"][0]["forces"][0].erase("end");
    forces["bodies"][0]["forces"][0]["torque"] = 1.0;
    expect_scene_error(forces, "bodies[0].forces[0].torque", "unknown");

    auto body = intact::test::box_scene(2, 2, 2);
    body["bodies"][0]["rotate_about"] = "centre";
    expect_scene_error(body, "bodies[0].rotate_about", "\"origin\" or \"center\"");
    body["bodies"][0]["rotate_about"] = "origin";
    body["bodies"][0]["angular_velocity"] = 2.0;
    expect_scene_error(body, "bodies[0].angular_velocity", "array of 3 numbers");

    const auto obstacle = [](nlohmann::json entry) {
        auto document = intact::test::box_scene(2, 2, 2);
        if (!entry.contains("mesh")) {
            entry["plane"] = {{"point", {0, 0, -1}}, {"normal", {0, 0, 1}}};
        }
        document["obstacles"] = {entry};
        return document;
    };
    expect_scene_error(obstacle({{"friction", -0.1}}), "obstacles[0].friction", ">= 0");
    expect_scene_error(obstacle({{"scale", {1, 0, 1}}}), "obstacles[0].scale", "> 0");
    expect_scene_error(obstacle({{"angular_velocity", {0, 0, 1}}, {"center", {0, 0, 0}}}),
                       "obstacles[0].angular_velocity", "not supported for a plane");
    expect_scene_error(obstacle({{"mesh", {{"file", "a.obj"}}}, {"angular_velocity", {0, 0, 1}}}),
                       "obstacles[0].center", "required with angular_velocity");
    expect_scene_error(obstacle({{"mesh", {{"file", "a.obj"}}}, {"center", {0, 0, 0}}}),
                       "obstacles[0].center", "no effect");
    expect_scene_error(obstacle({{"rotate_deg", "x"}}), "obstacles[0].rotate_deg", "array of 3 numbers");
}

TEST(SceneMesh, RotatesAboutTheCentroidGivesSpinAndMovingVelocities) {
    // rotate_about "center": a generated box turned 90° about z keeps its centroid; "origin" moves it.
    auto document = intact::test::box_scene(2, 2, 2);
    document["bodies"][0]["rotate_deg"] = {0, 0, 90};
    document["bodies"][0]["rotate_about"] = "center";
    document["bodies"][0]["angular_velocity"] = {0, 0, 2};
    document["bodies"][0]["moving"] = {{{"box", {{"min", {-10, -10, 0.49}}, {"max", {10, 10, 1}}}},
                                        {"velocity", {0, 0, 1}},
                                        {"angular_velocity", {0, 0, 3}},
                                        {"center", {0.5, 0.375, 0}}}};
    const auto mesh = intact::build_scene_mesh(parse_scene(document, "s.json"));
    intact::Vec3 lo{1e9, 1e9, 1e9}, hi{-1e9, -1e9, -1e9};
    for (const auto& x : mesh.mesh.nodes) {
        for (int c = 0; c < 3; ++c) {
            lo[c] = std::min(lo[c], x[c]);
            hi[c] = std::max(hi[c], x[c]);
        }
    }
    // The box [0, 1] × [0, 0.75] × [0, 0.5] turned about (0.5, 0.375): x ∈ [0.125, 0.875], y ∈ [−0.125,
    // 0.875].
    EXPECT_NEAR(lo[0], 0.125, 1e-12);
    EXPECT_NEAR(hi[0], 0.875, 1e-12);
    EXPECT_NEAR(lo[1], -0.125, 1e-12);
    EXPECT_NEAR(hi[1], 0.875, 1e-12);
    for (std::size_t n = 0; n < mesh.mesh.nodes.size(); ++n) {
        const auto& x = mesh.mesh.nodes[n];
        const auto& v = mesh.velocity[n];
        if (mesh.constraint[n] == intact::NodeConstraint::moving) {
            // v + ω × (x − c) of the moving box
            EXPECT_NEAR(v[0], -3 * (x[1] - 0.375), 1e-12);
            EXPECT_NEAR(v[1], 3 * (x[0] - 0.5), 1e-12);
            EXPECT_NEAR(v[2], 1.0, 1e-12);
            EXPECT_EQ(mesh.motion[n], 0);
        } else {
            // spin about the centre of mass (0.5, 0.375, 0.25)
            EXPECT_NEAR(v[0], -2 * (x[1] - 0.375), 1e-12);
            EXPECT_NEAR(v[1], 2 * (x[0] - 0.5), 1e-12);
            EXPECT_NEAR(v[2], 0.0, 1e-12);
            EXPECT_EQ(mesh.motion[n], -1);
        }
    }
    // A moving box that starts later starts at rest; a force box that selects nothing is an error.
    document["bodies"][0]["moving"][0]["start"] = 0.5;
    const auto later = intact::build_scene_mesh(parse_scene(document, "s.json"));
    for (std::size_t n = 0; n < later.mesh.nodes.size(); ++n) {
        if (later.constraint[n] == intact::NodeConstraint::moving) {
            EXPECT_EQ(later.velocity[n], (intact::Vec3{0, 0, 0}));
        }
    }
    document["bodies"][0]["forces"] = {
        {{"box", {{"min", {50, 50, 50}}, {"max", {51, 51, 51}}}}, {"force", {1, 0, 0}}}};
    const std::string message = error_of([&] { intact::build_scene_mesh(parse_scene(document, "s.json")); });
    EXPECT_NE(message.find("bodies[0].forces[0].box"), std::string::npos) << message;
}

TEST(SceneMesh, PlacesObstacleMeshesAndRejectsZeroLengthSegments) {
    const fs::path dir = scratch_dir("obstacles");
    std::ofstream(dir / "wire.obj") << "v 0 0 0\nv 1 0 0\nv 2 0 0\nl 1 2 3\n";
    std::ofstream(dir / "bad.obj") << "v 0 0 0\nv 1 0 0\nl 1 2\nl 2 2\n";
    auto document = intact::test::box_scene(2, 2, 2);
    document["obstacles"] = {{{"mesh", {{"file", "wire.obj"}}},
                              {"scale", {2, 1, 1}},
                              {"rotate_deg", {0, 0, 90}},
                              {"translate", {0, 0, -1}}}};
    const auto mesh = intact::build_scene_mesh(parse_scene(document, (dir / "s.json").string()));
    ASSERT_EQ(mesh.obstacle_meshes.size(), 1u);
    const auto& wire = mesh.obstacle_meshes[0];
    ASSERT_EQ(wire.segments.size(), 2u);
    EXPECT_NEAR(wire.nodes[2][0], 0.0, 1e-12); // (2, 0, 0) scaled to (4, 0, 0), turned to (0, 4, 0)
    EXPECT_NEAR(wire.nodes[2][1], 4.0, 1e-12);
    EXPECT_NEAR(wire.nodes[2][2], -1.0, 1e-12);
    document["obstacles"][0]["mesh"]["file"] = "bad.obj";
    const std::string message =
        error_of([&] { intact::build_scene_mesh(parse_scene(document, (dir / "s.json").string())); });
    EXPECT_NE(message.find("obstacles[0].mesh.file"), std::string::npos) << message;
    EXPECT_NE(message.find("segment 2"), std::string::npos) << message;
    EXPECT_NE(message.find("zero length"), std::string::npos) << message;
}

TEST(Scene, ReadsAndValidatesStencilDescentSettings) {
    auto document = intact::test::box_scene();
    document["solver"] = {{"type", "stencil_descent"},
                          {"stencil_descent", {{"colors", 10}, {"schemes", 4}, {"tolerance", 1e-6}}}};
    const intact::io::Scene scene = parse_scene(document, "dir/scene.json");
    EXPECT_EQ(scene.solver, "stencil_descent");
    EXPECT_EQ(scene.stencil_descent.colors, 10);
    EXPECT_EQ(scene.stencil_descent.schemes, 4);
    EXPECT_EQ(scene.stencil_descent.tolerance, 1e-6);
    EXPECT_EQ(scene.stencil_descent.cg_iterations, 12);
    EXPECT_EQ(scene.stencil_descent.toi_factor, 0.8);
    EXPECT_EQ(scene.stencil_descent.warm_start_sweeps, 30);
    EXPECT_EQ(scene.stencil_descent.regular_ccd_every, 1);
    EXPECT_EQ(scene.stencil_descent.element_batch, 0);
    EXPECT_TRUE(scene.stencil_descent.accept_updates);
    const std::vector<std::tuple<std::string, nlohmann::json, std::string, std::string>> cases{
        {"cg_iterations", 0, "solver.stencil_descent.cg_iterations", "must be >= 1"},
        {"colors", 0, "solver.stencil_descent.colors", "must be >= 1"},
        {"colors", 255, "solver.stencil_descent.colors", "at most 254"},
        {"schemes", 9, "solver.stencil_descent.schemes", "at most 8"},
        {"toi_factor", 1.0, "solver.stencil_descent.toi_factor", "(0, 1)"},
        {"max_sweeps", 0, "solver.stencil_descent.max_sweeps", "must be >= 1"},
        {"tolerance", 1.0, "solver.stencil_descent.tolerance", "[0, 1)"},
        {"warm_start_sweeps", -1, "solver.stencil_descent.warm_start_sweeps", "must be >= 0"},
        {"regular_ccd_every", 0, "solver.stencil_descent.regular_ccd_every", "must be >= 1"},
        {"regular_ccd_every", "often", "solver.stencil_descent.regular_ccd_every", "integer"},
        {"element_batch", -1, "solver.stencil_descent.element_batch", "must be >= 0"},
        {"element_batch", 2.5, "solver.stencil_descent.element_batch", "integer"},
        {"accept_updates", 1, "solver.stencil_descent.accept_updates", "true or false"},
    };
    for (const auto& [name, value, key, words] : cases) {
        auto bad = intact::test::box_scene();
        bad["solver"] = {{"type", "stencil_descent"}, {"stencil_descent", {{name, value}}}};
        SCOPED_TRACE(key);
        expect_scene_error(bad, key, words);
    }
    auto other = intact::test::box_scene();
    other["solver"] = {{"type", "ipc"}, {"stencil_descent", {{"colors", 10}}}};
    expect_scene_error(other, "solver.stencil_descent", "solver.type is 'ipc'");
}

TEST(Scene, DefaultSolverIsIpcAndSolverAlNeedsAl) {
    // Bodies meeting an obstacle with friction, the scene where `al` was the default until 2026-11-29:
    // `ipc`, recorded in the resolved scene.
    auto document = intact::test::box_scene();
    document["contact"] = {{"friction", 0.3}};
    document["obstacles"] = {{{"plane", {{"point", {0, 0, -1}}, {"normal", {0, 0, 1}}}}}};
    const auto scene = parse_scene(document, "dir/scene.json");
    EXPECT_EQ(scene.solver, "ipc");
    EXPECT_EQ(scene.resolved["solver"]["type"], "ipc");
    // A named solver wins; solver.al is accepted with `al` named, and an error otherwise.
    document["solver"] = {{"type", "al"}, {"al", {{"k_min", 4}}}};
    EXPECT_EQ(*parse_scene(document, "dir/scene.json").al.k_min, 4);
    document["solver"] = {{"al", {{"k_min", 4}}}};
    expect_scene_error(document, "solver.al", "solver.type is 'ipc' (the default)");
}

TEST(Scene, ReadsAndValidatesAugmentedLagrangianSettings) {
    auto document = intact::test::box_scene();
    document["solver"] = {{"type", "al"}, {"al", {{"k_min", 4}, {"settle", true}}}};
    const intact::io::Scene scene = parse_scene(document, "dir/scene.json");
    EXPECT_EQ(*scene.al.k_min, 4);
    EXPECT_TRUE(scene.al.settle);
    EXPECT_EQ(scene.al.mu_scale, 0.1);
    EXPECT_EQ(scene.al.start, "inertial");
    document["solver"]["al"] = {{"start", "positions"}};
    EXPECT_EQ(parse_scene(document, "dir/scene.json").al.start, "positions");
    document["solver"]["al"] = nlohmann::json::object();
    EXPECT_FALSE(parse_scene(document, "dir/scene.json").al.settle);
    const std::vector<std::tuple<std::string, nlohmann::json, std::string, std::string>> cases{
        {"k_min", 0, "solver.al.k_min", "must be >= 1"},
        {"epsilon", 1.0, "solver.al.epsilon", "(0, 1)"},
        {"settle", "yes", "solver.al.settle", "true or false"},
        {"start", "rest", "solver.al.start", "\"inertial\""},
    };
    for (const auto& [name, value, key, words] : cases) {
        auto bad = intact::test::box_scene();
        bad["solver"] = {{"type", "al"}, {"al", {{name, value}}}};
        SCOPED_TRACE(key);
        expect_scene_error(bad, key, words);
    }
}

// A body the scene names is named in the messages about its keys (and its children's); one it does not
// name is known by its key path alone.
TEST(Scene, MessagesNameTheBodyByItsName) {
    auto document = intact::test::box_scene(1, 1, 1);
    document["bodies"][0]["name"] = "ball";
    document["bodies"][0]["material"]["density"] = -1.0;
    std::string message = error_of([&] { parse_scene(document, "dir/scene.json"); });
    EXPECT_NE(message.find("key 'bodies[0].material.density' (body \"ball\"): must be > 0"),
              std::string::npos)
        << message;
    document["bodies"][0].erase("name");
    message = error_of([&] { parse_scene(document, "dir/scene.json"); });
    EXPECT_NE(message.find("key 'bodies[0].material.density': must be > 0"), std::string::npos) << message;

    document["bodies"][0]["name"] = "ball";
    const auto scene = [&] {
        document["bodies"][0]["material"]["density"] = 1000.0;
        document["bodies"].push_back(document["bodies"][0]);
        document["bodies"][1].erase("name");
        return parse_scene(document, "dir/scene.json");
    }();
    EXPECT_EQ(intact::io::body_label(scene.bodies[0], 0), "bodies[0] (\"ball\")");
    EXPECT_EQ(intact::io::body_label(scene.bodies[1], 1), "bodies[1]");
}

} // namespace
