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

// The stencils of `stencils` that touch a node p owns, owned (by the owner of their smallest node) first.
template <std::size_t N>
void add_following_stencils(const std::vector<std::array<int, N>>& stencils,
                            const std::vector<int>& bodies,
                            const std::vector<int>& owners,
                            int p,
                            std::vector<std::array<int, N>>& out,
                            std::vector<int>& out_body,
                            int& num_owned) {
    std::vector<std::size_t> owned, ghosts;
    for (std::size_t k = 0; k < stencils.size(); ++k) {
        bool touches = false;
        int smallest = stencils[k][0];
        for (const int n : stencils[k]) {
            touches = touches || owners[static_cast<std::size_t>(n)] == p;
            smallest = std::min(smallest, n);
        }
        if (touches) {
            (owners[static_cast<std::size_t>(smallest)] == p ? owned : ghosts).push_back(k);
        }
    }
    num_owned = static_cast<int>(owned.size());
    for (const auto* list : {&owned, &ghosts}) {
        for (const std::size_t k : *list) {
            out.push_back(stencils[k]);
            out_body.push_back(bodies[k]);
        }
    }
}

// Rank p's codimensional elements, global node ids, owned first: the triangles and segments of its layout
// (partitioned with the tets, partition_elements) and every hinge and rod vertex that touches a node p owns,
// owned by the owner of its smallest node. Nodes of those stencils missing from the layout join its ghosts.
CodimElements
rank_codim(const SceneMesh& scene, partition::RankLayout& layout, const std::vector<int>& owners, int p) {
    CodimElements c;
    const auto num_tets = static_cast<GlobalId>(scene.mesh.tets.size());
    const auto num_triangles = static_cast<GlobalId>(scene.codim.triangles.size());
    // 1. Triangles and segments of the layout (owned elements come first in it).
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < layout.elements.size(); ++i) {
            const bool is_owned = static_cast<int>(i) < layout.num_owned_elements;
            if (is_owned != (pass == 0)) {
                continue;
            }
            const GlobalId e = layout.elements[i];
            if (e >= num_tets && e < num_tets + num_triangles) {
                const auto t = static_cast<std::size_t>(e - num_tets);
                c.triangles.push_back(scene.codim.triangles[t]);
                c.triangle_body.push_back(scene.codim.triangle_body[t]);
                c.triangle_id.push_back(e);
                c.num_owned_triangles += is_owned ? 1 : 0;
            } else if (e >= num_tets + num_triangles) {
                const auto s = static_cast<std::size_t>(e - num_tets - num_triangles);
                c.segments.push_back(scene.codim.segments[s]);
                c.segment_body.push_back(scene.codim.segment_body[s]);
                c.segment_id.push_back(e);
                c.num_owned_segments += is_owned ? 1 : 0;
            }
        }
    }
    // 2. Hinges and rod vertices follow the nodes.
    add_following_stencils(scene.codim.hinges, scene.codim.hinge_body, owners, p, c.hinges, c.hinge_body,
                           c.num_owned_hinges);
    add_following_stencils(scene.codim.rod_vertices, scene.codim.rod_vertex_body, owners, p, c.rod_vertices,
                           c.rod_vertex_body, c.num_owned_rod_vertices);
    // 3. Their nodes that no local element holds become ghosts (ghosts stay in ascending order).
    std::vector<GlobalId> ghosts(layout.nodes.begin() + layout.num_owned_nodes, layout.nodes.end());
    const std::size_t before = ghosts.size();
    const auto add_nodes = [&](const auto& list) {
        for (const auto& stencil : list) {
            for (const int n : stencil) {
                if (owners[static_cast<std::size_t>(n)] != p) {
                    ghosts.push_back(n);
                }
            }
        }
    };
    add_nodes(c.hinges);
    add_nodes(c.rod_vertices);
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    if (ghosts.size() != before) {
        layout.nodes.resize(static_cast<std::size_t>(layout.num_owned_nodes));
        layout.nodes.insert(layout.nodes.end(), ghosts.begin(), ghosts.end());
        layout.ghost_owners.clear();
        for (const GlobalId n : ghosts) {
            layout.ghost_owners.push_back(owners[static_cast<std::size_t>(n)]);
        }
    }
    return c;
}

Message
pack_rank(const SceneMesh& scene, partition::RankLayout layout, const std::vector<int>& owners, int p) {
    const CodimElements c = rank_codim(scene, layout, owners, p);
    const auto& mesh = scene.mesh;
    const auto num_tets = static_cast<GlobalId>(mesh.tets.size());
    // The layout's tets alone (its triangles and segments are in `codim`).
    std::vector<GlobalId> tet_ids;
    int num_owned_tets = 0;
    for (std::size_t i = 0; i < layout.elements.size(); ++i) {
        if (layout.elements[i] < num_tets) {
            tet_ids.push_back(layout.elements[i]);
            num_owned_tets += static_cast<int>(i) < layout.num_owned_elements ? 1 : 0;
        }
    }
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
    message.put_value(num_owned_tets);
    message.put(tet_ids);
    std::vector<std::array<GlobalId, 4>> tets;
    std::vector<int> body;
    for (const GlobalId e : tet_ids) {
        const auto& t = mesh.tets[static_cast<std::size_t>(e)];
        tets.push_back({t[0], t[1], t[2], t[3]});
        body.push_back(scene.tet_body[static_cast<std::size_t>(e)]);
    }
    message.put(tets);
    message.put(body);
    message.put(c.triangles);
    message.put(c.triangle_body);
    message.put(c.triangle_id);
    message.put(c.segment_id);
    message.put_value(c.num_owned_triangles);
    message.put(c.hinges);
    message.put(c.hinge_body);
    message.put_value(c.num_owned_hinges);
    message.put(c.segments);
    message.put(c.segment_body);
    message.put_value(c.num_owned_segments);
    message.put(c.rod_vertices);
    message.put(c.rod_vertex_body);
    message.put_value(c.num_owned_rod_vertices);
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
    // Codimensional elements: global node ids to local ones.
    const auto to_local = [&](auto stencils) {
        for (auto& stencil : stencils) {
            for (int& n : stencil) {
                const auto it = local_index.find(n);
                INTACT_REQUIRE(it != local_index.end(), "codimensional element node " << n << " not local");
                n = it->second;
            }
        }
        return stencils;
    };
    CodimElements& c = local.codim;
    c.triangles = to_local(message.get<std::array<int, 3>>());
    c.triangle_body = message.get<int>();
    c.triangle_id = message.get<long long>();
    c.segment_id = message.get<long long>();
    c.num_owned_triangles = message.get_value<int>();
    c.hinges = to_local(message.get<std::array<int, 4>>());
    c.hinge_body = message.get<int>();
    c.num_owned_hinges = message.get_value<int>();
    c.segments = to_local(message.get<std::array<int, 2>>());
    c.segment_body = message.get<int>();
    c.num_owned_segments = message.get_value<int>();
    c.rod_vertices = to_local(message.get<std::array<int, 3>>());
    c.rod_vertex_body = message.get<int>();
    c.num_owned_rod_vertices = message.get_value<int>();
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
        const auto elements = partition_elements(scene_mesh); // tets, shell triangles, rod segments
        const auto owners = partition::node_owners(elements, parts, static_cast<int>(mesh.nodes.size()));
        const auto layouts = partition::build_rank_layouts(elements, parts, owners, size);
        Message own;
        for (int r = 0; r < size; ++r) {
            Message message = pack_rank(scene_mesh, layouts[static_cast<std::size_t>(r)], owners, r);
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
