#include "src/io/metrics.hpp"

#include "src/core/error.hpp"
#include "src/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

namespace intact::io {

MetricsWriter::MetricsWriter(const std::string& path) : m_path(path), m_out(path, std::ios::trunc) {
    if (!m_out) {
        throw InputError("cannot create '" + path + "': " + std::strerror(errno) +
                         "; fix: choose a writable output folder with --output");
    }
}

MetricsWriter::MetricsWriter(const std::string& path, long long last_step) : m_path(path) {
    std::string text;
    std::string kept;
    if (read_file(path, text).empty()) {
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);) {
            const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
            if (!record.is_discarded() && record.is_object() && record.contains("step") &&
                record["step"].is_number_integer() && record["step"].get<long long>() <= last_step) {
                kept += line + '\n';
            }
        }
    }
    const std::string error = write_file_atomically(path, kept);
    if (!error.empty()) {
        throw InputError("cannot rewrite " + error + "; fix: make the output folder writable");
    }
    m_out.open(path, std::ios::app);
    if (!m_out) {
        throw InputError("cannot append to '" + path + "': " + std::strerror(errno) +
                         "; fix: make the output folder writable");
    }
}

void MetricsWriter::write(const nlohmann::json& line) {
    m_out << line.dump() << '\n';
    m_out.flush();
    INTACT_REQUIRE(static_cast<bool>(m_out), "writing '" << m_path << "' failed (disk full?)");
}

} // namespace intact::io
