/// @file gmsh.cpp
/// @brief The Gmsh .msh reader: versions 2.2 and 4.1, ASCII and binary. One kind of first-order element is
/// kept (tetrahedra, type 4, for solids; triangles, type 2, for shells; lines, type 1, for rods), the
/// others skipped; errors name the line (ASCII) or the section and byte offset (binary).

#include "src/io/mesh_reader/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace intact::io::detail {
namespace {

constexpr const char* k_gmsh_fix = "export the mesh as Gmsh 2.2 or 4.1 with first-order elements";

/// The element kind a reader keeps: its Gmsh type, node count, names, the Gmsh types of the same shape at
/// higher order (reported when a file has none of the kind), and how to mesh it.
struct GmshKind {
    std::int64_t type;
    int nodes;
    const char* singular;
    const char* plural;
    std::int64_t high_order[7];
    const char* how;
};

constexpr GmshKind k_gmsh_kinds[] = {
    {4, 4, "tetrahedron", "tetrahedra", {11, 29, 30, 31, 0, 0, 0}, "mesh the volume (gmsh -3)"},
    {2, 3, "triangle", "triangles", {9, 20, 21, 22, 23, 24, 25}, "mesh the surface (gmsh -2)"},
    {1, 2, "line", "lines", {8, 26, 27, 28, 0, 0, 0}, "mesh the curves (gmsh -1)"},
};

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

class GmshReader {
public:
    GmshReader(const std::string& path, std::string_view text, GmshElements kind)
        : m_path(path), m_cur(text, '\0'), m_kind(k_gmsh_kinds[static_cast<int>(kind)]) {}

    /// Reads the file: its nodes, and the elements of the kind the reader keeps (`elements`, node
    /// indices, `kind.nodes` per element). Throws InputError when there are none.
    void read() {
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
        if (m_elements.empty()) {
            std::string what = std::string("no ") + m_kind.plural + " (element type " +
                               std::to_string(m_kind.type) + ") among " + std::to_string(m_num_elements) +
                               " elements";
            if (m_num_high_order > 0) {
                what += " (" + std::to_string(m_num_high_order) + " are higher-order " + m_kind.plural + ")";
            }
            std::string others;
            for (const GmshKind& other : k_gmsh_kinds) {
                const std::int64_t n = m_num_of_type[&other - k_gmsh_kinds];
                if (&other != &m_kind && n > 0) {
                    others += (others.empty() ? "" : ", ") + std::to_string(n) + " " +
                              (n == 1 ? other.singular : other.plural);
                }
            }
            if (!others.empty()) {
                what += "; it has " + others;
            }
            fail(m_path, "$Elements", what,
                 std::string(m_kind.how) +
                     " with first-order elements (Mesh.ElementOrder = 1) and save all elements, or give the "
                     "body the type of the file's elements (\"solid\": tetrahedra, \"shell\": triangles, "
                     "\"rod\": lines)");
        }
    }

    std::vector<Vec3>& nodes() { return m_nodes; }
    const std::vector<int>& elements() const { return m_elements; }

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
        m_nodes.reserve(sane);
        m_numbering.reserve(sane);
    }

    void add_node(std::int64_t tag, const Vec3& x) {
        int index = 0;
        if (!m_numbering.add(tag, index)) {
            fail_here("node tag " + std::to_string(tag) + " is defined twice", k_reexport_fix);
        }
        m_nodes.push_back(x);
    }

    /// Appends an element of the kept kind (`node_tags`: m_kind.nodes file tags).
    void add_element(std::int64_t element_tag, const std::int64_t* node_tags) {
        for (int k = 0; k < m_kind.nodes; ++k) {
            int index = 0;
            if (!m_numbering.find(node_tags[k], index)) {
                fail_here(std::string(m_kind.singular) + " " + std::to_string(element_tag) +
                              " refers to node " + std::to_string(node_tags[k]) +
                              ", which $Nodes does not define",
                          "the file is inconsistent; re-export it from the mesher");
            }
            m_elements.push_back(index);
        }
    }

    void count_element(std::int64_t type) {
        ++m_num_elements;
        for (const std::int64_t high : m_kind.high_order) {
            if (high != 0 && type == high) {
                ++m_num_high_order;
            }
        }
        for (const GmshKind& kind : k_gmsh_kinds) {
            if (type == kind.type) {
                ++m_num_of_type[&kind - k_gmsh_kinds];
            }
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
            if (head[1] != m_kind.type) {
                continue;
            }
            const std::size_t first = static_cast<std::size_t>(3 + head[2]);
            const std::size_t num_nodes = m_tokens.size() - first;
            if (num_nodes != static_cast<std::size_t>(m_kind.nodes)) {
                fail_here("expected " + std::to_string(m_kind.nodes) + " node indices for a " +
                              m_kind.singular + ", found " + std::to_string(num_nodes),
                          k_gmsh_fix);
            }
            std::int64_t nodes[4];
            for (int k = 0; k < m_kind.nodes; ++k) {
                if (!parse_int(m_tokens[first + k], nodes[k])) {
                    fail_here("expected an integer node tag, found " + quoted(m_tokens[first + k]),
                              k_reexport_fix);
                }
            }
            add_element(head[0], nodes);
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
                if (type != m_kind.type) {
                    m_cur.advance(4 * static_cast<std::size_t>(num_nodes));
                    continue;
                }
                std::int64_t nodes[4];
                for (int k = 0; k < m_kind.nodes; ++k) {
                    nodes[k] = read_raw<std::int32_t>();
                }
                add_element(tag, nodes);
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
            if (static_cast<std::int64_t>(m_nodes.size()) + n > head[1]) {
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
        if (static_cast<std::int64_t>(m_nodes.size()) != head[1]) {
            fail_here("the header counts " + std::to_string(head[1]) + " nodes, the blocks hold " +
                          std::to_string(m_nodes.size()),
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
                    if (type != m_kind.type) {
                        m_cur.advance(static_cast<std::size_t>(m_size_bytes) * (1 + num_nodes));
                        continue;
                    }
                    for (std::int64_t& value : record) {
                        value = static_cast<std::int64_t>(read_size());
                    }
                    add_element(record[0], record.data() + 1);
                }
                done += n;
                continue;
            }
            for (std::int64_t e = 0; e < n; ++e) {
                const std::string expected = "element " + std::to_string(e + 1) + " of " + std::to_string(n) +
                                             " in block " + std::to_string(b + 1);
                const std::string_view line = next_line_or_fail(expected);
                count_element(type);
                if (type != m_kind.type) {
                    continue;
                }
                split(line, m_tokens);
                if (m_tokens.size() != static_cast<std::size_t>(1 + m_kind.nodes)) {
                    fail_here("expected " + std::to_string(m_kind.nodes) + " node indices for a " +
                                  m_kind.singular + ", found " +
                                  std::to_string(m_tokens.empty() ? 0 : m_tokens.size() - 1),
                              k_gmsh_fix);
                }
                std::int64_t values[5];
                for (int k = 0; k <= m_kind.nodes; ++k) {
                    if (!parse_int(m_tokens[k], values[k])) {
                        fail_here("expected integer tags 'tag n1 .. n" + std::to_string(m_kind.nodes) +
                                      "', found " + quoted(line),
                                  k_reexport_fix);
                    }
                }
                add_element(values[0], values + 1);
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
    std::int64_t m_num_high_order = 0;                        ///< of the kept kind's shape
    std::int64_t m_num_of_type[std::size(k_gmsh_kinds)] = {}; ///< per k_gmsh_kinds entry
    NodeNumbering m_numbering;
    std::vector<std::string_view> m_tokens;
    const GmshKind& m_kind;
    std::vector<Vec3> m_nodes;
    std::vector<int> m_elements; ///< m_kind.nodes node indices per element
};

} // namespace

TetMesh read_gmsh(const std::string& path, std::string_view text) {
    GmshReader reader(path, text, GmshElements::tetrahedra);
    reader.read();
    TetMesh mesh;
    mesh.nodes = std::move(reader.nodes());
    const std::vector<int>& e = reader.elements();
    mesh.tets.reserve(e.size() / 4);
    for (std::size_t k = 0; k < e.size(); k += 4) {
        mesh.tets.push_back({e[k], e[k + 1], e[k + 2], e[k + 3]});
    }
    return mesh;
}

TriMesh read_gmsh_codim(const std::string& path, std::string_view text, GmshElements kind) {
    GmshReader reader(path, text, kind);
    reader.read();
    TriMesh mesh;
    mesh.nodes = std::move(reader.nodes());
    const std::vector<int>& e = reader.elements();
    if (kind == GmshElements::triangles) {
        for (std::size_t k = 0; k < e.size(); k += 3) {
            mesh.tris.push_back({e[k], e[k + 1], e[k + 2]});
        }
    } else {
        for (std::size_t k = 0; k < e.size(); k += 2) {
            mesh.segments.push_back({e[k], e[k + 1]});
        }
    }
    return mesh;
}

} // namespace intact::io::detail
