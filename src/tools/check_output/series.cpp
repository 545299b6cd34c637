/// @file series.cpp
/// @brief Reading a written series with VTK's XML readers (whose error messages are gathered into
/// `InputError`), and merging a step's pieces by `global_id` (declared in series.hpp).

#include "src/tools/check_output/series.hpp"

#include "src/core/error.hpp"

#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkCommand.h>
#include <vtkDataArray.h>
#include <vtkExecutive.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#include <vtkVariant.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <array>
#include <cctype>
#include <string>

namespace intact::tools::detail {
namespace {

/// Gathers VTK's error messages (instead of VTK printing them) so they can go into an InputError.
class VtkMessages : public vtkCommand {
public:
    static VtkMessages* New() { return new VtkMessages; }
    void Execute(vtkObject*, unsigned long event, void* data) override {
        if (event != vtkCommand::ErrorEvent || data == nullptr) {
            return; // warnings are dropped: the checks below decide what is wrong
        }
        // VTK's text is "ERROR: In <source>, line N\n<class> (<address>): <message>"; keep the message.
        std::string text = static_cast<const char*>(data);
        const std::size_t cut = text.find("): ");
        if (cut != std::string::npos) {
            text = text.substr(cut + 3);
        }
        text = text.substr(0, text.find('\n')); // the pipeline appends a dump of its request
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
            text.pop_back();
        }
        m_errors += (m_errors.empty() ? "" : "; ") + text;
    }
    const std::string& errors() const { return m_errors; }

private:
    std::string m_errors;
};

void observe(vtkObject* object, VtkMessages* messages) {
    object->AddObserver(vtkCommand::ErrorEvent, messages);
    object->AddObserver(vtkCommand::WarningEvent, messages);
}

/// The root `VTKFile` element of an XML file of the given `type`; the parser owns it.
vtkXMLDataElement*
parse_vtk_xml(vtkXMLDataParser* parser, const fs::path& file, const char* type, const std::string& fix) {
    vtkNew<VtkMessages> messages;
    observe(parser, messages);
    parser->SetFileName(file.string().c_str());
    const int parsed = parser->Parse();
    vtkXMLDataElement* root = parser->GetRootElement();
    const char* root_type = root != nullptr ? root->GetAttribute("type") : nullptr;
    if (parsed == 0 || root == nullptr || std::string(root->GetName()) != "VTKFile" || root_type == nullptr ||
        std::string(root_type) != type) {
        throw InputError(quoted(file) + " is not a VTK " + type + " file" +
                         (messages->errors().empty() ? "" : " (" + messages->errors() + ")") + "; " + fix);
    }
    return root;
}

const char* const k_rerun = "run the simulation again into this folder, or check a complete copy of it";

/// Reads `file` with `reader`, VTK's messages observed: a file VTK cannot read, or reads with errors, is one
/// InputError naming it (never VTK's own printout, nor an empty grid taken as data). The grid belongs to
/// `reader`.
vtkUnstructuredGrid* read_grid(vtkXMLUnstructuredGridReader* reader, const fs::path& file) {
    vtkNew<VtkMessages> messages;
    vtkNew<VtkMessages> pipeline_messages; // only "the reader failed", after the reader said why
    observe(reader, messages);
    observe(reader->GetExecutive(), pipeline_messages);
    reader->SetParserErrorObserver(messages);
    reader->SetReaderErrorObserver(messages);
    reader->SetFileName(file.string().c_str());
    reader->Update();
    vtkUnstructuredGrid* grid = reader->GetOutput();
    if (!messages->errors().empty() || !pipeline_messages->errors().empty() || grid == nullptr) {
        const std::string& why =
            messages->errors().empty() ? pipeline_messages->errors() : messages->errors();
        throw InputError(quoted(file) + " cannot be read as a VTK unstructured grid (" + why + "); " +
                         k_rerun);
    }
    return grid;
}

} // namespace

std::string quoted(const fs::path& path) {
    return "'" + path.string() + "'";
}

std::vector<SeriesEntry> read_series(const fs::path& pvd) {
    if (!fs::is_regular_file(pvd)) {
        throw InputError(quoted(pvd) +
                         " not found; give the folder that `intact run --output DIR` wrote (it holds "
                         "intact.pvd)");
    }
    vtkNew<vtkXMLDataParser> parser;
    vtkXMLDataElement* root = parse_vtk_xml(parser, pvd, "Collection", k_rerun);
    vtkXMLDataElement* collection = root->FindNestedElementWithName("Collection");
    if (collection == nullptr) {
        throw InputError(quoted(pvd) + " has no <Collection> element; " + k_rerun);
    }
    std::vector<SeriesEntry> entries;
    for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* data_set = collection->GetNestedElement(i);
        if (std::string(data_set->GetName()) != "DataSet") {
            continue;
        }
        // Part 1 of a step is the obstacles' geometry (placed from scene.resolved.json here instead).
        const char* part = data_set->GetAttribute("part");
        if (part != nullptr && std::string(part) != "0") {
            continue;
        }
        const char* file = data_set->GetAttribute("file");
        double time = 0.0;
        if (file == nullptr || data_set->GetScalarAttribute("timestep", time) == 0) {
            throw InputError(quoted(pvd) + ": <DataSet> " + std::to_string(i) +
                             " lacks its `file` or `timestep` attribute; " + k_rerun);
        }
        const fs::path path = fs::path(file).is_absolute() ? fs::path(file) : pvd.parent_path() / file;
        if (!fs::is_regular_file(path)) {
            throw InputError(quoted(path) + ", listed in " + quoted(pvd) + ", not found; " + k_rerun +
                             " (a run that stopped early lists only the steps it finished)");
        }
        entries.push_back({time, path});
    }
    return entries;
}

std::vector<Vec3> read_points(const fs::path& vtu) {
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    vtkUnstructuredGrid* grid = read_grid(reader, vtu);
    if (grid->GetPoints() == nullptr) {
        throw InputError(quoted(vtu) + " holds no points; " + k_rerun);
    }
    std::vector<Vec3> points(static_cast<std::size_t>(grid->GetNumberOfPoints()));
    for (vtkIdType i = 0; i < grid->GetNumberOfPoints(); ++i) {
        grid->GetPoint(i, points[static_cast<std::size_t>(i)].data());
    }
    return points;
}

std::vector<fs::path> read_piece_list(const fs::path& pvtu) {
    vtkNew<vtkXMLDataParser> parser;
    vtkXMLDataElement* root = parse_vtk_xml(parser, pvtu, "PUnstructuredGrid", k_rerun);
    vtkXMLDataElement* grid = root->FindNestedElementWithName("PUnstructuredGrid");
    if (grid == nullptr) {
        throw InputError(quoted(pvtu) + " has no <PUnstructuredGrid> element; " + k_rerun);
    }
    std::vector<fs::path> pieces;
    for (int i = 0; i < grid->GetNumberOfNestedElements(); ++i) {
        vtkXMLDataElement* piece = grid->GetNestedElement(i);
        if (std::string(piece->GetName()) != "Piece") {
            continue;
        }
        const char* source = piece->GetAttribute("Source");
        if (source == nullptr) {
            throw InputError(quoted(pvtu) + ": <Piece> without a `Source` attribute; " + k_rerun);
        }
        const fs::path path = fs::path(source).is_absolute() ? fs::path(source) : pvtu.parent_path() / source;
        if (!fs::is_regular_file(path)) {
            throw InputError(quoted(path) + ", listed in " + quoted(pvtu) + ", not found; " + k_rerun);
        }
        pieces.push_back(path);
    }
    return pieces;
}

void add_piece(const fs::path& file,
               SceneMesh& scene,
               std::unordered_map<GlobalId, int>& node_index,
               std::unordered_set<GlobalId>& seen_tets) {
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    vtkUnstructuredGrid* grid = read_grid(reader, file);
    const vtkIdType num_points = grid->GetNumberOfPoints();
    const vtkIdType num_cells = grid->GetNumberOfCells();
    vtkDataArray* point_ids = grid->GetPointData()->GetArray("global_id");
    if (point_ids == nullptr || point_ids->GetNumberOfTuples() != num_points ||
        point_ids->GetNumberOfComponents() != 1) {
        throw InputError(quoted(file) +
                         " has no point array `global_id` with one value per point; `intact check` reads "
                         "output written by `intact run`");
    }
    vtkDataArray* cell_ids = grid->GetCellData()->GetArray("global_id");
    vtkDataArray* cell_bodies = grid->GetCellData()->GetArray("body");

    std::vector<int> local_to_scene(static_cast<std::size_t>(num_points));
    for (vtkIdType p = 0; p < num_points; ++p) {
        const GlobalId id = point_ids->GetVariantValue(p).ToTypeInt64();
        Vec3 x;
        grid->GetPoint(p, x.data());
        const auto [it, inserted] = node_index.emplace(id, static_cast<int>(scene.mesh.nodes.size()));
        if (inserted) {
            scene.mesh.nodes.push_back(x);
            scene.node_id.push_back(id);
            scene.node_body.push_back(-1);
        } else if (scene.mesh.nodes[static_cast<std::size_t>(it->second)] != x) {
            ++scene.position_mismatches;
        }
        local_to_scene[static_cast<std::size_t>(p)] = it->second;
    }
    for (vtkIdType c = 0; c < num_cells; ++c) {
        const int type = grid->GetCellType(c);
        if (type != VTK_TETRA && type != VTK_TRIANGLE && type != VTK_LINE) {
            throw InputError(quoted(file) + ": cell " + std::to_string(c) +
                             " is not a tetrahedron, a triangle (shell) or a line (rod) (VTK type " +
                             std::to_string(type) + "); `intact check` reads output written by `intact run`");
        }
        const GlobalId id = cell_ids != nullptr ? cell_ids->GetVariantValue(c).ToTypeInt64() : -1;
        if (cell_ids != nullptr && !seen_tets.insert(id).second) {
            continue;
        }
        const int body = cell_bodies != nullptr ? cell_bodies->GetVariantValue(c).ToInt() : -1;
        vtkIdType count = 0;
        const vtkIdType* points = nullptr;
        grid->GetCellPoints(c, count, points);
        const int corners = type == VTK_TETRA ? 4 : type == VTK_TRIANGLE ? 3 : 2;
        if (count != corners) {
            throw InputError(quoted(file) + ": cell " + std::to_string(c) + " has " + std::to_string(count) +
                             " points for its type; `intact check` reads output written by `intact run`");
        }
        std::array<int, 4> tet{};
        for (int k = 0; k < corners; ++k) {
            tet[k] = local_to_scene[static_cast<std::size_t>(points[k])];
            scene.node_body[static_cast<std::size_t>(tet[k])] = body;
        }
        if (type == VTK_TRIANGLE) {
            scene.shell_triangles.push_back({tet[0], tet[1], tet[2]});
            scene.shell_triangle_body.push_back(body);
            continue;
        }
        if (type == VTK_LINE) {
            scene.rod_segments.push_back({tet[0], tet[1]});
            scene.rod_segment_body.push_back(body);
            continue;
        }
        scene.mesh.tets.push_back(tet);
        scene.tet_id.push_back(id);
        scene.tet_body.push_back(body);
    }
}

std::string body_text(const SceneMesh& scene, int body) {
    if (body < 0) {
        return "a body (the pieces have no cell array 'body')";
    }
    const std::string label = "bodies[" + std::to_string(body) + "]";
    const auto b = static_cast<std::size_t>(body);
    return b < scene.body_names.size() && !scene.body_names[b].empty()
               ? label + " (\"" + scene.body_names[b] + "\")"
               : label;
}

} // namespace intact::tools::detail
