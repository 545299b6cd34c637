/// @file vtk.cpp
/// @brief The VTK readers: .vtu (XML) and legacy .vtk unstructured grids of VTK_TETRA cells, read by VTK
/// itself; its error messages are caught by an observer and turned into `InputError`.

#include "src/io/mesh_reader/common.hpp"

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

#include <array>
#include <climits>
#include <map>
#include <string>
#include <string_view>

namespace intact::io::detail {
namespace {

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

} // namespace

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

} // namespace intact::io::detail
