#include "src/io/json_reader.hpp"

#include "src/io/scene_keys.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

namespace intact::io {

namespace {

const char* type_name(const nlohmann::json& value) {
    if (value.is_number_integer() || value.is_number_unsigned()) {
        return "an integer";
    }
    if (value.is_number()) {
        return "a number";
    }
    if (value.is_boolean()) {
        return "a boolean";
    }
    if (value.is_string()) {
        return "a string";
    }
    if (value.is_array()) {
        return "an array";
    }
    if (value.is_object()) {
        return "an object";
    }
    return "null";
}

// An integer JSON value that fits an int (nlohmann would wrap it silently).
bool fits_int(const nlohmann::json& value) {
    if (value.is_number_unsigned()) {
        return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<int>::max());
    }
    const std::int64_t v = value.get<std::int64_t>();
    return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max();
}

std::string show(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 60) {
        text = text.substr(0, 57) + "...";
    }
    return text;
}

// Edit distance between a and b: insertions, deletions, substitutions and transpositions of neighbours
// (optimal string alignment), so "desnity" is one edit from "density".
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

} // namespace

std::string input_error_message(const std::string& file,
                                const std::string& key_path,
                                const std::string& problem,
                                const std::string& fix,
                                const std::string& subject) {
    std::ostringstream message;
    message << "scene '" << file << "'";
    if (!key_path.empty()) {
        message << ": key '" << key_path << "'";
    }
    if (!subject.empty()) {
        message << " (" << subject << ")";
    }
    message << ": " << problem;
    if (!fix.empty()) {
        message << "; fix: " << fix;
    }
    return message.str();
}

JsonObject::JsonObject(const nlohmann::json& value,
                       std::string file,
                       std::string path,
                       nlohmann::json& resolved)
    : m_value(&value), m_file(std::move(file)), m_path(std::move(path)), m_pattern(scene_key_pattern(m_path)),
      m_resolved(&resolved) {
    if (!value.is_object()) {
        throw InputError(input_error_message(m_file, m_path,
                                             std::string("must be an object, got ") + type_name(value),
                                             "write it as { \"key\": value, ... }"));
    }
    if (!m_resolved->is_object()) {
        *m_resolved = nlohmann::json::object();
    }
}

void JsonObject::require_in_table(const std::string& key) const {
    const std::string pattern = m_pattern.empty() ? key : m_pattern + "." + key;
    INTACT_REQUIRE(find_scene_key(pattern) != nullptr, "the scene reader reads '"
                                                           << pattern
                                                           << "', which the scene key table lacks; add it to "
                                                              "src/io/scene_keys.cpp");
}

bool JsonObject::has(const std::string& key) const {
    require_in_table(key);
    return m_value->contains(key);
}

std::string JsonObject::key_path(const std::string& key) const {
    return m_path.empty() ? key : m_path + "." + key;
}

void JsonObject::fail(const std::string& key, const std::string& problem, const std::string& fix) const {
    throw InputError(input_error_message(m_file, key_path(key), problem, fix, m_subject));
}

const nlohmann::json& JsonObject::member(const std::string& key) {
    require_in_table(key);
    m_used.insert(key);
    return m_value->at(key);
}

template <class T> T JsonObject::convert(const std::string& key, const nlohmann::json& value) const {
    if constexpr (std::is_same_v<T, double>) {
        if (!value.is_number()) {
            fail(key, std::string("must be a number, got ") + type_name(value) + " " + show(value),
                 "write a number in SI units, e.g. 0.01");
        }
        const double x = value.get<double>();
        if (!std::isfinite(x)) {
            fail(key, "must be finite", "write a finite number");
        }
        return x;
    } else if constexpr (std::is_same_v<T, int>) {
        if (!value.is_number_integer()) {
            fail(key, std::string("must be an integer, got ") + type_name(value) + " " + show(value),
                 "write a whole number without a decimal point");
        }
        if (!fits_int(value)) {
            fail(key, "is out of range: " + show(value), "use a value between -2147483648 and 2147483647");
        }
        return value.get<int>();
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!value.is_boolean()) {
            fail(key, std::string("must be true or false, got ") + type_name(value) + " " + show(value),
                 "write true or false (no quotes)");
        }
        return value.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!value.is_string()) {
            fail(key, std::string("must be a string, got ") + type_name(value) + " " + show(value),
                 "write the value in double quotes");
        }
        return value.get<std::string>();
    } else if constexpr (std::is_same_v<T, Vec3>) {
        if (!value.is_array() || value.size() != 3 || !value[0].is_number() || !value[1].is_number() ||
            !value[2].is_number()) {
            fail(key, std::string("must be an array of 3 numbers, got ") + show(value), "write [x, y, z]");
        }
        return Vec3{value[0].get<double>(), value[1].get<double>(), value[2].get<double>()};
    } else if constexpr (std::is_same_v<T, std::array<int, 3>>) {
        if (!value.is_array() || value.size() != 3 || !value[0].is_number_integer() ||
            !value[1].is_number_integer() || !value[2].is_number_integer()) {
            fail(key, std::string("must be an array of 3 integers, got ") + show(value),
                 "write [nx, ny, nz]");
        }
        if (!fits_int(value[0]) || !fits_int(value[1]) || !fits_int(value[2])) {
            fail(key, "is out of range: " + show(value), "use values between -2147483648 and 2147483647");
        }
        return std::array<int, 3>{value[0].get<int>(), value[1].get<int>(), value[2].get<int>()};
    } else {
        static_assert(sizeof(T) == 0, "unsupported scene value type");
    }
}

template <class T> T JsonObject::required(const std::string& key) {
    if (!has(key)) {
        fail_missing(key, "\"" + key + "\"");
    }
    const T value = convert<T>(key, member(key));
    (*m_resolved)[key] = value;
    return value;
}

template <class T> T JsonObject::optional(const std::string& key, const T& fallback) {
    const T value = has(key) ? convert<T>(key, member(key)) : fallback;
    (*m_resolved)[key] = value;
    return value;
}

#define INTACT_JSON_INSTANTIATE(T)                                                                           \
    template T JsonObject::required<T>(const std::string&);                                                  \
    template T JsonObject::optional<T>(const std::string&, const T&);
INTACT_JSON_INSTANTIATE(double)
INTACT_JSON_INSTANTIATE(int)
INTACT_JSON_INSTANTIATE(bool)
INTACT_JSON_INSTANTIATE(std::string)
INTACT_JSON_INSTANTIATE(Vec3)
using IntTriple = std::array<int, 3>;
INTACT_JSON_INSTANTIATE(IntTriple)
#undef INTACT_JSON_INSTANTIATE

Vec3 JsonObject::optional_uniform_or_vec3(const std::string& key, double fallback) {
    Vec3 value{fallback, fallback, fallback};
    if (has(key)) {
        const nlohmann::json& given = member(key);
        if (given.is_number()) {
            const double x = convert<double>(key, given);
            value = Vec3{x, x, x};
        } else {
            value = convert<Vec3>(key, given);
        }
    }
    (*m_resolved)[key] = value;
    return value;
}

JsonObject JsonObject::object(const std::string& key) {
    if (!has(key)) {
        fail_missing(key, "\"" + key + "\": { ... }");
    }
    JsonObject child(member(key), m_file, key_path(key), (*m_resolved)[key]);
    child.m_subject = m_subject;
    return child;
}

JsonObject JsonObject::optional_object(const std::string& key) {
    static const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json& value = has(key) ? member(key) : empty;
    JsonObject child(value, m_file, key_path(key), (*m_resolved)[key]);
    child.m_subject = m_subject;
    return child;
}

std::vector<JsonObject> JsonObject::objects(const std::string& key) {
    std::vector<JsonObject> result;
    (*m_resolved)[key] = nlohmann::json::array();
    if (!has(key)) {
        return result;
    }
    const nlohmann::json& list = member(key);
    if (!list.is_array()) {
        fail(key, std::string("must be an array, got ") + type_name(list), "write [ { ... }, { ... } ]");
    }
    nlohmann::json& resolved_list = (*m_resolved)[key];
    for (std::size_t i = 0; i < list.size(); ++i) {
        resolved_list.push_back(nlohmann::json::object());
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        result.emplace_back(list[i], m_file, key_path(key) + "[" + std::to_string(i) + "]", resolved_list[i]);
        result.back().m_subject = m_subject;
    }
    return result;
}

void JsonObject::finish() const {
    for (auto it = m_value->begin(); it != m_value->end(); ++it) {
        if (m_used.count(it.key()) == 0) {
            fail(it.key(), "unknown key", "remove it or use one of: " + known_keys());
        }
    }
}

std::string JsonObject::known_keys() const {
    std::string known;
    for (const SceneKey* child : scene_key_children(m_pattern)) {
        const std::string& path = child->path;
        known += (known.empty() ? "" : ", ") + path.substr(m_pattern.empty() ? 0 : m_pattern.size() + 1);
    }
    return known;
}

std::string JsonObject::closest_unread_key(const std::string& key) const {
    std::string closest;
    std::size_t best = std::max<std::size_t>(1, key.size() / 4) + 1; // a near miss: at most a quarter off
    for (auto it = m_value->begin(); it != m_value->end(); ++it) {
        if (m_used.count(it.key()) == 0) {
            const std::size_t distance = edit_distance(key, it.key());
            if (distance < best) {
                best = distance;
                closest = it.key();
            }
        }
    }
    return closest;
}

void JsonObject::fail_missing(const std::string& key, const std::string& addition) const {
    // The keys not read yet may still be valid ones read later, so they are only listed, unless one is a
    // near miss of the missing key (no valid key of today's schema is within reach of a required one).
    const std::string misspelled = closest_unread_key(key);
    if (!misspelled.empty()) {
        fail(key, "is required but missing; '" + misspelled + "' here looks like a misspelling of it",
             "rename '" + misspelled + "' to \"" + key + "\"");
    }
    const std::string unread = unread_keys();
    fail(key,
         "is required but missing" +
             (unread.empty() ? std::string() : " (keys not read yet: " + unread + ")"),
         "add " + addition + " to " + (m_path.empty() ? "the scene" : m_path));
}

std::string JsonObject::unread_keys() const {
    std::string unread;
    for (auto it = m_value->begin(); it != m_value->end(); ++it) {
        if (m_used.count(it.key()) == 0) {
            unread += (unread.empty() ? "'" : ", '") + it.key() + "'";
        }
    }
    return unread;
}

void apply_override(nlohmann::json& document, const std::string& assignment, const std::string& file) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw InputError(input_error_message(file, "",
                                             "override '--set " + assignment + "' has no key=value form",
                                             "write --set time.dt=0.01"));
    }
    const std::string path = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);
    nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) {
        value = text;
    }
    nlohmann::json* node = &document;
    std::string walked;
    std::size_t start = 0;
    while (true) {
        const auto dot = path.find('.', start);
        const std::string part =
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        walked += (walked.empty() ? "" : ".") + part;
        const bool last = dot == std::string::npos;
        if (part.empty()) {
            throw InputError(input_error_message(file, path, "override has an empty path element",
                                                 "write keys separated by single dots"));
        }
        if (node->is_array()) {
            const bool numeric = !part.empty() && part.size() <= 9 &&
                                 part.find_first_not_of("0123456789") == std::string::npos;
            const std::size_t index = numeric ? std::stoul(part) : node->size();
            if (!numeric || index >= node->size()) {
                throw InputError(input_error_message(
                    file, walked,
                    "override index '" + part + "' is not an element of this array (size " +
                        std::to_string(node->size()) + ")",
                    "use an index from 0 to " + std::to_string(node->size()) + " - 1"));
            }
            node = &(*node)[index];
        } else {
            if (node->is_null()) {
                *node = nlohmann::json::object();
            }
            if (!node->is_object()) {
                throw InputError(input_error_message(file, walked,
                                                     "override goes through a value that is not an object",
                                                     "check the key path"));
            }
            node = &(*node)[part];
        }
        if (last) {
            *node = value;
            return;
        }
        start = dot + 1;
    }
}

} // namespace intact::io
