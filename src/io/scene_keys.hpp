#pragma once
/// @file scene_keys.hpp
/// @brief The table of every key a scene file may hold: the one source of the scene reader's key set,
/// of `intact schema` (a JSON Schema) and, through docs/scene.schema.json, of the scene reference.
///
/// A key's path names array elements with `[]`: `bodies[].material.density`. The reader
/// (`JsonObject`) refuses to read a key the table lacks, and lists the table's keys when a scene holds
/// an unknown one; tests/io/test_scene_keys.cpp gives every key of the table to the reader, so a key
/// the reader no longer reads fails there.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace intact::io {

enum class KeyType {
    number,
    integer,
    boolean,
    string,
    vec3,           ///< [x, y, z], numbers
    int3,           ///< [nx, ny, nz], integers
    number_or_vec3, ///< one number meaning (x, x, x), or [x, y, z]
    object,
    object_array ///< an array of objects; the element's keys are `path[].key`
};

/// A bound of a number (or of every component of a vector).
struct KeyBound {
    double value = 0.0;
    bool exclusive = false;
};

struct SceneKey {
    std::string path;
    KeyType type = KeyType::number;
    std::string meaning;             ///< what it is, with its unit
    bool required = false;           ///< must be given (where its parent is)
    nlohmann::json fallback;         ///< the default when it is a constant; null otherwise
    std::string fallback_text;       ///< the default in words when it is not a constant ("contact.dhat")
    std::optional<KeyBound> lo;      ///< numbers: lower bound
    std::optional<KeyBound> hi;      ///< numbers: upper bound
    std::vector<std::string> values; ///< strings: the values accepted (empty: any)
    std::string only_with;           ///< "solver.type=al": accepted only under that setting
    nlohmann::json example;          ///< a valid value where there is no constant default

    // Builders, so that the table reads as one line of facts per key.
    SceneKey& means(std::string text);
    SceneKey& needed();
    SceneKey& default_value(nlohmann::json value);
    SceneKey& default_text(std::string text);
    SceneKey& above(double x);
    SceneKey& at_least(double x);
    SceneKey& below(double x);
    SceneKey& at_most(double x);
    SceneKey& one_of(std::vector<std::string> names);
    SceneKey& only_when(std::string setting);
    SceneKey& for_example(nlohmann::json value);
};

/// Every key, parents before their children, in the order of the scene reference. Host.
const std::vector<SceneKey>& scene_keys();

/// The table entry of `path` (array indices written `[]`), or nullptr.
const SceneKey* find_scene_key(const std::string& path);

/// The direct children of the object (or array element) at `parent` ("" for the root, "bodies[]").
std::vector<const SceneKey*> scene_key_children(const std::string& parent);

/// `path` with every array index replaced by `[]`: "bodies[2].mesh" -> "bodies[].mesh".
std::string scene_key_pattern(const std::string& path);

/// The JSON Schema (draft 2020-12) of a scene file, built from the table: types, bounds, enums,
/// defaults, required keys and descriptions; unknown keys are refused (`additionalProperties: false`).
nlohmann::ordered_json scene_json_schema();

} // namespace intact::io
