#include "src/mesh/distribute.hpp"

#include "partition/ownership.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace intact {

namespace {

// A byte buffer of length-prefixed arrays of trivially copyable values.
class Message {
public:
    template <class T> void put(const std::vector<T>& values) {
        const std::uint64_t count = values.size();
        append(&count, sizeof(count));
        append(values.data(), values.size() * sizeof(T));
    }
    template <class T> void put_value(const T& value) { append(&value, sizeof(T)); }

    template <class T> std::vector<T> get() {
        std::uint64_t count = 0;
        take(&count, sizeof(count));
        std::vector<T> values(count);
        take(values.data(), count * sizeof(T));
        return values;
    }
    template <class T> T get_value() {
        T value{};
        take(&value, sizeof(T));
        return value;
    }

    std::vector<char> bytes;

private:
    void append(const void* data, std::size_t size) {
        const auto* p = static_cast<const char*>(data);
        bytes.insert(bytes.end(), p, p + size);
    }
    void take(void* data, std::size_t size) {
        INTACT_REQUIRE(m_read + size <= bytes.size(), "mesh message truncated");
        std::memcpy(data, bytes.data() + m_read, size);
        m_read += size;
    }
    std::size_t m_read = 0;
};

constexpr int mesh_tag = 7201;
constexpr long long chunk_bytes = 1LL << 30; // per MPI message: counts are ints

Message pack_rank(const SceneMesh& scene, const partition::RankLayout& layout) {
    const auto& mesh = scene.mesh;
    Message message;
    message.put_value(static_cast<long long>(mesh.nodes.size()));
    message.put_value(static_cast<long long>(mesh.tets.size()));
    message.put_value(layout.num_owned_nodes);
    message.put(layout.nodes);
    message.put(layout.ghost_owners);
    std::vector<Vec3> position, velocity;
    std::vector<NodeConstraint> constraint;
    std::vector<int> motion, node_body;
    for (const GlobalId n : layout.nodes) {
        const auto i = static_cast<std::size_t>(n);
        position.push_back(mesh.nodes[i]);
        velocity.push_back(scene.velocity[i]);
        constraint.push_back(scene.constraint[i]);
        motion.push_back(scene.motion[i]);
        node_body.push_back(scene.node_body[i]);
    }
    message.put(position);
    message.put(velocity);
    message.put(constraint);
    message.put(motion);
    message.put(node_body);
    message.put_value(layout.num_owned_elements);
    message.put(layout.elements);
    std::vector<std::array<GlobalId, 4>> tets;
    std::vector<int> body;
    for (const GlobalId e : layout.elements) {
        const auto& t = mesh.tets[static_cast<std::size_t>(e)];
        tets.push_back({t[0], t[1], t[2], t[3]});
        body.push_back(scene.tet_body[static_cast<std::size_t>(e)]);
    }
    message.put(tets);
    message.put(body);
    return message;
}

LocalMesh unpack(Message& message) {
    LocalMesh local;
    local.global_num_nodes = message.get_value<long long>();
    local.global_num_elements = message.get_value<long long>();
    local.num_owned_nodes = message.get_value<int>();
    local.node_global_id = message.get<GlobalId>();
    local.ghost_owner = message.get<int>();
    local.rest_position = message.get<Vec3>();
    local.velocity = message.get<Vec3>();
    local.constraint = message.get<NodeConstraint>();
    local.motion = message.get<int>();
    local.node_body = message.get<int>();
    local.num_owned_elements = message.get_value<int>();
    local.element_global_id = message.get<GlobalId>();
    const auto global_tets = message.get<std::array<GlobalId, 4>>();
    local.element_body = message.get<int>();

    std::unordered_map<GlobalId, int> local_index;
    local_index.reserve(local.node_global_id.size());
    for (std::size_t i = 0; i < local.node_global_id.size(); ++i) {
        local_index.emplace(local.node_global_id[i], static_cast<int>(i));
    }
    local.tets.reserve(global_tets.size());
    for (const auto& t : global_tets) {
        std::array<int, 4> lt{};
        for (int k = 0; k < 4; ++k) {
            const auto it = local_index.find(t[static_cast<std::size_t>(k)]);
            INTACT_REQUIRE(it != local_index.end(),
                           "element node " << t[static_cast<std::size_t>(k)] << " not local");
            lt[static_cast<std::size_t>(k)] = it->second;
        }
        local.tets.push_back(lt);
    }
    return local;
}

} // namespace

LocalMesh distribute_mesh(MPI_Comm comm, const SceneMesh& scene_mesh, const std::vector<int>& parts) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    if (rank == 0) {
        const auto& mesh = scene_mesh.mesh;
        const auto owners = partition::node_owners(mesh.tets, parts, static_cast<int>(mesh.nodes.size()));
        const auto layouts = partition::build_rank_layouts(mesh.tets, parts, owners, size);
        Message own;
        for (int r = 0; r < size; ++r) {
            Message message = pack_rank(scene_mesh, layouts[static_cast<std::size_t>(r)]);
            if (r == 0) {
                own = std::move(message);
                continue;
            }
            const auto bytes = static_cast<long long>(message.bytes.size());
            INTACT_CHECK_MPI(MPI_Send(&bytes, 1, MPI_LONG_LONG, r, mesh_tag, comm));
            for (long long sent = 0; sent < bytes; sent += chunk_bytes) { // MPI counts are ints
                const int count = static_cast<int>(std::min(chunk_bytes, bytes - sent));
                INTACT_CHECK_MPI(MPI_Send(message.bytes.data() + sent, count, MPI_BYTE, r, mesh_tag, comm));
            }
        }
        return unpack(own);
    }
    long long bytes = 0;
    INTACT_CHECK_MPI(MPI_Recv(&bytes, 1, MPI_LONG_LONG, 0, mesh_tag, comm, MPI_STATUS_IGNORE));
    Message message;
    message.bytes.resize(static_cast<std::size_t>(bytes));
    for (long long received = 0; received < bytes; received += chunk_bytes) {
        const int count = static_cast<int>(std::min(chunk_bytes, bytes - received));
        INTACT_CHECK_MPI(
            MPI_Recv(message.bytes.data() + received, count, MPI_BYTE, 0, mesh_tag, comm, MPI_STATUS_IGNORE));
    }
    return unpack(message);
}

} // namespace intact
