// Device contact assembly (barrier_pairs, friction_pairs, contact_matrix) against the host
// BarrierPotential / FrictionPotential: energies, gradient rows, diagonal blocks and the products of the
// other blocks with a random vector, within 1e-12 relative (4e-12 on CUDA: see k_match), on random,
// degenerate (parallel edges, points near triangle edges and vertices, point–plane) and distributed
// configurations; bit-identical repeated assembly; finite differences of the device gradients against the
// device energies; the case-reduced PSD projection against project_psd<12>, and what the projection costs.
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/pair_projection.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/contact/barrier_pairs.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/contact_matrix.hpp"
#include "src/contact/friction_pairs.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "src/solver/block_matrix.hpp"
#include "tests/contact/host_barrier_potential.hpp"
#include "tests/contact/host_friction_potential.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>

namespace {

using namespace intact;
using contact::BarrierPotential;
using nlohmann::json;

// ---- Scenes ---------------------------------------------------------------------------------------------

// A box of half-extents `half` around `center`, rotated about its center by `rotate_deg`.
json block(const Vec3& center, const Vec3& half, std::array<int, 3> cells, const Vec3& rotate_deg = {}) {
    json body;
    body["mesh"]["box"] = {{"min", {-half[0], -half[1], -half[2]}}, {"max", half}, {"cells", cells}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["rotate_deg"] = rotate_deg;
    body["translate"] = center;
    return body;
}

json scene(std::vector<json> bodies, double dhat, bool plane) {
    json s;
    s["time"] = {{"dt", 0.01}, {"steps", 1}};
    s["bodies"] = bodies;
    s["contact"] = {{"enabled", true}, {"dhat", dhat}};
    if (plane) {
        s["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    }
    return s;
}

// A scene distributed over `comm` with its contact surface, host barrier and device topology.
struct Setup {
    io::Scene scene;
    LocalMesh local;
    std::unique_ptr<contact::ContactSurface> surface;
    std::unique_ptr<BarrierPotential> barrier;
    contact::SurfaceTopology topology;
    double dhat = 0.0;
    MPI_Comm comm = MPI_COMM_SELF;
};

// The SurfaceTopology of a host ContactSurface (what ContactSurface::topology() will provide).
contact::SurfaceTopology make_topology(const contact::ContactSurface& surface) {
    contact::SurfaceTopology t;
    const int n = surface.num_vertices();
    t.num_body_vertices = surface.num_body_vertices();
    t.triangles = decltype(t.triangles)("triangles", surface.triangles().size());
    t.edges = decltype(t.edges)("edges", surface.edges().size());
    t.gid = decltype(t.gid)("gid", n);
    t.constrained = decltype(t.constrained)("constrained", n);
    t.owned = decltype(t.owned)("owned", n);
    t.local_of_surface = decltype(t.local_of_surface)("local_of_surface", n);
    t.rest = decltype(t.rest)("rest", n);
    t.plane_normal = decltype(t.plane_normal)("plane_normal", surface.planes().size());
    t.plane_row = decltype(t.plane_row)("plane_row", surface.planes().size());
    t.friction = decltype(t.friction)("friction", n);
    Kokkos::deep_copy(t.friction, -1.0); // no obstacle μ of its own: contact.friction everywhere
    auto triangles = Kokkos::create_mirror_view(t.triangles);
    auto edges = Kokkos::create_mirror_view(t.edges);
    auto gid = Kokkos::create_mirror_view(t.gid);
    auto constrained = Kokkos::create_mirror_view(t.constrained);
    auto owned = Kokkos::create_mirror_view(t.owned);
    auto local = Kokkos::create_mirror_view(t.local_of_surface);
    auto rest = Kokkos::create_mirror_view(t.rest);
    auto normal = Kokkos::create_mirror_view(t.plane_normal);
    auto plane_row = Kokkos::create_mirror_view(t.plane_row);
    for (std::size_t k = 0; k < surface.triangles().size(); ++k) {
        for (std::size_t c = 0; c < 3; ++c) {
            triangles(k, c) = surface.triangles()[k][c];
        }
    }
    for (std::size_t k = 0; k < surface.edges().size(); ++k) {
        edges(k, 0) = surface.edges()[k][0];
        edges(k, 1) = surface.edges()[k][1];
    }
    for (int s = 0; s < n; ++s) {
        const auto i = static_cast<std::size_t>(s);
        gid(s) = surface.vertex_gid()[i];
        constrained(s) = surface.vertex_constrained()[i];
        owned(s) = surface.owns(s) ? 1 : 0;
        local(s) = surface.local_of_surface(s);
        for (std::size_t c = 0; c < 3; ++c) {
            rest(s, c) = surface.rest_positions()[i][c];
        }
    }
    for (std::size_t k = 0; k < surface.planes().size(); ++k) {
        plane_row(k) = surface.planes()[k].row;
        for (std::size_t c = 0; c < 3; ++c) {
            normal(k, c) = surface.planes()[k].normal[c];
        }
    }
    Kokkos::deep_copy(t.triangles, triangles);
    Kokkos::deep_copy(t.edges, edges);
    Kokkos::deep_copy(t.gid, gid);
    Kokkos::deep_copy(t.constrained, constrained);
    Kokkos::deep_copy(t.owned, owned);
    Kokkos::deep_copy(t.local_of_surface, local);
    Kokkos::deep_copy(t.rest, rest);
    Kokkos::deep_copy(t.plane_normal, normal);
    Kokkos::deep_copy(t.plane_row, plane_row);
    return t;
}

std::unique_ptr<Setup> make_setup(MPI_Comm comm, const json& document, double dhat) {
    auto setup = std::make_unique<Setup>();
    setup->comm = comm;
    setup->dhat = dhat;
    setup->scene = io::parse_scene(document, "assembly.json");
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    SceneMesh scene_mesh;
    std::vector<int> parts;
    if (rank == 0) {
        scene_mesh = build_scene_mesh(setup->scene);
        parts = partition::partition_graph(partition::build_element_dual_graph(scene_mesh.mesh.tets), size);
    }
    setup->local = distribute_mesh(comm, scene_mesh, parts);
    setup->surface =
        std::make_unique<contact::ContactSurface>(comm, scene_mesh, setup->scene.obstacles, setup->local);
    setup->barrier = std::make_unique<BarrierPotential>(comm, *setup->surface, dhat);
    setup->topology = make_topology(*setup->surface);
    return setup;
}

// Local node positions on the device: rest positions moved by `move(global id, rest)`.
template <class Move> NodeField local_positions(const LocalMesh& local, Move&& move) {
    NodeField x("x", local.num_local_nodes());
    auto host = Kokkos::create_mirror_view(x);
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        const auto p = move(local.node_global_id[static_cast<std::size_t>(i)],
                            local.rest_position[static_cast<std::size_t>(i)]);
        for (std::size_t c = 0; c < 3; ++c) {
            host(i, c) = p[c];
        }
    }
    Kokkos::deep_copy(x, host);
    return x;
}

// ---- Host ↔ device -------------------------------------------------------------------------------------

contact::SurfaceField upload(const std::vector<Vec3>& rows) {
    contact::SurfaceField field("xs", rows.size());
    auto host = Kokkos::create_mirror_view(field);
    for (std::size_t s = 0; s < rows.size(); ++s) {
        for (std::size_t c = 0; c < 3; ++c) {
            host(s, c) = rows[s][c];
        }
    }
    Kokkos::deep_copy(field, host);
    return field;
}

contact::PairList upload(const std::vector<BarrierPotential::Pair>& pairs) {
    contact::PairList list;
    list.kind = Kokkos::View<int*, MemSpace>("kind", pairs.size());
    list.rows = Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>("rows", pairs.size());
    auto kind = Kokkos::create_mirror_view(list.kind);
    auto rows = Kokkos::create_mirror_view(list.rows);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        kind(i) = static_cast<int>(pairs[i].kind);
        for (std::size_t k = 0; k < 4; ++k) {
            rows(i, k) = pairs[i].v[k];
        }
    }
    Kokkos::deep_copy(list.kind, kind);
    Kokkos::deep_copy(list.rows, rows);
    list.count = static_cast<int>(pairs.size());
    return list;
}

std::vector<double> download(const NodeField& field) {
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    return std::vector<double>(host.data(), host.data() + host.size());
}

// ---- Comparison ----------------------------------------------------------------------------------------

// max_i |a_i − b_i| / max_i |b_i| over the owned rows' entries (0 when both vanish).
double relative_error(const std::vector<double>& a, const std::vector<double>& b, std::size_t n) {
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, std::abs(a[i] - b[i]));
        scale = std::max(scale, std::abs(b[i]));
    }
    return scale > 0.0 ? diff / scale : diff;
}

// Host contact system in the form NewtonSolver uses it: gradient rows, diagonal block per row, and the
// product of the other blocks with `p` (surface rows).
struct HostSystem {
    std::vector<double> gradient, diagonal, product;
};

HostSystem host_system(const Setup& setup,
                       const std::vector<double>& gradient,
                       const std::vector<contact::ContactBlock>& blocks,
                       const std::vector<Vec3>& p) {
    const int n = setup.local.num_local_nodes();
    HostSystem system{gradient, std::vector<double>(9 * static_cast<std::size_t>(n), 0.0),
                      std::vector<double>(3 * static_cast<std::size_t>(n), 0.0)};
    for (const auto& block : blocks) {
        const auto row = static_cast<std::size_t>(block.row);
        if (setup.surface->local_of_surface(block.col) == block.row) {
            for (std::size_t k = 0; k < 9; ++k) {
                system.diagonal[9 * row + k] += (&block.value[0][0])[k];
            }
            continue;
        }
        const Vec3& v = p[static_cast<std::size_t>(block.col)];
        for (std::size_t r = 0; r < 3; ++r) {
            system.product[3 * row + r] +=
                block.value[r][0] * v[0] + block.value[r][1] * v[1] + block.value[r][2] * v[2];
        }
    }
    return system;
}

// The same from the device: ContactMatrix over `lists`, with a zero element matrix.
struct DeviceSystem {
    std::vector<double> gradient, diagonal, product;
    std::vector<int> cols;
    std::vector<double> values;
};

DeviceSystem device_system(const Setup& setup,
                           const std::vector<const contact::PairStencils*>& lists,
                           const std::vector<Vec3>& p) {
    const int n = setup.local.num_local_nodes();
    const int owned = setup.local.num_owned_nodes;
    solver::BlockMatrix matrix(owned, n, setup.local.tets);
    NodeField gradient("gradient", n), y("y", n);
    Kokkos::View<double*, MemSpace> mask("mask", n);
    Kokkos::deep_copy(mask, 1.0);
    contact::ContactMatrix contact(owned);
    contact.assemble(lists, setup.topology, gradient, &matrix);
    contact.apply(upload(p), y, mask);
    DeviceSystem system{
        download(gradient), std::vector<double>(9 * static_cast<std::size_t>(n), 0.0), download(y), {}, {}};
    const auto values = Kokkos::create_mirror_view_and_copy(HostSpace(), matrix.values());
    const auto diagonal = Kokkos::create_mirror_view_and_copy(HostSpace(), matrix.diagonal());
    for (int r = 0; r < owned; ++r) {
        for (int k = 0; k < 9; ++k) {
            system.diagonal[static_cast<std::size_t>(9 * r + k)] = values.data()[9 * diagonal(r) + k];
        }
    }
    const auto cols = Kokkos::create_mirror_view_and_copy(HostSpace(), contact.block_cols());
    const auto blocks = Kokkos::create_mirror_view_and_copy(HostSpace(), contact.block_values());
    system.cols.assign(cols.data(), cols.data() + contact.num_blocks());
    system.values.assign(blocks.data(), blocks.data() + 9 * contact.num_blocks());
    return system;
}

std::vector<Vec3> random_rows(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Vec3> rows(n);
    for (auto& r : rows) {
        r = {u(rng), u(rng), u(rng)};
    }
    return rows;
}

void expect_same_system(const Setup& setup,
                        const HostSystem& host,
                        const DeviceSystem& device,
                        double tolerance) {
    const auto owned = static_cast<std::size_t>(setup.local.num_owned_nodes);
    EXPECT_LE(relative_error(device.gradient, host.gradient, 3 * owned), tolerance) << "gradient rows";
    EXPECT_LE(relative_error(device.diagonal, host.diagonal, 9 * owned), tolerance) << "diagonal blocks";
    EXPECT_LE(relative_error(device.product, host.product, 3 * owned), tolerance) << "block products";
}

struct Counts {
    int pairs = 0;
    double barrier_error = 0.0;
};

// Device barrier (energy, gradient rows, diagonal blocks, block products) against the host at xs.
// Returns the number of active pairs on this rank.
int compare_barrier(const Setup& setup, const std::vector<Vec3>& xs, double kappa, double tolerance) {
    const double s_hat = setup.dhat * setup.dhat;
    const auto pairs = setup.barrier->active_pairs(xs);
    const auto active = upload(pairs);
    const auto xs_device = upload(xs);

    const double host_energy = setup.barrier->local_energy(xs);
    const double device_energy = contact::barrier_local_energy(active, xs_device, setup.topology, s_hat);
    EXPECT_NEAR(device_energy, host_energy, tolerance * std::abs(host_energy));

    std::vector<double> gradient(3 * static_cast<std::size_t>(setup.local.num_local_nodes()), 0.0);
    std::vector<contact::ContactBlock> blocks;
    setup.barrier->derivatives(xs, kappa, gradient, &blocks);
    std::mt19937 rng(7);
    const auto p = random_rows(xs.size(), rng);
    contact::PairStencils stencils;
    contact::barrier_derivatives(active, xs_device, setup.topology, s_hat, kappa, true, stencils);
    expect_same_system(setup, host_system(setup, gradient, blocks, p), device_system(setup, {&stencils}, p),
                       tolerance);

    // The active filter on the device keeps the same pairs.
    contact::PairList selected;
    contact::select_active(active, xs_device, setup.topology, s_hat, selected);
    EXPECT_EQ(selected.count, active.count);
    return active.count;
}

// Device friction (lagged at xs_lag, slips from xs_start, evaluated at xs) plus barrier against the host.
void compare_friction(const Setup& setup,
                      const std::vector<Vec3>& xs_start,
                      const std::vector<Vec3>& xs_lag,
                      const std::vector<Vec3>& xs,
                      double kappa,
                      double tolerance) {
    const double s_hat = setup.dhat * setup.dhat;
    const double h = 0.01;
    contact::FrictionPotential host(setup.comm, *setup.surface, *setup.barrier, 0.4, 1e-3);
    host.lag(xs_start, xs_lag, kappa, h);
    contact::FrictionPairs device(0.4, 1e-3);
    const auto active = upload(setup.barrier->active_pairs(xs_lag));
    device.lag(active, upload(xs_start), upload(xs_lag), setup.topology, s_hat, kappa, h);
    ASSERT_EQ(device.num_pairs(), static_cast<int>(host.num_pairs()));

    const auto xs_device = upload(xs);
    const double host_energy = host.local_energy(xs);
    EXPECT_NEAR(device.local_energy(xs_device), host_energy, tolerance * std::abs(host_energy));

    // Barrier and friction together, as the Newton solver assembles them.
    std::vector<double> gradient(3 * static_cast<std::size_t>(setup.local.num_local_nodes()), 0.0);
    std::vector<contact::ContactBlock> blocks;
    setup.barrier->derivatives(xs, kappa, gradient, &blocks);
    host.derivatives(xs, gradient, blocks);
    contact::PairStencils barrier, friction;
    const auto active_now = upload(setup.barrier->active_pairs(xs));
    contact::barrier_derivatives(active_now, xs_device, setup.topology, s_hat, kappa, true, barrier);
    device.derivatives(xs_device, friction);
    std::mt19937 rng(11);
    const auto p = random_rows(xs.size(), rng);
    expect_same_system(setup, host_system(setup, gradient, blocks, p),
                       device_system(setup, {&barrier, &friction}, p), tolerance);
}

// Surface rows of a one-rank setup at its rest positions with the plane rows from the obstacles.
std::vector<Vec3> rest_rows(const Setup& setup) {
    std::vector<Vec3> xs = setup.surface->rest_positions();
    const auto obstacles = setup.surface->obstacle_positions(0.0);
    std::copy(obstacles.begin(), obstacles.end(), xs.begin() + setup.surface->num_body_vertices());
    return xs;
}

// A one-rank setup of two one-cell unit cubes, [0, 1]² × [0.1, 1.1] and [0, 1]² × [1.5, 2.5] (the second
// rotated about its center), over the plane z = 0, with a ghost plan (everything is known).
std::unique_ptr<Setup> two_blocks(double dhat, const Vec3& rotate = {}) {
    auto setup = make_setup(MPI_COMM_SELF,
                            scene({block({0.5, 0.5, 0.6}, {0.5, 0.5, 0.5}, {1, 1, 1}),
                                   block({0.5, 0.5, 2.0}, {0.5, 0.5, 0.5}, {1, 1, 1}, rotate)},
                                  dhat, true),
                            dhat);
    const NodeField x = local_positions(setup->local, [](GlobalId, const Vec3& p) { return p; });
    setup->surface->update_ghosts(x, nullptr, dhat);
    return setup;
}

// Two 3×3×3 blocks of side 0.3 facing each other 0.2 to 0.6 d̂ apart (the second rotated by 1.5° about
// z), the first 0.5 d̂ above the plane z = 0.
json two_meshed_blocks(double dhat) {
    const Vec3 half{0.15, 0.15, 0.15};
    return scene({block({0.15, 0.15, 0.15 + 0.5 * dhat}, half, {3, 3, 3}),
                  block({0.45 + 0.4 * dhat, 0.2, 0.21}, half, {3, 3, 3}, {0, 0, 1.5})},
                 dhat, true);
}

// The device kernels and the host path evaluate the same formulas in different orders; nvcc also fuses
// a·b + c into one FMA (one rounding where the host rounds twice), which the 12×12 PSD projection
// amplifies: 1.22e-12 on an H200 for the diagonal blocks and block products of the random configurations,
// 1e-12 or better on the CPU backends.
#ifdef KOKKOS_ENABLE_CUDA
constexpr double k_match = 4e-12;
#else
constexpr double k_match = 1e-12;
#endif

// ---- Tests ---------------------------------------------------------------------------------------------

TEST(ContactAssembly, RandomConfigurationsMatchTheHostPath) {
    // Two blocks' 16 surface vertices scattered in a cube of side 2 d̂ above the plane: many pair kinds and
    // closest-feature cases, pairs of one block with itself included.
    const double dhat = 0.2;
    auto setup = two_blocks(dhat);
    std::mt19937 rng(2024);
    std::uniform_real_distribution<double> u(0.0, 2.0 * dhat);
    int pairs = 0;
    for (int trial = 0; trial < 20; ++trial) {
        auto xs = rest_rows(*setup);
        for (int s = 0; s < setup->surface->num_body_vertices(); ++s) {
            xs[static_cast<std::size_t>(s)] = {u(rng), u(rng), 0.02 * dhat + u(rng)};
        }
        pairs += compare_barrier(*setup, xs, 3.7e4, k_match);
        auto xs_start = xs;
        for (auto& r : xs_start) {
            r[0] -= 1e-3 * dhat * (u(rng) - dhat);
            r[1] -= 1e-3 * dhat * (u(rng) - dhat);
        }
        auto xs_eval = xs;
        for (std::size_t s = 0; s < static_cast<std::size_t>(setup->surface->num_body_vertices()); ++s) {
            xs_eval[s][0] += 1e-4 * (u(rng) - dhat);
            xs_eval[s][1] += 1e-4 * (u(rng) - dhat);
        }
        compare_friction(*setup, xs_start, xs, xs_eval, 3.7e4, k_match);
    }
    EXPECT_GT(pairs, 200);
}

TEST(ContactAssembly, DegenerateConfigurationsMatchTheHostPath) {
    const double dhat = 0.05;
    // Parallel edges: the upper block rotated by 0.01° about z, 0.3 d̂ above the lower one, so its bottom
    // edges are almost parallel to the lower block's top edges and the mollifier is active.
    {
        auto setup = two_blocks(dhat, {0.0, 0.0, 0.01});
        auto xs = rest_rows(*setup);
        const int half = setup->surface->num_body_vertices() / 2;
        for (int s = half; s < setup->surface->num_body_vertices(); ++s) {
            xs[static_cast<std::size_t>(s)][2] -= 0.4 - 0.3 * dhat;
        }
        EXPECT_GT(compare_barrier(*setup, xs, 1e3, k_match), 0);
        compare_friction(*setup, xs, xs, xs, 1e3, k_match);
    }
    // A vertex of the upper block near an edge, then near a vertex, of the lower block's top face (a point
    // just outside the face: point–edge and point–point cases), the lower block 0.5 d̂ above the plane.
    for (const Vec3 target : {Vec3{0.5, -0.2 * dhat, 1.1}, Vec3{-0.1 * dhat, -0.1 * dhat, 1.1}}) {
        auto setup = two_blocks(dhat);
        auto xs = rest_rows(*setup);
        const int half = setup->surface->num_body_vertices() / 2;
        for (int s = 0; s < half; ++s) {
            xs[static_cast<std::size_t>(s)][2] -= 0.1 - 0.5 * dhat;
        }
        // The upper block moves so that its corner of smallest x + y + z is 0.3 d̂ above the target, a
        // point just outside the lower block's top face (which is at 1.1 − 0.1 + 0.5 d̂).
        std::size_t v = static_cast<std::size_t>(half);
        for (int s = half; s < setup->surface->num_body_vertices(); ++s) {
            const auto& r = xs[static_cast<std::size_t>(s)];
            if (r[0] + r[1] + r[2] < xs[v][0] + xs[v][1] + xs[v][2]) {
                v = static_cast<std::size_t>(s);
            }
        }
        const Vec3 shift{target[0] - xs[v][0], target[1] - xs[v][1],
                         target[2] - 0.1 + 0.5 * dhat + 0.3 * dhat - xs[v][2]};
        for (int s = half; s < setup->surface->num_body_vertices(); ++s) {
            for (std::size_t c = 0; c < 3; ++c) {
                xs[static_cast<std::size_t>(s)][c] += shift[c];
            }
        }
        EXPECT_GT(compare_barrier(*setup, xs, 1e3, k_match), 0);
        compare_friction(*setup, xs, xs, xs, 1e3, k_match);
    }
}

TEST(ContactAssembly, DistributedSceneMatchesTheHostPathOnEveryRank) {
    // Two 3×3×3 blocks 0.2 to 0.6 d̂ apart (the second rotated by 1.5° about z) over a plane 0.5 d̂ below
    // the first,
    // distributed over every rank: pairs across partitions are evaluated on each rank holding a row.
    const double dhat = 0.02;
    auto setup = make_setup(MPI_COMM_WORLD, two_meshed_blocks(dhat), dhat);
    const NodeField x = local_positions(setup->local, [](GlobalId, const Vec3& p) { return p; });
    setup->surface->update_ghosts(x, nullptr, dhat);
    std::vector<Vec3> xs;
    setup->surface->gather(x, setup->surface->obstacle_positions(0.0), xs);
    const int pairs = compare_barrier(*setup, xs, 2e4, k_match);
    compare_friction(*setup, xs, xs, xs, 2e4, k_match);
    // Cross-partition pairs: active pairs with rows owned here and on another rank.
    const auto active = setup->barrier->active_pairs(xs);
    long long local_counts[3] = {static_cast<long long>(pairs), 0, 0};
    for (const auto& pair : active) {
        const int n = pair.kind == BarrierPotential::Kind::point_plane ? 1 : 4;
        bool mine = true;
        for (int k = 0; k < n; ++k) {
            const int s = pair.v[static_cast<std::size_t>(k)];
            mine = mine && (setup->surface->owns(s) || setup->surface->is_obstacle(s));
        }
        local_counts[1] += mine ? 0 : 1;
        local_counts[2] += setup->barrier->owns(pair) ? 1 : 0;
    }
    long long counts[3];
    MPI_Allreduce(local_counts, counts, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (test::world_rank() == 0) {
        std::printf(
            "distributed scene on %d ranks: %lld distinct active pairs, %lld pair evaluations, %lld of "
            "them of pairs across partitions\n",
            test::world_size(), counts[2], counts[0], counts[1]);
    }
    EXPECT_GT(counts[2], 50);
    // Every pair is counted once over the ranks: the global energy matches the host's.
    const double s_hat = dhat * dhat;
    const double device_energy =
        contact::barrier_local_energy(upload(active), upload(xs), setup->topology, s_hat);
    double global = 0.0;
    MPI_Allreduce(&device_energy, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double host = setup->barrier->energy(xs);
    EXPECT_NEAR(global, host, 1e-12 * host);
}

TEST(ContactAssembly, RepeatedAssemblyIsBitIdentical) {
    const double dhat = 0.2;
    auto setup = two_blocks(dhat);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0.0, 2.0 * dhat);
    auto xs = rest_rows(*setup);
    for (int s = 0; s < setup->surface->num_body_vertices(); ++s) {
        xs[static_cast<std::size_t>(s)] = {u(rng), u(rng), 0.02 * dhat + u(rng)};
    }
    const auto active = upload(setup->barrier->active_pairs(xs));
    const auto xs_device = upload(xs);
    contact::FrictionPairs friction(0.3, 1e-3);
    friction.lag(active, xs_device, xs_device, setup->topology, dhat * dhat, 1e4, 0.01);
    contact::PairStencils barrier_stencils, friction_stencils;
    contact::barrier_derivatives(active, xs_device, setup->topology, dhat * dhat, 1e4, true,
                                 barrier_stencils);
    friction.derivatives(xs_device, friction_stencils);
    const auto p = random_rows(xs.size(), rng);
    const auto first = device_system(*setup, {&barrier_stencils, &friction_stencils}, p);
    std::uint64_t checksum = 0;
    for (int repeat = 0; repeat < 5; ++repeat) {
        const auto again = device_system(*setup, {&barrier_stencils, &friction_stencils}, p);
        ASSERT_EQ(again.cols, first.cols);
        EXPECT_EQ(std::memcmp(again.values.data(), first.values.data(), first.values.size() * sizeof(double)),
                  0);
        EXPECT_EQ(
            std::memcmp(again.gradient.data(), first.gradient.data(), first.gradient.size() * sizeof(double)),
            0);
        EXPECT_EQ(
            std::memcmp(again.product.data(), first.product.data(), first.product.size() * sizeof(double)),
            0);
    }
    // A fingerprint of the bits, to compare runs with different OMP_NUM_THREADS by eye.
    for (const auto* v : {&first.values, &first.gradient, &first.product}) {
        for (const double d : *v) {
            std::uint64_t bits;
            std::memcpy(&bits, &d, sizeof bits);
            checksum = checksum * 1099511628211ull ^ bits;
        }
    }
    if (test::world_rank() == 0) {
        std::printf("assembly fingerprint %016llx (%zu blocks, %d threads)\n",
                    static_cast<unsigned long long>(checksum), first.cols.size(), ExecSpace::concurrency());
    }
}

// Central differences of `energy` (a function of the surface rows) along one coordinate.
template <class Energy>
double central_difference(std::vector<Vec3> xs, int row, int c, double step, Energy&& energy) {
    xs[static_cast<std::size_t>(row)][static_cast<std::size_t>(c)] += step;
    const double plus = energy(xs);
    xs[static_cast<std::size_t>(row)][static_cast<std::size_t>(c)] -= 2.0 * step;
    return (plus - energy(xs)) / (2.0 * step);
}

TEST(ContactAssembly, DeviceGradientsMatchFiniteDifferencesOfDeviceEnergies) {
    const double dhat = 0.2;
    auto setup = two_blocks(dhat);
    const double s_hat = dhat * dhat;
    std::mt19937 rng(99);
    std::uniform_real_distribution<double> u(0.0, 2.0 * dhat);
    auto xs = rest_rows(*setup);
    for (int s = 0; s < setup->surface->num_body_vertices(); ++s) {
        xs[static_cast<std::size_t>(s)] = {u(rng), u(rng), 0.1 * dhat + u(rng)};
    }
    const auto pairs = setup->barrier->active_pairs(xs);
    ASSERT_GT(pairs.size(), 10u);
    int checked[3] = {0, 0, 0};
    for (std::size_t k = 0; k < pairs.size(); k += pairs.size() / 10) {
        // One pair alone, away from the barrier's singularity and from case switches.
        const auto one = upload(std::vector<BarrierPotential::Pair>{pairs[k]});
        contact::PairStencils stencils;
        contact::barrier_derivatives(one, upload(xs), setup->topology, s_hat, 1.0, false, stencils);
        const auto gradient = Kokkos::create_mirror_view_and_copy(HostSpace(), stencils.gradient);
        const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), stencils.rows);
        const auto count = Kokkos::create_mirror_view_and_copy(HostSpace(), stencils.count);
        const auto energy = [&](const std::vector<Vec3>& at) {
            return contact::barrier_local_energy(one, upload(at), setup->topology, s_hat);
        };
        // Friction of the same pair, lagged at xs with slips from a shifted start.
        auto start = xs;
        for (auto& r : start) {
            r[0] -= 2e-3;
            r[1] += 1e-3;
        }
        contact::FrictionPairs friction(0.5, 1e-2);
        friction.lag(one, upload(start), upload(xs), setup->topology, s_hat, 1.0, 0.1);
        contact::PairStencils friction_stencils;
        friction.derivatives(upload(xs), friction_stencils);
        const auto friction_gradient =
            Kokkos::create_mirror_view_and_copy(HostSpace(), friction_stencils.gradient);
        const auto friction_energy = [&](const std::vector<Vec3>& at) {
            return friction.local_energy(upload(at));
        };
        for (int a = 0; a < count(0); ++a) {
            if (rows(0, a) >= setup->surface->num_body_vertices()) {
                continue; // the plane's row moves the plane, which keeps its normal: tested through the point
            }
            for (int c = 0; c < 3; ++c) {
                const double fd = central_difference(xs, rows(0, a), c, 1e-7, energy);
                EXPECT_NEAR(gradient(0, 3 * a + c), fd, 1e-5 * (std::abs(fd) + 1e-3))
                    << "barrier pair " << k << " kind " << static_cast<int>(pairs[k].kind);
                const double fd_friction = central_difference(xs, rows(0, a), c, 1e-7, friction_energy);
                EXPECT_NEAR(friction_gradient(0, 3 * a + c), fd_friction,
                            1e-5 * (std::abs(fd_friction) + 1e-6))
                    << "friction pair " << k;
            }
        }
        ++checked[static_cast<int>(pairs[k].kind)];
    }
    EXPECT_GT(checked[0] + checked[1] + checked[2], 5);
}

// ---- Projection ----------------------------------------------------------------------------------------

// Random active pairs of random configurations of the two-block setup, as one PairList with positions.
struct PairSample {
    std::unique_ptr<Setup> setup;
    contact::PairList pairs;
    contact::SurfaceField xs;
};

PairSample random_pairs(int configurations, unsigned seed) {
    PairSample sample;
    const double dhat = 0.2;
    sample.setup = two_blocks(dhat);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 2.0 * dhat);
    // Each configuration gets its own copy of the rows, so one list holds the pairs of all of them.
    const auto base = rest_rows(*sample.setup);
    const int n = static_cast<int>(base.size());
    std::vector<BarrierPotential::Pair> all;
    std::vector<Vec3> rows;
    for (int k = 0; k < configurations; ++k) {
        auto xs = base;
        for (int s = 0; s < sample.setup->surface->num_body_vertices(); ++s) {
            xs[static_cast<std::size_t>(s)] = {u(rng), u(rng), 0.02 * dhat + u(rng)};
        }
        for (auto pair : sample.setup->barrier->active_pairs(xs)) {
            if (pair.kind == BarrierPotential::Kind::point_plane) {
                continue;
            }
            for (auto& v : pair.v) {
                v += k * n;
            }
            all.push_back(pair);
        }
        rows.insert(rows.end(), xs.begin(), xs.end());
    }
    sample.pairs = upload(all);
    sample.xs = upload(rows);
    // The topology's per-row views must cover the copies: repeat the rows' data.
    auto& t = sample.setup->topology;
    const auto repeat = [&](auto view) {
        auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), view);
        decltype(view) grown(view.label(), static_cast<std::size_t>(n * configurations));
        auto grown_host = Kokkos::create_mirror_view(grown);
        for (int k = 0; k < configurations; ++k) {
            for (int s = 0; s < n; ++s) {
                for (std::size_t c = 0; c < host.extent(1); ++c) {
                    grown_host.data()[(k * n + s) * host.extent(1) + c] = host.data()[s * host.extent(1) + c];
                }
            }
        }
        Kokkos::deep_copy(grown, grown_host);
        return grown;
    };
    t.gid = repeat(t.gid);
    t.owned = repeat(t.owned);
    t.rest = repeat(t.rest);
    return sample;
}

// A pseudo-random symmetric, translation-invariant 3 NV × 3 NV matrix Q M Qᵀ (M symmetric with both
// signs of eigenvalues, Q = Helmert ⊗ I₃), device-callable.
template <int NV> KOKKOS_INLINE_FUNCTION kernels::MatN<3 * NV> translation_invariant_matrix(int i) {
    constexpr int M = 3 * (NV - 1);
    kernels::MatN<M> m;
    for (int r = 0; r < M; ++r) {
        for (int c = 0; c <= r; ++c) {
            const double v = ::sin(1.3 * (i + 1) * (r + 1) + 0.7 * (c + 1) * (i + 2));
            m(r, c) = v;
            m(c, r) = v;
        }
    }
    kernels::MatN<3 * NV> H = kernels::MatN<3 * NV>::Zero();
    for (int a = 0; a < NV; ++a) {
        for (int b = 0; b < NV; ++b) {
            for (int k = 0; k < NV - 1; ++k) {
                for (int l = 0; l < NV - 1; ++l) {
                    H.template block<3, 3>(3 * a, 3 * b) += kernels::helmert(k, a) * kernels::helmert(l, b) *
                                                            m.template block<3, 3>(3 * k, 3 * l);
                }
            }
        }
    }
    return H;
}

// Largest difference (Frobenius, relative to the input's norm) between project_psd_translation_free<NV>
// and project_psd<3 NV> over `count` matrices translation_invariant_matrix<NV>.
template <int NV> double translation_free_projection_error(int count) {
    double worst = 0.0;
    Kokkos::parallel_reduce(
        "intact::test::translation_free_projection", Kokkos::RangePolicy<ExecSpace>(0, count),
        KOKKOS_LAMBDA(const int i, double& largest) {
            const kernels::MatN<3 * NV> input = translation_invariant_matrix<NV>(i);
            kernels::MatN<3 * NV> full = input;
            kernels::MatN<3 * NV> reduced = input;
            kernels::project_psd<3 * NV>(full);
            kernels::project_psd_translation_free<NV>(reduced);
            // Relative to the input: a projection that keeps nothing leaves only round-off to compare.
            const double error = (full - reduced).norm() / input.norm();
            largest = error > largest ? error : largest;
        },
        Kokkos::Max<double>(worst));
    return worst;
}

TEST(ContactAssembly, TranslationFreeProjectionMatchesProjectPsdOnRandomMatrices) {
    EXPECT_LE(translation_free_projection_error<4>(2000), 1e-12);
    EXPECT_LE(translation_free_projection_error<3>(2000), 1e-12);
}

TEST(ContactAssembly, CaseReducedProjectionMatchesProjectPsd12) {
    const auto sample = random_pairs(20, 31);
    const double s_hat = 0.04;
    contact::PairStencils reduced, full;
    contact::barrier_derivatives(sample.pairs, sample.xs, sample.setup->topology, s_hat, 1.0, true, reduced);
    contact::barrier_derivatives_full_projection(sample.pairs, sample.xs, sample.setup->topology, s_hat, 1.0,
                                                 full);
    const auto a = Kokkos::create_mirror_view_and_copy(HostSpace(), reduced.hessian);
    const auto b = Kokkos::create_mirror_view_and_copy(HostSpace(), full.hessian);
    double worst = 0.0;
    for (int i = 0; i < sample.pairs.count; ++i) {
        double diff = 0.0, norm = 0.0;
        for (int j = 0; j < 144; ++j) {
            const double x = a.data()[144 * i + j], y = b.data()[144 * i + j];
            diff += (x - y) * (x - y);
            norm += y * y;
        }
        worst = std::max(worst, norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff));
    }
    EXPECT_GT(sample.pairs.count, 5000);
    EXPECT_LE(worst, 1e-12);
}

// Time `work` (seconds per call, the minimum of `repeats` runs after one warm-up).
template <class Work> double best_time(int repeats, Work&& work) {
    work();
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        Kokkos::fence();
        Kokkos::Timer timer;
        work();
        Kokkos::fence();
        best = std::min(best, timer.seconds());
    }
    return best;
}

// Kernels timed by ProjectionCost, one matrix per work item (free functions: CUDA lambdas may not sit
// inside another lambda). project_psd<N> on pseudo-random symmetric N×N matrices (indefinite):
template <int N> void launch_project_psd(const Kokkos::View<double*, MemSpace>& out) {
    Kokkos::parallel_for(
        "intact::test::project_psd", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            kernels::MatN<N> A;
            for (int r = 0; r < N; ++r) {
                for (int c = 0; c <= r; ++c) {
                    const double v = ::sin(1.7 * (i + 1) * (r + 1) + 0.3 * c) / (1.0 + r + c);
                    A(r, c) = v;
                    A(c, r) = v;
                }
            }
            kernels::project_psd<N>(A);
            out(i) = A(0, 0);
        });
}

// the closed point–point form:
void launch_point_point_closed_form(const Kokkos::View<double*, MemSpace>& out) {
    Kokkos::parallel_for(
        "intact::test::point_point_psd", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            const kernels::Vec3 d(::sin(1.0 * i), ::cos(2.0 * i), 0.5);
            const kernels::Mat12 H = kernels::point_point_barrier_hessian_psd(d, 0, 2, -1.0, 30.0);
            out(i) = H(0, 0);
        });
}

// project_psd_translation_free<4> or project_psd<12> on translation-invariant 12×12 matrices:
void launch_translation_invariant(const Kokkos::View<double*, MemSpace>& out, bool translation_free) {
    Kokkos::parallel_for(
        "intact::test::project_translation_invariant", Kokkos::RangePolicy<ExecSpace>(0, out.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            kernels::Mat12 H = translation_invariant_matrix<4>(i);
            if (translation_free) {
                kernels::project_psd_translation_free<4>(H);
            } else {
                kernels::project_psd<12>(H);
            }
            out(i) = H(0, 0);
        });
}

TEST(ContactAssembly, ProjectionCost) {
    // Seconds per matrix of each projection, over 5000 matrices.
    const int count = 5000;
    Kokkos::View<double*, MemSpace> out("out", count);
    const double t12 = best_time(3, [&] { launch_project_psd<12>(out); }) / count;
    const double t9 = best_time(3, [&] { launch_project_psd<9>(out); }) / count;
    const double t_pp = best_time(3, [&] { launch_point_point_closed_form(out); }) / count;
    const double t_free = best_time(3, [&] { launch_translation_invariant(out, true); }) / count;
    const double t_full_invariant = best_time(3, [&] { launch_translation_invariant(out, false); }) / count;
    const auto sample = random_pairs(20, 17);
    const double s_hat = 0.04;
    contact::PairStencils stencils;
    const double with_reduced = best_time(3, [&] {
        contact::barrier_derivatives(sample.pairs, sample.xs, sample.setup->topology, s_hat, 1.0, true,
                                     stencils);
    });
    const double with_full = best_time(3, [&] {
        contact::barrier_derivatives_full_projection(sample.pairs, sample.xs, sample.setup->topology, s_hat,
                                                     1.0, stencils);
    });
    const double gradient_only = best_time(3, [&] {
        contact::barrier_derivatives(sample.pairs, sample.xs, sample.setup->topology, s_hat, 1.0, false,
                                     stencils);
    });
    // The pairs of a meshed scene (two_meshed_blocks on one rank), by closest-feature case.
    const double dhat = 0.02;
    auto scene_setup = make_setup(MPI_COMM_SELF, two_meshed_blocks(dhat), dhat);
    const NodeField x = local_positions(scene_setup->local, [](GlobalId, const Vec3& q) { return q; });
    scene_setup->surface->update_ghosts(x, nullptr, dhat);
    std::vector<Vec3> xs;
    scene_setup->surface->gather(x, scene_setup->surface->obstacle_positions(0.0), xs);
    const auto scene_pairs = scene_setup->barrier->active_pairs(xs);
    int mix[4] = {0, 0, 0, 0}; // point–point, point–edge, interior or mollified, point–plane
    for (const auto& pair : scene_pairs) {
        kernels::Vec3 q[4];
        for (std::size_t k = 0; k < 4; ++k) {
            q[k] = kernels::from_array(xs[static_cast<std::size_t>(pair.v[k])]);
        }
        int which = 3;
        if (pair.kind == BarrierPotential::Kind::point_triangle) {
            const auto c = kernels::point_triangle_case(q[0], q[1], q[2], q[3]);
            which =
                c == kernels::PointTriangleCase::interior ? 2 : (kernels::detail::is_point_point(c) ? 0 : 1);
        } else if (pair.kind == BarrierPotential::Kind::edge_edge) {
            const auto c = kernels::edge_edge_case(q[0], q[1], q[2], q[3]);
            const bool mollified =
                kernels::edge_edge_mollifier(q[0], q[1], q[2], q[3],
                                             scene_setup->barrier->mollifier_threshold(pair)) < 1.0;
            which = c == kernels::EdgeEdgeCase::interior || mollified
                        ? 2
                        : (kernels::detail::is_point_point(c) ? 0 : 1);
        }
        ++mix[which];
    }
    const auto scene_list = upload(scene_pairs);
    const auto scene_xs = upload(xs);
    const double scene_reduced = best_time(20, [&] {
        contact::barrier_derivatives(scene_list, scene_xs, scene_setup->topology, dhat * dhat, 1.0, true,
                                     stencils);
    });
    const double scene_full = best_time(20, [&] {
        contact::barrier_derivatives_full_projection(scene_list, scene_xs, scene_setup->topology, dhat * dhat,
                                                     1.0, stencils);
    });
    if (test::world_rank() == 0) {
        std::printf(
            "meshed scene: %d pairs (%d point-point, %d point-edge, %d interior or mollified, %d "
            "point-plane); Hessian pass per pair %.2f us with project_psd<12>, %.2f us case-reduced\n",
            static_cast<int>(scene_pairs.size()), mix[0], mix[1], mix[2], mix[3],
            1e6 * scene_full / static_cast<double>(scene_pairs.size()),
            1e6 * scene_reduced / static_cast<double>(scene_pairs.size()));
        std::printf(
            "PSD projection per matrix (%d threads): dense 12x12 %.2f us, dense 9x9 %.2f us, point-point "
            "closed form %.3f us; translation-invariant 12x12: project_psd<12> %.2f us, translation-free "
            "(9x9) %.2f us\n",
            ExecSpace::concurrency(), 1e6 * t12, 1e6 * t9, 1e6 * t_pp, 1e6 * t_full_invariant, 1e6 * t_free);
        const double n = sample.pairs.count;
        std::printf("barrier derivatives of %d PT/EE pairs, per pair: gradient only %.2f us, Hessian with "
                    "project_psd<12> %.2f us, with the case-reduced projection %.2f us\n",
                    sample.pairs.count, 1e6 * gradient_only / n, 1e6 * with_full / n, 1e6 * with_reduced / n);
    }
    EXPECT_GT(t12, 0.0);
}

} // namespace
