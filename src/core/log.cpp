#include "src/core/log.hpp"

#include <cstdio>

namespace intact::log {

namespace {
int g_rank = 0;
}

void set_rank(int rank) {
    g_rank = rank;
}
int rank() {
    return g_rank;
}

Line::~Line() {
    const std::string text = m_text.str();
    switch (m_kind) {
    case Kind::info:
        if (g_rank == 0) {
            std::fprintf(stdout, "%s\n", text.c_str());
            std::fflush(stdout);
        }
        break;
    case Kind::all:
        std::fprintf(stdout, "[rank %d] %s\n", g_rank, text.c_str());
        std::fflush(stdout);
        break;
    case Kind::warn:
        if (g_rank == 0) {
            std::fprintf(stderr, "intact: warning: %s\n", text.c_str());
            std::fflush(stderr);
        }
        break;
    case Kind::error:
        std::fprintf(stderr, "intact: error: %s\n", text.c_str());
        std::fflush(stderr);
        break;
    }
}

} // namespace intact::log
