/// @file mesh_reader.cpp
/// @brief Gmsh (2.2, 4.1; ASCII and binary), MEDIT, TetGen, VTK and OBJ readers.
///
/// Text formats are parsed from the whole file held in memory by a cursor that counts lines, so every
/// error can name the line where reading stopped; binary Gmsh data is read from the same buffer and
/// errors there name the section and byte offset. VTK files go through VTK's own readers, whose error
/// messages are caught by an observer and turned into `InputError`.

#include "src/io/mesh_reader.hpp"

#include "src/core/error.hpp"

#include <vtkAlgorithm.h>
#include <vtkCallbackCommand.h>
#include <vtkCell.h>
#include <vtkCellType.h>
#include <vtkCellTypes.h>
#include <vtkCommand.h>
#include <vtkExecutive.h>
#include <vtkNew.h>
#include <vtkUnstructuredGrid.h>
#include <vtkUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace intact::io {
namespace {

constexpr const char* k_supported_volume = ".msh (Gmsh 2.2 or 4.1), .mesh (MEDIT), .node/.ele (TetGen), "
                                           ".vtu (VTK XML), .vtk (legacy VTK)";
constexpr const char* k_reexport_fix = "the file is truncated or corrupt; re-export it from the mesher";

// ------------------------------------------------------------------------------------------------
// Errors, files, names
// ------------------------------------------------------------------------------------------------

/// Throw the error every reader uses: "mesh '<path>': <where>: <what>; fix: <fix>".
[[noreturn]] void
fail(const std::string& path, const std::string& where, const std::string& what, const std::string& fix) {
    throw InputError("mesh '" + path + "': " + where + ": " + what + "; fix: " + fix);
}

std::string at_line(int line) {
    return "line " + std::to_string(line);
}

/// `text` quoted for a message: at most 40 characters, non-printable bytes (binary data) shown as '?'.
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

[[noreturn]] void fail_open(const std::string& path, int error_number) {
    throw InputError("cannot open mesh file '" + path + "': " + std::strerror(error_number) +
                     "; fix: check the path (relative paths are relative to the scene file)");
}

/// The whole file as bytes. Throws InputError when it cannot be opened or read.
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

/// Throws the "cannot open" InputError unless `path` can be opened for reading (used before VTK).
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

/// Lower-case extension of the last path component, with its dot ("" when there is none).
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

// ------------------------------------------------------------------------------------------------
// Number parsing (the whole token must be the number)
// ------------------------------------------------------------------------------------------------

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

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
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

/// Splits `line` at blanks into `tokens` (cleared first).
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
// Gmsh .msh 2.2 and 4.1
// ------------------------------------------------------------------------------------------------

constexpr int k_gmsh_tet = 4;
constexpr const char* k_gmsh_fix = "export the mesh as Gmsh 2.2 or 4.1 with volume elements";

/// Nodes of a Gmsh element type (0: unknown). Only binary files need it: ASCII records are one a line.
int gmsh_nodes_per_element(std::int64_t type) {
    static const int table[] = {0, 2,  3,  4,  4, 8,  6,  5,  3,  6,  9, 10, 27, 18, 14, 1,
                                8, 20, 15, 13, 9, 10, 12, 15, 15, 21, 4, 5,  6,  20, 35, 56};
    if (type >= 0 && type < static_cast<std::int64_t>(sizeof(table) / sizeof(table[0]))) {
        return table[type];
    }
    if (type == 92) {
        return 64;
    }
    if (type == 93) {
        return 125;
    }
    return 0;
}

/// Gmsh tetrahedra of higher order (10-, 20-, 35-, 56-node), reported when a file has no linear tets.
bool gmsh_is_high_order_tet(std::int64_t type) {
    return type == 11 || type == 29 || type == 30 || type == 31;
}

class GmshReader {
public:
    GmshReader(const std::string& path, std::string_view text) : m_path(path), m_cur(text, '\0') {}

    TetMesh read() {
        read_format();
        std::string_view line;
        while (m_cur.next_line(line)) {
            if (line == "$Nodes") {
                if (m_have_nodes) {
                    fail_here("a second $Nodes section",
                              "keep one $Nodes section; " + std::string(k_gmsh_fix));
                }
                m_section = "$Nodes";
                if (m_version == 2) {
                    read_nodes_v2();
                } else {
                    read_nodes_v4();
                }
                expect_end("$EndNodes");
                m_have_nodes = true;
            } else if (line == "$Elements") {
                if (!m_have_nodes) {
                    fail_here("expected $Nodes before $Elements", k_gmsh_fix);
                }
                if (m_have_elements) {
                    fail_here("a second $Elements section",
                              "keep one $Elements section; " + std::string(k_gmsh_fix));
                }
                m_section = "$Elements";
                if (m_version == 2) {
                    read_elements_v2();
                } else {
                    read_elements_v4();
                }
                expect_end("$EndElements");
                m_have_elements = true;
            } else if (line.size() > 1 && line.front() == '$') {
                skip_section(line.substr(1));
            } else {
                fail_here("expected a section header such as $Nodes or $Elements, found " + quoted(line),
                          k_reexport_fix);
            }
        }
        if (!m_have_nodes) {
            fail(m_path, "end of file", "no $Nodes section", k_gmsh_fix);
        }
        if (!m_have_elements) {
            fail(m_path, "end of file", "no $Elements section", k_gmsh_fix);
        }
        if (m_mesh.tets.empty()) {
            std::string what =
                "no tetrahedra (element type 4) among " + std::to_string(m_num_elements) + " elements";
            if (m_num_high_order_tets > 0) {
                what += " (" + std::to_string(m_num_high_order_tets) + " are higher-order tetrahedra)";
            }
            fail(m_path, "$Elements", what,
                 "mesh the volume (gmsh -3) with first-order elements (Mesh.ElementOrder = 1) and save "
                 "all elements or a physical volume");
        }
        return std::move(m_mesh);
    }

private:
    /// "line N" in ASCII files; "<section>, byte N" in binary files, where lines mean nothing.
    std::string where() const {
        if (m_binary && !m_section.empty()) {
            return m_section + ", byte " + std::to_string(m_cur.pos());
        }
        return at_line(m_cur.line());
    }

    [[noreturn]] void fail_here(const std::string& what, const std::string& fix) const {
        fail(m_path, where(), what, fix);
    }

    [[noreturn]] void fail_eof(const std::string& expected) const {
        fail(m_path, where(), "unexpected end of file in " + m_section + ": expected " + expected,
             k_reexport_fix);
    }

    std::string_view next_line_or_fail(const std::string& expected) {
        std::string_view line;
        if (!m_cur.next_line(line)) {
            fail_eof(expected);
        }
        return line;
    }

    /// The next line, split into exactly `count` integers.
    void read_int_line(std::size_t count, std::int64_t* values, const std::string& expected) {
        const std::string_view line = next_line_or_fail(expected);
        split(line, m_tokens);
        if (m_tokens.size() != count) {
            fail_here("expected " + expected + ", found " + quoted(line), k_reexport_fix);
        }
        for (std::size_t i = 0; i < count; ++i) {
            if (!parse_int(m_tokens[i], values[i])) {
                fail_here("expected " + expected + ", found " + quoted(line), k_reexport_fix);
            }
        }
    }

    void read_format() {
        std::string_view line;
        if (!m_cur.next_line(line)) {
            fail(m_path, "line 1", "the file is empty", "export the mesh again (Gmsh 2.2 or 4.1)");
        }
        if (line == "$NOD" || line == "$PARAM") {
            fail_here("this is the Gmsh 1.0 format", "save the mesh as Gmsh 2.2 or 4.1 (gmsh -format msh41)");
        }
        if (line != "$MeshFormat") {
            fail_here("expected $MeshFormat, found " + quoted(line),
                      "the file is not a Gmsh mesh; " + std::string(k_gmsh_fix));
        }
        line = next_line_or_fail("'version file-type data-size'");
        split(line, m_tokens);
        double version = 0.0;
        std::int64_t file_type = -1;
        std::int64_t data_size = 0;
        if (m_tokens.size() < 3 || !parse_double(m_tokens[0], version) ||
            !parse_int(m_tokens[1], file_type) || !parse_int(m_tokens[2], data_size) ||
            (file_type != 0 && file_type != 1)) {
            fail_here("expected 'version file-type data-size' (e.g. '4.1 0 8'), found " + quoted(line),
                      k_reexport_fix);
        }
        if (version >= 2.0 && version < 3.0) {
            m_version = 2;
        } else if (std::fabs(version - 4.1) < 1e-9) {
            m_version = 41;
        } else {
            fail_here("unsupported Gmsh format version " + std::string(m_tokens[0]) +
                          " (supported: 2.2, 4.1)",
                      "save the mesh as Gmsh 2.2 or 4.1 (gmsh -format msh22 or -format msh41)");
        }
        m_binary = file_type == 1;
        if (m_version == 2 && data_size != 8) {
            fail_here("data-size " + std::to_string(data_size) + ", expected 8 (bytes of a double)",
                      k_reexport_fix);
        }
        if (m_version == 41 && data_size != 8 && data_size != 4) {
            fail_here("data-size " + std::to_string(data_size) + ", expected 8 or 4 (bytes of size_t)",
                      k_reexport_fix);
        }
        m_size_bytes = static_cast<int>(data_size);
        if (m_binary) {
            m_section = "$MeshFormat";
            const auto one = read_raw<std::int32_t>();
            if (one == 1) {
                m_swap = false;
            } else if (swapped(one) == 1) {
                m_swap = true;
            } else {
                fail_here("expected the binary integer 1 after the format line (byte-order check), found " +
                              std::to_string(one),
                          k_reexport_fix);
            }
        }
        line = next_line_or_fail("$EndMeshFormat");
        if (line != "$EndMeshFormat") {
            fail_here("expected $EndMeshFormat, found " + quoted(line), k_reexport_fix);
        }
        m_section.clear();
    }

    void expect_end(const char* end_marker) {
        const std::string_view line = next_line_or_fail(end_marker);
        if (line != end_marker) {
            fail_here(
                "expected " + std::string(end_marker) + ", found " + quoted(line) +
                    (m_binary ? " (binary data longer than its counts say)" : " (more records than counted)"),
                k_reexport_fix);
        }
        m_section.clear();
    }

    /// Skip a section this reader does not use ($Entities, $PhysicalNames, $Periodic, $NodeData, ...).
    void skip_section(std::string_view name) {
        const std::string end = "$End" + std::string(name);
        const std::string_view text = m_cur.text();
        std::size_t found = m_cur.pos();
        while ((found = text.find(end, found)) != std::string_view::npos) {
            const bool at_line_start = found == m_cur.pos() || text[found - 1] == '\n';
            const std::size_t after = found + end.size();
            const bool at_line_end = after == text.size() || text[after] == '\n' || text[after] == '\r';
            if (at_line_start && at_line_end) {
                break;
            }
            found = after;
        }
        if (found == std::string_view::npos) {
            fail_here("section $" + std::string(name) + " has no " + end, k_reexport_fix);
        }
        m_cur.jump_to(found);
        std::string_view line;
        m_cur.next_line(line);
    }

    // -- binary values ------------------------------------------------------------------------------

    template <class T> static T swapped(T value) {
        unsigned char bytes[sizeof(T)];
        std::memcpy(bytes, &value, sizeof(T));
        std::reverse(bytes, bytes + sizeof(T));
        std::memcpy(&value, bytes, sizeof(T));
        return value;
    }

    template <class T> T read_raw() {
        if (m_cur.pos() + sizeof(T) > m_cur.text().size()) {
            fail_eof("more binary data");
        }
        T value;
        std::memcpy(&value, m_cur.text().data() + m_cur.pos(), sizeof(T));
        m_cur.advance(sizeof(T));
        return m_swap ? swapped(value) : value;
    }

    /// A size_t field of a 4.1 binary file (data-size bytes).
    std::uint64_t read_size() {
        return m_size_bytes == 8 ? read_raw<std::uint64_t>()
                                 : static_cast<std::uint64_t>(read_raw<std::uint32_t>());
    }

    /// Fail before allocating if `count` records of `bytes` each cannot fit in what is left of the file.
    void require_bytes(std::uint64_t count, std::uint64_t bytes, const std::string& what) {
        const std::uint64_t left = m_cur.text().size() - m_cur.pos();
        if (bytes != 0 && count > left / bytes) {
            fail_eof(std::to_string(count) + " " + what + " (" + std::to_string(bytes) +
                     " bytes each), but only " + std::to_string(left) + " bytes are left");
        }
    }

    // -- nodes and tets -----------------------------------------------------------------------------

    void reserve_nodes(std::uint64_t count) {
        if (count > static_cast<std::uint64_t>(INT_MAX)) {
            fail_here(std::to_string(count) + " nodes, more than this reader's limit of " +
                          std::to_string(INT_MAX),
                      "split the mesh");
        }
        const std::uint64_t sane = std::min<std::uint64_t>(count, m_cur.text().size() / 8 + 1);
        m_mesh.nodes.reserve(sane);
        m_numbering.reserve(sane);
    }

    void add_node(std::int64_t tag, const Vec3& x) {
        int index = 0;
        if (!m_numbering.add(tag, index)) {
            fail_here("node tag " + std::to_string(tag) + " is defined twice", k_reexport_fix);
        }
        m_mesh.nodes.push_back(x);
    }

    void add_tet(std::int64_t element_tag, const std::int64_t* node_tags) {
        std::array<int, 4> tet{};
        for (int k = 0; k < 4; ++k) {
            if (!m_numbering.find(node_tags[k], tet[k])) {
                fail_here("tetrahedron " + std::to_string(element_tag) + " refers to node " +
                              std::to_string(node_tags[k]) + ", which $Nodes does not define",
                          "the file is inconsistent; re-export it from the mesher");
            }
        }
        m_mesh.tets.push_back(tet);
    }

    void count_element(std::int64_t type) {
        ++m_num_elements;
        if (gmsh_is_high_order_tet(type)) {
            ++m_num_high_order_tets;
        }
    }

    // -- version 2 ----------------------------------------------------------------------------------

    void read_nodes_v2() {
        std::int64_t count = 0;
        read_int_line(1, &count, "the number of nodes");
        if (count < 0) {
            fail_here("negative node count " + std::to_string(count), k_reexport_fix);
        }
        reserve_nodes(static_cast<std::uint64_t>(count));
        if (m_binary) {
            require_bytes(static_cast<std::uint64_t>(count), 4 + 3 * 8, "nodes");
            for (std::int64_t i = 0; i < count; ++i) {
                const std::int64_t tag = read_raw<std::int32_t>();
                Vec3 x;
                for (double& xi : x) {
                    xi = read_raw<double>();
                }
                add_node(tag, x);
            }
            return;
        }
        for (std::int64_t i = 0; i < count; ++i) {
            const std::string expected = std::to_string(count) + " nodes, read " + std::to_string(i);
            const std::string_view line = next_line_or_fail(expected);
            split(line, m_tokens);
            std::int64_t tag = 0;
            Vec3 x;
            if (m_tokens.size() != 4 || !parse_int(m_tokens[0], tag) || !parse_double(m_tokens[1], x[0]) ||
                !parse_double(m_tokens[2], x[1]) || !parse_double(m_tokens[3], x[2])) {
                fail_here("expected a node 'tag x y z' (node " + std::to_string(i + 1) + " of " +
                              std::to_string(count) + "), found " + quoted(line),
                          k_reexport_fix);
            }
            add_node(tag, x);
        }
    }

    void read_elements_v2() {
        std::int64_t count = 0;
        read_int_line(1, &count, "the number of elements");
        if (count < 0) {
            fail_here("negative element count " + std::to_string(count), k_reexport_fix);
        }
        if (m_binary) {
            read_elements_v2_binary(count);
            return;
        }
        for (std::int64_t i = 0; i < count; ++i) {
            const std::string expected = std::to_string(count) + " elements, read " + std::to_string(i);
            const std::string_view line = next_line_or_fail(expected);
            split(line, m_tokens);
            std::int64_t head[3] = {0, 0, 0}; // tag, type, number of tags
            bool ok = m_tokens.size() >= 3;
            for (int k = 0; ok && k < 3; ++k) {
                ok = parse_int(m_tokens[k], head[k]);
            }
            if (!ok || head[2] < 0 || static_cast<std::int64_t>(m_tokens.size()) < 3 + head[2]) {
                fail_here("expected an element 'tag type num-tags tags... nodes...', found " + quoted(line),
                          k_reexport_fix);
            }
            count_element(head[1]);
            if (head[1] != k_gmsh_tet) {
                continue;
            }
            const std::size_t first = static_cast<std::size_t>(3 + head[2]);
            const std::size_t num_nodes = m_tokens.size() - first;
            if (num_nodes != 4) {
                fail_here("expected 4 node indices for a tetrahedron, found " + std::to_string(num_nodes),
                          k_gmsh_fix);
            }
            std::int64_t nodes[4];
            for (int k = 0; k < 4; ++k) {
                if (!parse_int(m_tokens[first + k], nodes[k])) {
                    fail_here("expected an integer node tag, found " + quoted(m_tokens[first + k]),
                              k_reexport_fix);
                }
            }
            add_tet(head[0], nodes);
        }
    }

    void read_elements_v2_binary(std::int64_t count) {
        std::int64_t done = 0;
        while (done < count) {
            const std::int64_t type = read_raw<std::int32_t>();
            const std::int64_t in_block = read_raw<std::int32_t>();
            const std::int64_t num_tags = read_raw<std::int32_t>();
            const int num_nodes = gmsh_nodes_per_element(type);
            if (num_nodes == 0) {
                fail_here("unsupported element type " + std::to_string(type), k_gmsh_fix);
            }
            if (in_block <= 0 || in_block > count - done || num_tags < 0) {
                fail_here("bad element block header (type " + std::to_string(type) + ", " +
                              std::to_string(in_block) + " elements, " + std::to_string(num_tags) +
                              " tags) after " + std::to_string(done) + " of " + std::to_string(count) +
                              " elements",
                          k_reexport_fix);
            }
            const std::uint64_t record = 4 * static_cast<std::uint64_t>(1 + num_tags + num_nodes);
            require_bytes(static_cast<std::uint64_t>(in_block), record, "elements");
            for (std::int64_t e = 0; e < in_block; ++e) {
                const std::int64_t tag = read_raw<std::int32_t>();
                m_cur.advance(4 * static_cast<std::size_t>(num_tags));
                count_element(type);
                if (type != k_gmsh_tet) {
                    m_cur.advance(4 * static_cast<std::size_t>(num_nodes));
                    continue;
                }
                std::int64_t nodes[4];
                for (std::int64_t& node : nodes) {
                    node = read_raw<std::int32_t>();
                }
                add_tet(tag, nodes);
            }
            done += in_block;
        }
    }

    // -- version 4.1 --------------------------------------------------------------------------------

    /// Four size_t values: a binary header, or one ASCII line of four integers.
    void read_header4(std::int64_t* values, const std::string& expected) {
        if (!m_binary) {
            read_int_line(4, values, expected);
            return;
        }
        for (int k = 0; k < 4; ++k) {
            const std::uint64_t v = read_size();
            if (v > static_cast<std::uint64_t>(INT64_MAX / 2)) {
                fail_here("expected " + expected + ", found the value " + std::to_string(v), k_reexport_fix);
            }
            values[k] = static_cast<std::int64_t>(v);
        }
    }

    /// An entity block header "dim tag type-or-parametric count": three ints and a size_t in binary.
    void read_block_header4(std::int64_t* values, const std::string& expected) {
        if (!m_binary) {
            read_int_line(4, values, expected);
            return;
        }
        for (int k = 0; k < 3; ++k) {
            values[k] = read_raw<std::int32_t>();
        }
        values[3] = static_cast<std::int64_t>(std::min<std::uint64_t>(read_size(), INT64_MAX / 2));
    }

    void read_nodes_v4() {
        std::int64_t head[4]; // blocks, nodes, min tag, max tag
        read_header4(head, "'numEntityBlocks numNodes minNodeTag maxNodeTag'");
        if (head[0] < 0 || head[1] < 0) {
            fail_here("negative block or node count", k_reexport_fix);
        }
        reserve_nodes(static_cast<std::uint64_t>(head[1]));
        std::vector<std::int64_t> tags;
        for (std::int64_t b = 0; b < head[0]; ++b) {
            std::int64_t block[4]; // entity dim, entity tag, parametric, nodes in block
            read_block_header4(block,
                               "a node block 'entityDim entityTag parametric numNodesInBlock' (block " +
                                   std::to_string(b + 1) + " of " + std::to_string(head[0]) + ")");
            if (block[0] < 0 || block[0] > 3 || block[2] < 0 || block[2] > 1 || block[3] < 0) {
                fail_here("bad node block header (entity dim " + std::to_string(block[0]) + ", parametric " +
                              std::to_string(block[2]) + ", " + std::to_string(block[3]) + " nodes)",
                          k_reexport_fix);
            }
            const std::int64_t n = block[3];
            if (static_cast<std::int64_t>(m_mesh.nodes.size()) + n > head[1]) {
                fail_here("node blocks hold more than the " + std::to_string(head[1]) +
                              " nodes the header counts",
                          k_reexport_fix);
            }
            const int values_per_node = 3 + static_cast<int>(block[2] != 0 ? block[0] : 0);
            tags.resize(static_cast<std::size_t>(n));
            if (m_binary) {
                require_bytes(static_cast<std::uint64_t>(n),
                              static_cast<std::uint64_t>(m_size_bytes + 8 * values_per_node), "nodes");
                for (std::int64_t& tag : tags) {
                    tag = static_cast<std::int64_t>(read_size());
                }
                for (const std::int64_t tag : tags) {
                    Vec3 x;
                    for (double& xi : x) {
                        xi = read_raw<double>();
                    }
                    m_cur.advance(8 * static_cast<std::size_t>(values_per_node - 3));
                    add_node(tag, x);
                }
                continue;
            }
            for (std::int64_t i = 0; i < n; ++i) {
                std::int64_t tag = 0;
                read_int_line(1, &tag,
                              "a node tag (" + std::to_string(i + 1) + " of " + std::to_string(n) +
                                  " in block " + std::to_string(b + 1) + ")");
                tags[static_cast<std::size_t>(i)] = tag;
            }
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string expected = "coordinates of node " + std::to_string(i + 1) + " of " +
                                             std::to_string(n) + " in block " + std::to_string(b + 1);
                const std::string_view line = next_line_or_fail(expected);
                split(line, m_tokens);
                Vec3 x;
                if (static_cast<int>(m_tokens.size()) != values_per_node ||
                    !parse_double(m_tokens[0], x[0]) || !parse_double(m_tokens[1], x[1]) ||
                    !parse_double(m_tokens[2], x[2])) {
                    fail_here("expected " + std::to_string(values_per_node) + " numbers 'x y z" +
                                  (values_per_node > 3 ? " u..." : "") + "' for " + expected + ", found " +
                                  quoted(line),
                              k_reexport_fix);
                }
                add_node(tags[static_cast<std::size_t>(i)], x);
            }
        }
        if (static_cast<std::int64_t>(m_mesh.nodes.size()) != head[1]) {
            fail_here("the header counts " + std::to_string(head[1]) + " nodes, the blocks hold " +
                          std::to_string(m_mesh.nodes.size()),
                      k_reexport_fix);
        }
    }

    void read_elements_v4() {
        std::int64_t head[4]; // blocks, elements, min tag, max tag
        read_header4(head, "'numEntityBlocks numElements minElementTag maxElementTag'");
        if (head[0] < 0 || head[1] < 0) {
            fail_here("negative block or element count", k_reexport_fix);
        }
        std::int64_t done = 0;
        std::vector<std::int64_t> record;
        for (std::int64_t b = 0; b < head[0]; ++b) {
            std::int64_t block[4]; // entity dim, entity tag, element type, elements in block
            read_block_header4(
                block, "an element block 'entityDim entityTag elementType numElementsInBlock' (block " +
                           std::to_string(b + 1) + " of " + std::to_string(head[0]) + ")");
            const std::int64_t type = block[2];
            const std::int64_t n = block[3];
            if (n < 0 || done + n > head[1]) {
                fail_here("element blocks hold more than the " + std::to_string(head[1]) +
                              " elements the header counts",
                          k_reexport_fix);
            }
            if (m_binary) {
                const int num_nodes = gmsh_nodes_per_element(type);
                if (num_nodes == 0) {
                    fail_here("unsupported element type " + std::to_string(type), k_gmsh_fix);
                }
                require_bytes(static_cast<std::uint64_t>(n),
                              static_cast<std::uint64_t>(m_size_bytes) * (1 + num_nodes), "elements");
                record.resize(static_cast<std::size_t>(1 + num_nodes));
                for (std::int64_t e = 0; e < n; ++e) {
                    count_element(type);
                    if (type != k_gmsh_tet) {
                        m_cur.advance(static_cast<std::size_t>(m_size_bytes) * (1 + num_nodes));
                        continue;
                    }
                    for (std::int64_t& value : record) {
                        value = static_cast<std::int64_t>(read_size());
                    }
                    add_tet(record[0], record.data() + 1);
                }
                done += n;
                continue;
            }
            for (std::int64_t e = 0; e < n; ++e) {
                const std::string expected = "element " + std::to_string(e + 1) + " of " + std::to_string(n) +
                                             " in block " + std::to_string(b + 1);
                const std::string_view line = next_line_or_fail(expected);
                count_element(type);
                if (type != k_gmsh_tet) {
                    continue;
                }
                split(line, m_tokens);
                if (m_tokens.size() != 5) {
                    fail_here("expected 4 node indices for a tetrahedron, found " +
                                  std::to_string(m_tokens.empty() ? 0 : m_tokens.size() - 1),
                              k_gmsh_fix);
                }
                std::int64_t values[5];
                for (int k = 0; k < 5; ++k) {
                    if (!parse_int(m_tokens[k], values[k])) {
                        fail_here("expected integer tags 'tag n1 n2 n3 n4', found " + quoted(line),
                                  k_reexport_fix);
                    }
                }
                add_tet(values[0], values + 1);
            }
            done += n;
        }
        if (done != head[1]) {
            fail_here("the header counts " + std::to_string(head[1]) + " elements, the blocks hold " +
                          std::to_string(done),
                      k_reexport_fix);
        }
    }

    const std::string& m_path;
    TextCursor m_cur;
    int m_version = 0; // 2 or 41
    bool m_binary = false;
    bool m_swap = false;
    int m_size_bytes = 8;
    std::string m_section;
    bool m_have_nodes = false;
    bool m_have_elements = false;
    std::int64_t m_num_elements = 0;
    std::int64_t m_num_high_order_tets = 0;
    NodeNumbering m_numbering;
    std::vector<std::string_view> m_tokens;
    TetMesh m_mesh;
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
// MEDIT .mesh
// ------------------------------------------------------------------------------------------------

bool starts_with_letter(std::string_view t) {
    return !t.empty() && std::isalpha(static_cast<unsigned char>(t.front())) != 0;
}

TetMesh read_medit(const std::string& path, std::string_view text) {
    constexpr const char* fix = "export an ASCII MEDIT mesh (.mesh) with Vertices and Tetrahedra";
    TokenReader in(path, text, '#');
    TextCursor& cur = in.cursor();
    TetMesh mesh;
    std::vector<int> tet_lines; // for index checks once all vertices are known
    bool have_vertices = false;
    std::string_view t;
    while (cur.next_token(t)) {
        if (!starts_with_letter(t)) {
            in.fail_here("expected a keyword such as Vertices or Tetrahedra, found " + quoted(t), fix);
        }
        if (iequals(t, "End")) {
            break;
        }
        if (iequals(t, "MeshVersionFormatted")) {
            in.integer("the MeshVersionFormatted number");
        } else if (iequals(t, "Dimension")) {
            const std::int64_t dim = in.integer("the Dimension");
            if (dim != 3) {
                in.fail_here("expected Dimension 3, found " + std::to_string(dim),
                             "export a 3-D volume mesh");
            }
        } else if (iequals(t, "Vertices")) {
            if (have_vertices) {
                in.fail_here("a second Vertices section", fix);
            }
            have_vertices = true;
            const std::int64_t n = in.count("the number of Vertices");
            mesh.nodes.reserve(static_cast<std::size_t>(std::min<std::int64_t>(n, text.size() / 8 + 1)));
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string what =
                    "vertex " + std::to_string(i + 1) + " of " + std::to_string(n) + " 'x y z ref'";
                Vec3 x;
                for (double& xi : x) {
                    xi = in.real(what);
                }
                in.token(what); // reference number, unused
                mesh.nodes.push_back(x);
            }
        } else if (iequals(t, "Tetrahedra")) {
            const std::int64_t n = in.count("the number of Tetrahedra");
            mesh.tets.reserve(mesh.tets.size() +
                              static_cast<std::size_t>(std::min<std::int64_t>(n, text.size() / 10 + 1)));
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string what = "tetrahedron " + std::to_string(i + 1) + " of " + std::to_string(n) +
                                         " 'v1 v2 v3 v4 ref'";
                std::array<int, 4> tet{};
                for (int& v : tet) {
                    const std::int64_t one_based = in.integer(what);
                    if (one_based < 1 || one_based > INT_MAX) {
                        in.fail_here("vertex index " + std::to_string(one_based) +
                                         " out of range (MEDIT indices start at 1)",
                                     k_reexport_fix);
                    }
                    v = static_cast<int>(one_based - 1);
                }
                tet_lines.push_back(cur.line());
                in.token(what); // reference number, unused
                mesh.tets.push_back(tet);
            }
        } else {
            // A section this reader does not use (Edges, Triangles, Corners, Normals, ...): its data are
            // numbers, so it ends at the next keyword.
            TextCursor::State state = cur.save();
            while (cur.next_token(t) && !starts_with_letter(t)) {
                state = cur.save();
            }
            cur.restore(state);
        }
    }
    if (mesh.tets.empty()) {
        fail(path, "end of file", "no Tetrahedra section (or it is empty)", fix);
    }
    const int num_vertices = static_cast<int>(mesh.nodes.size());
    for (std::size_t i = 0; i < mesh.tets.size(); ++i) {
        for (const int v : mesh.tets[i]) {
            if (v >= num_vertices) {
                fail(path, at_line(tet_lines[i]),
                     "tetrahedron " + std::to_string(i + 1) + " refers to vertex " + std::to_string(v + 1) +
                         ", but the file has " + std::to_string(num_vertices) + " Vertices",
                     "the file is inconsistent; re-export it from the mesher");
            }
        }
    }
    return mesh;
}

// ------------------------------------------------------------------------------------------------
// TetGen .node / .ele
// ------------------------------------------------------------------------------------------------

TetMesh read_tetgen(const std::string& path) {
    const std::string node_path = with_extension(path, ".node");
    const std::string ele_path = with_extension(path, ".ele");
    const std::string other = extension_of(path) == ".node" ? ele_path : node_path;
    require_readable(path);
    {
        errno = 0;
        std::FILE* file = std::fopen(other.c_str(), "rb");
        if (!file) {
            throw InputError("cannot open mesh file '" + other + "' (the TetGen file beside '" + path +
                             "'): " + std::strerror(errno) + "; fix: keep the .node and .ele files together");
        }
        std::fclose(file);
    }
    TetMesh mesh;
    NodeNumbering numbering;

    const std::string node_text = read_file(node_path);
    TokenReader nodes(node_path, node_text, '#');
    const std::int64_t num_nodes = nodes.count("the number of points in the .node header");
    const std::int64_t dim = nodes.integer("the dimension in the .node header");
    if (dim != 3) {
        nodes.fail_here("expected dimension 3 in the .node header, found " + std::to_string(dim),
                        "generate a 3-D TetGen mesh");
    }
    const std::int64_t num_attributes = nodes.count("the number of attributes in the .node header");
    const std::int64_t num_markers =
        nodes.count("the number of boundary markers (0 or 1) in the .node header");
    if (num_markers > 1) {
        nodes.fail_here("expected 0 or 1 boundary markers, found " + std::to_string(num_markers),
                        k_reexport_fix);
    }
    mesh.nodes.reserve(static_cast<std::size_t>(std::min<std::int64_t>(num_nodes, node_text.size() / 8 + 1)));
    for (std::int64_t i = 0; i < num_nodes; ++i) {
        const std::string what =
            "point " + std::to_string(i + 1) + " of " + std::to_string(num_nodes) + " 'id x y z'";
        const std::int64_t id = nodes.integer(what);
        Vec3 x;
        for (double& xi : x) {
            xi = nodes.real(what);
        }
        for (std::int64_t a = 0; a < num_attributes + num_markers; ++a) {
            nodes.token(what + " with its attributes and marker");
        }
        int index = 0;
        if (!numbering.add(id, index)) {
            nodes.fail_here("point " + std::to_string(id) + " is defined twice", k_reexport_fix);
        }
        mesh.nodes.push_back(x);
    }

    const std::string ele_text = read_file(ele_path);
    TokenReader eles(ele_path, ele_text, '#');
    const std::int64_t num_tets = eles.count("the number of tetrahedra in the .ele header");
    const std::int64_t nodes_per_tet = eles.integer("the nodes per tetrahedron in the .ele header");
    if (nodes_per_tet != 4) {
        eles.fail_here("expected 4 nodes per tetrahedron, found " + std::to_string(nodes_per_tet),
                       "run tetgen without -o2 (first-order tetrahedra)");
    }
    const std::int64_t num_regions = eles.count("the number of region attributes in the .ele header");
    mesh.tets.reserve(static_cast<std::size_t>(std::min<std::int64_t>(num_tets, ele_text.size() / 10 + 1)));
    for (std::int64_t i = 0; i < num_tets; ++i) {
        const std::string what =
            "tetrahedron " + std::to_string(i + 1) + " of " + std::to_string(num_tets) + " 'id n1 n2 n3 n4'";
        eles.integer(what);
        std::array<int, 4> tet{};
        for (int& v : tet) {
            const std::int64_t id = eles.integer(what);
            if (!numbering.find(id, v)) {
                eles.fail_here("tetrahedron " + std::to_string(i + 1) + " refers to point " +
                                   std::to_string(id) + ", which '" + node_path + "' does not define",
                               "the .node and .ele files must come from the same tetgen run");
            }
        }
        for (std::int64_t a = 0; a < num_regions; ++a) {
            eles.token(what + " with its region attributes");
        }
        mesh.tets.push_back(tet);
    }
    if (mesh.tets.empty()) {
        fail(ele_path, "line 1", "no tetrahedra", "tetrahedralize the volume with tetgen");
    }
    return mesh;
}

// ------------------------------------------------------------------------------------------------
// VTK .vtu / .vtk through VTK's readers
// ------------------------------------------------------------------------------------------------

/// Collects the error messages VTK objects raise (instead of letting VTK print them), "; "-separated,
/// first line of each only (the pipeline appends a dump of its request).
void collect_vtk_error(vtkObject* /*caller*/, unsigned long event, void* client_data, void* call_data) {
    if (event != vtkCommand::ErrorEvent || call_data == nullptr) {
        return; // warnings are dropped: library code does not print, and they do not stop reading
    }
    auto* messages = static_cast<std::string*>(client_data);
    std::string_view message = trim(static_cast<const char*>(call_data));
    // VTK's text is "<class> (0x...): <what>"; keep <what>, first line only.
    const std::size_t colon = message.find("): ");
    if (colon != std::string_view::npos) {
        message.remove_prefix(colon + 3);
    }
    message = trim(message.substr(0, message.find('\n')));
    if (!messages->empty()) {
        *messages += "; ";
    }
    *messages += message;
}

TetMesh read_vtk(const std::string& path, bool xml) {
    require_readable(path);
    std::string errors;
    vtkNew<vtkCallbackCommand> observer;
    observer->SetCallback(&collect_vtk_error);
    observer->SetClientData(&errors);
    // The pipeline reports a failed reader once more, with a dump of its request; keep that apart and
    // use it only when the reader itself said nothing.
    std::string pipeline_errors;
    vtkNew<vtkCallbackCommand> pipeline_observer;
    pipeline_observer->SetCallback(&collect_vtk_error);
    pipeline_observer->SetClientData(&pipeline_errors);

    vtkUnstructuredGrid* grid = nullptr;
    vtkNew<vtkXMLUnstructuredGridReader> xml_reader;
    vtkNew<vtkUnstructuredGridReader> legacy_reader;
    vtkAlgorithm* reader =
        xml ? static_cast<vtkAlgorithm*>(xml_reader) : static_cast<vtkAlgorithm*>(legacy_reader);
    reader->AddObserver(vtkCommand::ErrorEvent, observer);
    reader->AddObserver(vtkCommand::WarningEvent, observer);
    reader->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, pipeline_observer);
    reader->GetExecutive()->AddObserver(vtkCommand::WarningEvent, pipeline_observer);
    if (xml) {
        xml_reader->SetReaderErrorObserver(observer);
        xml_reader->SetParserErrorObserver(observer);
        if (xml_reader->CanReadFile(path.c_str()) == 0) {
            fail(path, "header",
                 "not a VTK XML UnstructuredGrid file (expected <VTKFile type=\"UnstructuredGrid\">)",
                 "export the mesh as a .vtu unstructured grid of tetrahedra");
        }
        xml_reader->SetFileName(path.c_str());
        xml_reader->Update();
        grid = xml_reader->GetOutput();
    } else {
        legacy_reader->SetFileName(path.c_str());
        if (legacy_reader->IsFileUnstructuredGrid() == 0) {
            fail(path, "header",
                 "not a legacy VTK unstructured grid (expected 'DATASET UNSTRUCTURED_GRID')" +
                     (errors.empty() ? std::string() : ": " + errors),
                 "export the mesh as an unstructured grid of tetrahedra");
        }
        legacy_reader->Update();
        grid = legacy_reader->GetOutput();
    }
    if (errors.empty()) {
        errors = pipeline_errors;
    }
    if (!errors.empty()) {
        fail(path, "VTK reader", errors, k_reexport_fix);
    }
    if (grid == nullptr) {
        fail(path, "VTK reader", "no unstructured grid was read", k_reexport_fix);
    }

    TetMesh mesh;
    const vtkIdType num_points = grid->GetNumberOfPoints();
    if (num_points > INT_MAX) {
        fail(path, "Points", std::to_string(num_points) + " points, more than this reader's limit",
             "split the mesh");
    }
    mesh.nodes.resize(static_cast<std::size_t>(num_points));
    for (vtkIdType i = 0; i < num_points; ++i) {
        grid->GetPoint(i, mesh.nodes[static_cast<std::size_t>(i)].data());
    }
    const vtkIdType num_cells = grid->GetNumberOfCells();
    std::map<int, int> dimension_of_type; // cell type -> dimension, for the non-tet types met
    for (vtkIdType c = 0; c < num_cells; ++c) {
        const int type = grid->GetCellType(c);
        if (type != VTK_TETRA) {
            auto it = dimension_of_type.find(type);
            if (it == dimension_of_type.end()) {
                it = dimension_of_type.emplace(type, grid->GetCell(c)->GetCellDimension()).first;
            }
            if (it->second >= 3) {
                const char* name = vtkCellTypes::GetClassNameFromTypeId(type);
                fail(path, "cell " + std::to_string(c),
                     std::string("a ") + (name != nullptr ? name : "volume cell") + " (VTK cell type " +
                         std::to_string(type) + "); only VTK_TETRA (10) volume cells are supported",
                     "tetrahedralize the mesh (e.g. with gmsh or TetGen) before exporting it");
            }
            continue; // points, lines and surface cells (e.g. boundary triangles) are skipped
        }
        vtkIdType npts = 0;
        const vtkIdType* pts = nullptr;
        grid->GetCellPoints(c, npts, pts);
        if (npts != 4) {
            fail(path, "cell " + std::to_string(c),
                 "expected 4 point ids for a VTK_TETRA, found " + std::to_string(npts), k_reexport_fix);
        }
        std::array<int, 4> tet{};
        for (int k = 0; k < 4; ++k) {
            if (pts[k] < 0 || pts[k] >= num_points) {
                fail(path, "cell " + std::to_string(c),
                     "point id " + std::to_string(pts[k]) + " out of range (the file has " +
                         std::to_string(num_points) + " points)",
                     k_reexport_fix);
            }
            tet[k] = static_cast<int>(pts[k]);
        }
        mesh.tets.push_back(tet);
    }
    if (mesh.tets.empty()) {
        fail(path, "Cells", "no VTK_TETRA cells among " + std::to_string(num_cells) + " cells",
             "export the volume mesh (tetrahedra), not only its surface");
    }
    return mesh;
}

// ------------------------------------------------------------------------------------------------
// Wavefront .obj (triangle meshes)
// ------------------------------------------------------------------------------------------------

TriMesh read_obj(const std::string& path) {
    const std::string text = read_file(path);
    TextCursor cur(text, '#');
    TriMesh mesh;
    std::vector<std::string_view> tokens;
    std::vector<int> polygon;
    std::string_view line;
    while (cur.next_line(line)) {
        split(line, tokens);
        const std::string where = at_line(cur.line());
        if (tokens[0] == "v") {
            Vec3 x;
            // Extra values after x y z (a w weight or per-vertex colours) are ignored.
            if (tokens.size() < 4 || !parse_double(tokens[1], x[0]) || !parse_double(tokens[2], x[1]) ||
                !parse_double(tokens[3], x[2])) {
                fail(path, where, "expected a vertex 'v x y z', found " + quoted(line), k_reexport_fix);
            }
            mesh.nodes.push_back(x);
        } else if (tokens[0] == "f" || tokens[0] == "l") {
            const bool face = tokens[0] == "f";
            polygon.clear();
            for (std::size_t k = 1; k < tokens.size(); ++k) {
                // "i", "i/t", "i//n" or "i/t/n": the vertex index is before the first slash.
                const std::string_view entry = tokens[k].substr(0, tokens[k].find('/'));
                std::int64_t index = 0;
                if (!parse_int(entry, index) || index == 0) {
                    fail(path, where,
                         std::string("expected a vertex index (1-based, or negative from the end) in ") +
                             (face ? "face" : "line") + " entry " + quoted(tokens[k]),
                         k_reexport_fix);
                }
                const std::int64_t num = static_cast<std::int64_t>(mesh.nodes.size());
                const std::int64_t zero_based = index > 0 ? index - 1 : num + index;
                if (zero_based < 0 || zero_based >= num) {
                    fail(path, where,
                         std::string(face ? "face" : "line") + " refers to vertex " + std::to_string(index) +
                             ", but only " + std::to_string(num) + " vertices are defined before this line",
                         "the file is inconsistent; re-export it");
                }
                polygon.push_back(static_cast<int>(zero_based));
            }
            const std::size_t least = face ? 3 : 2;
            if (polygon.size() < least) {
                fail(path, where,
                     "expected at least " + std::to_string(least) + " vertices in a " +
                         (face ? "face" : "line") + ", found " + std::to_string(polygon.size()),
                     k_reexport_fix);
            }
            if (face) {
                for (std::size_t k = 1; k + 1 < polygon.size(); ++k) {
                    mesh.tris.push_back({polygon[0], polygon[k], polygon[k + 1]});
                }
            } else { // a polyline: one segment per consecutive pair
                for (std::size_t k = 0; k + 1 < polygon.size(); ++k) {
                    mesh.segments.push_back({polygon[k], polygon[k + 1]});
                }
            }
        }
        // Other records (vt, vn, g, o, s, usemtl, mtllib, p, ...) carry nothing an obstacle needs (every
        // vertex is a contact point already).
    }
    if (mesh.nodes.empty()) {
        fail(path, "end of file", "no vertices ('v' lines)",
             "export the obstacle as .obj: triangles ('f'), segments ('l') or vertices alone (a point set)");
    }
    return mesh;
}

} // namespace

TetMesh read_tet_mesh(const std::string& path) {
    const std::string ext = extension_of(path);
    if (ext == ".msh") {
        const std::string text = read_file(path);
        return GmshReader(path, text).read();
    }
    if (ext == ".mesh") {
        const std::string text = read_file(path);
        return read_medit(path, text);
    }
    if (ext == ".node" || ext == ".ele") {
        return read_tetgen(path);
    }
    if (ext == ".vtu" || ext == ".vtk") {
        return read_vtk(path, ext == ".vtu");
    }
    throw InputError("mesh '" + path + "': unsupported extension '" + ext +
                     "' for a tetrahedral mesh; supported: " + k_supported_volume +
                     "; fix: convert the mesh to one of these (e.g. with gmsh or meshio)");
}

TriMesh read_triangle_mesh(const std::string& path) {
    const std::string ext = extension_of(path);
    if (ext != ".obj") {
        throw InputError(
            "mesh '" + path + "': unsupported extension '" + ext +
            "' for a triangle mesh; supported: .obj (Wavefront); fix: export the surface as .obj");
    }
    return read_obj(path);
}

} // namespace intact::io
