// The pair set B of a step: its start (κ, then the pairs near the inertial path), its growth by swept
// pairs, the layout it needs, its device copy and per-vertex adjacency, and friction lagged on it.

#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "kernels/ccd_additive.hpp"
#include "src/core/error.hpp"
#include "src/solver/ipc_solver.hpp"
#include "src/solver/stencil_descent/stencil_terms.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace intact::solver {

using namespace stencil_detail;

double StencilDescent::kappa() const {
    // IPC's adaptive κ comes out of sums over ranks, whose round-off depends on the partition; a local
    // Newton-CG step reacts to round-off in its input discontinuously (its early exit, the Armijo test), so
    // κ is rounded to 20 significant bits: the same on every rank count unless the exact value lies within
    // round-off of a rounding boundary (about 1e-10 of the time).
    int exponent = 0;
    const double mantissa = std::frexp(m_kappa->value(), &exponent);
    return std::ldexp(std::round(std::ldexp(mantissa, 20)), exponent - 20);
}

StencilDescent::PairKey StencilDescent::pair_key(int kind, const int (&rows)[4]) const {
    // Global ids in place of surface rows (which are numbered by owner rank): B's order, and so the order
    // of every per-vertex sum over pairs, is the same on every rank count. A point–plane pair's second
    // entry is its plane's index and its last unused.
    const auto& gid = m_contact->surface().vertex_gid();
    const bool plane = kind == contact::k_point_plane;
    return {kind, gid[static_cast<std::size_t>(rows[0])],
            plane ? rows[1] : gid[static_cast<std::size_t>(rows[1])], gid[static_cast<std::size_t>(rows[2])],
            plane ? 0 : gid[static_cast<std::size_t>(rows[3])]};
}

bool StencilDescent::add_pairs(const contact::PairList& found) {
    // B only grows within a step (spec §5.1). A swept candidate joins B when it comes within d̂ somewhere
    // on the contact model's segment positions() → positions() + step() (proximity and CCD hits: additive
    // CCD with minimum separation d̂), with ŝ_i = max(ŝ, s_i) at the segment's start (the last certified
    // state) and κ_i = κ d̂ / d̂_i. Broad-phase candidates that stay farther apart are left out: their
    // customized barrier would act from wherever they are. Every rank finds the pairs touching its owned
    // rows; all of them are gathered, so every rank holds the same B (identical entries: each is computed
    // from the same positions wherever it is found).
    grow(m_found_distance, std::max(1, found.count), "intact::solver::stencil_found_distance");
    const Kokkos::View<double*, MemSpace> distance = m_found_distance;
    {
        const auto kind = found.kind;
        const auto rows = found.rows;
        const auto xs = m_contact->positions();
        const auto ps = m_contact->step();
        const auto topology = m_contact->topology();
        const double dhat = m_contact->dhat();
        Kokkos::parallel_for(
            "intact::solver::stencil_found_distance", Kokkos::RangePolicy<ExecSpace>(0, found.count),
            KOKKOS_LAMBDA(const int k) {
                const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
                const double s = contact::pair_squared_distance(kind(k), r, xs, topology);
                KVec3 start[4], step[4];
                contact::pair_positions(kind(k), r, xs, start);
                contact::pair_positions(kind(k), r, ps, step);
                // s is the squared gap of the offset surfaces; the CCD measures the primitives themselves.
                const double offset = contact::pair_offset(kind(k), r, topology);
                bool near = s < dhat * dhat;
                if (!near && kind(k) == contact::k_point_plane) {
                    const KVec3 n = contact::pair_plane_normal(kind(k), r, topology);
                    near = n.dot(start[0] + step[0] - start[1] - step[1]) - offset < dhat;
                } else if (!near) {
                    double toi = 1.0;
                    const double separation = dhat + offset;
                    near = kind(k) == contact::k_point_triangle
                               ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3],
                                                             start[0] + step[0], start[1] + step[1],
                                                             start[2] + step[2], start[3] + step[3],
                                                             separation, 1.0, toi)
                               : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3],
                                                        start[0] + step[0], start[1] + step[1],
                                                        start[2] + step[2], start[3] + step[3], separation,
                                                        1.0, toi);
                }
                distance(k) = near ? s : -1.0;
            });
    }
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), found.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), found.rows);
    const auto s = Kokkos::create_mirror_view_and_copy(HostSpace(), distance);
    std::vector<int> keys;
    std::vector<double> squared;
    for (int k = 0; k < found.count; ++k) {
        const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
        if (s(k) >= 0.0 && m_pair_set.count(pair_key(kind(k), r)) == 0) {
            const int key[5] = {kind(k), r[0], r[1], r[2], r[3]};
            keys.insert(keys.end(), key, key + 5);
            squared.push_back(s(k));
        }
    }
    int size = 1;
    MPI_Comm_size(m_parts.comm, &size);
    if (size > 1) {
        const int mine = static_cast<int>(squared.size());
        std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size), 0);
        INTACT_CHECK_MPI(MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, m_parts.comm));
        int total = 0;
        for (int r = 0; r < size; ++r) {
            displs[static_cast<std::size_t>(r)] = total;
            total += counts[static_cast<std::size_t>(r)];
        }
        std::vector<double> all_squared(static_cast<std::size_t>(total));
        INTACT_CHECK_MPI(MPI_Allgatherv(squared.data(), mine, MPI_DOUBLE, all_squared.data(), counts.data(),
                                        displs.data(), MPI_DOUBLE, m_parts.comm));
        for (int r = 0; r < size; ++r) {
            counts[static_cast<std::size_t>(r)] *= 5;
            displs[static_cast<std::size_t>(r)] *= 5;
        }
        std::vector<int> all_keys(static_cast<std::size_t>(5 * total));
        INTACT_CHECK_MPI(MPI_Allgatherv(keys.data(), 5 * mine, MPI_INT, all_keys.data(), counts.data(),
                                        displs.data(), MPI_INT, m_parts.comm));
        keys.swap(all_keys);
        squared.swap(all_squared);
    }
    const double s_hat = m_contact->s_hat();
    bool grew = false;
    for (std::size_t k = 0; k < squared.size(); ++k) {
        const int rows_k[4] = {keys[5 * k + 1], keys[5 * k + 2], keys[5 * k + 3], keys[5 * k + 4]};
        const PairKey key = pair_key(keys[5 * k], rows_k);
        if (m_pair_set.count(key) == 0) {
            const double s_i = std::max(s_hat, squared[k]);
            m_pair_set[key] = {s_i,
                               kappa() * std::sqrt(s_hat / s_i),
                               -1,
                               keys[5 * k],
                               {rows_k[0], rows_k[1], rows_k[2], rows_k[3]}};
            grew = true;
        }
    }
    return grew;
}

void StencilDescent::refresh_pairs(bool step_start) {
    int size = 1;
    MPI_Comm_size(m_parts.comm, &size);
    if (size > 1) {
        // What the layout must hold beyond the LocalMesh: the rows of every pair of B (their positions), and
        // with its element ring each row of a pair that touches an owned node (so that the pair's stencil,
        // with its line-search energy, is complete here).
        const auto& surface = m_contact->surface();
        std::map<GlobalId, RemoteNode> rings, points;
        for (const auto& entry : m_pair_set) {
            const PairValues& pair = entry.second;
            const int rows[4] = {pair.rows[0], pair.rows[1], pair.rows[2], pair.rows[3]};
            int stencil[4];
            const int count = contact::pair_stencil_rows(pair.kind, rows, stencil);
            bool touches_owned = false;
            for (int j = 0; j < count; ++j) {
                touches_owned =
                    touches_owned ||
                    (stencil[j] >= 0 && stencil[j] < surface.num_body_vertices() && surface.owns(stencil[j]));
            }
            for (int j = 0; j < count; ++j) {
                const int r = stencil[j];
                if (r < 0 || r >= surface.num_body_vertices()) {
                    continue;
                }
                const int n = m_row_node[static_cast<std::size_t>(r)];
                if (n >= 0 && n < m_data.num_local) {
                    continue; // a LocalMesh node: its ring is here already
                }
                const GlobalId gid = surface.vertex_gid()[static_cast<std::size_t>(r)];
                (touches_owned ? rings : points)[gid] = RemoteNode{
                    gid, surface.owner_of(r), surface.rest_positions()[static_cast<std::size_t>(r)]};
            }
        }
        // Missing: a ring vertex that is no stencil vertex here, or a point that is no layout node.
        std::set<GlobalId> ring_ids, point_ids;
        bool missing = false;
        for (const auto& [gid, node] : rings) {
            ring_ids.insert(gid);
            missing = missing || m_rings.count(gid) == 0;
        }
        for (const auto& [gid, node] : points) {
            if (rings.count(gid) == 0) {
                point_ids.insert(gid);
                missing = missing || m_layout_gids.count(gid) == 0;
            }
        }
        const bool stale = step_start && (ring_ids != m_rings || point_ids != m_points);
        if (comm::allreduce_max(m_parts.comm, std::int64_t{missing || stale ? 1 : 0}) > 0) {
            std::vector<RemoteNode> ring_list, point_list;
            for (GlobalId gid : ring_ids) {
                ring_list.push_back(rings.at(gid));
            }
            for (GlobalId gid : point_ids) {
                point_list.push_back(points.at(gid));
            }
            rebuild_layout(ring_list, point_list);
            m_rings = std::move(ring_ids);
            m_points = std::move(point_ids);
        }
    }
    upload_pairs();
}

void StencilDescent::upload_pairs() {
    StencilData& d = m_data;
    d.num_pairs = static_cast<int>(m_pair_set.size());
    grow(d.pairs.kind, d.num_pairs, "intact::solver::stencil_pair_kind");
    grow(d.pairs.rows, d.num_pairs, "intact::solver::stencil_pair_rows");
    grow(d.pair_s_hat, d.num_pairs, "intact::solver::stencil_pair_s_hat");
    grow(d.pair_kappa, d.num_pairs, "intact::solver::stencil_pair_kappa");
    grow(d.pair_friction, d.num_pairs, "intact::solver::stencil_pair_friction");
    grow(d.pair_counted, d.num_pairs, "intact::solver::stencil_pair_counted");
    d.pairs.count = d.num_pairs;
    auto host_kind = Kokkos::create_mirror_view(d.pairs.kind);
    auto host_rows = Kokkos::create_mirror_view(d.pairs.rows);
    auto host_s_hat = Kokkos::create_mirror_view(d.pair_s_hat);
    auto host_kappa = Kokkos::create_mirror_view(d.pair_kappa);
    auto host_friction = Kokkos::create_mirror_view(d.pair_friction);
    auto host_counted = Kokkos::create_mirror_view(d.pair_counted);
    const auto& surface = m_contact->surface();
    const auto& gid = surface.vertex_gid();
    int p = 0;
    for (const auto& [key, values] : m_pair_set) {
        host_kind(p) = values.kind;
        for (int c = 0; c < 4; ++c) {
            host_rows(p, c) = values.rows[static_cast<std::size_t>(c)];
        }
        host_s_hat(p) = values.s_hat;
        host_kappa(p) = values.kappa;
        host_friction(p) = values.friction;
        // Counted where the pair's lowest-id mesh node is owned (that rank's layout holds all its rows).
        int stencil[4];
        contact::pair_stencil_rows(values.kind, values.rows.data(), stencil);
        int lowest = -1;
        for (const int row : stencil) {
            if (row >= 0 && !surface.is_obstacle(row) &&
                (lowest < 0 || gid[static_cast<std::size_t>(row)] < gid[static_cast<std::size_t>(lowest)])) {
                lowest = row;
            }
        }
        const int node = lowest < 0 ? -1 : m_row_node[static_cast<std::size_t>(lowest)];
        host_counted(p) = node >= 0 && node < d.num_owned ? 1 : 0;
        ++p;
    }
    Kokkos::deep_copy(d.pairs.kind, host_kind);
    Kokkos::deep_copy(d.pairs.rows, host_rows);
    Kokkos::deep_copy(d.pair_s_hat, host_s_hat);
    Kokkos::deep_copy(d.pair_kappa, host_kappa);
    Kokkos::deep_copy(d.pair_friction, host_friction);
    Kokkos::deep_copy(d.pair_counted, host_counted);
    rebuild_pair_adjacency();
}

void StencilDescent::lag_friction() {
    // Lagged friction per pair (spec §10 item 18, IPC's lagged potential): at the step's start every pair
    // of B becomes a friction pair whose normal force is its own customized barrier's, N_i = −2 κ_i w d
    // b′(d²; ŝ_i) at xᵗ (zero outside ŝ_i), with the closest-point coefficients and tangent basis there.
    // Slips count from the state before the prescribed rows arrived (m_x_start, m_obstacle_start), so a
    // moving obstacle drags what rests on it. Pairs that join B later get friction at the next lag.
    StencilData& d = m_data;
    fill_surface(on_layout(m_x_start), m_obstacle_start, m_friction_start);
    grow(m_normal_force, std::max(1, d.num_pairs), "intact::solver::stencil_normal_force");
    const StencilData data = d;
    const auto force = m_normal_force;
    Kokkos::parallel_for(
        "intact::solver::stencil_normal_forces", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const int rows[4] = {data.pairs.rows(p, 0), data.pairs.rows(p, 1), data.pairs.rows(p, 2),
                                 data.pairs.rows(p, 3)};
            const int kind = data.pairs.kind(p);
            const double s_hat = data.pair_s_hat(p);
            double distance = 0.0, weight = 1.0;
            if (kind == contact::k_point_plane) {
                distance = contact::plane_signed_distance(rows, data.xs, data.topology);
            } else {
                distance = ::sqrt(contact::pair_squared_distance(kind, rows, data.xs, data.topology));
                if (kind == contact::k_edge_edge) {
                    KVec3 x[4];
                    contact::pair_positions(kind, rows, data.xs, x);
                    weight = kernels::edge_edge_mollifier(
                        x[0], x[1], x[2], x[3], contact::pair_mollifier_threshold(kind, rows, data.topology));
                }
            }
            force(p) = -2.0 * data.pair_kappa(p) * weight * distance *
                       kernels::barrier_first_derivative(distance * distance, s_hat);
        });
    m_friction->lag(d.pairs, m_friction_start, d.xs, d.topology, m_normal_force, m_h);
    int p = 0;
    for (auto& entry : m_pair_set) {
        entry.second.friction = p++;
    }
    auto host_friction = Kokkos::create_mirror_view(d.pair_friction);
    for (int k = 0; k < d.num_pairs; ++k) {
        host_friction(k) = k;
    }
    Kokkos::deep_copy(d.pair_friction, host_friction);
    d.friction = m_friction->lagged();
}

void StencilDescent::rebuild_pair_adjacency() {
    StencilData& d = m_data;
    const auto& surface = m_contact->surface();
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), d.pairs.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), d.pairs.rows);
    grow(d.pair_nodes, d.num_pairs, "intact::solver::stencil_pair_nodes");
    auto nodes = Kokkos::create_mirror_view(d.pair_nodes);
    std::vector<std::vector<std::array<int, 2>>> around(static_cast<std::size_t>(d.num_nodes));
    for (int p = 0; p < d.num_pairs; ++p) {
        const int r[4] = {rows(p, 0), rows(p, 1), rows(p, 2), rows(p, 3)};
        int stencil[4];
        contact::pair_stencil_rows(kind(p), r, stencil);
        for (int j = 0; j < 4; ++j) {
            const int row = stencil[j];
            const int n = row >= 0 && row < surface.num_body_vertices()
                              ? m_row_node[static_cast<std::size_t>(row)]
                              : -1;
            nodes(p, j) = n >= 0 && n < d.num_nodes ? n : -1;
            if (nodes(p, j) >= 0) {
                around[static_cast<std::size_t>(nodes(p, j))].push_back({p, j});
            }
        }
    }
    Kokkos::deep_copy(Kokkos::subview(d.pair_nodes, std::make_pair(0, d.num_pairs), Kokkos::ALL),
                      Kokkos::subview(nodes, std::make_pair(0, d.num_pairs), Kokkos::ALL));
    // The edges among each pair's vertices (a triangle's, an edge's own), for its elastic blocks.
    grow(d.pair_edges, d.num_pairs, "intact::solver::stencil_pair_edges");
    auto pair_edges = Kokkos::create_mirror_view(d.pair_edges);
    for (int p = 0; p < d.num_pairs; ++p) {
        for (int a = 0; a < 4; ++a) {
            for (int b = a + 1; b < 4; ++b) {
                const int na = nodes(p, a), nb = nodes(p, b);
                int edge = -1;
                if (na >= 0 && nb >= 0 && na != nb) {
                    const auto it = m_edge_of.find(edge_key(na, nb));
                    edge = it == m_edge_of.end() ? -1 : it->second;
                }
                pair_edges(p, pair_slot(a, b)) = edge;
            }
        }
    }
    Kokkos::deep_copy(Kokkos::subview(d.pair_edges, std::make_pair(0, d.num_pairs), Kokkos::ALL),
                      Kokkos::subview(pair_edges, std::make_pair(0, d.num_pairs), Kokkos::ALL));
    auto offsets = Kokkos::create_mirror_view(d.pair_offsets);
    offsets(0) = 0;
    for (int v = 0; v < d.num_nodes; ++v) {
        offsets(v + 1) = offsets(v) + static_cast<int>(around[static_cast<std::size_t>(v)].size());
    }
    grow(d.pair_entries, std::max(1, offsets(d.num_nodes)), "intact::solver::stencil_pair_entries");
    auto entries = Kokkos::create_mirror_view(d.pair_entries);
    for (int v = 0; v < d.num_nodes; ++v) {
        int k = offsets(v);
        for (const auto& entry : around[static_cast<std::size_t>(v)]) {
            entries(k, 0) = entry[0];
            entries(k, 1) = entry[1];
            ++k;
        }
    }
    Kokkos::deep_copy(d.pair_offsets, offsets);
    Kokkos::deep_copy(d.pair_entries, entries);
    grow(d.pair_steps, d.num_pairs, "intact::solver::stencil_pair_steps");
    d.pair_derivatives.resize(d.num_pairs, true);
}

void StencilDescent::start_pairs(const NodeField& x) {
    // The pair set B of the step (spec §4 steps 2–3): κ from IPC's adaptive start at xᵗ, then every pair
    // within d̂ somewhere on the inertial path xᵗ → x̂ (proximity and CCD in one swept query).
    m_data.num_pairs = 0;
    m_data.pairs.count = 0;
    m_pair_set.clear();
    Kokkos::deep_copy(m_data.pair_offsets, 0);
    m_contact->surface().begin_step(x);
    // κ from ∇E at xᵗ (inertia, load, elasticity; no pairs yet), which the stencil data give without the
    // shared potential's element gradients and matrix pattern (96 + about 100 bytes per tetrahedron).
    elastic_derivatives(false);
    vertex_derivatives();
    start_barrier_stiffness(m_parts.comm, m_data.gradient, m_parts.potential, *m_contact, m_parts.boundary, x,
                            m_kappa_stencils, m_product, *m_kappa);
    m_kappa->reset_distance(m_contact->min_squared_distance());
    const NodeField path = m_delta;
    const NodeField x_hat = m_data.x_hat;
    Kokkos::parallel_for(
        "intact::solver::stencil_inertial_path", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                path(v, i) = x_hat(v, i) - x(v, i);
            }
        });
    m_contact->update_segment(x, m_parts.boundary.obstacle_positions(), path,
                              m_parts.boundary.obstacle_step());
    add_pairs(m_contact->swept());
    refresh_pairs(true);
}

} // namespace intact::solver
