/// @file common.cpp
/// @brief The helpers all mesh readers share: errors, reading a file, extensions, number parsing and
/// splitting (declared in common.hpp).

#include "src/io/mesh_reader/common.hpp"

#include "src/core/error.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace intact::io::detail {
namespace {

[[noreturn]] void fail_open(const std::string& path, int error_number) {
    throw InputError("cannot open mesh file '" + path + "': " + std::strerror(error_number) +
                     "; fix: check the path (relative paths are relative to the scene file)");
}

} // namespace

[[noreturn]] void
fail(const std::string& path, const std::string& where, const std::string& what, const std::string& fix) {
    throw InputError("mesh '" + path + "': " + where + ": " + what + "; fix: " + fix);
}

std::string at_line(int line) {
    return "line " + std::to_string(line);
}

std::string quoted(std::string_view text) {
    std::string out = "'";
    for (std::size_t i = 0; i < text.size() && i < 40; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        out += std::isprint(c) ? static_cast<char>(c) : '?';
    }
    if (text.size() > 40) {
        out += "...";
    }
    return out + "'";
}

std::string read_file(const std::string& path) {
    errno = 0;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) {
        fail_open(path, errno);
    }
    std::string data;
    char buffer[1 << 16];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
        data.append(buffer, got);
    }
    if (std::ferror(file.get())) {
        fail_open(path, errno != 0 ? errno : EIO);
    }
    return data;
}

void require_readable(const std::string& path) {
    errno = 0;
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) {
        fail_open(path, errno);
    }
    char byte = 0;
    const bool unreadable = std::fread(&byte, 1, 1, file) == 0 && std::ferror(file);
    const int error_number = errno;
    std::fclose(file);
    if (unreadable) {
        fail_open(path, error_number != 0 ? error_number : EIO);
    }
}

std::string extension_of(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    const std::size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
        return "";
    }
    std::string ext = path.substr(dot);
    for (char& c : ext) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return ext;
}

std::string with_extension(const std::string& path, const std::string& ext) {
    return path.substr(0, path.find_last_of('.')) + ext;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

bool parse_int(std::string_view token, std::int64_t& value) {
    if (!token.empty() && token.front() == '+') {
        token.remove_prefix(1);
    }
    const char* end = token.data() + token.size();
    const auto result = std::from_chars(token.data(), end, value);
    return result.ec == std::errc() && result.ptr == end && !token.empty();
}

bool parse_double(std::string_view token, double& value) {
    if (!token.empty() && token.front() == '+') {
        token.remove_prefix(1);
    }
    const char* end = token.data() + token.size();
    const auto result = std::from_chars(token.data(), end, value);
    return result.ec == std::errc() && result.ptr == end && !token.empty() && std::isfinite(value);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && is_space(s.back())) {
        s.remove_suffix(1);
    }
    return s;
}

void split(std::string_view line, std::vector<std::string_view>& tokens) {
    tokens.clear();
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_space(line[i])) {
            ++i;
        }
        const std::size_t start = i;
        while (i < line.size() && !is_space(line[i])) {
            ++i;
        }
        if (i > start) {
            tokens.push_back(line.substr(start, i - start));
        }
    }
}

} // namespace intact::io::detail
