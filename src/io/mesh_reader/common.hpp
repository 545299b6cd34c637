#pragma once
/// @file common.hpp
/// @brief Private to the mesh readers (src/io/mesh_reader/): the error every reader throws, file and name
/// helpers, number parsing, the line-counting text cursor, node numbering, the token reader MEDIT and
/// TetGen share, and the entry point of each format's reader. Host, serial.

#include "src/mesh/tet_mesh.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace intact::io::detail {

constexpr const char* k_reexport_fix = "the file is truncated or corrupt; re-export it from the mesher";

// ------------------------------------------------------------------------------------------------
// Errors, files, names
// ------------------------------------------------------------------------------------------------

/// Throw the error every reader uses: "mesh '<path>': <where>: <what>; fix: <fix>".
[[noreturn]] void
fail(const std::string& path, const std::string& where, const std::string& what, const std::string& fix);

std::string at_line(int line);

/// `text` quoted for a message: at most 40 characters, non-printable bytes (binary data) shown as '?'.
std::string quoted(std::string_view text);

/// The whole file as bytes. Throws InputError when it cannot be opened or read.
std::string read_file(const std::string& path);

/// Throws the "cannot open" InputError unless `path` can be opened for reading (used before VTK).
void require_readable(const std::string& path);

/// Lower-case extension of the last path component, with its dot ("" when there is none).
std::string extension_of(const std::string& path);

std::string with_extension(const std::string& path, const std::string& ext);

bool iequals(std::string_view a, std::string_view b);

// ------------------------------------------------------------------------------------------------
// Number parsing (the whole token must be the number)
// ------------------------------------------------------------------------------------------------

bool parse_int(std::string_view token, std::int64_t& value);

bool parse_double(std::string_view token, double& value);

inline bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s);

/// Splits `line` at blanks into `tokens` (cleared first).
void split(std::string_view line, std::vector<std::string_view>& tokens);

// ------------------------------------------------------------------------------------------------
// Text cursor: lines or tokens, with line numbers; also the position for binary Gmsh data
// ------------------------------------------------------------------------------------------------

class TextCursor {
public:
    /// `comment` starts a comment that runs to the end of the line ('\0': the format has none).
    TextCursor(std::string_view text, char comment) : m_text(text), m_comment(comment) {}

    struct State {
        std::size_t pos;
        int next_line;
        int last_line;
    };

    /// The next line with something other than blanks and comments, trimmed; false at the end.
    bool next_line(std::string_view& out) {
        while (m_pos < m_text.size()) {
            const std::size_t newline = m_text.find('\n', m_pos);
            const std::size_t stop = newline == std::string_view::npos ? m_text.size() : newline;
            std::string_view line = m_text.substr(m_pos, stop - m_pos);
            m_last_line = m_next_line++;
            m_pos = newline == std::string_view::npos ? m_text.size() : newline + 1;
            if (m_comment != '\0') {
                line = line.substr(0, line.find(m_comment));
            }
            line = trim(line);
            if (!line.empty()) {
                out = line;
                return true;
            }
        }
        return false;
    }

    /// The next blank-separated token, skipping comments; false at the end.
    bool next_token(std::string_view& out) {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == '\n') {
                ++m_next_line;
                ++m_pos;
            } else if (is_space(c)) {
                ++m_pos;
            } else if (m_comment != '\0' && c == m_comment) {
                const std::size_t newline = m_text.find('\n', m_pos);
                m_pos = newline == std::string_view::npos ? m_text.size() : newline;
            } else {
                const std::size_t start = m_pos;
                while (m_pos < m_text.size() && !is_space(m_text[m_pos]) &&
                       !(m_comment != '\0' && m_text[m_pos] == m_comment)) {
                    ++m_pos;
                }
                out = m_text.substr(start, m_pos - start);
                m_last_line = m_next_line;
                return true;
            }
        }
        return false;
    }

    /// Line of the last line or token returned (1-based).
    int line() const { return m_last_line; }
    std::size_t pos() const { return m_pos; }
    std::string_view text() const { return m_text; }
    State save() const { return {m_pos, m_next_line, m_last_line}; }
    void restore(const State& state) {
        m_pos = state.pos;
        m_next_line = state.next_line;
        m_last_line = state.last_line;
    }
    /// Move over `bytes` of binary data (line numbers stop meaning anything after this).
    void advance(std::size_t bytes) { m_pos += bytes; }
    /// Move to `pos`, counting the newlines passed over.
    void jump_to(std::size_t pos) {
        m_next_line += static_cast<int>(std::count(m_text.begin() + m_pos, m_text.begin() + pos, '\n'));
        m_pos = pos;
    }

private:
    std::string_view m_text;
    char m_comment;
    std::size_t m_pos = 0;
    int m_next_line = 1;
    int m_last_line = 0;
};

// ------------------------------------------------------------------------------------------------
// Node numbering: file tags/ids -> 0-based indices in file order
// ------------------------------------------------------------------------------------------------

class NodeNumbering {
public:
    /// Index for a new tag; false if the tag is already defined.
    bool add(std::int64_t tag, int& index) {
        index = static_cast<int>(m_index.size());
        return m_index.emplace(tag, index).second;
    }
    /// Index of `tag`; false if no node has it.
    bool find(std::int64_t tag, int& index) const {
        const auto it = m_index.find(tag);
        if (it == m_index.end()) {
            return false;
        }
        index = it->second;
        return true;
    }
    void reserve(std::size_t n) { m_index.reserve(n); }

private:
    std::unordered_map<std::int64_t, int> m_index;
};

// ------------------------------------------------------------------------------------------------
// Token-based formats (MEDIT, TetGen): shared helpers
// ------------------------------------------------------------------------------------------------

/// Reads numbers token by token and fails with the line, the section and what was expected.
class TokenReader {
public:
    TokenReader(const std::string& path, std::string_view text, char comment)
        : m_path(path), m_cur(text, comment) {}

    TextCursor& cursor() { return m_cur; }
    const std::string& path() const { return m_path; }

    [[noreturn]] void fail_here(const std::string& what, const std::string& fix) const {
        fail(m_path, at_line(m_cur.line()), what, fix);
    }

    std::string_view token(const std::string& expected) {
        std::string_view t;
        if (!m_cur.next_token(t)) {
            fail(m_path, "end of file (after line " + std::to_string(m_cur.line()) + ")",
                 "unexpected end of file: expected " + expected, k_reexport_fix);
        }
        return t;
    }

    std::int64_t integer(const std::string& expected) {
        const std::string_view t = token(expected);
        std::int64_t value = 0;
        if (!parse_int(t, value)) {
            fail_here("expected " + expected + " (an integer), found " + quoted(t), k_reexport_fix);
        }
        return value;
    }

    double real(const std::string& expected) {
        const std::string_view t = token(expected);
        double value = 0.0;
        if (!parse_double(t, value)) {
            fail_here("expected " + expected + " (a finite number), found " + quoted(t), k_reexport_fix);
        }
        return value;
    }

    std::int64_t count(const std::string& expected) {
        const std::int64_t n = integer(expected);
        if (n < 0 || n > INT_MAX) {
            fail_here("expected " + expected + ", found " + std::to_string(n), k_reexport_fix);
        }
        return n;
    }

private:
    const std::string& m_path;
    TextCursor m_cur;
};

// ------------------------------------------------------------------------------------------------
// The format readers, one file each; read_tet_mesh and read_triangle_mesh choose by extension
// ------------------------------------------------------------------------------------------------

/// The first-order Gmsh element kind a reader keeps (the order indexes gmsh.cpp's table).
enum class GmshElements { tetrahedra = 0, triangles = 1, lines = 2 };

/// Gmsh .msh 2.2 and 4.1, ASCII and binary; `text` is the whole file (gmsh.cpp).
TetMesh read_gmsh(const std::string& path, std::string_view text);

/// The same for a shell's triangles (`kind` triangles: TriMesh::tris) or a rod's lines (`kind` lines:
/// TriMesh::segments); all nodes are kept. Throws InputError when the file has none of the kind.
TriMesh read_gmsh_codim(const std::string& path, std::string_view text, GmshElements kind);

/// MEDIT .mesh; `text` is the whole file (medit.cpp).
TetMesh read_medit(const std::string& path, std::string_view text);

/// TetGen .node and .ele; `path` names either, the other is found beside it (tetgen.cpp).
TetMesh read_tetgen(const std::string& path);

/// VTK XML (.vtu, `xml`) or legacy (.vtk) unstructured grid, through VTK's readers (vtk.cpp).
TetMesh read_vtk(const std::string& path, bool xml);

/// Wavefront .obj: triangles, segments and points (obj.cpp).
TriMesh read_obj(const std::string& path);

} // namespace intact::io::detail
