// Device contact path (candidate_search.hpp, ccd.hpp, the device API of contact_surface.hpp) against the
// host path it replaces (ContactSurface's host gather, BarrierPotential), on real distributed scenes at
// 1-4 ranks: two boxes near each other with random perturbations, a plane and a moving mesh obstacle;
// aligned boxes with exactly touching inflated boxes, coplanar faces, parallel edges and fully prescribed
// bodies. Checked: the device gather equals the host gather; the candidate set equals a brute-force
// reference of the host rules exactly, for proximity and swept boxes; select_active equals
// BarrierPotential::active_pairs; min_squared_distance and max_step (reduced with MIN) equal the host
// values to 1e-12; times_of_impact agrees with max_step; repeated searches give identical lists.
#include "comm/collectives.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "src/contact/candidate_search.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/contact_surface.hpp"
#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "tests/contact/host_barrier_potential.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace {

using namespace intact;
using contact::BarrierPotential;
using contact::PairList;
using contact::SurfaceField;
using nlohmann::json;
using test::world_rank;
using test::world_size;

using Key = std::array<int, 5>; // kind, rows[0..3]
using Keys = std::vector<Key>;

// ---- Scenes -----------------------------------------------------------------------------------------

json block(const Vec3& lo, const Vec3& hi, std::array<int, 3> cells) {
    json body;
    body["mesh"]["box"] = {{"min", lo}, {"max", hi}, {"cells", cells}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    return body;
}

json selector(const Vec3& lo, const Vec3& hi) {
    return json{{"box", {{"min", lo}, {"max", hi}}}};
}

json scene(std::vector<json> bodies, double dhat) {
    json s;
    s["time"] = {{"dt", 0.01}, {"steps", 1}};
    s["bodies"] = bodies;
    s["contact"] = {{"enabled", true}, {"dhat", dhat}};
    return s;
}

// An axis-aligned box as a triangle mesh (.obj), written on rank 0; returns its path.
std::string write_box_obj(const std::string& name, const Vec3& lo, const Vec3& hi) {
    const std::string path = test::output_dir("candidate_search", name, MPI_COMM_WORLD) + "/" + name + ".obj";
    if (world_rank() == 0) {
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream out(path);
        for (int k = 0; k < 8; ++k) {
            out << "v " << (k & 1 ? hi[0] : lo[0]) << " " << (k & 2 ? hi[1] : lo[1]) << " "
                << (k & 4 ? hi[2] : lo[2]) << "\n";
        }
        out << "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}

// A scene distributed over MPI_COMM_WORLD (METIS parts), with its contact surface.
struct Setup {
    io::Scene scene;
    LocalMesh local;
    std::unique_ptr<contact::ContactSurface> surface;
    double dhat = 0.0;
    MPI_Comm comm = MPI_COMM_WORLD;
};

std::unique_ptr<Setup> distribute(const json& document, double dhat, MPI_Comm comm = MPI_COMM_WORLD) {
    auto setup = std::make_unique<Setup>();
    setup->scene = io::parse_scene(document, "candidate_search.json");
    setup->dhat = dhat;
    SceneMesh global;
    std::vector<int> parts;
    int rank = 0;
    int size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0) {
        global = build_scene_mesh(setup->scene);
        parts = partition::partition_graph(partition::build_element_dual_graph(global.mesh.tets), size);
    }
    setup->local = distribute_mesh(comm, global, parts);
    setup->surface =
        std::make_unique<contact::ContactSurface>(comm, global, setup->scene.obstacles, setup->local);
    setup->comm = comm;
    return setup;
}

// A value in [−1, 1] from a global id and a salt, the same on every rank.
double noise(GlobalId id, int salt) {
    std::uint64_t z = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL +
                      static_cast<std::uint64_t>(salt) * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return 2.0 * static_cast<double>(z >> 11) / 9007199254740992.0 - 1.0;
}

// Node field: f(rest position, global id) on every local node.
template <class F> NodeField node_field(const LocalMesh& local, F&& f) {
    NodeField field("intact::test::field", static_cast<std::size_t>(local.num_local_nodes()));
    const auto host = Kokkos::create_mirror_view(field);
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        const Vec3 v = f(local.rest_position[static_cast<std::size_t>(i)],
                         local.node_global_id[static_cast<std::size_t>(i)]);
        for (int c = 0; c < 3; ++c) {
            host(i, c) = v[static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(field, host);
    return field;
}

// ---- Host views of device results -------------------------------------------------------------------

Keys keys_of(const PairList& list) {
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), list.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), list.rows);
    Keys keys(static_cast<std::size_t>(list.count));
    for (int k = 0; k < list.count; ++k) {
        keys[static_cast<std::size_t>(k)] = {kind(k), rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
    }
    return keys;
}

Keys keys_of(const std::vector<BarrierPotential::Pair>& pairs) {
    Keys keys;
    for (const auto& p : pairs) {
        keys.push_back({static_cast<int>(p.kind), p.v[0], p.v[1], p.v[2], p.v[3]});
    }
    return keys;
}

std::vector<Vec3> rows_of(const SurfaceField& field) {
    const auto host = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    std::vector<Vec3> rows(field.extent(0));
    for (std::size_t s = 0; s < rows.size(); ++s) {
        rows[s] = {host(s, 0), host(s, 1), host(s, 2)};
    }
    return rows;
}

// ---- Reference: the host rules by brute force --------------------------------------------------------

struct HostBox {
    Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
};

// As BarrierPotential's box_of: min/max over the rows (and their swept ends), then ± r.
HostBox
box_of(const std::vector<int>& ids, const std::vector<Vec3>& xs, const std::vector<Vec3>* ps, double r) {
    HostBox box;
    for (const int id : ids) {
        for (std::size_t c = 0; c < 3; ++c) {
            const double a = xs[static_cast<std::size_t>(id)][c];
            const double b = ps ? a + (*ps)[static_cast<std::size_t>(id)][c] : a;
            box.lo[c] = std::min({box.lo[c], a, b});
            box.hi[c] = std::max({box.hi[c], a, b});
        }
    }
    for (std::size_t c = 0; c < 3; ++c) {
        box.lo[c] -= r;
        box.hi[c] += r;
    }
    return box;
}

bool overlap(const HostBox& a, const HostBox& b) {
    for (std::size_t c = 0; c < 3; ++c) {
        if (!(std::max(a.lo[c], b.lo[c]) <= std::min(a.hi[c], b.hi[c]))) {
            return false;
        }
    }
    return true;
}

Keys reference_candidates(const contact::ContactSurface& surface,
                          const std::vector<Vec3>& xs,
                          const std::vector<Vec3>* ps,
                          double inflation) {
    const double r = 0.5 * inflation;
    const auto& tris = surface.triangles();
    const auto& edges = surface.edges();
    auto keep = [&](const std::vector<int>& rows) {
        bool owned = false, movable = false;
        for (std::size_t a = 0; a < rows.size(); ++a) {
            for (std::size_t b = a + 1; b < rows.size(); ++b) {
                if (rows[a] == rows[b]) {
                    return false;
                }
            }
            owned = owned || surface.owns(rows[a]);
            movable = movable || !surface.vertex_constrained()[static_cast<std::size_t>(rows[a])];
        }
        return owned && movable;
    };
    Keys keys;
    for (const int v : surface.known_vertices()) {
        const HostBox vb = box_of({v}, xs, ps, r);
        for (const int t : surface.known_triangles()) {
            const auto& tri = tris[static_cast<std::size_t>(t)];
            const std::vector<int> rows{v, tri[0], tri[1], tri[2]};
            if (keep(rows) && overlap(vb, box_of({tri[0], tri[1], tri[2]}, xs, ps, r))) {
                keys.push_back({0, v, tri[0], tri[1], tri[2]});
            }
        }
    }
    const auto& known_edges = surface.known_edges();
    for (std::size_t i = 0; i < known_edges.size(); ++i) {
        const auto& ea = edges[static_cast<std::size_t>(known_edges[i])];
        const HostBox ba = box_of({ea[0], ea[1]}, xs, ps, r);
        for (std::size_t j = i + 1; j < known_edges.size(); ++j) {
            const auto& eb = edges[static_cast<std::size_t>(known_edges[j])];
            const std::vector<int> rows{ea[0], ea[1], eb[0], eb[1]};
            if (keep(rows) && overlap(ba, box_of({eb[0], eb[1]}, xs, ps, r))) {
                keys.push_back({1, ea[0], ea[1], eb[0], eb[1]});
            }
        }
    }
    for (std::size_t k = 0; k < surface.planes().size(); ++k) {
        for (const int v : surface.owned_surface()) {
            if (!surface.vertex_constrained()[static_cast<std::size_t>(v)]) {
                keys.push_back({2, v, static_cast<int>(k), surface.planes()[k].row, 0});
            }
        }
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

// The first difference of two key lists, for a readable failure.
::testing::AssertionResult same_keys(const Keys& got, const Keys& want) {
    for (std::size_t k = 0; k < std::min(got.size(), want.size()); ++k) {
        if (got[k] != want[k]) {
            return ::testing::AssertionFailure()
                   << "entry " << k << ": got (" << got[k][0] << "; " << got[k][1] << " " << got[k][2] << " "
                   << got[k][3] << " " << got[k][4] << "), want (" << want[k][0] << "; " << want[k][1] << " "
                   << want[k][2] << " " << want[k][3] << " " << want[k][4] << ")";
        }
    }
    if (got.size() != want.size()) {
        return ::testing::AssertionFailure() << got.size() << " pairs, want " << want.size();
    }
    return ::testing::AssertionSuccess();
}

void expect_close(double got, double want, const char* what, double tolerance = 1e-12) {
    if (std::isinf(want)) {
        EXPECT_EQ(got, want) << what;
        return;
    }
    EXPECT_LE(std::abs(got - want), tolerance * std::max(std::abs(want), 1e-300))
        << what << ": " << got << " vs " << want;
}

// ---- One configuration: positions x (and a step p) of the local nodes, obstacles at time t, t + h ----

struct Counts {
    long long candidates = 0, active = 0, swept = 0;
    double alpha = 1.0;
    std::uint64_t checksum = 0; ///< of every rank's candidate and swept lists, in order
};

// FNV-1a over the keys, in order.
std::uint64_t checksum(const Keys& keys, std::uint64_t hash = 1469598103934665603ULL) {
    for (const Key& key : keys) {
        for (const int v : key) {
            hash = (hash ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(v))) * 1099511628211ULL;
        }
    }
    return hash;
}

Counts check_configuration(Setup& setup, const NodeField& x, const NodeField& p, double time, double h) {
    auto& surface = *setup.surface;
    const double dhat = setup.dhat;
    BarrierPotential barrier(setup.comm, surface, dhat);
    contact::CandidateSearch search(surface, dhat);
    Counts counts;

    // 1. Proximity plan; host and device gathers of x agree on every known row and obstacle row.
    surface.begin_step(x);
    surface.update_ghosts(x, nullptr, dhat);
    std::vector<Vec3> xs_host;
    surface.gather(x, surface.obstacle_positions(time), xs_host);
    SurfaceField xs = surface.make_field("xs");
    surface.obstacle_positions(time, xs);
    surface.gather(x, xs);
    const auto xs_device = rows_of(xs);
    std::vector<int> rows = surface.known_vertices();
    for (int s = surface.num_body_vertices(); s < surface.num_vertices(); ++s) {
        rows.push_back(s);
    }
    int wrong = 0;
    for (const int s : rows) {
        wrong += xs_device[static_cast<std::size_t>(s)] != xs_host[static_cast<std::size_t>(s)];
    }
    EXPECT_EQ(wrong, 0) << "device gather differs from the host gather";

    // 2. Candidates within d̂: exactly the host rules; the same list when searched again.
    PairList candidates, again, active;
    search.find(xs, {}, dhat, candidates);
    const Keys found = keys_of(candidates);
    EXPECT_TRUE(same_keys(found, reference_candidates(surface, xs_host, nullptr, dhat)));
    search.find(xs, {}, dhat, again);
    EXPECT_EQ(keys_of(again), found);
    counts.candidates = comm::allreduce_sum(setup.comm, static_cast<double>(candidates.count));

    // 3. Active pairs and the smallest distance, as the host barrier.
    contact::select_active(candidates, xs, surface.topology(), dhat * dhat, active);
    EXPECT_TRUE(same_keys(keys_of(active), keys_of(barrier.active_pairs(xs_host))));
    counts.active = comm::allreduce_sum(setup.comm, static_cast<double>(active.count));
    expect_close(
        comm::allreduce_min(setup.comm, contact::min_squared_distance(candidates, xs, surface.topology())),
        barrier.min_squared_distance(xs_host), "min_squared_distance");

    // 4. Swept plan for x → x + p (obstacles from t to t + h): candidates and the step bound.
    surface.update_ghosts(x, &p, dhat);
    surface.gather(x, surface.obstacle_positions(time), xs_host);
    std::vector<Vec3> obstacle_step = surface.obstacle_positions(time + h);
    const auto now = surface.obstacle_positions(time);
    for (std::size_t k = 0; k < now.size(); ++k) {
        for (std::size_t c = 0; c < 3; ++c) {
            obstacle_step[k][c] -= now[k][c];
        }
    }
    std::vector<Vec3> ps_host;
    surface.gather(p, obstacle_step, ps_host);
    surface.gather(x, xs);
    SurfaceField ps = surface.make_field("ps");
    SurfaceField later = surface.make_field("later");
    surface.obstacle_positions(time + h, later);
    surface.combine_obstacle_rows(1.0, later, -1.0, xs, ps);
    surface.gather(p, ps);
    PairList swept;
    search.find(xs, ps, dhat, swept);
    EXPECT_TRUE(same_keys(keys_of(swept), reference_candidates(surface, xs_host, &ps_host, dhat)));
    counts.swept = comm::allreduce_sum(setup.comm, static_cast<double>(swept.count));
    // Points on the segment: the swept pairs that overlap there are the pairs a search there finds, in the
    // same order (what a line search reads instead of searching again, ContactModel::gather_segment_trial).
    for (const double alpha : {0.0, 0.37, 1.0}) {
        SurfaceField trial = surface.make_field("trial");
        const auto xs_view = xs;
        const auto ps_view = ps;
        Kokkos::parallel_for(
            "intact::test::segment_point", Kokkos::RangePolicy<ExecSpace>(0, surface.num_vertices()),
            KOKKOS_LAMBDA(const int r) {
                for (int c = 0; c < 3; ++c) {
                    trial(r, c) = xs_view(r, c) + alpha * ps_view(r, c);
                }
            });
        PairList direct, filtered;
        search.find(trial, {}, dhat, direct);
        contact::select_overlapping(swept, trial, dhat, filtered);
        EXPECT_EQ(keys_of(filtered), keys_of(direct)) << "alpha " << alpha;
    }
    std::uint64_t mine = checksum(keys_of(swept), checksum(found));
    MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_UINT64_T, MPI_BXOR, setup.comm);
    counts.checksum = mine;
    const double local_alpha = contact::max_step(swept, xs, ps, surface.topology());
    counts.alpha = comm::allreduce_min(setup.comm, local_alpha);
    // The host passes its running minimum to ACCD as the end time, which scales ACCD's round-off allowance
    // (64 ulp of the coordinates along [0, t_max]) and depends on the pair order (and so on the rank
    // count); the device tests every pair on [0, 1] on its own. Both agree to that allowance relative to
    // the gaps, not to 1e-12 (ccd.hpp).
    expect_close(counts.alpha, barrier.max_step(xs_host, ps_host), "max_step", 1e-9);
    Kokkos::View<double*, MemSpace> toi("toi", static_cast<std::size_t>(swept.count));
    contact::times_of_impact(swept, xs, ps, surface.topology(), toi);
    const auto toi_host = Kokkos::create_mirror_view_and_copy(HostSpace(), toi);
    double smallest = 1.0;
    for (int k = 0; k < swept.count; ++k) {
        EXPECT_GT(toi_host(k), -1e-300);
        EXPECT_LE(toi_host(k), 1.0);
        smallest = std::min(smallest, toi_host(k));
    }
    EXPECT_EQ(smallest, local_alpha);
    return counts;
}

void report(const char* name, const Counts& counts) {
    if (world_rank() == 0) {
        std::printf(
            "%s on %d rank(s), %d thread(s): %lld candidates, %lld active, %lld swept, max_step %.17g, "
            "pair lists %016llx\n",
            name, world_size(), static_cast<int>(ExecSpace().concurrency()), counts.candidates, counts.active,
            counts.swept, counts.alpha, static_cast<unsigned long long>(counts.checksum));
    }
}

// ---- Tests ------------------------------------------------------------------------------------------

TEST(CandidateSearch, RandomNearBoxesWithPlaneAndMovingMeshObstacle) {
    const double dhat = 0.01;
    const double gap = 0.5 * dhat;
    json document = scene({block({0, 0, 0}, {0.2, 0.2, 0.2}, {4, 4, 4}),
                           block({0.2 + gap, 0.0137, 0.0213}, {0.4 + gap, 0.2137, 0.2213}, {4, 4, 4})},
                          dhat);
    document["obstacles"] = json::array(
        {{{"plane", {{"point", {0, 0, -0.6 * dhat}}, {"normal", {0, 0, 1}}}}},
         {{"mesh", {{"file", write_box_obj("lid", {0.05, 0.05, 0.2 + 0.7 * dhat}, {0.35, 0.15, 0.25})}}},
          {"velocity", {0.0, 0.3, -1.0}}}});
    auto setup = distribute(document, dhat);
    const double amplitude = 0.3 * dhat;
    const auto position = [&](const Vec3& rest, GlobalId id) {
        return Vec3{rest[0] + amplitude * noise(id, 0), rest[1] + amplitude * noise(id, 1),
                    rest[2] + amplitude * noise(id, 2)};
    };
    // Toward each other by about a gap and a half, with noise.
    const auto step = [&](const Vec3& rest, GlobalId id) {
        const double toward = rest[0] < 0.2 + 0.5 * gap ? 1.5 * gap : -1.5 * gap;
        return Vec3{toward + dhat * noise(id, 3), dhat * noise(id, 4), dhat * noise(id, 5)};
    };
    const NodeField x = node_field(setup->local, position);
    const NodeField p = node_field(setup->local, step);
    const Counts counts = check_configuration(*setup, x, p, 0.0, 0.01);
    EXPECT_GT(counts.active, 0);
    EXPECT_LT(counts.alpha, 1.0);
    report("random", counts);
    // A later time: the lid has moved down onto the boxes.
    const Counts later = check_configuration(*setup, x, p, 0.005, 0.01);
    report("random, t = 0.005", later);

    // Every pair's bound is computed on its own, so the step bound is the same bit for bit on rank 0 alone.
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    double alpha_alone[2] = {0.0, 0.0};
    if (world_rank() == 0) {
        {
            auto serial = distribute(document, dhat, alone);
            const NodeField xa = node_field(serial->local, position);
            const NodeField pa = node_field(serial->local, step);
            alpha_alone[0] = check_configuration(*serial, xa, pa, 0.0, 0.01).alpha;
            alpha_alone[1] = check_configuration(*serial, xa, pa, 0.005, 0.01).alpha;
        }
        MPI_Comm_free(&alone);
    }
    MPI_Bcast(alpha_alone, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    EXPECT_EQ(counts.alpha, alpha_alone[0]);
    EXPECT_EQ(later.alpha, alpha_alone[1]);
}

TEST(CandidateSearch, DegenerateAlignedBoxesAndPrescribedBodies) {
    const double dhat = 0.01;
    // A and B face to face at exactly d̂ (their inflated boxes touch), identical grids: coplanar faces and
    // parallel edges; B and C are fixed and close together (all-prescribed pairs are left out); A's top
    // face is coplanar with C's bottom face.
    json a = block({0, 0, 0}, {0.15, 0.15, 0.15}, {3, 3, 3});
    json b = block({0.15 + dhat, 0, 0}, {0.3 + dhat, 0.15, 0.15}, {3, 3, 3});
    json c = block({0.15 + dhat, 0, 0.15 + 0.5 * dhat}, {0.3 + dhat, 0.15, 0.3}, {3, 3, 3});
    b["fixed"] = json::array({selector({-1, -1, -1}, {2, 2, 2})});
    c["fixed"] = json::array({selector({-1, -1, -1}, {2, 2, 2})});
    json document = scene({a, b, c}, dhat);
    document["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    auto setup = distribute(document, dhat);
    const NodeField x = node_field(setup->local, [](const Vec3& rest, GlobalId) { return rest; });
    // A slides toward B by exactly the gap (parallel faces meet), the others stay.
    const NodeField p = node_field(setup->local, [&](const Vec3& rest, GlobalId) {
        return Vec3{rest[0] < 0.15 + 0.5 * dhat ? dhat : 0.0, 0.0, 0.0};
    });
    const Counts counts = check_configuration(*setup, x, p, 0.0, 0.01);
    EXPECT_GT(counts.candidates, 0);
    report("aligned", counts);
    // Half the gap: every facing pair is active.
    const NodeField closer = node_field(setup->local, [&](const Vec3& rest, GlobalId) {
        return Vec3{rest[0] < 0.15 + 0.5 * dhat ? rest[0] + 0.5 * dhat : rest[0], rest[1], rest[2]};
    });
    report("aligned, half gap", check_configuration(*setup, closer, p, 0.0, 0.01));
}

} // namespace
