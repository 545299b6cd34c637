// VtkSeriesWriter: every rank writes its piece of a small box mesh, rank 0 reads the series back with
// VTK's own parser and parallel reader and checks cell and node counts, connectivity by global id, and
// every array value against what was written. Runs at 1-4 ranks; at 4 ranks one rank's piece is empty.
#include "src/io/vtk_writer.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using intact::GlobalId;
using intact::Vec3;
using intact::io::VtkPiece;
using intact::io::VtkSeriesWriter;

// ---- A small global mesh: a box of nx x ny x nz cubes, 6 tets per cube ------------------------------

constexpr int k_nx = 3;
constexpr int k_ny = 2;
constexpr int k_nz = 2;
constexpr double k_h = 0.5; // cube edge, metres
constexpr int k_node_count = (k_nx + 1) * (k_ny + 1) * (k_nz + 1);
constexpr int k_tet_count = 6 * k_nx * k_ny * k_nz;

GlobalId node_id(int i, int j, int k) {
    return i + (k_nx + 1) * (j + (k_ny + 1) * k);
}

Vec3 node_position(GlobalId node) {
    const int i = static_cast<int>(node % (k_nx + 1));
    const int j = static_cast<int>((node / (k_nx + 1)) % (k_ny + 1));
    const int k = static_cast<int>(node / ((k_nx + 1) * (k_ny + 1)));
    return {k_h * i, k_h * j, k_h * k};
}

int cube_x(GlobalId tet) {
    return static_cast<int>((tet / 6) % k_nx);
}

/// Tet `tet` (6 per cube, cube index x fastest) as four global node ids: the Kuhn split of a cube into the
/// six tets along the paths from corner 0 to corner 7, one per order of the axes.
std::array<GlobalId, 4> tet_nodes(GlobalId tet) {
    static constexpr int axis_orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                              {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const GlobalId cube = tet / 6;
    const int ci = static_cast<int>(cube % k_nx);
    const int cj = static_cast<int>((cube / k_nx) % k_ny);
    const int ck = static_cast<int>(cube / (k_nx * k_ny));
    std::array<int, 3> corner = {ci, cj, ck};
    std::array<GlobalId, 4> nodes{};
    nodes[0] = node_id(corner[0], corner[1], corner[2]);
    for (int step = 0; step < 3; ++step) {
        ++corner[axis_orders[tet % 6][step]];
        nodes[step + 1] = node_id(corner[0], corner[1], corner[2]);
    }
    return nodes;
}

int tet_body(GlobalId tet) {
    return cube_x(tet) < 2 ? 0 : 1;
}

// Field values as functions of the global node id and the step, so the reader can check them.
Vec3 displacement_of(GlobalId node, int step) {
    return {0.001 * node, -0.002 * node, 0.01 * step};
}
Vec3 velocity_of(GlobalId node, int step) {
    return {1.0 * node, 0.5 * step, -0.25 * node * step};
}

/// Which rank writes a tet. Slabs in x: at 4 ranks the last rank has no cells.
using Owner = std::function<int(GlobalId tet, int n_ranks)>;
int slab_owner(GlobalId tet, int n_ranks) {
    return cube_x(tet) * n_ranks / k_nx;
}
int root_owner(GlobalId, int) {
    return 0;
}
int nobody(GlobalId, int n_ranks) {
    return n_ranks;
}

/// This rank's piece at `step`: its tets and their nodes (interface nodes repeated in every piece).
VtkPiece make_piece(int rank, int n_ranks, int step, const Owner& owner) {
    VtkPiece piece;
    std::map<GlobalId, int> local_of;
    for (GlobalId tet = 0; tet < k_tet_count; ++tet) {
        if (owner(tet, n_ranks) != rank) {
            continue;
        }
        std::array<int, 4> cell{};
        const std::array<GlobalId, 4> nodes = tet_nodes(tet);
        for (int v = 0; v < 4; ++v) {
            const auto [it, inserted] = local_of.emplace(nodes[v], static_cast<int>(piece.points.size()));
            if (inserted) {
                const Vec3 x = node_position(nodes[v]);
                const Vec3 u = displacement_of(nodes[v], step);
                piece.points.push_back({x[0] + u[0], x[1] + u[1], x[2] + u[2]});
                piece.displacement.push_back(u);
                piece.velocity.push_back(velocity_of(nodes[v], step));
                piece.point_global_id.push_back(nodes[v]);
            }
            cell[v] = it->second;
        }
        piece.cells.push_back(cell);
        piece.cell_rank.push_back(rank);
        piece.cell_body.push_back(tet_body(tet));
        piece.cell_global_id.push_back(tet);
    }
    return piece;
}

int comm_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

int comm_size() {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
}

/// A fresh, empty output directory for one test at this rank count. Collective.
std::string fresh_directory(const std::string& test_name) {
    const fs::path directory = fs::path(INTACT_BINARY_DIR) / "test_output" /
                               ("vtk_writer_np" + std::to_string(comm_size())) / test_name;
    if (comm_rank() == 0) {
        fs::remove_all(directory);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return directory.string();
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---- Checks, run on rank 0 ---------------------------------------------------------------------------

struct SeriesEntry {
    double time;
    std::string file;
};

/// Parses the `.pvd` with VTK's XML parser (fails the test if it is not well-formed) and lists its entries.
std::vector<SeriesEntry> parse_pvd(const std::string& path) {
    std::vector<SeriesEntry> entries;
    vtkNew<vtkXMLDataParser> parser;
    parser->SetFileName(path.c_str());
    EXPECT_EQ(parser->Parse(), 1) << path << " is not valid XML";
    vtkXMLDataElement* root = parser->GetRootElement();
    EXPECT_NE(root, nullptr);
    if (root == nullptr) {
        return entries;
    }
    EXPECT_STREQ(root->GetName(), "VTKFile");
    EXPECT_STREQ(root->GetAttribute("type"), "Collection");
    vtkXMLDataElement* collection = root->FindNestedElementWithName("Collection");
    EXPECT_NE(collection, nullptr);
    if (collection == nullptr) {
        return entries;
    }
    for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* data_set = collection->GetNestedElement(i);
        EXPECT_STREQ(data_set->GetName(), "DataSet");
        SeriesEntry entry{-1.0, ""};
        EXPECT_EQ(data_set->GetScalarAttribute("timestep", entry.time), 1);
        const char* file = data_set->GetAttribute("file");
        entry.file = file != nullptr ? file : "";
        entries.push_back(entry);
    }
    return entries;
}

std::string step_file(int step) {
    char name[64];
    std::snprintf(name, sizeof(name), "steps/step_%06d.pvtu", step);
    return name;
}

void expect_series(const std::string& pvd, const std::vector<int>& steps, const std::vector<double>& times) {
    const std::vector<SeriesEntry> entries = parse_pvd(pvd);
    ASSERT_EQ(entries.size(), steps.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        EXPECT_EQ(entries[i].time, times[i]) << "entry " << i;
        EXPECT_EQ(entries[i].file, step_file(steps[i])) << "entry " << i;
        EXPECT_TRUE(fs::exists(fs::path(pvd).parent_path() / entries[i].file)) << entries[i].file;
    }
}

/// (Name -> "type/components") of the DataArray or PDataArray children of `element`.
std::map<std::string, std::string> array_declarations(vtkXMLDataElement* element) {
    std::map<std::string, std::string> arrays;
    if (element == nullptr) {
        return arrays;
    }
    for (int i = 0; i < element->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* array = element->GetNestedElement(i);
        const char* components = array->GetAttribute("NumberOfComponents");
        arrays[array->GetAttribute("Name")] =
            std::string(array->GetAttribute("type")) + "/" + (components != nullptr ? components : "1");
    }
    return arrays;
}

/// The `.pvtu` declares exactly the arrays (names, types, component counts) that every piece holds, and
/// lists one piece per rank, each on disk and written in the requested format.
void expect_pvtu_matches_pieces(const fs::path& pvtu, int n_ranks, bool binary) {
    vtkNew<vtkXMLDataParser> parser;
    parser->SetFileName(pvtu.c_str());
    ASSERT_EQ(parser->Parse(), 1) << pvtu;
    vtkXMLDataElement* grid = parser->GetRootElement()->FindNestedElementWithName("PUnstructuredGrid");
    ASSERT_NE(grid, nullptr);
    const auto point_arrays = array_declarations(grid->FindNestedElementWithName("PPointData"));
    const auto cell_arrays = array_declarations(grid->FindNestedElementWithName("PCellData"));
    const auto points = array_declarations(grid->FindNestedElementWithName("PPoints"));
    EXPECT_EQ(point_arrays.size(), 3u);
    EXPECT_EQ(point_arrays.at("displacement"), "Float64/3");
    EXPECT_EQ(point_arrays.at("velocity"), "Float64/3");
    EXPECT_EQ(point_arrays.at("global_id"), "Int64/1");
    EXPECT_EQ(cell_arrays.size(), 3u);
    EXPECT_EQ(cell_arrays.at("rank"), "Int32/1");
    EXPECT_EQ(cell_arrays.at("body"), "Int32/1");
    EXPECT_EQ(cell_arrays.at("global_id"), "Int64/1");
    EXPECT_EQ(points.size(), 1u);

    std::vector<std::string> sources;
    for (int i = 0; i < grid->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* element = grid->GetNestedElement(i);
        if (std::string(element->GetName()) == "Piece") {
            sources.push_back(element->GetAttribute("Source"));
        }
    }
    ASSERT_EQ(static_cast<int>(sources.size()), n_ranks);
    for (int rank = 0; rank < n_ranks; ++rank) {
        const fs::path piece = pvtu.parent_path() / sources[rank];
        char expected[32];
        std::snprintf(expected, sizeof(expected), "piece_%04d.vtu", rank);
        EXPECT_EQ(piece.filename().string(), expected);
        ASSERT_TRUE(fs::exists(piece)) << piece;

        vtkNew<vtkXMLDataParser> piece_parser;
        piece_parser->SetFileName(piece.c_str());
        ASSERT_EQ(piece_parser->Parse(), 1) << piece;
        vtkXMLDataElement* piece_element = piece_parser->GetRootElement()
                                               ->FindNestedElementWithName("UnstructuredGrid")
                                               ->FindNestedElementWithName("Piece");
        ASSERT_NE(piece_element, nullptr) << piece;
        EXPECT_EQ(array_declarations(piece_element->FindNestedElementWithName("PointData")), point_arrays)
            << piece;
        EXPECT_EQ(array_declarations(piece_element->FindNestedElementWithName("CellData")), cell_arrays)
            << piece;
        EXPECT_EQ(array_declarations(piece_element->FindNestedElementWithName("Points")), points) << piece;

        const std::string text = read_text(piece);
        if (binary) {
            EXPECT_NE(text.find("format=\"appended\""), std::string::npos) << piece;
            EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos) << piece;
            EXPECT_EQ(text.find("format=\"ascii\""), std::string::npos) << piece;
        } else {
            EXPECT_NE(text.find("format=\"ascii\""), std::string::npos) << piece;
            EXPECT_EQ(text.find("AppendedData"), std::string::npos) << piece;
        }
    }
}

vtkDataArray* expect_array(vtkFieldData* data, const char* name, int components) {
    vtkDataArray* array = data->GetArray(name);
    EXPECT_NE(array, nullptr) << name;
    if (array != nullptr) {
        EXPECT_EQ(array->GetNumberOfComponents(), components) << name;
    }
    return array;
}

/// Reads the `.pvtu` with VTK's parallel reader and checks the whole mesh and its arrays as written at
/// `step` by `owner`.
void expect_step_contents(const fs::path& pvtu, int step, int n_ranks, const Owner& owner) {
    int expected_cells = 0;
    std::set<GlobalId> expected_nodes;
    for (GlobalId tet = 0; tet < k_tet_count; ++tet) {
        if (owner(tet, n_ranks) < n_ranks) {
            ++expected_cells;
            for (const GlobalId node : tet_nodes(tet)) {
                expected_nodes.insert(node);
            }
        }
    }

    vtkNew<vtkXMLPUnstructuredGridReader> reader;
    reader->SetFileName(pvtu.c_str());
    reader->Update();
    vtkUnstructuredGrid* grid = reader->GetOutput();
    ASSERT_NE(grid, nullptr);
    ASSERT_EQ(grid->GetNumberOfCells(), expected_cells);
    ASSERT_GE(grid->GetNumberOfPoints(), static_cast<vtkIdType>(expected_nodes.size()));

    vtkDataArray* point_id = expect_array(grid->GetPointData(), "global_id", 1);
    vtkDataArray* displacement = expect_array(grid->GetPointData(), "displacement", 3);
    vtkDataArray* velocity = expect_array(grid->GetPointData(), "velocity", 3);
    vtkDataArray* cell_id = expect_array(grid->GetCellData(), "global_id", 1);
    vtkDataArray* cell_rank = expect_array(grid->GetCellData(), "rank", 1);
    vtkDataArray* cell_body = expect_array(grid->GetCellData(), "body", 1);
    ASSERT_TRUE(point_id && displacement && velocity && cell_id && cell_rank && cell_body);
    EXPECT_EQ(point_id->GetDataTypeSize(), 8);
    EXPECT_EQ(cell_id->GetDataTypeSize(), 8);
    EXPECT_EQ(grid->GetPoints()->GetDataType(), VTK_DOUBLE);

    std::set<GlobalId> nodes_read;
    for (vtkIdType p = 0; p < grid->GetNumberOfPoints(); ++p) {
        const auto node = static_cast<GlobalId>(point_id->GetComponent(p, 0));
        nodes_read.insert(node);
        const Vec3 x = node_position(node);
        const Vec3 u = displacement_of(node, step);
        const Vec3 v = velocity_of(node, step);
        double position[3];
        grid->GetPoint(p, position);
        for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(displacement->GetComponent(p, d), u[d]) << "node " << node << " component " << d;
            EXPECT_EQ(velocity->GetComponent(p, d), v[d]) << "node " << node << " component " << d;
            EXPECT_EQ(position[d], x[d] + u[d]) << "node " << node << " component " << d;
        }
    }
    EXPECT_EQ(nodes_read, expected_nodes);

    std::set<GlobalId> cells_read;
    for (vtkIdType c = 0; c < grid->GetNumberOfCells(); ++c) {
        const auto tet = static_cast<GlobalId>(cell_id->GetComponent(c, 0));
        cells_read.insert(tet);
        EXPECT_EQ(grid->GetCellType(c), VTK_TETRA) << "tet " << tet;
        EXPECT_EQ(static_cast<int>(cell_rank->GetComponent(c, 0)), owner(tet, n_ranks)) << "tet " << tet;
        EXPECT_EQ(static_cast<int>(cell_body->GetComponent(c, 0)), tet_body(tet)) << "tet " << tet;
        // Connectivity, through the points' global ids: the same four nodes in the same order.
        vtkIdType n_vertices = 0;
        const vtkIdType* vertices = nullptr;
        grid->GetCellPoints(c, n_vertices, vertices);
        ASSERT_EQ(n_vertices, 4);
        const std::array<GlobalId, 4> expected = tet_nodes(tet);
        for (int v = 0; v < 4; ++v) {
            EXPECT_EQ(static_cast<GlobalId>(point_id->GetComponent(vertices[v], 0)), expected[v])
                << "tet " << tet << " vertex " << v;
        }
    }
    EXPECT_EQ(static_cast<int>(cells_read.size()), expected_cells);
}

/// Writes `steps` through one writer, checking the `.pvd` after each step, then checks the last step.
void write_and_check_series(const std::string& test_name,
                            bool binary,
                            const Owner& owner,
                            const std::vector<int>& steps,
                            const std::vector<double>& times) {
    const int rank = comm_rank();
    const int n_ranks = comm_size();
    const std::string directory = fresh_directory(test_name);
    VtkSeriesWriter writer(MPI_COMM_WORLD, directory, binary);
    EXPECT_EQ(writer.pvd_path(), (fs::path(directory) / "intact.pvd").string());
    if (rank == 0) {
        expect_series(writer.pvd_path(), {}, {});
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
        writer.write(steps[i], times[i], make_piece(rank, n_ranks, steps[i], owner));
        // Collective write: the series is complete on return, on every rank.
        if (rank == 0) {
            expect_series(writer.pvd_path(), std::vector<int>(steps.begin(), steps.begin() + i + 1),
                          std::vector<double>(times.begin(), times.begin() + i + 1));
        }
    }
    if (rank == 0) {
        const fs::path pvtu = fs::path(directory) / step_file(steps.back());
        expect_pvtu_matches_pieces(pvtu, n_ranks, binary);
        expect_step_contents(pvtu, steps.back(), n_ranks, owner);
        // Earlier steps stay readable with their own values.
        expect_step_contents(fs::path(directory) / step_file(steps.front()), steps.front(), n_ranks, owner);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST(VtkWriter, BinarySeriesReadsBackWithVtk) {
    write_and_check_series("binary", true, slab_owner, {0, 10, 20}, {0.0, 0.125, 0.25});
}

TEST(VtkWriter, AsciiSeriesReadsBackWithVtk) {
    write_and_check_series("ascii", false, slab_owner, {0, 5, 7}, {0.0, 1.0 / 3.0, 0.7});
}

TEST(VtkWriter, EmptyPiecesAreValid) {
    // Only rank 0 has cells: every other rank writes an empty piece.
    write_and_check_series("root_only", true, root_owner, {1, 2}, {0.5, 1.5});
    // Nobody has cells: the step is a valid, empty grid.
    write_and_check_series("all_empty", true, nobody, {3}, {2.0});
    write_and_check_series("all_empty_ascii", false, nobody, {3}, {2.0});
}

TEST(VtkWriter, RewrittenStepReplacesItsEntry) {
    const int rank = comm_rank();
    const int n_ranks = comm_size();
    const std::string directory = fresh_directory("rewrite");
    VtkSeriesWriter writer(MPI_COMM_WORLD, directory);
    writer.write(0, 0.0, make_piece(rank, n_ranks, 0, slab_owner));
    writer.write(1, 0.1, make_piece(rank, n_ranks, 1, slab_owner));
    writer.write(1, 0.2, make_piece(rank, n_ranks, 2, slab_owner));
    if (rank == 0) {
        expect_series(writer.pvd_path(), {0, 1}, {0.0, 0.2});
        expect_step_contents(fs::path(directory) / step_file(1), 2, n_ranks, slab_owner);
        EXPECT_FALSE(fs::exists(writer.pvd_path() + ".tmp"));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    // A new writer on the same directory starts an empty series.
    VtkSeriesWriter restarted(MPI_COMM_WORLD, directory);
    if (rank == 0) {
        expect_series(restarted.pvd_path(), {}, {});
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST(VtkWriter, ObstaclesArePartOneOfEveryStep) {
    // Rank 0 hands the obstacles of a step (a triangle, a segment, a point, a plane square); they go to
    // steps/step_N/obstacles.vtu and the .pvd lists them as part 1 at the step's time, once per step.
    const int rank = comm_rank();
    const int n_ranks = comm_size();
    const std::string directory = fresh_directory("obstacles");
    VtkSeriesWriter writer(MPI_COMM_WORLD, directory);
    intact::io::VtkObstacles obstacles;
    obstacles.points = {{0, 0, 0}, {1, 0, 0},    {0, 1, 0},   {2, 0, 0},  {3, 0, 0},
                        {5, 5, 5}, {-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1}};
    obstacles.cells = {{0, 1, 2}, {3, 4}, {5}, {6, 7, 8, 9}};
    obstacles.cell_obstacle = {1, 2, 2, 0};
    for (int step = 0; step < 2; ++step) {
        for (auto& p : obstacles.points) {
            p[2] += 0.5 * step;
        }
        writer.write(step, 0.1 * step, make_piece(rank, n_ranks, step, slab_owner),
                     rank == 0 ? &obstacles : nullptr);
    }
    writer.write(1, 0.1, make_piece(rank, n_ranks, 1, slab_owner), rank == 0 ? &obstacles : nullptr);
    if (rank == 0) {
        const std::string pvd = read_text(writer.pvd_path());
        for (const char* entry :
             {"timestep=\"0\" group=\"\" part=\"1\" file=\"steps/step_000000/obstacles.vtu\"",
              "timestep=\"0.1\" group=\"\" part=\"1\" "
              "file=\"steps/step_000001/obstacles.vtu\""}) {
            EXPECT_NE(pvd.find(entry), std::string::npos) << pvd;
        }
        std::size_t parts = 0;
        for (std::size_t at = pvd.find("part=\"1\""); at != std::string::npos;
             at = pvd.find("part=\"1\"", at + 1)) {
            ++parts;
        }
        EXPECT_EQ(parts, 2u) << pvd; // the rewritten step replaced its entry
        vtkNew<vtkXMLUnstructuredGridReader> reader;
        reader->SetFileName((fs::path(directory) / "steps/step_000001/obstacles.vtu").c_str());
        reader->Update();
        vtkUnstructuredGrid* grid = reader->GetOutput();
        ASSERT_EQ(grid->GetNumberOfCells(), 4);
        EXPECT_EQ(grid->GetCellType(0), VTK_TRIANGLE);
        EXPECT_EQ(grid->GetCellType(1), VTK_LINE);
        EXPECT_EQ(grid->GetCellType(2), VTK_VERTEX);
        EXPECT_EQ(grid->GetCellType(3), VTK_QUAD);
        vtkDataArray* ids = grid->GetCellData()->GetArray("obstacle");
        ASSERT_NE(ids, nullptr);
        EXPECT_EQ(ids->GetTuple1(0), 1.0);
        EXPECT_EQ(ids->GetTuple1(3), 0.0);
        double x[3];
        grid->GetPoint(5, x);
        EXPECT_EQ(x[2], 5.5);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace
