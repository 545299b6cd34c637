#pragma once
/// @file vtk_writer.hpp
/// @brief ParaView output: per-rank `.vtu` pieces, a `.pvtu` per output step and a `.pvd` time series.
///
/// Layout under the output directory:
///   intact.pvd                               time series, rewritten (temp file + rename) after every
///                                            step, so it is valid whenever a step has finished
///   steps/step_NNNNNN.pvtu                   one per written step (rank 0), lists the pieces
///   steps/step_NNNNNN/piece_RRRR.vtu         one per rank and step: owned elements and their nodes
///   steps/step_NNNNNN/obstacles.vtu          rank 0, when the scene has obstacles: where they are at the
///                                            step's time (part 1 of the step in the .pvd, so ParaView
///                                            loads bodies and obstacles as two blocks of one series)
/// Point arrays: `displacement`, `velocity` (3 components, metres and m/s), `global_id` (the scene-wide
/// node id: interface nodes appear in several pieces and share it). Cells: tetrahedra of solids, triangles
/// of shells, lines of rods. Cell arrays: `rank`, `body`, `global_id`. Obstacles: triangles, lines
/// (segments), vertices (points) and quads (planes, drawn as a square around the bodies), cell array
/// `obstacle` (index in the scene's `obstacles`). Pieces are binary (VTK appended, raw, uncompressed) by
/// default, ASCII on request. Host-only code: fields must be copied to the host before they go into a
/// `VtkPiece`.

#include "src/core/ids.hpp"

#include <mpi.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace intact::io {

/// One rank's piece of one output step. All arrays are on the host; a piece may be empty (no points, no
/// cells), which still gives a valid `.vtu`.
struct VtkPiece {
    std::vector<Vec3> points;              ///< current positions, one per piece point
    std::vector<std::array<int, 4>> cells; ///< tets, triangles (corner 3 −1), lines (corners 2, 3 −1): points
    std::vector<Vec3> displacement;        ///< per point
    std::vector<Vec3> velocity;            ///< per point
    std::vector<GlobalId> point_global_id; ///< per point
    std::vector<int> cell_rank;            ///< per cell
    std::vector<int> cell_body;            ///< per cell
    std::vector<GlobalId> cell_global_id;  ///< per cell
};

/// The obstacles of one output step, on rank 0: cells of 1 (point), 2 (segment), 3 (triangle) or 4
/// (plane square) points.
struct VtkObstacles {
    std::vector<Vec3> points;
    std::vector<std::vector<int>> cells;
    std::vector<int> cell_obstacle; ///< per cell: index in the scene's `obstacles`
};

/// Writes a time series. Collective over `comm` (every rank calls `write` with its piece). The writer works
/// on its own duplicate of `comm`, freed on destruction (which must happen before MPI_Finalize).
class VtkSeriesWriter {
public:
    /// Creates `directory` and `directory/steps` (rank 0) and starts a new, empty `intact.pvd` (an existing
    /// one is replaced; old step files are left alone and overwritten as steps are written again).
    /// Collective: no rank returns before the empty series is on disk. Ends the job if rank 0 cannot
    /// create the directories or the file.
    /// With `resume_step` >= 0 (a restart after that step) the existing `intact.pvd` is continued instead:
    /// its entries of steps up to `resume_step` stay, later ones and their step files (written by the
    /// interrupted run after its checkpoint) are removed.
    VtkSeriesWriter(MPI_Comm comm, std::string directory, bool binary = true, long long resume_step = -1);
    ~VtkSeriesWriter();
    VtkSeriesWriter(const VtkSeriesWriter&) = delete;
    VtkSeriesWriter& operator=(const VtkSeriesWriter&) = delete;

    /// Write one output step (`step` >= 0, `time` in seconds): every rank its `.vtu`, then rank 0 the
    /// `.pvtu` and the updated `.pvd`. Collective: when it returns on any rank, the step's files and the
    /// `.pvd` listing it are complete. Writing a step number again replaces its files and its `.pvd` entry.
    /// A rank whose write fails reports the path and the OS error, and the whole job ends.
    /// `obstacles` (read on rank 0; null: none) become the step's part 1.
    void write(int step, double time, const VtkPiece& piece, const VtkObstacles* obstacles = nullptr);

    /// Path of the `.pvd` file users open in ParaView.
    std::string pvd_path() const;

private:
    MPI_Comm m_comm = MPI_COMM_NULL; ///< duplicate of the caller's communicator
    int m_rank = 0;
    int m_size = 1;
    std::string m_directory;
    bool m_binary = true;
    struct Entry {
        double time;
        std::string file; ///< relative to directory
        int part;         ///< 0: bodies, 1: obstacles
    };
    std::vector<Entry> m_entries; ///< rank 0
};

} // namespace intact::io
