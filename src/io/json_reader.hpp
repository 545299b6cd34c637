#pragma once
/// @file json_reader.hpp
/// @brief Typed, path-aware reading of a JSON object, for scene files.
///
/// `JsonObject` wraps one JSON object of a file. Each read names a key; the value is checked for its
/// type, recorded in a "resolved" copy (defaults included) and marked as used. `finish()` rejects any key
/// that was never read. Errors are `InputError`s of the form
///   scene 'inputs/a.json': key 'bodies[0].material.poisson_ratio': must be in (-1, 0.5), got 0.5;
///   fix: ...
/// so the user sees the file, the key path, the problem and the fix.
///
/// Every key read must be in the scene key table (scene_keys.hpp): reading one it lacks ends the job as an
/// internal error, and an unknown key in a scene is reported with the table's keys for that object.

#include "src/core/error.hpp"
#include "src/core/types.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <set>
#include <string>
#include <vector>

namespace intact::io {

class JsonObject {
public:
    /// @param value the JSON value that must be an object
    /// @param file the file it came from (for messages)
    /// @param path its key path ("" for the root, "bodies[0].material", ...)
    /// @param resolved where to record the values in effect (an object is created there)
    JsonObject(const nlohmann::json& value, std::string file, std::string path, nlohmann::json& resolved);

    const std::string& path() const { return m_path; }
    /// What the messages about this object's keys (and its children's, made after this call) add after
    /// the key path, e.g. `body "ball"`.
    void set_subject(std::string subject) { m_subject = std::move(subject); }
    const std::string& file() const { return m_file; }
    bool has(const std::string& key) const;

    /// Required values. The template covers double, int, bool, std::string, Vec3, std::array<int, 3>.
    template <class T> T required(const std::string& key);
    /// Optional values: `fallback` is used (and recorded) when the key is absent.
    template <class T> T optional(const std::string& key, const T& fallback);

    /// A 3-vector that may also be written as one number meaning (x, x, x), e.g. a scale factor.
    Vec3 optional_uniform_or_vec3(const std::string& key, double fallback);

    /// A nested object (required / present-or-empty).
    JsonObject object(const std::string& key);
    JsonObject optional_object(const std::string& key);
    /// An array of objects (absent: empty).
    std::vector<JsonObject> objects(const std::string& key);

    /// Reject keys that were not read. Call after reading everything this object may hold.
    void finish() const;

    /// Throw an InputError about `key` of this object.
    [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& fix) const;

    /// Full key path of `key` in this object ("time.dt").
    std::string key_path(const std::string& key) const;

private:
    const nlohmann::json& member(const std::string& key);
    template <class T> T convert(const std::string& key, const nlohmann::json& value) const;

    const nlohmann::json* m_value;
    std::string m_file;
    std::string m_path;
    std::string m_pattern; ///< m_path with array indices as `[]`, as in the key table
    std::string m_subject; ///< see set_subject
    nlohmann::json* m_resolved;
    std::string known_keys() const;
    std::string unread_keys() const;
    /// The key not read yet that is the nearest miss of `key` (edit distance, a transposition counting
    /// one, within a quarter of its length and at least 1), or "".
    std::string closest_unread_key(const std::string& key) const;
    /// Throw the error for a missing required `key`: its near miss when the object has one, else the
    /// keys not read yet and the fix "add `addition` to this object".
    [[noreturn]] void fail_missing(const std::string& key, const std::string& addition) const;

    /// End the job when `key` of this object is not in the scene key table (a reader out of step with it).
    void require_in_table(const std::string& key) const;

    std::set<std::string> m_used; ///< keys read
};

/// The message every scene error uses: `scene 'FILE': key 'PATH': PROBLEM; fix: FIX`, or with a subject
/// `scene 'FILE': key 'PATH' (SUBJECT): PROBLEM; fix: FIX`.
std::string input_error_message(const std::string& file,
                                const std::string& key_path,
                                const std::string& problem,
                                const std::string& fix,
                                const std::string& subject = "");

/// Apply one `--set key.path=value` override to a JSON document. Path parts are object keys or array
/// indices (`bodies.0.material.density=500`). The value is parsed as JSON when it is valid JSON (numbers,
/// arrays, true/false, quoted strings) and taken as a plain string otherwise. Throws InputError naming
/// the override when the path does not fit the document.
void apply_override(nlohmann::json& document, const std::string& assignment, const std::string& file);

} // namespace intact::io
