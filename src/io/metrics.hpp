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
    void write(const nlohmann::json& line);
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    std::ofstream m_out;
};

} // namespace intact::io
