// The scene key table against the scene reader: every key of the table is read (and its default is the
// one in effect), every key the reader reads is in the table, enums and bounds agree, unknown keys are
// refused everywhere, and docs/scene.schema.json and the scenes in inputs/ follow the table.
#include "comm/halo_transport.hpp"
#include "src/core/error.hpp"
#include "src/io/scene.hpp"
#include "src/io/scene_keys.hpp"
#include "tests/test_meshes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace {

using intact::InputError;
using intact::io::KeyType;
using intact::io::SceneKey;
namespace fs = std::filesystem;

using Assignments = std::vector<std::pair<std::string, nlohmann::json>>;

// One box body (from the test meshes) and one plane obstacle: valid, and the base of every case.
nlohmann::json base_scene() {
    nlohmann::json scene = intact::test::box_scene(1, 1, 1);
    scene["obstacles"] = {{{"plane", {{"point", {0.0, 0.0, -1.0}}, {"normal", {0.0, 0.0, 1.0}}}}}};
    return scene;
}

const nlohmann::json box = {{"min", {-1.0, -1.0, -1.0}}, {"max", {2.0, 2.0, 2.0}}};

// A valid first element for each array of objects that the base scene lacks.
const std::map<std::string, nlohmann::json>& seeds() {
    static const std::map<std::string, nlohmann::json> table{
        {"bodies[].fixed", {{"box", box}}},
        {"bodies[].moving", {{"box", box}, {"velocity", {0.0, 0.0, 0.1}}}},
        {"bodies[].forces", {{"box", box}, {"force", {0.0, 0.0, -1.0}}}},
        {"integrator.energy.schedule", {{"from", 0.0}}},
    };
    return table;
}

// What a key needs around it besides its `only_with` setting: assignments made before the key is
// given (`before`, the scene stays valid without the key) and along with it (`with`). null erases.
struct Context {
    Assignments before;
    Assignments with;
    std::map<std::string, Assignments> with_value; ///< more companions for one value of the key
};

// A shell or a rod body in place of the base scene's box (without contact: the keys are about the body).
Assignments shell_body() {
    return {{"contact.enabled", false},
            {"bodies[].type", "shell"},
            {"bodies[].mesh.box", nullptr},
            {"bodies[].mesh.sheet", {{"length", 1.0}, {"width", 1.0}}},
            {"bodies[].material.thickness", 1e-3}};
}
Assignments rod_body() {
    return {{"contact.enabled", false},
            {"bodies[].type", "rod"},
            {"bodies[].mesh.box", nullptr},
            {"bodies[].mesh.rod", {{"start", {0.0, 0.0, 0.0}}, {"end", {1.0, 0.0, 0.0}}}},
            {"bodies[].material.poisson_ratio", nullptr},
            {"bodies[].material.model", nullptr},
            {"bodies[].material.radius", 1e-3}};
}
const std::map<std::string, Context>& contexts() {
    const nlohmann::json spin = {0.0, 0.0, 1.0};
    const nlohmann::json origin = {0.0, 0.0, 0.0};
    static const std::map<std::string, Context> contexts = [&] {
        std::map<std::string, Context> table{
            {"time.end", {{{"time.steps", nullptr}}, {}}},
            {"bodies[].mesh.file", {{{"bodies[].mesh.box", nullptr}}, {}}},
            {"bodies[].moving[].velocity",
             {{{"bodies[].moving[].velocity", nullptr},
               {"bodies[].moving[].angular_velocity", spin},
               {"bodies[].moving[].center", origin}},
              {}}},
            {"bodies[].moving[].angular_velocity", {{}, {{"bodies[].moving[].center", origin}}}},
            {"bodies[].moving[].center", {{}, {{"bodies[].moving[].angular_velocity", spin}}}},
            {"obstacles[].mesh.file", {{{"obstacles[].plane", nullptr}}, {}}},
            {"obstacles[].angular_velocity",
             {{{"obstacles[].plane", nullptr}, {"obstacles[].mesh.file", "wall.obj"}},
              {{"obstacles[].center", origin}}}},
            {"obstacles[].center",
             {{{"obstacles[].plane", nullptr}, {"obstacles[].mesh.file", "wall.obj"}},
              {{"obstacles[].angular_velocity", spin}}}},
            {"integrator.energy.decay_start", {{{"integrator.energy.decay_time", 1.0}}, {}}},
            {"bodies[].type", {{}, {}, {{"shell", shell_body()}, {"rod", rod_body()}}}},
        };
        for (const char* key :
             {"bodies[].mesh.sheet.length", "bodies[].mesh.sheet.width", "bodies[].mesh.sheet.cells_x",
              "bodies[].mesh.sheet.cells_y", "bodies[].material.thickness",
              "bodies[].material.bending_stiffness", "bodies[].contact_offset"}) {
            table.emplace(key, Context{shell_body(), {}, {}});
        }
        for (const char* key : {"bodies[].mesh.rod.start", "bodies[].mesh.rod.end",
                                "bodies[].mesh.rod.segments", "bodies[].material.radius"}) {
            table.emplace(key, Context{rod_body(), {}, {}});
        }
        return table;
    }();
    return contexts;
}

// "bodies[].moving[].center" -> "bodies[0].moving[0].center": where the cases put a key.
std::string first_element_path(const std::string& pattern) {
    std::string path;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        path += pattern[i];
        if (pattern[i] == '[') {
            path += '0';
        }
    }
    return path;
}

// "bodies[].moving[].center" -> the JSON pointer /bodies/0/moving/0/center.
nlohmann::json::json_pointer first_element_pointer(const std::string& pattern) {
    std::string pointer = "/";
    for (char c : pattern) {
        if (c == '.') {
            pointer += '/';
        } else if (c == '[') {
            pointer += "/0";
        } else if (c != ']') {
            pointer += c;
        }
    }
    return nlohmann::json::json_pointer(pointer);
}

// Assign `value` at the key `pattern` of `document` (element 0 of each array, seeded where missing;
// objects created on the way). A null value erases the key.
void assign(nlohmann::json& document, const std::string& pattern, const nlohmann::json& value) {
    nlohmann::json* node = &document;
    std::size_t start = 0;
    while (true) {
        const auto dot = pattern.find('.', start);
        std::string part = pattern.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        const bool element = part.size() > 2 && part.compare(part.size() - 2, 2, "[]") == 0;
        if (element) {
            part.resize(part.size() - 2);
        }
        if (dot == std::string::npos && !element) {
            if (value.is_null()) {
                node->erase(part);
            } else {
                (*node)[part] = value;
            }
            return;
        }
        nlohmann::json& child = (*node)[part];
        if (element) {
            if (!child.is_array() || child.empty()) {
                const std::string array = pattern.substr(0, start + part.size());
                ASSERT_TRUE(seeds().count(array)) << "no seed element for " << array;
                child = nlohmann::json::array({seeds().at(array)});
            }
            node = &child[0];
        } else {
            node = &child;
        }
        start = dot + 1;
    }
}

// The setting a key is accepted under (its own `only_with` or its nearest parent's), as an assignment.
Assignments setting_of(const std::string& pattern) {
    for (std::string path = pattern; !path.empty();) {
        const SceneKey* key = intact::io::find_scene_key(path);
        if (key && !key->only_with.empty()) {
            const auto eq = key->only_with.find('=');
            return {{key->only_with.substr(0, eq), key->only_with.substr(eq + 1)}};
        }
        const auto dot = path.rfind('.');
        path = dot == std::string::npos ? "" : path.substr(0, dot);
    }
    return {};
}

bool is_leaf(const SceneKey& key) {
    return key.type != KeyType::object && key.type != KeyType::object_array;
}

// A valid value of `key`: its default, or its example.
nlohmann::json valid_value(const SceneKey& key) {
    return key.fallback.is_null() ? key.example : key.fallback;
}

// The base scene with `key`'s setting, context and parents, without the key itself.
nlohmann::json scene_without(const SceneKey& key) {
    nlohmann::json document = base_scene();
    for (const auto& [path, value] : setting_of(key.path)) {
        assign(document, path, value);
    }
    if (contexts().count(key.path)) {
        for (const auto& [path, value] : contexts().at(key.path).before) {
            assign(document, path, value);
        }
    }
    assign(document, key.path, valid_value(key)); // creates the objects and elements on the way
    assign(document, key.path, nullptr);
    return document;
}

// … and with the key set to `value` (and what must come with it).
nlohmann::json scene_with(const SceneKey& key, const nlohmann::json& value) {
    nlohmann::json document = scene_without(key);
    if (contexts().count(key.path)) {
        const Context& context = contexts().at(key.path);
        for (const auto& [path, companion] : context.with) {
            assign(document, path, companion);
        }
        if (value.is_string() && context.with_value.count(value.get<std::string>())) {
            for (const auto& [path, companion] : context.with_value.at(value.get<std::string>())) {
                assign(document, path, companion);
            }
        }
    }
    assign(document, key.path, value);
    return document;
}

std::string error_of(const nlohmann::json& document) {
    try {
        intact::io::parse_scene(document, "dir/scene.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

TEST(SceneKeys, EveryValueKeyHasAMeaningAndAValidValue) {
    for (const SceneKey& key : intact::io::scene_keys()) {
        EXPECT_FALSE(key.meaning.empty()) << key.path;
        if (is_leaf(key)) {
            EXPECT_FALSE(valid_value(key).is_null()) << key.path << " has neither a default nor an example";
            EXPECT_TRUE(key.required || !key.fallback.is_null() || !key.fallback_text.empty())
                << key.path << ": an optional key states its default";
        } else {
            EXPECT_FALSE(
                intact::io::scene_key_children(key.path + (key.type == KeyType::object ? "" : "[]")).empty())
                << key.path << " has no keys";
        }
    }
}

// Every key of the table is read: a scene that gives it parses (the reader refuses keys it did not read).
// A key with a constant default has that value in the resolved scene when it is left out.
TEST(SceneKeys, TheReaderReadsEveryKeyOfTheTableWithItsDefault) {
    for (const SceneKey& key : intact::io::scene_keys()) {
        if (!is_leaf(key)) {
            continue;
        }
        SCOPED_TRACE(key.path);
        const nlohmann::json document = scene_with(key, valid_value(key));
        EXPECT_EQ(error_of(document), "") << document.dump();
        if (key.required || key.fallback.is_null()) {
            continue;
        }
        const auto scene = intact::io::parse_scene(scene_without(key), "dir/scene.json");
        const auto pointer = first_element_pointer(key.path);
        ASSERT_TRUE(scene.resolved.contains(pointer)) << "the resolved scene lacks " << key.path;
        nlohmann::json expected = key.fallback;
        if (key.type == KeyType::number_or_vec3) {
            expected = {key.fallback, key.fallback, key.fallback};
        }
        EXPECT_EQ(scene.resolved.at(pointer), expected);
    }
}

// A value of the wrong type, outside the key's bounds or not among its values is refused, naming the key;
// every listed value is accepted.
TEST(SceneKeys, TypesBoundsAndValuesAreTheReadersOwn) {
    const auto transports = intact::comm::available_transports();
    for (const SceneKey& key : intact::io::scene_keys()) {
        if (!is_leaf(key)) {
            continue;
        }
        SCOPED_TRACE(key.path);
        const std::string named = "key '" + first_element_path(key.path) + "'";
        const nlohmann::json wrong_type =
            key.type == KeyType::string ? nlohmann::json(1.5) : nlohmann::json("text");
        EXPECT_NE(error_of(scene_with(key, wrong_type)).find(named), std::string::npos);
        const bool integral = key.type == KeyType::integer || key.type == KeyType::int3;
        const bool vector = key.type == KeyType::vec3 || key.type == KeyType::int3;
        const auto outside = [&](double x) {
            const nlohmann::json one = integral ? nlohmann::json(static_cast<int>(x)) : nlohmann::json(x);
            return vector ? nlohmann::json{one, one, one} : one;
        };
        const double step = integral ? 1.0 : 1e-6;
        if (key.lo) {
            const double x = key.lo->exclusive ? key.lo->value : key.lo->value - step;
            EXPECT_NE(error_of(scene_with(key, outside(x))).find(named), std::string::npos) << "value " << x;
        }
        if (key.hi) {
            const double x = key.hi->exclusive ? key.hi->value : key.hi->value + step;
            EXPECT_NE(error_of(scene_with(key, outside(x))).find(named), std::string::npos) << "value " << x;
        }
        for (const std::string& value : key.values) {
            if (key.path == "parallel.halo_transport" && value != "auto" &&
                std::find(transports.begin(), transports.end(), value) == transports.end()) {
                continue; // not built in; the reader says so
            }
            EXPECT_EQ(error_of(scene_with(key, value)), "") << "value " << value;
        }
        if (!key.values.empty()) {
            EXPECT_NE(error_of(scene_with(key, "no_such_value")).find(named), std::string::npos);
        }
    }
}

// In every object of the table an unknown key is refused with the table's keys for that object.
TEST(SceneKeys, EveryObjectRefusesUnknownKeysAndListsItsOwn) {
    std::vector<std::string> objects{""};
    for (const SceneKey& key : intact::io::scene_keys()) {
        if (key.type == KeyType::object) {
            objects.push_back(key.path);
        } else if (key.type == KeyType::object_array) {
            objects.push_back(key.path + "[]");
        }
    }
    for (const std::string& object : objects) {
        SCOPED_TRACE(object);
        // A valid scene that holds the object: one that gives its first key with a value.
        const auto& keys = intact::io::scene_keys();
        const auto first_leaf = std::find_if(keys.begin(), keys.end(), [&](const SceneKey& k) {
            return is_leaf(k) && k.path != "$schema" && k.path.compare(0, object.size(), object) == 0;
        });
        ASSERT_NE(first_leaf, keys.end());
        nlohmann::json document = scene_with(*first_leaf, valid_value(*first_leaf));
        const auto children = intact::io::scene_key_children(object);
        const std::string unknown = object.empty() ? "not_a_key" : object + ".not_a_key";
        assign(document, unknown, 1);
        const std::string message = error_of(document);
        EXPECT_NE(message.find("key '" + first_element_path(unknown) + "'"), std::string::npos) << message;
        EXPECT_NE(message.find("unknown key; fix: remove it or use one of: "), std::string::npos) << message;
        for (const SceneKey* child : children) {
            const std::string name = child->path.substr(object.empty() ? 0 : object.size() + 1);
            EXPECT_NE(message.find(name), std::string::npos) << name << " is not offered in: " << message;
        }
    }
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(SceneKeys, TheCommittedSchemaIsTheTables) {
    const fs::path file = fs::path(INTACT_SOURCE_DIR) / "docs" / "scene.schema.json";
    ASSERT_TRUE(fs::exists(file));
    EXPECT_TRUE(read_text(file) == intact::io::scene_json_schema().dump(2) + "\n")
        << file << " is out of date; fix: build/intact schema > docs/scene.schema.json";
}

TEST(SceneKeys, TheSchemaDescribesEveryKeyWithTypeAndDefault) {
    const nlohmann::json schema = nlohmann::json::parse(intact::io::scene_json_schema().dump());
    EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    EXPECT_EQ(schema["required"], (nlohmann::json{"time", "bodies"}));
    const auto& dt = schema["properties"]["time"]["properties"]["dt"];
    EXPECT_EQ(dt["type"], "number");
    EXPECT_EQ(dt["exclusiveMinimum"], 0.0);
    EXPECT_NE(dt["description"].get<std::string>().find(", s"), std::string::npos);
    const auto& solver_type = schema["properties"]["solver"]["properties"]["type"];
    EXPECT_EQ(solver_type["enum"], (nlohmann::json{"ipc", "al", "bal", "stencil_descent"}));
    EXPECT_EQ(solver_type["default"], "ipc");
    const auto& density =
        schema["properties"]["bodies"]["items"]["properties"]["material"]["properties"]["density"];
    EXPECT_EQ(density["type"], "number");
    EXPECT_EQ(schema["properties"]["bodies"]["items"]["properties"]["material"]["required"],
              (nlohmann::json{"youngs_modulus", "poisson_ratio", "density"}));
    EXPECT_EQ(schema["properties"]["bodies"]["items"]["additionalProperties"], false);
}

// The scenes in inputs/ name the schema by a path that exists, and read without error.
TEST(SceneKeys, EveryInputSceneNamesTheSchema) {
    int scenes = 0;
    for (const auto& entry : fs::directory_iterator(fs::path(INTACT_SOURCE_DIR) / "inputs")) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        SCOPED_TRACE(entry.path().string());
        ++scenes;
        const nlohmann::json document = nlohmann::json::parse(read_text(entry.path()));
        ASSERT_TRUE(document.contains("$schema"));
        EXPECT_EQ(fs::canonical(entry.path().parent_path() / document["$schema"].get<std::string>()),
                  fs::canonical(fs::path(INTACT_SOURCE_DIR) / "docs" / "scene.schema.json"));
        const auto scene = intact::io::load_scene(entry.path().string());
        EXPECT_FALSE(scene.resolved.contains("$schema"));
    }
    EXPECT_GE(scenes, 10);
}

TEST(SceneKeys, SchemaKeyMustBeAString) {
    nlohmann::json document = base_scene();
    document["$schema"] = 3;
    EXPECT_NE(error_of(document).find("key '$schema': must be a string"), std::string::npos);
}

} // namespace
