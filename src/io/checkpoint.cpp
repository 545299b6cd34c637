#include "src/io/checkpoint.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/io/atomic_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace intact::io {

namespace {

namespace fs = std::filesystem;

constexpr char k_magic[8] = {'I', 'N', 'T', 'A', 'C', 'T', 'C', 'K'};
constexpr std::uint32_t k_version = 1;
constexpr std::uint32_t k_byte_order = 0x01020304;
constexpr int k_keep = 2; ///< complete checkpoints kept after each write

// Section names by kind, so that a node field and a value of the same name cannot collide.
const std::string k_node_ids = "node_ids";
std::string node_section(const std::string& name) {
    return "node/" + name;
}
std::string values_section(const std::string& name) {
    return "values/" + name;
}
std::string bytes_section(const std::string& name) {
    return "bytes/" + name;
}

// FNV-1a, 64 bit: a checksum that catches torn or truncated files, not an authentication code.
std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t hash = 14695981039346656037ull) {
    for (std::size_t i = 0; i < size; ++i) {
        hash ^= static_cast<unsigned char>(data[i]);
        hash *= 1099511628211ull;
    }
    return hash;
}

template <class T> void append(std::string& out, const T& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Reads values in file order; `ok` turns false (and stays false) once the bytes run out.
struct Cursor {
    const std::string& bytes;
    std::size_t position = 0;
    bool ok = true;

    template <class T> T read() {
        T value{};
        if (ok && bytes.size() - position >= sizeof(T)) {
            std::memcpy(&value, bytes.data() + position, sizeof(T));
            position += sizeof(T);
        } else {
            ok = false;
        }
        return value;
    }
    std::string read_bytes(std::uint64_t size) {
        if (!ok || bytes.size() - position < size) {
            ok = false;
            return {};
        }
        std::string out = bytes.substr(position, static_cast<std::size_t>(size));
        position += static_cast<std::size_t>(size);
        return out;
    }
};

template <class T> std::string to_bytes(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}
template <class T> std::vector<T> from_bytes(const std::string& bytes) {
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
}

std::string hex(std::uint64_t value) {
    std::ostringstream out;
    out << std::hex << std::setw(16) << std::setfill('0') << value;
    return out.str();
}

std::string rank_file_name(int rank) {
    std::ostringstream name;
    name << "rank_" << std::setw(6) << std::setfill('0') << rank << ".ckpt";
    return name.str();
}

// Step of a folder named step_NNNNNNNNN, or -1.
std::int64_t folder_step(const std::string& name) {
    if (name.size() <= 5 || name.compare(0, 5, "step_") != 0 ||
        name.find_first_not_of("0123456789", 5) != std::string::npos) {
        return -1;
    }
    return std::stoll(name.substr(5));
}

// Rank 0's `text` on every rank. Collective.
std::string broadcast_text(MPI_Comm comm, std::string text) {
    int length = static_cast<int>(text.size());
    INTACT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, comm));
    text.resize(static_cast<std::size_t>(length));
    INTACT_CHECK_MPI(MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm));
    return text;
}

// Checkpoint folders under `output_dir`, newest first, with whether their manifest exists.
std::vector<std::pair<std::int64_t, bool>> list_checkpoints(const std::string& output_dir) {
    std::vector<std::pair<std::int64_t, bool>> found;
    std::error_code ec;
    const fs::path root = fs::path(output_dir) / "checkpoints";
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::int64_t step = folder_step(it->path().filename().string());
        if (step >= 0 && it->is_directory(ec)) {
            found.emplace_back(step, fs::exists(it->path() / "manifest.json", ec));
        }
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return found;
}

// Keep `newest` and the complete checkpoints just older than it (k_keep in all); remove the others,
// including folders of later steps (an abandoned continuation) and incomplete ones. Rank 0.
void prune_checkpoints(const std::string& output_dir, std::int64_t newest) {
    int kept = 1;
    for (const auto& [step, complete] : list_checkpoints(output_dir)) {
        if (step == newest) {
            continue;
        }
        if (step < newest && complete && kept < k_keep) {
            ++kept;
            continue;
        }
        std::error_code ec;
        fs::remove_all(fs::path(output_dir) / checkpoint_folder(step), ec);
        if (ec) {
            log::warn() << "could not remove the old checkpoint " << checkpoint_folder(step) << ": "
                        << ec.message();
        }
    }
}

nlohmann::json manifest_of(const CheckpointInfo& info) {
    nlohmann::json manifest = {{"format", "intact checkpoint"},
                               {"version", k_version},
                               {"step", info.step},
                               {"time", info.time},
                               {"ranks", info.ranks},
                               {"scene_hash", hex(info.scene_hash)},
                               {"mesh_hash", hex(info.mesh_hash)},
                               {"scene", info.scene}};
    if (!info.command.is_null()) {
        manifest["command"] = info.command;
    }
    return manifest;
}

// Parse a manifest; returns "" or what is wrong.
std::string info_of(const std::string& text, CheckpointInfo& info) {
    try {
        const nlohmann::json manifest = nlohmann::json::parse(text);
        if (manifest.at("version").get<std::uint32_t>() != k_version) {
            return "format version " + manifest.at("version").dump() + ", this program reads version " +
                   std::to_string(k_version);
        }
        info.step = manifest.at("step").get<std::int64_t>();
        info.time = manifest.at("time").get<double>();
        info.ranks = manifest.at("ranks").get<int>();
        info.scene_hash = std::stoull(manifest.at("scene_hash").get<std::string>(), nullptr, 16);
        info.mesh_hash = std::stoull(manifest.at("mesh_hash").get<std::string>(), nullptr, 16);
        info.scene = manifest.at("scene");
        info.command = manifest.value("command", nlohmann::json());
    } catch (const std::exception& e) {
        return std::string("manifest.json cannot be read: ") + e.what();
    }
    if (info.ranks < 1 || info.step < 0) {
        return "manifest.json holds ranks " + std::to_string(info.ranks) + ", step " +
               std::to_string(info.step);
    }
    return {};
}

// Sends per_dest[r] to rank r and returns what every rank sent here, by source rank. Collective.
template <class T>
std::vector<std::vector<T>>
exchange(MPI_Comm comm, const std::vector<std::vector<T>>& per_dest, MPI_Datatype type) {
    const int size = static_cast<int>(per_dest.size());
    std::vector<int> send_counts(static_cast<std::size_t>(size)), recv_counts(static_cast<std::size_t>(size));
    std::vector<int> send_offsets(static_cast<std::size_t>(size) + 1, 0),
        recv_offsets(static_cast<std::size_t>(size) + 1, 0);
    std::vector<T> send;
    for (int r = 0; r < size; ++r) {
        const auto& block = per_dest[static_cast<std::size_t>(r)];
        INTACT_REQUIRE(block.size() < static_cast<std::size_t>(std::numeric_limits<int>::max()),
                       "a checkpoint exchange block of " << block.size()
                                                         << " entries exceeds MPI's int counts");
        send_counts[static_cast<std::size_t>(r)] = static_cast<int>(block.size());
        send_offsets[static_cast<std::size_t>(r) + 1] =
            send_offsets[static_cast<std::size_t>(r)] + send_counts[static_cast<std::size_t>(r)];
        send.insert(send.end(), block.begin(), block.end());
    }
    INTACT_CHECK_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm));
    for (int r = 0; r < size; ++r) {
        recv_offsets[static_cast<std::size_t>(r) + 1] =
            recv_offsets[static_cast<std::size_t>(r)] + recv_counts[static_cast<std::size_t>(r)];
    }
    std::vector<T> received(static_cast<std::size_t>(recv_offsets.back()));
    INTACT_CHECK_MPI(MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), type,
                                   received.data(), recv_counts.data(), recv_offsets.data(), type, comm));
    std::vector<std::vector<T>> per_source(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) {
        per_source[static_cast<std::size_t>(r)].assign(
            received.begin() + recv_offsets[static_cast<std::size_t>(r)],
            received.begin() + recv_offsets[static_cast<std::size_t>(r) + 1]);
    }
    return per_source;
}

// Read and check old rank `rank`'s file of the checkpoint `info`. Returns "" or the path and the problem.
std::string
load_rank_file(const std::string& path, int rank, const CheckpointInfo& info, CheckpointFile& file) {
    std::string bytes;
    std::string problem = read_file(path, bytes);
    if (problem.empty()) {
        problem = decode_checkpoint(bytes, file);
        if (!problem.empty()) {
            problem = path + ": " + problem;
        }
    }
    if (problem.empty() && (file.rank != rank || file.ranks != info.ranks || file.step != info.step ||
                            file.scene_hash != info.scene_hash || file.time != info.time)) {
        problem = path + ": its header (rank " + std::to_string(file.rank) + " of " +
                  std::to_string(file.ranks) + ", step " + std::to_string(file.step) +
                  ") does not match the manifest";
    }
    return problem;
}

// Key path of member `key` under `path`, as scene messages write it.
std::string member_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

SceneDifference
difference_under(const nlohmann::json& was, const nlohmann::json& now, const std::string& path) {
    if (was.is_object() && now.is_object()) {
        for (const auto& [key, value] : was.items()) {
            if (!now.contains(key)) {
                return {member_path(path, key), value.dump(), "absent"};
            }
            SceneDifference below = difference_under(value, now.at(key), member_path(path, key));
            if (!below.key.empty()) {
                return below;
            }
        }
        for (const auto& [key, value] : now.items()) {
            if (!was.contains(key)) {
                return {member_path(path, key), "absent", value.dump()};
            }
        }
        return {};
    }
    if (was.is_array() && now.is_array() && was.size() == now.size()) {
        for (std::size_t i = 0; i < was.size(); ++i) {
            SceneDifference below = difference_under(was[i], now[i], path + "[" + std::to_string(i) + "]");
            if (!below.key.empty()) {
                return below;
            }
        }
        return {};
    }
    if (was == now) {
        return {};
    }
    return {path.empty() ? std::string("(the whole scene)") : path, was.dump(), now.dump()};
}

} // namespace

std::string checkpoint_folder(std::int64_t step) {
    std::ostringstream name;
    name << "checkpoints/step_" << std::setw(9) << std::setfill('0') << step;
    return name.str();
}

std::string describe_missing_checkpoint(const std::string& output_dir) {
    std::error_code ec;
    if (!fs::is_directory(output_dir, ec)) {
        return "the folder " + output_dir +
               " does not exist; fix: give the output folder of the run to continue (its --output, or its "
               "scene's output.dir)";
    }
    const auto found = list_checkpoints(output_dir);
    if (found.empty()) {
        return (fs::path(output_dir) / "checkpoints").string() +
               " holds no checkpoint: the run wrote none; fix: start the run anew without --restart, with "
               "output.checkpoint_every or output.checkpoint_seconds so that it writes some (a stop by "
               "SIGUSR1 or SIGTERM writes one too)";
    }
    if (std::none_of(found.begin(), found.end(), [](const auto& f) { return f.second; })) {
        return "the checkpoint " + checkpoint_folder(found.front().first) +
               " is incomplete (no manifest.json: the job ended while writing it) and no earlier one is "
               "complete; fix: start the run anew without --restart";
    }
    return {};
}

nlohmann::json recorded_command(MPI_Comm comm, const std::string& output_dir) {
    int rank = 0;
    INTACT_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    nlohmann::json command;
    if (rank == 0) {
        for (const auto& [step, complete] : list_checkpoints(output_dir)) {
            std::string text;
            CheckpointInfo info;
            if (complete &&
                read_file(fs::path(output_dir) / checkpoint_folder(step) / "manifest.json", text).empty() &&
                info_of(text, info).empty()) {
                command = info.command;
                break;
            }
        }
    }
    return nlohmann::json::parse(broadcast_text(comm, command.dump()));
}

nlohmann::json compared_scene(const nlohmann::json& resolved) {
    nlohmann::json scene = resolved;
    for (const char* key : {"output", "partition", "parallel"}) {
        scene.erase(key);
    }
    if (scene.contains("time") && scene["time"].is_object()) {
        scene["time"].erase("end");
        scene["time"].erase("steps");
    }
    return scene;
}

SceneDifference first_difference(const nlohmann::json& was, const nlohmann::json& now) {
    return difference_under(was, now, "");
}

std::uint64_t mesh_fingerprint(MPI_Comm comm, const std::vector<GlobalId>& owned_ids, const NodeField& rest) {
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), rest);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < owned_ids.size(); ++i) {
        std::uint64_t hash = fnv1a(reinterpret_cast<const char*>(&owned_ids[i]), sizeof(GlobalId));
        for (int c = 0; c < 3; ++c) {
            const double value = x(i, c);
            hash = fnv1a(reinterpret_cast<const char*>(&value), sizeof(double), hash);
        }
        sum += hash; // wraps: the sum does not depend on the order, hence not on the partition
    }
    std::uint64_t total = 0;
    INTACT_CHECK_MPI(MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, comm));
    const std::int64_t nodes = comm::allreduce_sum(comm, static_cast<std::int64_t>(owned_ids.size()));
    return total ^ (static_cast<std::uint64_t>(nodes) * 1099511628211ull);
}

// ---- CheckpointWriter ----------------------------------------------------------------------------------

CheckpointWriter::CheckpointWriter(std::vector<GlobalId> owned_ids) : m_num_owned(owned_ids.size()) {
    put(k_node_ids, to_bytes(owned_ids));
}

void CheckpointWriter::put(const std::string& name, std::string bytes) {
    INTACT_REQUIRE(m_sections.count(name) == 0, "checkpoint section '" << name << "' is written twice");
    m_sections.emplace(name, std::move(bytes));
}

void CheckpointWriter::put_node_field(const std::string& name, const NodeField& field) {
    INTACT_REQUIRE(field.extent(0) >= m_num_owned, "node field '" << name << "' has " << field.extent(0)
                                                                  << " rows, fewer than the " << m_num_owned
                                                                  << " owned nodes");
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    std::vector<double> rows(3 * m_num_owned);
    for (std::size_t i = 0; i < m_num_owned; ++i) {
        for (int c = 0; c < 3; ++c) {
            rows[3 * i + static_cast<std::size_t>(c)] = host(i, c);
        }
    }
    put(node_section(name), to_bytes(rows));
}

void CheckpointWriter::put_values(const std::string& name, std::vector<double> values) {
    put(values_section(name), to_bytes(values));
}

void CheckpointWriter::put_bytes(const std::string& name, std::string bytes) {
    put(bytes_section(name), std::move(bytes));
}

std::string CheckpointWriter::encode(const CheckpointInfo& info, int rank) const {
    std::string out(k_magic, sizeof(k_magic));
    append(out, k_version);
    append(out, k_byte_order);
    append(out, static_cast<std::uint32_t>(rank));
    append(out, static_cast<std::uint32_t>(info.ranks));
    append(out, info.scene_hash);
    append(out, info.step);
    append(out, info.time);
    append(out, static_cast<std::uint32_t>(m_sections.size()));
    for (const auto& [name, bytes] : m_sections) {
        append(out, static_cast<std::uint32_t>(name.size()));
        out += name;
        append(out, static_cast<std::uint64_t>(bytes.size()));
        out += bytes;
    }
    append(out, fnv1a(out.data(), out.size()));
    return out;
}

std::string decode_checkpoint(const std::string& bytes, CheckpointFile& file) {
    if (bytes.size() < sizeof(k_magic) + sizeof(std::uint64_t) ||
        std::memcmp(bytes.data(), k_magic, sizeof(k_magic)) != 0) {
        return "not an Intact checkpoint file (no INTACTCK header)";
    }
    const std::size_t body = bytes.size() - sizeof(std::uint64_t);
    std::uint64_t stored = 0;
    std::memcpy(&stored, bytes.data() + body, sizeof(stored));
    Cursor cursor{bytes, sizeof(k_magic)};
    const auto version = cursor.read<std::uint32_t>();
    const auto order = cursor.read<std::uint32_t>();
    if (order != k_byte_order) {
        return "written on a machine with the other byte order";
    }
    if (version != k_version) {
        return "format version " + std::to_string(version) + ", this program reads version " +
               std::to_string(k_version);
    }
    if (fnv1a(bytes.data(), body) != stored) {
        return "checksum mismatch (the file is truncated or damaged)";
    }
    file.rank = static_cast<int>(cursor.read<std::uint32_t>());
    file.ranks = static_cast<int>(cursor.read<std::uint32_t>());
    file.scene_hash = cursor.read<std::uint64_t>();
    file.step = cursor.read<std::int64_t>();
    file.time = cursor.read<double>();
    const auto count = cursor.read<std::uint32_t>();
    file.sections.clear();
    for (std::uint32_t s = 0; s < count && cursor.ok; ++s) {
        const std::string name = cursor.read_bytes(cursor.read<std::uint32_t>());
        std::string data = cursor.read_bytes(cursor.read<std::uint64_t>());
        file.sections.emplace(name, std::move(data));
    }
    if (!cursor.ok || cursor.position != body) {
        return "its sections do not add up to the file's size";
    }
    return {};
}

std::string write_checkpoint(MPI_Comm comm,
                             const std::string& output_dir,
                             const CheckpointWriter& writer,
                             const CheckpointInfo& info) {
    int rank = 0;
    INTACT_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    const std::string folder = checkpoint_folder(info.step);
    const fs::path path = fs::path(output_dir) / folder;
    const std::string fix =
        "; fix: free disk space or give the run an output folder it can write (--output); "
        "the previous checkpoint stays the newest complete one";

    CheckpointInfo written = info;
    const std::string scene_text = info.scene.dump();
    written.scene_hash = fnv1a(scene_text.data(), scene_text.size());
    written.folder = folder;

    // 1. Every rank its file (a rewrite of the same step, e.g. a restart that ends where it began, replaces
    //    the files one by one; the manifest, already there, vouches for either version).
    std::error_code ec;
    fs::create_directories(path, ec);
    std::string error = ec ? path.string() + ": " + ec.message()
                           : write_file_atomically(path / rank_file_name(rank), writer.encode(written, rank));
    error = comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw InputError("cannot write checkpoint " + folder + ": " + error + fix);
    }
    // 2. Rank 0 the manifest, once every file is on disk; then the old checkpoints go.
    if (rank == 0) {
        error = write_file_atomically(path / "manifest.json", manifest_of(written).dump(1) + "\n");
        if (error.empty()) {
            prune_checkpoints(output_dir, info.step);
        }
    }
    error = comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw InputError("cannot write checkpoint " + folder + ": " + error + fix);
    }
    return folder;
}

// ---- CheckpointReader ----------------------------------------------------------------------------------

CheckpointReader::CheckpointReader(MPI_Comm comm,
                                   const std::string& output_dir,
                                   std::vector<GlobalId> owned_ids,
                                   comm::HaloExchange& halo)
    : m_comm(comm), m_output_dir(output_dir), m_owned_ids(std::move(owned_ids)), m_halo(halo) {
    INTACT_CHECK_MPI(MPI_Comm_rank(comm, &m_rank));
    INTACT_CHECK_MPI(MPI_Comm_size(comm, &m_size));

    // 1. Rank 0 lists the complete checkpoints, newest first, with their manifests; every rank gets them.
    nlohmann::json candidates = nlohmann::json::array();
    if (m_rank == 0) {
        for (const auto& [step, complete] : list_checkpoints(output_dir)) {
            std::string text;
            if (complete &&
                read_file(fs::path(output_dir) / checkpoint_folder(step) / "manifest.json", text).empty()) {
                candidates.push_back({{"folder", checkpoint_folder(step)}, {"manifest", text}});
            }
        }
    }
    candidates = nlohmann::json::parse(broadcast_text(comm, candidates.dump()));

    // 2. The newest one whose files all read back whole: old rank j's file is read by rank j mod size
    //    (and rank 0's also by ranks that hold no file, for the replicated values).
    std::string tried;
    for (const auto& candidate : candidates) {
        CheckpointInfo info;
        info.folder = candidate.at("folder").get<std::string>();
        std::string problem = info_of(candidate.at("manifest").get<std::string>(), info);
        m_info = info;
        m_files.clear();
        std::vector<int> mine;
        for (int j = m_rank; problem.empty() && j < info.ranks; j += m_size) {
            mine.push_back(j);
        }
        if (problem.empty() && mine.empty()) {
            mine.push_back(0);
        }
        for (const int j : mine) {
            if (!problem.empty()) {
                break;
            }
            problem = load_rank_file(file_path(j), j, info, m_files[j]);
        }
        problem = comm::agree_on_error(comm, problem);
        if (problem.empty()) {
            const auto own = m_files.find(m_rank);
            const bool same = info.ranks == m_size && own != m_files.end() &&
                              own->second.sections.count(k_node_ids) != 0 &&
                              from_bytes<GlobalId>(own->second.sections.at(k_node_ids)) == m_owned_ids;
            m_same_partition = comm::allreduce_min(comm, std::int64_t{same ? 1 : 0}) == 1;
            log::info() << "restart from " << (fs::path(output_dir) / info.folder).string() << ": step "
                        << info.step << ", t " << info.time << " s, written by " << info.ranks << " rank(s)"
                        << (m_same_partition ? " (same partition)" : " (nodes redistributed by global id)");
            return;
        }
        log::warn() << "checkpoint " << info.folder << " is not usable (" << problem
                    << "); trying an older one";
        tried += "\n  " + info.folder + ": " + problem;
    }
    if (tried.empty()) {
        throw InputError("--restart " + output_dir +
                         ": no usable checkpoint: " + describe_missing_checkpoint(output_dir));
    }
    throw InputError("--restart " + output_dir + ": no usable checkpoint in " +
                     (fs::path(output_dir) / "checkpoints").string() + ":" + tried +
                     "\nfix: start the run anew without --restart (every complete checkpoint is damaged)");
}

std::string CheckpointReader::file_path(int rank) const {
    return (fs::path(m_output_dir) / m_info.folder / rank_file_name(rank)).string();
}

const CheckpointFile& CheckpointReader::any_file() const {
    return m_files.begin()->second;
}

bool CheckpointReader::has(const std::string& name) const {
    const auto& sections = any_file().sections;
    return sections.count(node_section(name)) + sections.count(values_section(name)) +
               sections.count(bytes_section(name)) >
           0;
}

std::vector<double> CheckpointReader::values(const std::string& name) const {
    const auto& sections = any_file().sections;
    const auto it = sections.find(values_section(name));
    INTACT_REQUIRE(it != sections.end(),
                   "the checkpoint " << m_info.folder << " has no values '" << name << "'");
    return from_bytes<double>(it->second);
}

std::vector<std::string> CheckpointReader::bytes_of_every_rank(const std::string& name) const {
    std::vector<std::string> out;
    for (int j = 0; j < m_info.ranks; ++j) {
        CheckpointFile read;
        const CheckpointFile* file = nullptr;
        if (const auto it = m_files.find(j); it != m_files.end()) {
            file = &it->second;
        } else {
            const std::string problem = load_rank_file(file_path(j), j, m_info, read);
            INTACT_REQUIRE(problem.empty(), "reading a checkpoint file another rank checked: " << problem);
            file = &read;
        }
        const auto section = file->sections.find(bytes_section(name));
        INTACT_REQUIRE(section != file->sections.end(),
                       "the checkpoint " << m_info.folder << " has no bytes '" << name << "' of rank " << j);
        out.push_back(section->second);
    }
    return out;
}

void CheckpointReader::node_field(const std::string& name, const NodeField& field) const {
    const std::size_t owned = m_owned_ids.size();
    auto host = Kokkos::create_mirror_view(field);
    Kokkos::deep_copy(host, field);
    auto rows_of = [&](const CheckpointFile& file, std::vector<GlobalId>& ids) {
        const auto it = file.sections.find(node_section(name));
        INTACT_REQUIRE(it != file.sections.end(),
                       "the checkpoint " << m_info.folder << " has no node field '" << name << "'");
        ids = from_bytes<GlobalId>(file.sections.at(k_node_ids));
        std::vector<double> rows = from_bytes<double>(it->second);
        INTACT_REQUIRE(rows.size() == 3 * ids.size(),
                       "node field '" << name << "' of " << m_info.folder << " has " << rows.size()
                                      << " values for " << ids.size() << " nodes");
        return rows;
    };

    if (m_same_partition) {
        // Rank r wrote its own nodes in the order they have now.
        std::vector<GlobalId> ids;
        const std::vector<double> rows = rows_of(m_files.at(m_rank), ids);
        for (std::size_t i = 0; i < owned; ++i) {
            for (int c = 0; c < 3; ++c) {
                host(i, c) = rows[3 * i + static_cast<std::size_t>(c)];
            }
        }
    } else {
        // A directory rank (global id mod size) meets the saved rows and the requests for them.
        const auto directory = [this](GlobalId g) { return static_cast<std::size_t>(g % m_size); };
        std::vector<std::vector<GlobalId>> saved_ids(static_cast<std::size_t>(m_size));
        std::vector<std::vector<double>> saved_rows(static_cast<std::size_t>(m_size));
        for (const auto& [j, file] : m_files) {
            if (j % m_size != m_rank) {
                continue; // rank 0's file held only for its replicated values
            }
            std::vector<GlobalId> ids;
            const std::vector<double> rows = rows_of(file, ids);
            for (std::size_t i = 0; i < ids.size(); ++i) {
                saved_ids[directory(ids[i])].push_back(ids[i]);
                saved_rows[directory(ids[i])].insert(saved_rows[directory(ids[i])].end(),
                                                     rows.begin() + 3 * static_cast<long>(i),
                                                     rows.begin() + 3 * static_cast<long>(i) + 3);
            }
        }
        std::vector<std::vector<GlobalId>> requests(static_cast<std::size_t>(m_size));
        for (const GlobalId g : m_owned_ids) {
            requests[directory(g)].push_back(g);
        }
        const auto ids_here = exchange(m_comm, saved_ids, MPI_INT64_T);
        const auto rows_here = exchange(m_comm, saved_rows, MPI_DOUBLE);
        const auto asked = exchange(m_comm, requests, MPI_INT64_T);
        std::unordered_map<GlobalId, std::array<double, 3>> table;
        for (std::size_t r = 0; r < ids_here.size(); ++r) {
            for (std::size_t i = 0; i < ids_here[r].size(); ++i) {
                table[ids_here[r][i]] = {rows_here[r][3 * i], rows_here[r][3 * i + 1],
                                         rows_here[r][3 * i + 2]};
            }
        }
        std::vector<std::vector<double>> answers(static_cast<std::size_t>(m_size));
        std::string missing;
        for (std::size_t r = 0; r < asked.size(); ++r) {
            for (const GlobalId g : asked[r]) {
                const auto it = table.find(g);
                if (it == table.end() && missing.empty()) {
                    missing = "node " + std::to_string(g);
                }
                const std::array<double, 3> row = it == table.end() ? std::array<double, 3>{} : it->second;
                answers[r].insert(answers[r].end(), row.begin(), row.end());
            }
        }
        missing = comm::agree_on_error(m_comm, missing);
        if (!missing.empty()) {
            throw InputError("--restart: the checkpoint " + m_info.folder + " has no '" + name +
                             "' row for " + missing +
                             " (the mesh differs from the checkpointed run's); fix: restart with the "
                             "scene and meshes of that run");
        }
        const auto replies = exchange(m_comm, answers, MPI_DOUBLE);
        std::vector<std::size_t> next(static_cast<std::size_t>(m_size), 0);
        for (std::size_t i = 0; i < owned; ++i) {
            const std::size_t r = directory(m_owned_ids[i]);
            for (int c = 0; c < 3; ++c) {
                host(i, c) = replies[r][next[r]++];
            }
        }
    }
    Kokkos::deep_copy(field, host);
    m_halo.gather(field);
}

} // namespace intact::io
