#include "src/io/vtk_writer.hpp"

#include "src/core/error.hpp"
#include "src/io/atomic_file.hpp"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkTypeInt64Array.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <locale>
#include <regex>
#include <sstream>
#include <system_error>

namespace intact::io {

namespace {

namespace fs = std::filesystem;

/// Name and XML declaration of one array of a piece. The `.pvtu` is written from this table, so it must
/// match the arrays `make_grid` builds (the test compares both files).
struct ArrayDecl {
    const char* name;
    const char* type;
    int components;
};

static_assert(sizeof(int) == 4, "cell arrays `rank` and `body` are declared as Int32");
static_assert(sizeof(GlobalId) == 8, "`global_id` arrays are declared as Int64");

constexpr ArrayDecl k_point_arrays[] = {
    {"displacement", "Float64", 3},
    {"velocity", "Float64", 3},
    {"global_id", "Int64", 1},
};
constexpr ArrayDecl k_cell_arrays[] = {
    {"rank", "Int32", 1},
    {"body", "Int32", 1},
    {"global_id", "Int64", 1},
};
constexpr ArrayDecl k_points_array = {"Points", "Float64", 3};

const char* byte_order() {
    const std::uint16_t probe = 1;
    unsigned char first = 0;
    std::memcpy(&first, &probe, 1);
    return first == 1 ? "LittleEndian" : "BigEndian";
}

/// "step_000012"
std::string step_name(int step) {
    std::ostringstream name;
    name << "step_" << std::setw(6) << std::setfill('0') << step;
    return name.str();
}

/// "piece_0003.vtu"
std::string piece_name(int rank) {
    std::ostringstream name;
    name << "piece_" << std::setw(4) << std::setfill('0') << rank << ".vtu";
    return name.str();
}

/// Shortest text (up to 17 digits) that reads back to the same double, independent of the global locale.
std::string format_time(double time) {
    std::string text;
    for (int digits = 15; digits <= std::numeric_limits<double>::max_digits10; ++digits) {
        std::ostringstream out;
        out.imbue(std::locale::classic());
        out << std::setprecision(digits) << time;
        text = out.str();
        std::istringstream in(text);
        in.imbue(std::locale::classic());
        double read = 0.0;
        if (in >> read && read == time) {
            break;
        }
    }
    return text;
}

/// Creates `directory` and its parents; returns an empty string or the path and the OS error.
std::string make_directories(const fs::path& directory) {
    std::error_code error;
    fs::create_directories(directory, error);
    if (error) {
        return "cannot create directory " + directory.string() + ": " + error.message();
    }
    return {};
}

/// Collective over `comm`: when any rank's `error` is non-empty, every rank ends the job with the message
/// of the lowest failing rank (so the message names the file on every rank's output).
void require_all_succeeded(MPI_Comm comm, const std::string& error) {
    int rank = 0;
    int size = 1;
    INTACT_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    INTACT_CHECK_MPI(MPI_Comm_size(comm, &size));
    const int mine = error.empty() ? size : rank;
    int first_failed = size;
    INTACT_CHECK_MPI(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm));
    if (first_failed == size) {
        return;
    }
    int length = rank == first_failed ? static_cast<int>(error.size()) : 0;
    INTACT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, first_failed, comm));
    std::string message = rank == first_failed ? error : std::string(static_cast<std::size_t>(length), ' ');
    INTACT_CHECK_MPI(MPI_Bcast(message.data(), length, MPI_CHAR, first_failed, comm));
    std::ostringstream text;
    text << "VTK output failed on rank " << first_failed << ": " << message;
    ::intact::abort_job(text.str(), __FILE__, __LINE__);
}

template <class Array> vtkNew<Array> make_array(const char* name, int components, std::size_t tuples) {
    vtkNew<Array> array;
    array->SetName(name);
    array->SetNumberOfComponents(components);
    array->SetNumberOfTuples(static_cast<vtkIdType>(tuples));
    return array;
}

vtkNew<vtkDoubleArray> make_vector_array(const char* name, const std::vector<Vec3>& values) {
    auto array = make_array<vtkDoubleArray>(name, 3, values.size());
    double* out = array->GetPointer(0);
    for (std::size_t i = 0; i < values.size(); ++i) {
        out[3 * i + 0] = values[i][0];
        out[3 * i + 1] = values[i][1];
        out[3 * i + 2] = values[i][2];
    }
    return array;
}

vtkNew<vtkTypeInt64Array> make_id_array(const std::vector<GlobalId>& values) {
    auto array = make_array<vtkTypeInt64Array>("global_id", 1, values.size());
    std::copy(values.begin(), values.end(), array->GetPointer(0));
    return array;
}

vtkNew<vtkIntArray> make_int_array(const char* name, const std::vector<int>& values) {
    auto array = make_array<vtkIntArray>(name, 1, values.size());
    std::copy(values.begin(), values.end(), array->GetPointer(0));
    return array;
}

/// The piece as a VTK grid; arrays are added in the order of `k_point_arrays` and `k_cell_arrays`.
vtkNew<vtkUnstructuredGrid> make_grid(const VtkPiece& piece) {
    const std::size_t n_cells = piece.cells.size();

    auto coordinates = make_vector_array(k_points_array.name, piece.points);
    vtkNew<vtkPoints> points;
    points->SetData(coordinates);

    // Tets, triangles and lines: a cell's size is its number of corners >= 0.
    vtkNew<vtkIdTypeArray> offsets;
    offsets->SetNumberOfTuples(static_cast<vtkIdType>(n_cells + 1));
    vtkNew<vtkIdTypeArray> connectivity;
    vtkNew<vtkUnsignedCharArray> types;
    types->SetNumberOfTuples(static_cast<vtkIdType>(n_cells));
    bool all_tets = true;
    vtkIdType size = 0;
    offsets->SetValue(0, 0);
    for (std::size_t c = 0; c < n_cells; ++c) {
        int corners = 0;
        for (int k = 0; k < 4; ++k) {
            if (piece.cells[c][static_cast<std::size_t>(k)] >= 0) {
                connectivity->InsertNextValue(piece.cells[c][static_cast<std::size_t>(k)]);
                ++corners;
            }
        }
        size += corners;
        offsets->SetValue(static_cast<vtkIdType>(c + 1), size);
        const unsigned char type = corners == 4 ? VTK_TETRA : corners == 3 ? VTK_TRIANGLE : VTK_LINE;
        types->SetValue(static_cast<vtkIdType>(c), type);
        all_tets = all_tets && corners == 4;
    }
    vtkNew<vtkCellArray> cells;
    cells->SetData(offsets, connectivity);

    vtkNew<vtkUnstructuredGrid> grid;
    grid->SetPoints(points);
    if (all_tets) {
        grid->SetCells(VTK_TETRA, cells);
    } else {
        grid->SetCells(types, cells);
    }

    grid->GetPointData()->AddArray(make_vector_array("displacement", piece.displacement));
    grid->GetPointData()->AddArray(make_vector_array("velocity", piece.velocity));
    grid->GetPointData()->AddArray(make_id_array(piece.point_global_id));
    grid->GetCellData()->AddArray(make_int_array("rank", piece.cell_rank));
    grid->GetCellData()->AddArray(make_int_array("body", piece.cell_body));
    grid->GetCellData()->AddArray(make_id_array(piece.cell_global_id));
    return grid;
}

/// A broken piece is a bug in the caller, not an I/O problem: end the job naming the mismatch.
void check_piece(const VtkPiece& piece) {
    const std::size_t n_points = piece.points.size();
    const std::size_t n_cells = piece.cells.size();
    INTACT_REQUIRE(piece.displacement.size() == n_points && piece.velocity.size() == n_points &&
                       piece.point_global_id.size() == n_points,
                   "VtkPiece point arrays must have one entry per point ("
                       << n_points << "): displacement " << piece.displacement.size() << ", velocity "
                       << piece.velocity.size() << ", point_global_id " << piece.point_global_id.size());
    INTACT_REQUIRE(piece.cell_rank.size() == n_cells && piece.cell_body.size() == n_cells &&
                       piece.cell_global_id.size() == n_cells,
                   "VtkPiece cell arrays must have one entry per cell ("
                       << n_cells << "): cell_rank " << piece.cell_rank.size() << ", cell_body "
                       << piece.cell_body.size() << ", cell_global_id " << piece.cell_global_id.size());
    for (std::size_t c = 0; c < n_cells; ++c) {
        const auto& cell = piece.cells[c];
        // A tet, a triangle (corner 3 is −1) or a line (corners 2 and 3 are −1).
        const int used = cell[3] >= 0 ? 4 : cell[2] >= 0 ? 3 : 2;
        for (int k = 0; k < 4; ++k) {
            const int vertex = cell[static_cast<std::size_t>(k)];
            if (k >= used) {
                INTACT_REQUIRE(vertex == -1, "VtkPiece cell " << c << " has a corner after an unused one");
                continue;
            }
            INTACT_REQUIRE(vertex >= 0 && static_cast<std::size_t>(vertex) < n_points,
                           "VtkPiece cell " << c << " refers to point " << vertex << " of " << n_points);
        }
    }
}

void write_declaration(std::ostream& out, const ArrayDecl& array) {
    out << "      <PDataArray type=\"" << array.type << "\" Name=\"" << array.name
        << "\" NumberOfComponents=\"" << array.components << "\"/>\n";
}

/// The `.pvtu` of one step: array declarations and one piece per rank (paths relative to the `.pvtu`).
std::string pvtu_text(int step, int n_ranks) {
    std::ostringstream out;
    out << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"" << byte_order()
        << "\" header_type=\"UInt64\">\n"
        << "  <PUnstructuredGrid GhostLevel=\"0\">\n"
        << "    <PPointData>\n";
    for (const ArrayDecl& array : k_point_arrays) {
        write_declaration(out, array);
    }
    out << "    </PPointData>\n"
        << "    <PCellData>\n";
    for (const ArrayDecl& array : k_cell_arrays) {
        write_declaration(out, array);
    }
    out << "    </PCellData>\n"
        << "    <PPoints>\n";
    write_declaration(out, k_points_array);
    out << "    </PPoints>\n";
    for (int rank = 0; rank < n_ranks; ++rank) {
        out << "    <Piece Source=\"" << step_name(step) << "/" << piece_name(rank) << "\"/>\n";
    }
    out << "  </PUnstructuredGrid>\n"
        << "</VTKFile>\n";
    return out.str();
}

/// The obstacles as one grid of mixed cells with the cell array `obstacle`.
vtkNew<vtkUnstructuredGrid> make_obstacle_grid(const VtkObstacles& obstacles) {
    auto coordinates = make_vector_array(k_points_array.name, obstacles.points);
    vtkNew<vtkPoints> points;
    points->SetData(coordinates);
    vtkNew<vtkUnstructuredGrid> grid;
    grid->SetPoints(points);
    grid->Allocate(static_cast<vtkIdType>(obstacles.cells.size()));
    for (const auto& cell : obstacles.cells) {
        static const int types[] = {VTK_EMPTY_CELL, VTK_VERTEX, VTK_LINE, VTK_TRIANGLE, VTK_QUAD};
        std::vector<vtkIdType> ids(cell.begin(), cell.end());
        grid->InsertNextCell(types[cell.size()], static_cast<vtkIdType>(ids.size()), ids.data());
    }
    grid->GetCellData()->AddArray(make_int_array("obstacle", obstacles.cell_obstacle));
    return grid;
}

void check_obstacles(const VtkObstacles& obstacles) {
    INTACT_REQUIRE(obstacles.cell_obstacle.size() == obstacles.cells.size(),
                   "VtkObstacles: " << obstacles.cells.size() << " cells but "
                                    << obstacles.cell_obstacle.size() << " obstacle indices");
    for (const auto& cell : obstacles.cells) {
        INTACT_REQUIRE(cell.size() >= 1 && cell.size() <= 4,
                       "VtkObstacles: a cell of " << cell.size() << " points");
        for (const int p : cell) {
            INTACT_REQUIRE(p >= 0 && static_cast<std::size_t>(p) < obstacles.points.size(),
                           "VtkObstacles: a cell refers to point " << p << " of " << obstacles.points.size());
        }
    }
}

/// Writes a grid to a `.vtu`; returns an empty string or the path and the cause.
std::string write_grid(const fs::path& path, vtkUnstructuredGrid* grid, bool binary) {
    vtkNew<vtkXMLUnstructuredGridWriter> writer;
    writer->SetFileName(path.c_str());
    writer->SetInputData(grid);
    writer->SetHeaderTypeToUInt64();
    writer->SetCompressorTypeToNone();
    if (binary) {
        writer->SetDataModeToAppended();
        writer->EncodeAppendedDataOff();
    } else {
        writer->SetDataModeToAscii();
    }
    errno = 0;
    const int written = writer->Write();
    const int write_error = errno;
    if (written == 1 && writer->GetErrorCode() == vtkErrorCode::NoError) {
        return {};
    }
    // VTK names errno-based failures itself; add the OS error only where its text does not already say it.
    std::string cause = vtkErrorCode::GetStringFromErrorCode(writer->GetErrorCode());
    if (write_error != 0 && cause != std::strerror(write_error)) {
        cause += std::string(" (") + std::strerror(write_error) + ")";
    }
    return "cannot write " + path.string() + ": " + cause;
}

/// The `.pvd` collection: one data set per (time, part, path relative to the `.pvd`).
template <class Entries> std::string pvd_text(const Entries& entries) {
    std::ostringstream out;
    out << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"" << byte_order() << "\">\n"
        << "  <Collection>\n";
    for (const auto& entry : entries) {
        out << "    <DataSet timestep=\"" << format_time(entry.time) << "\" group=\"\" part=\"" << entry.part
            << "\" file=\"" << entry.file << "\"/>\n";
    }
    out << "  </Collection>\n"
        << "</VTKFile>\n";
    return out.str();
}

/// Step number of "steps/step_NNNNNN.pvtu", "steps/step_NNNNNN/obstacles.vtu" or of a folder
/// "step_NNNNNN", or -1.
long long step_of(const std::string& name) {
    static const std::regex pattern(R"(^(?:steps/)?step_([0-9]+)(?:\.pvtu|/obstacles\.vtu)?$)");
    std::smatch match;
    return std::regex_match(name, match, pattern) ? std::stoll(match[1].str()) : -1;
}

/// A restart's series: the entries of `pvd` for steps up to `last_step`. Step files of later steps (left
/// by the interrupted run) are removed, so the folder holds no step the series does not list.
template <class Entry>
std::vector<Entry> entries_through(const fs::path& pvd, const fs::path& steps, long long last_step) {
    std::vector<Entry> entries;
    std::ifstream in(pvd);
    static const std::regex data_set(
        R"re(<DataSet timestep="([^"]*)"[^>]*part="([01])"[^>]*file="([^"]*)")re");
    for (std::string line; std::getline(in, line);) {
        std::smatch match;
        if (std::regex_search(line, match, data_set)) {
            const long long step = step_of(match[3].str());
            if (step >= 0 && step <= last_step) {
                std::istringstream text(match[1].str());
                text.imbue(std::locale::classic());
                double time = 0.0;
                text >> time;
                entries.push_back({time, match[3].str(), std::stoi(match[2].str())});
            }
        }
    }
    std::error_code ec;
    for (fs::directory_iterator it(steps, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (step_of(name) > last_step) {
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);
        }
    }
    return entries;
}

/// Writes one rank's `.vtu`; returns an empty string or the path and the cause.
std::string write_piece(const fs::path& path, const VtkPiece& piece, bool binary) {
    return write_grid(path, make_grid(piece), binary);
}

} // namespace

VtkSeriesWriter::VtkSeriesWriter(MPI_Comm comm, std::string directory, bool binary, long long resume_step)
    : m_directory(std::move(directory)), m_binary(binary) {
    INTACT_CHECK_MPI(MPI_Comm_dup(comm, &m_comm));
    INTACT_CHECK_MPI(MPI_Comm_rank(m_comm, &m_rank));
    INTACT_CHECK_MPI(MPI_Comm_size(m_comm, &m_size));
    std::string error;
    if (m_rank == 0) {
        error = make_directories(fs::path(m_directory) / "steps");
        if (error.empty() && resume_step >= 0) {
            m_entries = entries_through<Entry>(pvd_path(), fs::path(m_directory) / "steps", resume_step);
        }
        if (error.empty()) {
            error = write_file_atomically(pvd_path(), pvd_text(m_entries));
        }
    }
    require_all_succeeded(m_comm, error);
}

VtkSeriesWriter::~VtkSeriesWriter() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && m_comm != MPI_COMM_NULL) {
        MPI_Comm_free(&m_comm);
    }
}

void VtkSeriesWriter::write(int step, double time, const VtkPiece& piece, const VtkObstacles* obstacles) {
    INTACT_REQUIRE(step >= 0, "VTK output step must be non-negative, got " << step);
    check_piece(piece);
    if (m_rank == 0 && obstacles) {
        check_obstacles(*obstacles);
    }
    const fs::path steps = fs::path(m_directory) / "steps";
    const std::string name = step_name(step);

    // 1. Every rank its piece. create_directories is idempotent, so ranks need not wait for each other.
    std::string error = make_directories(steps / name);
    if (error.empty()) {
        error = write_piece(steps / name / piece_name(m_rank), piece, m_binary);
    }
    require_all_succeeded(m_comm, error);

    // 2. Rank 0 lists the pieces and adds the step to the series; the .pvd is replaced atomically.
    error.clear();
    if (m_rank == 0) {
        const std::string file = "steps/" + name + ".pvtu";
        const std::string obstacle_file = "steps/" + name + "/obstacles.vtu";
        error = write_file_atomically(steps / (name + ".pvtu"), pvtu_text(step, m_size));
        if (error.empty() && obstacles) {
            error =
                write_grid(fs::path(m_directory) / obstacle_file, make_obstacle_grid(*obstacles), m_binary);
        }
        if (error.empty()) {
            m_entries.erase(std::remove_if(m_entries.begin(), m_entries.end(),
                                           [&](const Entry& entry) {
                                               return entry.file == file || entry.file == obstacle_file;
                                           }),
                            m_entries.end());
            m_entries.push_back({time, file, 0});
            if (obstacles) {
                m_entries.push_back({time, obstacle_file, 1});
            }
            error = write_file_atomically(pvd_path(), pvd_text(m_entries));
        }
    }
    // 3. No rank leaves before the series lists this step.
    require_all_succeeded(m_comm, error);
}

std::string VtkSeriesWriter::pvd_path() const {
    return (fs::path(m_directory) / "intact.pvd").string();
}

} // namespace intact::io
