#include "src/io/metrics.hpp"

#include "src/core/error.hpp"

#include <cerrno>
#include <cstring>

namespace intact::io {

MetricsWriter::MetricsWriter(const std::string& path) : m_path(path), m_out(path, std::ios::trunc) {
    if (!m_out) {
        throw InputError("cannot create '" + path + "': " + std::strerror(errno) +
                         "; fix: choose a writable output folder with --output");
    }
}

void MetricsWriter::write(const nlohmann::json& line) {
    m_out << line.dump() << '\n';
    m_out.flush();
    INTACT_REQUIRE(static_cast<bool>(m_out), "writing '" << m_path << "' failed (disk full?)");
}

} // namespace intact::io
