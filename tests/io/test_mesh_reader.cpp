// Mesh readers: every format against a hand-written two-tet mesh with known nodes and connectivity,
// Gmsh binary written byte by byte per the format spec (both byte orders), gmsh-generated meshes in
// every format agreeing with each other, the shared meshes, and error messages that name the file.
#include "src/core/error.hpp"
#include "src/io/mesh_reader.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/codim_mesh.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using intact::InputError;
using intact::TetMesh;
using intact::Vec3;
using intact::io::read_tet_mesh;
using intact::io::read_triangle_mesh;

// -- the reference mesh ---------------------------------------------------------------------------

/// Two tets sharing face (1, 2, 3); volumes 1/6 and 2.5/6.
const std::vector<Vec3> k_nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1.5}};
const std::vector<std::array<int, 4>> k_tets = {{0, 1, 2, 3}, {1, 2, 3, 4}};

double tet_volume(const TetMesh& mesh, const std::array<int, 4>& tet) {
    const Vec3& x0 = mesh.nodes[tet[0]];
    double e[3][3];
    for (int k = 0; k < 3; ++k) {
        for (int d = 0; d < 3; ++d) {
            e[k][d] = mesh.nodes[tet[k + 1]][d] - x0[d];
        }
    }
    return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
            e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
            e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) /
           6.0;
}

double total_volume(const TetMesh& mesh) {
    double sum = 0.0;
    for (const auto& tet : mesh.tets) {
        sum += tet_volume(mesh, tet);
    }
    return sum;
}

/// The mesh must be exactly the reference: same nodes in the same order, same tets.
void expect_reference_mesh(const TetMesh& mesh) {
    ASSERT_EQ(mesh.nodes.size(), k_nodes.size());
    for (std::size_t i = 0; i < k_nodes.size(); ++i) {
        for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(mesh.nodes[i][d], k_nodes[i][d]) << "node " << i << " component " << d;
        }
    }
    ASSERT_EQ(mesh.tets.size(), k_tets.size());
    for (std::size_t t = 0; t < k_tets.size(); ++t) {
        EXPECT_EQ(mesh.tets[t], k_tets[t]) << "tet " << t;
    }
    EXPECT_DOUBLE_EQ(total_volume(mesh), 3.5 / 6.0);
}

// -- files ----------------------------------------------------------------------------------------

/// A fresh directory under the system temp folder, removed with its contents at the end of the test.
class MeshReaderTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "intact_mesh_reader_XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(m_dir, ignored);
    }

    std::string write(const std::string& name, const std::string& bytes) const {
        const std::string path = (m_dir / name).string();
        std::ofstream out(path, std::ios::binary);
        out << bytes;
        EXPECT_TRUE(out.good()) << path;
        return path;
    }

    fs::path m_dir;
};

/// Runs `read` and returns the InputError's message ("" and a test failure when nothing is thrown).
template <class Read> std::string error_of(Read read) {
    try {
        read();
    } catch (const InputError& error) {
        return error.what();
    }
    ADD_FAILURE() << "expected an InputError";
    return "";
}

/// Little- or big-endian binary data, as a Gmsh writer on such a machine would produce.
class Bytes {
public:
    explicit Bytes(bool swap) : m_swap(swap) {}
    template <class T> Bytes& put(T value) {
        char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));
        if (m_swap) {
            std::reverse(raw, raw + sizeof(T));
        }
        m_data.append(raw, sizeof(T));
        return *this;
    }
    Bytes& text(const std::string& s) {
        m_data += s;
        return *this;
    }
    const std::string& str() const { return m_data; }

private:
    bool m_swap;
    std::string m_data;
};

// -- Gmsh -----------------------------------------------------------------------------------------

const char* const k_msh22_ascii = R"($MeshFormat
2.2 0 8
$EndMeshFormat
$PhysicalNames
1
3 1 "body"
$EndPhysicalNames
$Nodes
5
1 0 0 0
2 1 0 0
3 0 1 0
4 0 0 1
5 1 1 1.5
$EndNodes
$Elements
4
1 15 2 0 1 1
2 2 2 0 1 2 3 4
3 4 2 1 1 1 2 3 4
4 4 2 1 1 2 3 4 5
$EndElements
)";

/// Sparse, unsorted node tags (10, 3, 42, 7, 100) in two blocks, one parametric; a triangle block
/// and an $Entities section to skip; CRLF line ends.
std::string msh41_ascii() {
    std::string text = R"($MeshFormat
4.1 0 8
$EndMeshFormat
$Entities
0 0 1 1
1 0 0 0 1 1 0 0 0
1 0 0 0 1 1 1.5 0 0
$EndEntities
$Nodes
2 5 3 100
2 1 1 2
10
3
0 0 0 0.1 0.2
1 0 0 0.3 0.4
3 1 0 3
42
7
100
0 1 0
0 0 1
1 1 1.5
$EndNodes
$Elements
2 3 1 3
2 1 2 1
1 10 3 42
3 1 4 2
2 10 3 42 7
3 3 42 7 100
$EndElements
)";
    std::string crlf;
    for (const char c : text) {
        if (c == '\n') {
            crlf += '\r';
        }
        crlf += c;
    }
    return crlf;
}

std::string msh22_binary() {
    Bytes b(false);
    b.text("$MeshFormat\n2.2 1 8\n").put<std::int32_t>(1).text("\n$EndMeshFormat\n$Nodes\n5\n");
    for (int i = 0; i < 5; ++i) {
        b.put<std::int32_t>(i + 1);
        for (const double x : k_nodes[i]) {
            b.put(x);
        }
    }
    b.text("\n$EndNodes\n$Elements\n3\n");
    // A triangle block (type 2, 1 element, 2 tags), then a tet block (type 4, 2 elements, 2 tags).
    b.put<std::int32_t>(2).put<std::int32_t>(1).put<std::int32_t>(2);
    b.put<std::int32_t>(1).put<std::int32_t>(0).put<std::int32_t>(1);
    b.put<std::int32_t>(1).put<std::int32_t>(2).put<std::int32_t>(3);
    b.put<std::int32_t>(4).put<std::int32_t>(2).put<std::int32_t>(2);
    for (int t = 0; t < 2; ++t) {
        b.put<std::int32_t>(2 + t).put<std::int32_t>(1).put<std::int32_t>(1);
        for (const int v : k_tets[t]) {
            b.put<std::int32_t>(v + 1);
        }
    }
    b.text("\n$EndElements\n");
    return b.str();
}

/// MSH 4.1 binary with data-size 8, sparse tags, a binary $Entities section; `swap` writes it as a
/// big-endian machine would.
std::string msh41_binary(bool swap) {
    const std::uint64_t tags[5] = {10, 3, 42, 7, 100};
    Bytes b(swap);
    b.text("$MeshFormat\n4.1 1 8\n").put<std::int32_t>(1).text("\n$EndMeshFormat\n$Entities\n");
    // One volume: tag, bounding box, no physical tags, no bounding surfaces.
    b.put<std::uint64_t>(0).put<std::uint64_t>(0).put<std::uint64_t>(0).put<std::uint64_t>(1);
    b.put<std::int32_t>(1);
    for (const double x : {0.0, 0.0, 0.0, 1.0, 1.0, 1.5}) {
        b.put(x);
    }
    b.put<std::uint64_t>(0).put<std::uint64_t>(0);
    b.text("\n$EndEntities\n$Nodes\n");
    b.put<std::uint64_t>(2).put<std::uint64_t>(5).put<std::uint64_t>(3).put<std::uint64_t>(100);
    // Block 1: surface entity, parametric, 2 nodes (x y z u v each).
    b.put<std::int32_t>(2).put<std::int32_t>(1).put<std::int32_t>(1).put<std::uint64_t>(2);
    b.put(tags[0]).put(tags[1]);
    for (int i = 0; i < 2; ++i) {
        for (const double x : k_nodes[i]) {
            b.put(x);
        }
        b.put(0.5).put(0.25);
    }
    // Block 2: volume entity, 3 nodes.
    b.put<std::int32_t>(3).put<std::int32_t>(1).put<std::int32_t>(0).put<std::uint64_t>(3);
    b.put(tags[2]).put(tags[3]).put(tags[4]);
    for (int i = 2; i < 5; ++i) {
        for (const double x : k_nodes[i]) {
            b.put(x);
        }
    }
    b.text("\n$EndNodes\n$Elements\n");
    b.put<std::uint64_t>(2).put<std::uint64_t>(3).put<std::uint64_t>(1).put<std::uint64_t>(3);
    b.put<std::int32_t>(2).put<std::int32_t>(1).put<std::int32_t>(2).put<std::uint64_t>(1);
    b.put<std::uint64_t>(1).put(tags[0]).put(tags[1]).put(tags[2]);
    b.put<std::int32_t>(3).put<std::int32_t>(1).put<std::int32_t>(4).put<std::uint64_t>(2);
    for (int t = 0; t < 2; ++t) {
        b.put<std::uint64_t>(2 + t);
        for (const int v : k_tets[t]) {
            b.put(tags[v]);
        }
    }
    b.text("\n$EndElements\n");
    return b.str();
}

TEST_F(MeshReaderTest, GmshAscii22) {
    expect_reference_mesh(read_tet_mesh(write("two.msh", k_msh22_ascii)));
}

TEST_F(MeshReaderTest, GmshAscii41SparseTagsCompactedInFileOrder) {
    expect_reference_mesh(read_tet_mesh(write("two.msh", msh41_ascii())));
}

TEST_F(MeshReaderTest, GmshBinary22) {
    expect_reference_mesh(read_tet_mesh(write("two.msh", msh22_binary())));
}

TEST_F(MeshReaderTest, GmshBinary41LittleEndian) {
    expect_reference_mesh(read_tet_mesh(write("two.msh", msh41_binary(false))));
}

TEST_F(MeshReaderTest, GmshBinary41BigEndian) {
    expect_reference_mesh(read_tet_mesh(write("two.MSH", msh41_binary(true))));
}

// -- MEDIT and TetGen ------------------------------------------------------------------------------

TEST_F(MeshReaderTest, Medit) {
    const std::string text = R"(MeshVersionFormatted 2
# a comment line
Dimension
3
vertices
5
0 0 0 1
1 0 0 1   # trailing comment
0 1 0 1
0 0 1 2
1 1 1.5 2
Triangles
1
1 2 3 7
TETRAHEDRA 2
1 2 3 4 1
2 3 4 5 1
Corners 1 1
End
)";
    expect_reference_mesh(read_tet_mesh(write("two.mesh", text)));
}

TEST_F(MeshReaderTest, TetGenOneBasedWithAttributesAndMarkers) {
    write("two.node", "# points\n5 3 1 1\n1 0 0 0 9.5 1\n2 1 0 0 9.5 1\n3 0 1 0 9.5 0\n"
                      "4 0 0 1 9.5 1\n5 1 1 1.5 9.5 1\n# end\n");
    write("two.ele", "2 4 1\n1 1 2 3 4 7\n2 2 3 4 5 7\n");
    expect_reference_mesh(read_tet_mesh((m_dir / "two.node").string()));
    expect_reference_mesh(read_tet_mesh((m_dir / "two.ele").string()));
}

TEST_F(MeshReaderTest, TetGenZeroBased) {
    write("two.node", "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 1 1 1.5\n");
    write("two.ele", "# tets\n2 4 0\n0 0 1 2 3\n1 1 2 3 4\n");
    expect_reference_mesh(read_tet_mesh((m_dir / "two.node").string()));
}

// -- VTK ------------------------------------------------------------------------------------------

std::string base64(const std::string& bytes) {
    static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) {
            v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
        }
        if (i + 2 < bytes.size()) {
            v |= static_cast<unsigned char>(bytes[i + 2]);
        }
        out += alphabet[(v >> 18) & 63];
        out += alphabet[(v >> 12) & 63];
        out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
        out += i + 2 < bytes.size() ? alphabet[v & 63] : '=';
    }
    return out;
}

/// The four arrays of the reference mesh plus a triangle cell (which the reader skips), as raw bytes.
struct VtuArrays {
    std::string points, connectivity, offsets, types;
};

VtuArrays vtu_arrays() {
    Bytes points(false), connectivity(false), offsets(false), types(false);
    for (const Vec3& x : k_nodes) {
        for (const double xi : x) {
            points.put(xi);
        }
    }
    for (const std::int64_t v : {0, 1, 2, 3, 0, 1, 2, 1, 2, 3, 4}) {
        connectivity.put(v);
    }
    for (const std::int64_t o : {4, 7, 11}) {
        offsets.put(o);
    }
    for (const std::uint8_t t : {10, 5, 10}) {
        types.put(t);
    }
    return {points.str(), connectivity.str(), offsets.str(), types.str()};
}

/// With a UInt32 byte count in front, as VTK's "binary" and raw "appended" encodings want.
std::string with_header(const std::string& data) {
    Bytes b(false);
    b.put(static_cast<std::uint32_t>(data.size())).text(data);
    return b.str();
}

std::string vtu(const std::string& points, const std::string& cells, const std::string& tail = "") {
    return "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" "
           "byte_order=\"LittleEndian\" "
           "header_type=\"UInt32\">\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"5\" "
           "NumberOfCells=\"3\">\n<Points>\n" +
           points + "</Points>\n<Cells>\n" + cells + "</Cells>\n</Piece>\n</UnstructuredGrid>\n" + tail +
           "</VTKFile>\n";
}

TEST_F(MeshReaderTest, VtuAscii) {
    const std::string text = vtu(
        "<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 1 0 0 0 1 0 0 0 1 1 1 "
        "1.5"
        "</DataArray>\n",
        "<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">0 1 2 3 0 1 2 1 2 3 4</DataArray>\n"
        "<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">4 7 11</DataArray>\n"
        "<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">10 5 10</DataArray>\n");
    expect_reference_mesh(read_tet_mesh(write("two.vtu", text)));
}

TEST_F(MeshReaderTest, VtuInlineBinary) {
    const VtuArrays a = vtu_arrays();
    const std::string text =
        vtu("<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"binary\">" +
                base64(with_header(a.points)) + "</DataArray>\n",
            "<DataArray type=\"Int64\" Name=\"connectivity\" format=\"binary\">" +
                base64(with_header(a.connectivity)) +
                "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"binary\">" +
                base64(with_header(a.offsets)) +
                "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"binary\">" +
                base64(with_header(a.types)) + "</DataArray>\n");
    expect_reference_mesh(read_tet_mesh(write("two.vtu", text)));
}

std::string vtu_appended_raw() {
    const VtuArrays a = vtu_arrays();
    const std::string blocks[4] = {with_header(a.points), with_header(a.connectivity), with_header(a.offsets),
                                   with_header(a.types)};
    std::size_t offset[4] = {0, 0, 0, 0};
    for (int k = 1; k < 4; ++k) {
        offset[k] = offset[k - 1] + blocks[k - 1].size();
    }
    const auto array = [&](const char* type, const char* name, int k) {
        return std::string("<DataArray type=\"") + type + "\" " + name + " format=\"appended\" offset=\"" +
               std::to_string(offset[k]) + "\"/>\n";
    };
    return vtu(array("Float64", "NumberOfComponents=\"3\"", 0),
               array("Int64", "Name=\"connectivity\"", 1) + array("Int64", "Name=\"offsets\"", 2) +
                   array("UInt8", "Name=\"types\"", 3),
               "<AppendedData encoding=\"raw\">\n_" + blocks[0] + blocks[1] + blocks[2] + blocks[3] +
                   "\n</AppendedData>\n");
}

TEST_F(MeshReaderTest, VtuAppendedRaw) {
    expect_reference_mesh(read_tet_mesh(write("two.vtu", vtu_appended_raw())));
}

const char* const k_legacy_vtk = R"(# vtk DataFile Version 3.0
two tets and a triangle
ASCII
DATASET UNSTRUCTURED_GRID
POINTS 5 double
0 0 0 1 0 0 0 1 0
0 0 1 1 1 1.5
CELLS 3 14
4 0 1 2 3
3 0 1 2
4 1 2 3 4
CELL_TYPES 3
10
5
10
)";

TEST_F(MeshReaderTest, LegacyVtkSkipsSurfaceCells) {
    expect_reference_mesh(read_tet_mesh(write("two.vtk", k_legacy_vtk)));
}

// -- OBJ ------------------------------------------------------------------------------------------

TEST_F(MeshReaderTest, ObjFanTriangulatesAndResolvesNegativeIndices) {
    const std::string text =
        "# square and a tip\nmtllib none.mtl\no thing\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
        "vt 0 0\nvn 0 0 1\ns off\nf 1/1/1 2/1/1 3/1/1 4/1/1\nv 0.5 0.5 1 0.2 0.3 0.4\n"
        "f -1 -5 -4\nf 2//1 3//1 5//1\n";
    const intact::TriMesh mesh = read_triangle_mesh(write("shape.obj", text));
    ASSERT_EQ(mesh.nodes.size(), 5u);
    EXPECT_EQ(mesh.nodes[4], (Vec3{0.5, 0.5, 1.0}));
    const std::vector<std::array<int, 3>> expected = {{0, 1, 2}, {0, 2, 3}, {4, 0, 1}, {1, 2, 4}};
    EXPECT_EQ(mesh.tris, expected);
}

TEST_F(MeshReaderTest, ObjSegmentsAndPoints) {
    // Polylines split into segments; a file of vertices alone is a point set.
    const intact::TriMesh wire =
        read_triangle_mesh(write("wire.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nl 1 2 3\nl 4/1 -4\n"));
    ASSERT_EQ(wire.nodes.size(), 4u);
    EXPECT_TRUE(wire.tris.empty());
    const std::vector<std::array<int, 2>> expected = {{0, 1}, {1, 2}, {3, 0}};
    EXPECT_EQ(wire.segments, expected);
    const intact::TriMesh points = read_triangle_mesh(write("points.obj", "v 0 0 0\nv 1 2 3\n"));
    EXPECT_EQ(points.nodes.size(), 2u);
    EXPECT_TRUE(points.tris.empty());
    EXPECT_TRUE(points.segments.empty());
}

TEST_F(MeshReaderTest, ObjErrors) {
    const std::string zero = write("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
    std::string message = error_of([&] { read_triangle_mesh(zero); });
    EXPECT_NE(message.find("zero.obj"), std::string::npos) << message;
    EXPECT_NE(message.find("line 4"), std::string::npos) << message;

    const std::string far = write("far.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
    message = error_of([&] { read_triangle_mesh(far); });
    EXPECT_NE(message.find("far.obj"), std::string::npos) << message;
    EXPECT_NE(message.find("vertex 4"), std::string::npos) << message;

    const std::string empty = write("empty.obj", "# nothing\nvn 0 0 1\n");
    message = error_of([&] { read_triangle_mesh(empty); });
    EXPECT_NE(message.find("no vertices"), std::string::npos) << message;

    const std::string short_line = write("short.obj", "v 0 0 0\nv 1 0 0\nl 1\n");
    message = error_of([&] { read_triangle_mesh(short_line); });
    EXPECT_NE(message.find("line 3"), std::string::npos) << message;
    EXPECT_NE(message.find("at least 2"), std::string::npos) << message;

    const std::string far_line = write("far_line.obj", "v 0 0 0\nv 1 0 0\nl 1 3\n");
    message = error_of([&] { read_triangle_mesh(far_line); });
    EXPECT_NE(message.find("vertex 3"), std::string::npos) << message;

    message = error_of([&] { read_triangle_mesh(write("obstacle.msh", k_msh22_ascii)); });
    EXPECT_NE(message.find(".obj"), std::string::npos) << message;
}

// -- errors ---------------------------------------------------------------------------------------

void expect_message(const std::string& message, const std::vector<std::string>& parts) {
    for (const std::string& part : parts) {
        EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
    }
}

TEST_F(MeshReaderTest, MissingFile) {
    const std::string path = (m_dir / "absent.msh").string();
    expect_message(error_of([&] { read_tet_mesh(path); }),
                   {"cannot open mesh file", "absent.msh", "No such file", "fix: check the path"});
    const std::string vtu_path = (m_dir / "absent.vtu").string();
    expect_message(error_of([&] { read_tet_mesh(vtu_path); }), {"cannot open mesh file", "absent.vtu"});
    write("lonely.node", "1 3 0 0\n1 0 0 0\n");
    expect_message(error_of([&] { read_tet_mesh((m_dir / "lonely.node").string()); }),
                   {"lonely.ele", "lonely.node"});
}

TEST_F(MeshReaderTest, UnknownExtension) {
    const std::string path = write("body.stl", "solid x\nendsolid x\n");
    expect_message(error_of([&] { read_tet_mesh(path); }),
                   {"body.stl", "'.stl'", ".msh", ".mesh", ".vtu", ".node"});
    const std::string no_ext = write("body", "");
    expect_message(error_of([&] { read_tet_mesh(no_ext); }), {"body", "supported"});
}

TEST_F(MeshReaderTest, TruncatedFiles) {
    const std::string ascii = msh41_ascii();
    const std::string cut_ascii = write("cut_ascii.msh", ascii.substr(0, ascii.find("1 0 0 0.3")));
    expect_message(error_of([&] { read_tet_mesh(cut_ascii); }), {"cut_ascii.msh", "end of file", "$Nodes"});

    const std::string binary = msh41_binary(false);
    const std::string cut_binary = write("cut_binary.msh", binary.substr(0, binary.find("$EndNodes") - 20));
    expect_message(error_of([&] { read_tet_mesh(cut_binary); }),
                   {"cut_binary.msh", "end of file", "$Nodes, byte"});

    const std::string binary22 = msh22_binary();
    const std::string cut22 = write("cut22.msh", binary22.substr(0, binary22.size() - 30));
    expect_message(error_of([&] { read_tet_mesh(cut22); }), {"cut22.msh", "$Elements"});

    const std::string medit =
        write("cut.mesh", "MeshVersionFormatted 1\nDimension 3\nVertices\n5\n0 0 0 1\n1 0 0");
    expect_message(error_of([&] { read_tet_mesh(medit); }), {"cut.mesh", "end of file", "vertex 2 of 5"});

    const std::string vtu_text = vtu_appended_raw();
    const std::string cut_vtu = write("cut.vtu", vtu_text.substr(0, vtu_text.find("_") + 30));
    expect_message(error_of([&] { read_tet_mesh(cut_vtu); }), {"cut.vtu"});
}

TEST_F(MeshReaderTest, BadNodeIndex) {
    std::string text = k_msh22_ascii;
    text.replace(text.find("4 4 2 1 1 2 3 4 5"), 17, "4 4 2 1 1 2 3 4 9");
    const std::string msh = write("bad_index.msh", text);
    expect_message(error_of([&] { read_tet_mesh(msh); }), {"bad_index.msh", "line 21", "node 9"});

    const std::string medit = write("bad_index.mesh", "Dimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n"
                                                      "0 0 1 0\nTetrahedra\n1\n1 2 3 5 0\nEnd\n");
    expect_message(error_of([&] { read_tet_mesh(medit); }), {"bad_index.mesh", "line 10", "vertex 5"});

    write("bad_index.node", "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n");
    write("bad_index.ele", "1 4 0\n1 1 2 3 0\n");
    expect_message(error_of([&] { read_tet_mesh((m_dir / "bad_index.ele").string()); }),
                   {"bad_index.ele", "line 2", "point 0"});

    std::string legacy = k_legacy_vtk;
    legacy.replace(legacy.find("4 1 2 3 4"), 9, "4 1 2 3 7");
    const std::string vtk = write("bad_index.vtk", legacy);
    expect_message(error_of([&] { read_tet_mesh(vtk); }), {"bad_index.vtk"});
}

TEST_F(MeshReaderTest, WrongElementShapes) {
    std::string text = k_msh22_ascii;
    text.replace(text.find("3 4 2 1 1 1 2 3 4"), 17, "3 4 2 1 1 1 2 3");
    const std::string short_tet = write("short_tet.msh", text);
    expect_message(
        error_of([&] { read_tet_mesh(short_tet); }),
        {"short_tet.msh", "line 20", "expected 4 node indices for a tetrahedron, found 3", "fix:"});

    const std::string surface_only =
        write("surface_only.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n"
                                  "1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n"
                                  "$EndNodes\n$Elements\n1 1 1 1\n2 1 2 1\n1 1 2 3\n"
                                  "$EndElements\n");
    expect_message(error_of([&] { read_tet_mesh(surface_only); }), {"surface_only.msh", "no tetrahedra"});

    std::string hex = "# vtk DataFile Version 3.0\nhex\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 8 double\n"
                      "0 0 0 1 0 0 1 1 0 0 1 0 0 0 1 1 0 1 1 1 1 0 1 1\nCELLS 1 9\n8 0 1 2 3 4 5 6 7\n"
                      "CELL_TYPES 1\n12\n";
    const std::string hex_path = write("hex.vtk", hex);
    expect_message(error_of([&] { read_tet_mesh(hex_path); }), {"hex.vtk", "vtkHexahedron", "VTK_TETRA"});

    const std::string poly = write("poly.vtk", "# vtk DataFile Version 3.0\np\nASCII\nDATASET POLYDATA\n"
                                               "POINTS 3 double\n0 0 0 1 0 0 0 1 0\nPOLYGONS 1 4\n3 0 1 2\n");
    expect_message(error_of([&] { read_tet_mesh(poly); }), {"poly.vtk", "UNSTRUCTURED_GRID"});

    const std::string old = write("old.msh", "$NOD\n1\n1 0 0 0\n$ENDNOD\n");
    expect_message(error_of([&] { read_tet_mesh(old); }), {"old.msh", "line 1", "1.0"});

    const std::string medit2d = write("flat.mesh", "MeshVersionFormatted 1\nDimension 2\n");
    expect_message(error_of([&] { read_tet_mesh(medit2d); }), {"flat.mesh", "line 2", "Dimension 3"});
}

// -- Gmsh triangles for shells, lines for rods ---------------------------------------------------------

/// A unit square in MSH 4.1 ASCII: 4 corner nodes, 2 triangles (the cloth), 2 lines along y = 0 and
/// y = 1 (a rod's segments) and a point element, each in its own block, as `gmsh -2` writes them.
const char* const k_square_msh41 = R"($MeshFormat
4.1 0 8
$EndMeshFormat
$Nodes
1 4 1 4
2 1 0 4
1
2
3
4
0 0 0
1 0 0
1 1 0
0 1 0
$EndNodes
$Elements
3 5 1 5
0 1 15 1
5 1
1 1 1 2
1 1 2
2 3 4
2 1 2 2
3 1 2 3
4 1 3 4
$EndElements
)";

TEST_F(MeshReaderTest, GmshTrianglesForShellsAndLinesForRods) {
    using intact::io::CodimElementKind;
    using intact::io::read_codim_mesh;
    const std::string square = write("square.msh", k_square_msh41);
    const intact::TriMesh cloth = read_codim_mesh(square, CodimElementKind::triangles);
    ASSERT_EQ(cloth.nodes.size(), 4u);
    EXPECT_EQ(cloth.nodes[2], (Vec3{1.0, 1.0, 0.0}));
    ASSERT_EQ(cloth.tris.size(), 2u);
    EXPECT_EQ(cloth.tris[0], (std::array<int, 3>{0, 1, 2}));
    EXPECT_EQ(cloth.tris[1], (std::array<int, 3>{0, 2, 3}));
    EXPECT_TRUE(cloth.segments.empty());

    const intact::TriMesh rod = read_codim_mesh(square, CodimElementKind::segments);
    ASSERT_EQ(rod.segments.size(), 2u);
    EXPECT_EQ(rod.segments[0], (std::array<int, 2>{0, 1}));
    EXPECT_EQ(rod.segments[1], (std::array<int, 2>{2, 3}));
    EXPECT_TRUE(rod.tris.empty());

    // The tet reference files each hold one triangle among the tets, in every version and encoding.
    const std::pair<std::string, std::array<int, 3>> files[] = {
        {write("a22.msh", k_msh22_ascii), {1, 2, 3}},
        {write("a41.msh", msh41_ascii()), {0, 1, 2}},
        {write("b22.msh", msh22_binary()), {0, 1, 2}},
        {write("b41.msh", msh41_binary(true)), {0, 1, 2}}};
    for (const auto& [path, triangle] : files) {
        const intact::TriMesh mesh = read_codim_mesh(path, CodimElementKind::triangles);
        EXPECT_EQ(mesh.nodes.size(), 5u) << path;
        ASSERT_EQ(mesh.tris.size(), 1u) << path;
        EXPECT_EQ(mesh.tris[0], triangle) << path;
    }

    // A shell body of the scene reads the file's triangles (and gets the hinge across their diagonal).
    const nlohmann::json document = {
        {"time", {{"dt", 0.01}, {"steps", 1}}},
        {"bodies",
         {{{"type", "shell"},
           {"mesh", {{"file", square}}},
           {"material",
            {{"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 200.0}, {"thickness", 1e-3}}}}}}};
    const intact::CodimBodyMesh body =
        intact::load_codim_body(intact::io::parse_scene(document, "shell.json"), 0);
    EXPECT_EQ(body.elements.triangles.size(), 2u);
    EXPECT_EQ(body.elements.hinges.size(), 1u);
}

TEST_F(MeshReaderTest, GmshWithoutTheBodysElementsSaysWhatItHas) {
    using intact::io::CodimElementKind;
    using intact::io::read_codim_mesh;
    // Tets and one triangle, no lines: a rod cannot use it.
    const std::string tets = write("tets.msh", k_msh22_ascii);
    expect_message(error_of([&] { read_codim_mesh(tets, CodimElementKind::segments); }),
                   {"tets.msh", "no lines (element type 1) among 4 elements",
                    "it has 2 tetrahedra, 1 triangle", "mesh the curves (gmsh -1)", "\"rod\": lines",
                    "fix:"});
    // A surface mesh given to a solid, and lines only given to a shell.
    const std::string square = write("square.msh", k_square_msh41);
    expect_message(error_of([&] { read_tet_mesh(square); }),
                   {"square.msh", "no tetrahedra (element type 4)", "it has 2 triangles, 2 lines",
                    "\"shell\": triangles"});
    const std::string lines_only =
        write("lines.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n1 1 0 2\n1\n2\n0 0 0\n"
                           "1 0 0\n$EndNodes\n$Elements\n1 1 1 1\n1 1 1 1\n1 1 2\n$EndElements\n");
    expect_message(error_of([&] { read_codim_mesh(lines_only, CodimElementKind::triangles); }),
                   {"lines.msh", "no triangles (element type 2) among 1 elements", "it has 1 line",
                    "mesh the surface (gmsh -2)"});

    // Through a scene: the error names the scene key and the mesh file.
    const nlohmann::json document = {
        {"time", {{"dt", 0.01}, {"steps", 1}}},
        {"bodies",
         {{{"type", "rod"},
           {"mesh", {{"file", tets}}},
           {"material", {{"youngs_modulus", 1e5}, {"density", 200.0}, {"radius", 1e-3}}}}}}};
    expect_message(
        error_of([&] { intact::load_codim_body(intact::io::parse_scene(document, "rod.json"), 0); }),
        {"rod.json", "bodies[0].mesh.file", "tets.msh", "no lines"});
}

// -- meshes made by gmsh itself -------------------------------------------------------------------

bool have_gmsh() {
    return std::system("command -v gmsh > /dev/null 2>&1") == 0;
}

TEST_F(MeshReaderTest, GmshGeneratedFormatsAgree) {
    if (!have_gmsh()) {
        GTEST_SKIP() << "gmsh is not installed (Debian package 'gmsh'); skipping the cross-format check";
    }
    write("box.geo", "h = 0.2;\n"
                     "Point(1) = {0, 0, 0, h}; Point(2) = {1, 0, 0, h};\n"
                     "Point(3) = {1, 0.5, 0, h}; Point(4) = {0, 0.5, 0, h};\n"
                     "Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};\n"
                     "Curve Loop(1) = {1, 2, 3, 4};\nPlane Surface(1) = {1};\n"
                     "Extrude {0, 0, 0.25} { Surface{1}; }\n");
    const std::string dir = m_dir.string();
    const auto run = [&](const std::string& args) {
        const std::string command = "cd '" + dir + "' && gmsh " + args + " -v 0 > gmsh.log 2>&1";
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
    };
    // Mesh once, then convert, so that every file holds the same mesh.
    run("-3 box.geo -format msh41 -o a41.msh");
    const std::vector<std::pair<std::string, std::string>> conversions = {{"msh41 -bin", "b41.msh"},
                                                                          {"msh22", "a22.msh"},
                                                                          {"msh22 -bin", "b22.msh"},
                                                                          {"mesh", "a.mesh"},
                                                                          {"vtk", "a.vtk"}};
    for (const auto& [format, name] : conversions) {
        run("a41.msh -save -format " + format + " -o " + name);
    }
    const TetMesh reference = read_tet_mesh(dir + "/a41.msh");
    ASSERT_GT(reference.tets.size(), 10u);
    EXPECT_NEAR(total_volume(reference), 0.125, 1e-12);
    for (const auto& tet : reference.tets) {
        EXPECT_GT(tet_volume(reference, tet), 0.0);
    }
    for (const auto& [format, name] : conversions) {
        SCOPED_TRACE(name);
        const TetMesh mesh = read_tet_mesh(dir + "/" + name);
        EXPECT_EQ(mesh.tets.size(), reference.tets.size());
        EXPECT_NEAR(total_volume(mesh), total_volume(reference), 1e-12);
        if (name.find(".msh") != std::string::npos) {
            // The Gmsh variants hold the very same nodes and tets.
            EXPECT_EQ(mesh.nodes, reference.nodes);
            EXPECT_EQ(mesh.tets, reference.tets);
        } else {
            EXPECT_EQ(mesh.nodes.size(), reference.nodes.size());
        }
    }
}

// -- shared meshes --------------------------------------------------------------------------------

TEST(SharedMeshes, ReadAllGmshFiles) {
    const fs::path dir = fs::path(INTACT_SHARED_DATA_DIR) / "meshes";
    if (!fs::is_directory(dir)) {
        GTEST_SKIP() << "shared meshes not found at " << dir << " (optional test data)";
    }
    int count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".msh") {
            continue;
        }
        SCOPED_TRACE(entry.path().string());
        const TetMesh mesh = read_tet_mesh(entry.path().string());
        EXPECT_GT(mesh.nodes.size(), 0u);
        EXPECT_GT(mesh.tets.size(), 0u);
        EXPECT_GT(total_volume(mesh), 0.0);
        const std::string name = entry.path().filename().string();
        if (name == "tet.msh") {
            EXPECT_EQ(mesh.nodes.size(), 4u);
            ASSERT_EQ(mesh.tets.size(), 1u);
            EXPECT_EQ(mesh.tets[0], (std::array<int, 4>{0, 3, 2, 1}));
            EXPECT_DOUBLE_EQ(total_volume(mesh), 1.0 / 6.0);
        } else if (name == "cube.msh") {
            EXPECT_EQ(mesh.nodes.size(), 8u);
            ASSERT_EQ(mesh.tets.size(), 6u);
            EXPECT_EQ(mesh.tets[0], (std::array<int, 4>{0, 4, 6, 5}));
            EXPECT_EQ(mesh.tets[5], (std::array<int, 4>{6, 0, 5, 1}));
            EXPECT_EQ(mesh.nodes[6], (Vec3{1, 1, 1}));
            EXPECT_DOUBLE_EQ(total_volume(mesh), 1.0);
        }
        ++count;
    }
    EXPECT_GT(count, 0) << "no .msh files in " << dir;
}

} // namespace
