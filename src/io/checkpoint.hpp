#pragma once
/// @file checkpoint.hpp
/// @brief Checkpoints: what a run needs to continue, one binary file per rank, kept so that a crash at
/// any moment leaves the newest complete checkpoint readable.
///
/// Layout under the output folder:
///   checkpoints/step_NNNNNNNNN/rank_RRRRRR.ckpt   one per rank of the run that wrote it
///   checkpoints/step_NNNNNNNNN/manifest.json      written by rank 0 after every rank's file is on disk:
///                                                 step, time, ranks, the scene as compared on restart
/// Every file is replaced atomically (atomic_file.hpp), and a checkpoint counts only once its manifest
/// exists, so a job killed while writing leaves the previous checkpoint as the newest complete one. After
/// a manifest is written the two newest complete checkpoints are kept and every other one is removed.
///
/// Rank file, version 1 (native byte order; a marker rejects files written with the other one):
///   "INTACTCK" | u32 version | u32 0x01020304 | u32 rank | u32 ranks | u64 scene hash | i64 step |
///   f64 time | u32 sections | sections (u32 name length, name, u64 size, bytes) | u64 FNV-1a checksum of
///   everything before it.
/// Sections are named by the component that owns the state (Simulation, BoundaryMotion, the integrator,
/// the step solver): each one writes and reads its own, so a new integrator or solver adds its history
/// without touching this file. Three kinds:
/// - node fields (`put_node_field`): the owned rows with their global node ids, so that a run on any
///   number of ranks (any partition) reads back the rows of its own nodes;
/// - replicated values (`put_values`): the same on every rank (obstacle rows, scalars);
/// - rank bytes (`put_bytes`): state only its rank holds (e.g. per-pair multipliers keyed by global ids);
///   a reader gets every old rank's bytes and keeps the keys it needs.

#include "comm/halo_exchange.hpp"
#include "src/core/types.hpp"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace intact::io {

/// What identifies a checkpoint; the same in every rank's file and in the manifest.
struct CheckpointInfo {
    std::int64_t step = 0;
    double time = 0.0;            ///< s
    int ranks = 1;                ///< ranks of the run that wrote it
    std::uint64_t scene_hash = 0; ///< FNV-1a of `scene` dumped (set by write_checkpoint)
    std::uint64_t mesh_hash = 0;  ///< mesh_fingerprint of the run that wrote it
    nlohmann::json scene;         ///< compared_scene of the resolved scene
    /// How the run was started: {"scene": absolute path, "overrides": ["key.path=value", ...]}, so that
    /// `intact run --restart DIR` continues it as started; null when not recorded.
    nlohmann::json command;
    std::string folder; ///< checkpoints/step_NNNNNNNNN (set when found or written)
};

/// The part of a resolved scene a restart must keep: everything but `output`, `time.end`, `time.steps`,
/// and how the job is laid out on the machine (`partition`, `parallel`), which may change with the rank
/// count. Host.
nlohmann::json compared_scene(const nlohmann::json& resolved);

/// Where two scenes first differ: the key path ("contact.friction", "bodies[1].velocity"; empty when
/// they are equal) and the two values as JSON text ("absent" for a missing key).
struct SceneDifference {
    std::string key;
    std::string was;
    std::string now;
};
SceneDifference first_difference(const nlohmann::json& was, const nlohmann::json& now);

/// A hash of the mesh that does not depend on the partition: the wrapping sum over nodes of a hash of
/// (global id, rest position bits), plus the node count. Collective.
std::uint64_t mesh_fingerprint(MPI_Comm comm, const std::vector<GlobalId>& owned_ids, const NodeField& rest);

/// One rank's sections, filled by the components, written by `write_checkpoint`. Host side (node fields
/// are copied from the device when put).
class CheckpointWriter {
public:
    /// @param owned_ids global ids of this rank's owned nodes: row i of every node field is node owned_ids[i]
    explicit CheckpointWriter(std::vector<GlobalId> owned_ids);

    /// The owned rows of `field` (rows: local nodes, owned first).
    void put_node_field(const std::string& name, const NodeField& field);
    /// Values that are the same on every rank.
    void put_values(const std::string& name, std::vector<double> values);
    /// This rank's own bytes.
    void put_bytes(const std::string& name, std::string bytes);

    /// The rank file for `info` (see the file comment). `rank` is this rank.
    std::string encode(const CheckpointInfo& info, int rank) const;

private:
    void put(const std::string& name, std::string bytes);
    std::size_t m_num_owned = 0;
    std::map<std::string, std::string> m_sections;
};

/// One rank file read back and checked.
struct CheckpointFile {
    int rank = 0;
    int ranks = 1;
    std::uint64_t scene_hash = 0;
    std::int64_t step = 0;
    double time = 0.0;
    std::map<std::string, std::string> sections;
};

/// Parse and check a rank file (magic, version, byte order, checksum, section sizes). Returns "" and
/// fills `file`, or what is wrong. Host.
std::string decode_checkpoint(const std::string& bytes, CheckpointFile& file);

/// Write checkpoint `info.step` of this rank, then rank 0 the manifest, then remove old checkpoints
/// (`info.scene_hash` and `info.folder` are filled in here).
/// Returns the checkpoint's folder. If any rank cannot write, every rank throws InputError naming the
/// path and the OS error; the previous checkpoint stays the newest complete one. Collective.
std::string write_checkpoint(MPI_Comm comm,
                             const std::string& output_dir,
                             const CheckpointWriter& writer,
                             const CheckpointInfo& info);

/// A checkpoint opened for restart on this job's ranks (which may be more or fewer than wrote it).
class CheckpointReader {
public:
    /// Opens the newest complete checkpoint under `output_dir` whose files all read back whole (an older
    /// one is tried, with a warning, when one of them does not). `owned_ids`: this rank's owned nodes;
    /// `halo` fills ghost rows of restored node fields. Throws InputError on every rank when there is no
    /// usable checkpoint (the message says which were tried and why). Collective.
    CheckpointReader(MPI_Comm comm,
                     const std::string& output_dir,
                     std::vector<GlobalId> owned_ids,
                     comm::HaloExchange& halo);

    const CheckpointInfo& info() const { return m_info; }

    /// Restore `field`: owned rows from the saved rows of the same global nodes (whichever rank saved
    /// them), then ghost rows by a halo gather. The section must exist (a checkpoint of this version
    /// always has the sections its run's components write). Collective.
    void node_field(const std::string& name, const NodeField& field) const;
    /// Replicated values as put (from the first file this rank holds, or rank 0's).
    std::vector<double> values(const std::string& name) const;
    /// Every old rank's bytes of `name`, in old rank order (reads the files this rank does not hold).
    /// Local.
    std::vector<std::string> bytes_of_every_rank(const std::string& name) const;
    /// Whether the checkpoint holds a section `name` (of any kind).
    bool has(const std::string& name) const;

private:
    const CheckpointFile& any_file() const;
    std::string file_path(int rank) const;

    MPI_Comm m_comm;
    int m_rank = 0;
    int m_size = 1;
    std::string m_output_dir;
    std::vector<GlobalId> m_owned_ids;
    comm::HaloExchange& m_halo;
    CheckpointInfo m_info;
    std::map<int, CheckpointFile> m_files; ///< the old ranks' files this rank read (old rank → file)
    bool m_same_partition = false;         ///< every rank holds its own old file with its own nodes
};

/// Why `output_dir` holds no complete checkpoint, as "PROBLEM; fix: FIX": the folder does not exist, it
/// holds no checkpoint (the run wrote none), or its checkpoints are incomplete (no manifest.json: the job
/// ended while writing). "" when a complete checkpoint exists. Host.
std::string describe_missing_checkpoint(const std::string& output_dir);

/// The `command` of the newest complete checkpoint under `output_dir` (null when there is none, or it
/// records none). Rank 0 reads it; every rank gets the same. Collective.
nlohmann::json recorded_command(MPI_Comm comm, const std::string& output_dir);

/// "checkpoints/step_000000120" relative to the output folder.
std::string checkpoint_folder(std::int64_t step);

} // namespace intact::io
