#include "src/solver/stencil_layout.hpp"

#include "src/core/error.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace intact::solver {

namespace {

// Send blocks[r] to rank r and return what every rank sent here, concatenated in rank order.
template <class T>
std::vector<T> exchange(MPI_Comm comm, const std::vector<std::vector<T>>& blocks, MPI_Datatype type) {
    const int size = static_cast<int>(blocks.size());
    std::vector<int> send_counts(static_cast<std::size_t>(size)), recv_counts(static_cast<std::size_t>(size));
    std::vector<int> send_displs(static_cast<std::size_t>(size), 0),
        recv_displs(static_cast<std::size_t>(size), 0);
    std::vector<T> send;
    for (int r = 0; r < size; ++r) {
        send_displs[static_cast<std::size_t>(r)] = static_cast<int>(send.size());
        send_counts[static_cast<std::size_t>(r)] =
            static_cast<int>(blocks[static_cast<std::size_t>(r)].size());
        send.insert(send.end(), blocks[static_cast<std::size_t>(r)].begin(),
                    blocks[static_cast<std::size_t>(r)].end());
    }
    INTACT_CHECK_MPI(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm));
    int total = 0;
    for (int r = 0; r < size; ++r) {
        recv_displs[static_cast<std::size_t>(r)] = total;
        total += recv_counts[static_cast<std::size_t>(r)];
    }
    std::vector<T> recv(static_cast<std::size_t>(total));
    INTACT_CHECK_MPI(MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), type, recv.data(),
                                   recv_counts.data(), recv_displs.data(), type, comm));
    return recv;
}

// Per requesting rank, what a rank answers: its local elements touching the requested owned nodes (6
// integers each: gid, body, 4 node gids) and their nodes (gid, owner; rest position).
struct Answer {
    std::vector<std::vector<std::int64_t>> elements, nodes;
    std::vector<std::vector<double>> positions;
};

Answer answer_requests(MPI_Comm comm,
                       const LocalMesh& local,
                       const std::vector<std::vector<std::int64_t>>& asked_by) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const int size = static_cast<int>(asked_by.size());
    std::unordered_map<GlobalId, int> index;
    for (int n = 0; n < local.num_local_nodes(); ++n) {
        index[local.node_global_id[static_cast<std::size_t>(n)]] = n;
    }
    std::vector<std::vector<int>> elements_of(static_cast<std::size_t>(local.num_local_nodes()));
    for (int e = 0; e < local.num_local_elements(); ++e) {
        for (int n : local.tets[static_cast<std::size_t>(e)]) {
            elements_of[static_cast<std::size_t>(n)].push_back(e);
        }
    }
    Answer answer{std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(size)),
                  std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(size)),
                  std::vector<std::vector<double>>(static_cast<std::size_t>(size))};
    for (int r = 0; r < size; ++r) {
        std::vector<int> elements, nodes;
        for (std::int64_t gid : asked_by[static_cast<std::size_t>(r)]) {
            const auto it = index.find(gid);
            INTACT_REQUIRE(it != index.end() && it->second < local.num_owned_nodes,
                           "stencil layout: rank " << rank << " was asked for node " << gid
                                                   << " it does not own");
            const auto& touching = elements_of[static_cast<std::size_t>(it->second)];
            elements.insert(elements.end(), touching.begin(), touching.end());
        }
        std::sort(elements.begin(), elements.end());
        elements.erase(std::unique(elements.begin(), elements.end()), elements.end());
        for (int e : elements) {
            const auto& tet = local.tets[static_cast<std::size_t>(e)];
            auto& out = answer.elements[static_cast<std::size_t>(r)];
            out.push_back(local.element_global_id[static_cast<std::size_t>(e)]);
            out.push_back(local.element_body[static_cast<std::size_t>(e)]);
            for (int n : tet) {
                out.push_back(local.node_global_id[static_cast<std::size_t>(n)]);
                nodes.push_back(n);
            }
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        for (int n : nodes) {
            const int owner = n < local.num_owned_nodes
                                  ? rank
                                  : local.ghost_owner[static_cast<std::size_t>(n - local.num_owned_nodes)];
            answer.nodes[static_cast<std::size_t>(r)].push_back(
                local.node_global_id[static_cast<std::size_t>(n)]);
            answer.nodes[static_cast<std::size_t>(r)].push_back(owner);
            for (double c : local.rest_position[static_cast<std::size_t>(n)]) {
                answer.positions[static_cast<std::size_t>(r)].push_back(c);
            }
        }
    }
    return answer;
}

} // namespace

StencilLayout build_stencil_layout(MPI_Comm comm,
                                   const LocalMesh& local,
                                   const std::string& transport,
                                   const std::vector<RemoteNode>& rings,
                                   const std::vector<RemoteNode>& points) {
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    StencilLayout layout;
    layout.mesh = local;
    layout.num_stencils = local.num_local_elements();
    LocalMesh& mesh = layout.mesh;

    // 1. Ask each ghost node's and each ring vertex's owner for the elements around it.
    std::vector<std::vector<std::int64_t>> requests(static_cast<std::size_t>(size));
    for (int n = local.num_owned_nodes; n < local.num_local_nodes(); ++n) {
        const int owner = local.ghost_owner[static_cast<std::size_t>(n - local.num_owned_nodes)];
        requests[static_cast<std::size_t>(owner)].push_back(
            local.node_global_id[static_cast<std::size_t>(n)]);
    }
    for (const RemoteNode& node : rings) {
        requests[static_cast<std::size_t>(node.owner)].push_back(node.gid);
    }
    const std::vector<std::int64_t> asked = exchange(comm, requests, MPI_INT64_T);
    // Who asked what: the answers of exchange come back in rank order with the counts we know.
    std::vector<std::vector<std::int64_t>> asked_by(static_cast<std::size_t>(size));
    {
        std::vector<int> counts(static_cast<std::size_t>(size)), my(static_cast<std::size_t>(size));
        for (int r = 0; r < size; ++r) {
            my[static_cast<std::size_t>(r)] = static_cast<int>(requests[static_cast<std::size_t>(r)].size());
        }
        INTACT_CHECK_MPI(MPI_Alltoall(my.data(), 1, MPI_INT, counts.data(), 1, MPI_INT, comm));
        std::size_t at = 0;
        for (int r = 0; r < size; ++r) {
            const auto count = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
            asked_by[static_cast<std::size_t>(r)].assign(asked.begin() + static_cast<long>(at),
                                                         asked.begin() + static_cast<long>(at + count));
            at += count;
        }
    }

    // 2. Answer, and receive the outer ring.
    const Answer answer = answer_requests(comm, local, asked_by);
    const std::vector<std::int64_t> elements = exchange(comm, answer.elements, MPI_INT64_T);
    const std::vector<std::int64_t> nodes = exchange(comm, answer.nodes, MPI_INT64_T);
    const std::vector<double> positions = exchange(comm, answer.positions, MPI_DOUBLE);

    // 3. Append the nodes and elements not held yet, by ascending global id.
    std::unordered_map<GlobalId, int> index;
    for (int n = 0; n < local.num_local_nodes(); ++n) {
        index[local.node_global_id[static_cast<std::size_t>(n)]] = n;
    }
    std::map<GlobalId, std::pair<int, Vec3>> new_nodes;
    for (std::size_t k = 0; 2 * k < nodes.size(); ++k) {
        const GlobalId gid = nodes[2 * k];
        if (index.count(gid) == 0) {
            new_nodes[gid] = {static_cast<int>(nodes[2 * k + 1]),
                              Vec3{positions[3 * k], positions[3 * k + 1], positions[3 * k + 2]}};
        }
    }
    for (const RemoteNode& node : points) {
        if (index.count(node.gid) == 0) {
            new_nodes.emplace(node.gid, std::make_pair(node.owner, node.rest));
        }
    }
    const auto append = [&](GlobalId gid, const std::pair<int, Vec3>& info) {
        index[gid] = mesh.num_local_nodes();
        mesh.node_global_id.push_back(gid);
        mesh.ghost_owner.push_back(info.first);
        mesh.rest_position.push_back(info.second);
        mesh.velocity.push_back(Vec3{0.0, 0.0, 0.0});
        mesh.constraint.push_back(NodeConstraint{});
        mesh.motion.push_back(-1);
        mesh.node_body.push_back(-1);
    };
    // The ring vertices first (they are stencil vertices), then the rest.
    std::map<GlobalId, std::pair<int, Vec3>> ring_nodes;
    for (const RemoteNode& node : rings) {
        INTACT_REQUIRE(index.count(node.gid) == 0,
                       "stencil layout: ring vertex " << node.gid << " is a LocalMesh node of rank " << rank);
        ring_nodes.emplace(node.gid, std::make_pair(node.owner, node.rest));
    }
    for (const auto& [gid, info] : ring_nodes) {
        append(gid, info);
    }
    layout.num_vertices = mesh.num_local_nodes();
    for (const auto& [gid, info] : new_nodes) {
        if (index.count(gid) == 0) {
            append(gid, info);
        }
    }
    std::map<GlobalId, std::array<std::int64_t, 5>> new_elements;
    std::unordered_map<GlobalId, int> element_index;
    for (int e = 0; e < local.num_local_elements(); ++e) {
        element_index[local.element_global_id[static_cast<std::size_t>(e)]] = e;
    }
    for (std::size_t k = 0; 6 * k < elements.size(); ++k) {
        if (element_index.count(elements[6 * k]) == 0) {
            new_elements[elements[6 * k]] = {elements[6 * k + 1], elements[6 * k + 2], elements[6 * k + 3],
                                             elements[6 * k + 4], elements[6 * k + 5]};
        }
    }
    for (const auto& [gid, e] : new_elements) {
        mesh.element_global_id.push_back(gid);
        mesh.element_body.push_back(static_cast<int>(e[0]));
        std::array<int, 4> tet{};
        for (int a = 0; a < 4; ++a) {
            tet[static_cast<std::size_t>(a)] = index.at(e[static_cast<std::size_t>(a + 1)]);
            int& body = mesh.node_body[static_cast<std::size_t>(tet[static_cast<std::size_t>(a)])];
            body = body < 0 ? static_cast<int>(e[0]) : body;
        }
        mesh.tets.push_back(tet);
    }

    // 4. The halo over every ghost row.
    auto plan =
        std::make_shared<comm::HaloPlan>(comm, mesh.num_owned_nodes, mesh.node_global_id, mesh.ghost_owner);
    layout.halo = std::make_unique<comm::HaloExchange>(plan, comm::make_transport(comm, transport));
    return layout;
}

} // namespace intact::solver
