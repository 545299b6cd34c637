#pragma once
/// @file log.hpp
/// @brief Rank-aware logging: library code never writes to std::cout directly.
///
/// `log::info` prints on rank 0 only; `log::all` prints on every rank with a "[rank r]" prefix;
/// `log::warn` and `log::error` go to stderr (rank 0 unless `all_ranks`). Messages are built with stream
/// syntax: `log::info() << "step " << n;` prints one line when the temporary goes out of scope.

#include <sstream>
#include <string>

namespace intact::log {

/// Tell the logger which rank this process is (done by Runtime). Ranks other than 0 stay quiet.
void set_rank(int rank);
int rank();

/// One log line, emitted on destruction.
class Line {
public:
    enum class Kind { info, all, warn, error };
    explicit Line(Kind kind) : m_kind(kind) {}
    Line(const Line&) = delete;
    Line& operator=(const Line&) = delete;
    ~Line();

    template <class T> Line& operator<<(const T& value) {
        m_text << value;
        return *this;
    }

private:
    Kind m_kind;
    std::ostringstream m_text;
};

inline Line info() {
    return Line(Line::Kind::info);
}
inline Line all() {
    return Line(Line::Kind::all);
}
inline Line warn() {
    return Line(Line::Kind::warn);
}
inline Line error() {
    return Line(Line::Kind::error);
}

} // namespace intact::log
