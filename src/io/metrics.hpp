#pragma once
/// @file metrics.hpp
/// @brief `metrics.jsonl`: one JSON object per line, one line per time step, written by rank 0.

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace intact::io {

/// Appends lines to `<output dir>/metrics.jsonl` and flushes each one, so a run that stops early still
/// leaves every finished step readable. Only rank 0 creates one.
class MetricsWriter {
public:
    /// Starts a new file (truncates an old one). Throws InputError if it cannot be created.
    explicit MetricsWriter(const std::string& path);
    /// Continues the file of a run restarted after step `last_step`: keeps its lines of steps up to
    /// `last_step` and drops later ones (the interrupted run's steps after its checkpoint, and a torn last
    /// line), rewriting the file atomically, then appends. A missing file starts empty. Throws InputError
    /// if it cannot be rewritten.
    MetricsWriter(const std::string& path, long long last_step);
    void write(const nlohmann::json& line);
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::ofstream m_out;
};

} // namespace intact::io
