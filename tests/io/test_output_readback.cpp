// The real output of a simulation, read back with VTK's own readers on rank 0.
#include "comm/collectives.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <vtkAppendFilter.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace {

using namespace intact;

// A hanging box that moves: 3 steps, every step written.
nlohmann::json hanging_box() {
    nlohmann::json body;
    body["mesh"]["box"] = {{"min", {0.0, 0.0, 0.0}}, {"max", {0.3, 0.2, 0.2}}, {"cells", {6, 4, 4}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e4}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["velocity"] = {0.0, 0.5, 0.0};
    body["fixed"] = nlohmann::json::array({{{"box", {{"min", {-1, -1, -1}}, {"max", {1e-9, 1, 1}}}}}});
    nlohmann::json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 3}};
    scene["bodies"] = nlohmann::json::array({body});
    scene["contact"] = {{"enabled", false}};
    return scene;
}

TEST(OutputReadback, PvtuOfTheLastStepHasEveryNodeCellAndArray) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const std::string dir =
        (std::filesystem::path(INTACT_BINARY_DIR) / "test_output" / ("readback_np" + std::to_string(size)))
            .string();
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(hanging_box(), "hanging_box.json"), dir);
    simulation.run();
    const long long nodes = simulation.local_mesh().global_num_nodes;
    const long long cells = simulation.local_mesh().global_num_elements;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        return;
    }

    // The .pvd lists steps 0..3; its last data set is the one we read.
    std::ifstream pvd(dir + "/intact.pvd");
    std::stringstream text;
    text << pvd.rdbuf();
    const std::string series = text.str();
    const std::regex entry("file=\"([^\"]+)\"");
    std::vector<std::string> files;
    for (auto it = std::sregex_iterator(series.begin(), series.end(), entry); it != std::sregex_iterator();
         ++it) {
        files.push_back((*it)[1]);
    }
    ASSERT_EQ(files.size(), 4u) << series;

    vtkNew<vtkXMLPUnstructuredGridReader> reader;
    reader->SetFileName((dir + "/" + files.back()).c_str());
    reader->Update();
    vtkUnstructuredGrid* grid = reader->GetOutput();
    EXPECT_EQ(grid->GetNumberOfCells(), cells);
    // Pieces repeat interface nodes; appending the pieces with coincident points merged gives exactly the
    // scene's nodes (and shows that ghost copies carry their owners' positions bit for bit).
    std::ifstream pvtu(dir + "/" + files.back());
    std::stringstream pvtu_text;
    pvtu_text << pvtu.rdbuf();
    const std::string listing = pvtu_text.str();
    const std::regex source("Source=\"([^\"]+)\"");
    const std::string folder = std::filesystem::path(dir + "/" + files.back()).parent_path().string();
    vtkNew<vtkAppendFilter> merge;
    std::vector<vtkSmartPointer<vtkXMLUnstructuredGridReader>> pieces;
    for (auto it = std::sregex_iterator(listing.begin(), listing.end(), source); it != std::sregex_iterator();
         ++it) {
        pieces.push_back(vtkSmartPointer<vtkXMLUnstructuredGridReader>::New());
        pieces.back()->SetFileName((folder + "/" + std::string((*it)[1])).c_str());
        merge->AddInputConnection(pieces.back()->GetOutputPort());
    }
    EXPECT_EQ(static_cast<int>(pieces.size()), size);
    merge->MergePointsOn();
    merge->Update();
    EXPECT_EQ(merge->GetOutput()->GetNumberOfPoints(), nodes);
    EXPECT_EQ(merge->GetOutput()->GetNumberOfCells(), cells);

    for (const char* name : {"displacement", "velocity"}) {
        vtkDataArray* array = grid->GetPointData()->GetArray(name);
        ASSERT_NE(array, nullptr) << name;
        EXPECT_EQ(array->GetNumberOfComponents(), 3);
        EXPECT_GT(array->GetMaxNorm(), 1e-4) << name << " should show motion after 3 steps";
    }
    vtkDataArray* ranks = grid->GetCellData()->GetArray("rank");
    ASSERT_NE(ranks, nullptr);
    double range[2];
    ranks->GetRange(range);
    EXPECT_EQ(range[0], 0.0);
    EXPECT_EQ(range[1], size - 1.0);
    ASSERT_NE(grid->GetCellData()->GetArray("body"), nullptr);
}

} // namespace
