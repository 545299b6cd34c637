// Checkpoint and restart of whole simulations on 1-4 ranks. The scene exercises every piece of state a
// step hands to the next: a block with an initial velocity lands on a plane that slides sideways (an
// obstacle whose rows move), with friction (lagged at every step), while a second block is pushed by
// prescribed (moving) nodes. Checks:
// - same rank count: a run stopped at a checkpoint and restarted ends bit for bit where the
//   uninterrupted run ends, and its metrics.jsonl and intact.pvd hold every step once;
// - a checkpoint without its manifest (a kill while writing) or with a damaged rank file is passed over
//   for the previous one;
// - another rank count (world size - 1 <-> world size): within 1e-6 relative;
// - a restart with a changed scene key is an error naming that key, and it leaves the output as it was.
// The state of the other methods is checked on the same scene, shorter: the AL solver with friction (its
// constraint set with λ, γ and the linearisation, keyed by global ids) and the integrators with history
// (BDF2's previous step, Newmark's acceleration, A-search's target and cached start-of-step gradients
// and energies), each bit for bit at the same rank count and within 1e-6 on world size - 1 -> world size.
#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/stop_signals.hpp"
#include "src/io/checkpoint.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using namespace intact;
using nlohmann::json;
using test::world_rank;
using test::world_size;

constexpr int k_steps = 12;

json block(const Vec3& lo, const Vec3& hi, const Vec3& velocity) {
    json body;
    body["mesh"]["box"] = {{"min", lo}, {"max", hi}, {"cells", {2, 2, 2}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["velocity"] = velocity;
    return body;
}

json restart_scene(int steps) {
    json s;
    s["time"] = {{"dt", 0.01}, {"steps", steps}};
    s["gravity"] = {0.0, 0.0, -9.81};
    json pushed = block({0.4, 0, 0.05}, {0.6, 0.2, 0.25}, {0, 0, 0});
    pushed["name"] = "pushed";
    pushed["moving"] =
        json::array({{{"box", {{"min", {0.59, -1, -1}}, {"max", {1, 1, 1}}}}, {"velocity", {-0.5, 0, 0}}}});
    json falling = block({0, 0, 0.005}, {0.2, 0.2, 0.205}, {0.3, 0, -1.0});
    falling["name"] = "falling";
    s["bodies"] = {falling, pushed};
    s["obstacles"] = json::array(
        {{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}, {"velocity", {0.2, 0.1, 0.0}}}});
    s["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.4}, {"epsv", 1e-3}};
    // `ipc`, named: the scene would default to `al`. The "al" and "bal" variants below replace it.
    s["solver"] = {{"type", "ipc"},
                   {"newton_tolerance", 1e-4},
                   {"linear_tolerance", 1e-8},
                   {"max_newton_iterations", 100}};
    s["output"] = {{"every", 3}};
    return s;
}

io::Scene parsed(const json& document) {
    return io::parse_scene(document, "restart.json");
}

/// Position and velocity rows by global id, on every rank of `comm`.
struct State {
    std::map<GlobalId, Vec3> x, v;
};

std::map<GlobalId, Vec3> gather_rows(const Simulation& simulation, const NodeField& field, MPI_Comm comm) {
    const auto& local = simulation.local_mesh();
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), field);
    std::vector<double> mine;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        mine.insert(mine.end(), {static_cast<double>(local.node_global_id[static_cast<std::size_t>(i)]),
                                 rows(i, 0), rows(i, 1), rows(i, 2)});
    }
    int size = 1;
    MPI_Comm_size(comm, &size);
    const int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size), 0);
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    for (int r = 1; r < size; ++r) {
        offsets[static_cast<std::size_t>(r)] =
            offsets[static_cast<std::size_t>(r - 1)] + counts[static_cast<std::size_t>(r - 1)];
    }
    std::vector<double> all(static_cast<std::size_t>(offsets.back() + counts.back()));
    MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                   comm);
    std::map<GlobalId, Vec3> out;
    for (std::size_t k = 0; k < all.size(); k += 4) {
        out[static_cast<GlobalId>(all[k])] = {all[k + 1], all[k + 2], all[k + 3]};
    }
    return out;
}

State state_of(const Simulation& simulation, MPI_Comm comm) {
    return {gather_rows(simulation, simulation.positions(), comm),
            gather_rows(simulation, simulation.velocities(), comm)};
}

/// Runs `document` to its end on `comm` into `dir` (fresh, or a restart) and returns the final state.
State run(MPI_Comm comm, const json& document, const std::string& dir, bool restart) {
    Simulation simulation(comm, parsed(document), dir, restart);
    simulation.run();
    EXPECT_FALSE(simulation.stopped());
    EXPECT_EQ(simulation.current_step(), document["time"]["steps"].get<int>());
    return state_of(simulation, comm);
}

std::vector<json> metrics_of(const std::string& dir) {
    std::vector<json> lines;
    std::ifstream in(fs::path(dir) / "metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
        lines.push_back(json::parse(line));
    }
    return lines;
}

std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The step certificate's verdict of a metrics line (its energy figures are sums over pairs that a restart
// may visit in another order, so only the verdict is compared).
json verdict_of(const json& line) {
    const json& c = line.value("certificate", json());
    if (c.is_null()) {
        return c;
    }
    return {{"certified", c["certified"]},
            {"balanced", c["balanced"]},
            {"energy_consistent", c["energy_consistent"]},
            {"failed", c["failed"]}};
}

// The physics of two metrics lines (not the wall times, which differ between runs).
void expect_same_record(const json& a, const json& b) {
    EXPECT_EQ(verdict_of(a), verdict_of(b)) << "certificate at step " << a["step"];
    for (const char* key :
         {"step", "time", "newton_iterations", "linear_iterations", "newton_residual", "contact_pairs",
          "kinetic_energy", "elastic_energy", "gravitational_energy", "friction_lags", "barrier_stiffness"}) {
        EXPECT_EQ(a[key], b[key]) << "metrics key " << key << " at step " << a["step"];
    }
}

// The restarted run's output: each step 0..k_steps once in metrics (equal to the reference run's), and
// every output step once in the series.
void expect_continuous_output(const std::string& dir, const std::string& reference_dir) {
    if (world_rank() != 0) {
        return;
    }
    const auto lines = metrics_of(dir);
    const auto reference = metrics_of(reference_dir);
    ASSERT_EQ(lines.size(), static_cast<std::size_t>(k_steps + 1));
    ASSERT_EQ(reference.size(), lines.size());
    EXPECT_GT(reference[4]["contact_pairs"].get<int>(), 0) << "the scene must exercise contact and friction";
    EXPECT_GT(reference[4]["friction_lags"].get<int>(), 0);
    for (std::size_t n = 0; n < lines.size(); ++n) {
        EXPECT_EQ(lines[n]["step"], static_cast<int>(n));
        expect_same_record(lines[n], reference[n]);
    }
    const std::string pvd = text_of(fs::path(dir) / "intact.pvd");
    EXPECT_EQ(pvd, text_of(fs::path(reference_dir) / "intact.pvd"));
    for (int step = 0; step <= k_steps; ++step) {
        std::ostringstream name;
        name << "step_" << std::setw(6) << std::setfill('0') << step << ".pvtu";
        const bool listed = pvd.find(name.str()) != std::string::npos;
        EXPECT_EQ(listed, step % 3 == 0 || step == k_steps) << name.str();
        EXPECT_EQ(pvd.find(name.str()), pvd.rfind(name.str())) << name.str() << " listed twice";
        EXPECT_EQ(fs::exists(fs::path(dir) / "steps" / name.str()), listed) << name.str();
    }
}

void expect_bitwise_equal(const State& a, const State& b) {
    ASSERT_EQ(a.x.size(), b.x.size());
    std::size_t differing = 0;
    for (const auto& [id, x] : a.x) {
        differing += (x != b.x.at(id) || a.v.at(id) != b.v.at(id)) ? 1 : 0;
    }
    EXPECT_EQ(differing, 0u) << "nodes whose x or v differ in any bit";
}

/// max |a − b| / max |a| over positions (and the same for velocities).
std::pair<double, double> relative_difference(const State& a, const State& b) {
    double dx = 0, x = 0, dv = 0, v = 0;
    for (const auto& [id, row] : a.x) {
        for (int c = 0; c < 3; ++c) {
            dx = std::max(dx, std::abs(row[c] - b.x.at(id)[c]));
            x = std::max(x, std::abs(row[c]));
            dv = std::max(dv, std::abs(a.v.at(id)[c] - b.v.at(id)[c]));
            v = std::max(v, std::abs(a.v.at(id)[c]));
        }
    }
    return {dx / x, dv / v};
}

std::string dir_of(const std::string& name) {
    return test::output_dir("restart", name, MPI_COMM_WORLD);
}

void remove_on_root(const fs::path& path) {
    if (world_rank() == 0) {
        fs::remove_all(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

TEST(Restart, SameRankCountContinuesBitForBit) {
    json document = restart_scene(k_steps);
    document["output"]["checkpoint_every"] = 4;
    const std::string reference_dir = dir_of("reference");
    const State reference = run(MPI_COMM_WORLD, document, reference_dir, false);
    // The run checkpointed after steps 4, 8 and 12; the two newest stay.
    if (world_rank() == 0) {
        EXPECT_FALSE(fs::exists(fs::path(reference_dir) / io::checkpoint_folder(4)));
        EXPECT_TRUE(fs::exists(fs::path(reference_dir) / io::checkpoint_folder(8) / "manifest.json"));
        EXPECT_TRUE(fs::exists(fs::path(reference_dir) / io::checkpoint_folder(12) / "manifest.json"));
    }

    // An interrupted run: it reached step 7 (metrics, output at step 6), its last checkpoint is step 4.
    const std::string dir = dir_of("interrupted");
    json first = document;
    first["time"]["steps"] = 7;
    run(MPI_COMM_WORLD, first, dir, false);
    remove_on_root(fs::path(dir) / io::checkpoint_folder(7)); // as if killed before the checkpoint at 7
    const State restarted = run(MPI_COMM_WORLD, document, dir, true);
    expect_bitwise_equal(reference, restarted);
    expect_continuous_output(dir, reference_dir);
}

TEST(Restart, AStopRequestStopsAfterItsStepUnlessThatStepIsTheLast) {
    // SIGUSR1 raised on one rank during a step: all ranks stop after that step, with a checkpoint, and the
    // run counts as stopped; raised during the last step, the run is complete, not stopped (exit 0 for
    // `intact run`, nothing to continue).
    const json document = restart_scene(4);
    for (const int at : {2, 4}) {
        SCOPED_TRACE("stop requested during step " + std::to_string(at));
        const StopSignals signals;
        const std::string dir = dir_of("stop_at_" + std::to_string(at));
        Simulation simulation(MPI_COMM_WORLD, parsed(document), dir, false);
        simulation.run([&](const solver::StepResult&) {
            if (simulation.current_step() == at && world_rank() == 0) {
                std::raise(SIGUSR1);
            }
        });
        EXPECT_EQ(simulation.current_step(), at);
        EXPECT_EQ(simulation.stopped(), at < 4);
        if (world_rank() == 0) {
            EXPECT_TRUE(fs::exists(fs::path(dir) / io::checkpoint_folder(at) / "manifest.json"));
        }
    }
}

TEST(Restart, AKillWhileWritingOrADamagedFileFallsBackToThePreviousCheckpoint) {
    json document = restart_scene(k_steps);
    document["output"]["checkpoint_every"] = 3;
    const std::string reference_dir = dir_of("fallback_reference");
    const State reference = run(MPI_COMM_WORLD, document, reference_dir, false);

    // Checkpoints at 3 and 6 (the run's end); 6 loses its manifest: a kill after the rank files were
    // written. Restart goes on from 3.
    const std::string dir = dir_of("no_manifest");
    json first = document;
    first["time"]["steps"] = 6;
    run(MPI_COMM_WORLD, first, dir, false);
    remove_on_root(fs::path(dir) / io::checkpoint_folder(6) / "manifest.json");
    expect_bitwise_equal(reference, run(MPI_COMM_WORLD, document, dir, true));
    expect_continuous_output(dir, reference_dir);

    // Checkpoints at 3 and 6; one byte of the last rank's file at 6 flipped. Restart goes on from 3.
    const std::string damaged = dir_of("damaged");
    run(MPI_COMM_WORLD, first, damaged, false);
    if (world_rank() == 0) {
        const fs::path file = fs::path(damaged) / io::checkpoint_folder(6) /
                              ("rank_" + std::string(6 - std::to_string(world_size() - 1).size(), '0') +
                               std::to_string(world_size() - 1) + ".ckpt");
        ASSERT_TRUE(fs::exists(file)) << file;
        std::fstream bytes(file, std::ios::in | std::ios::out | std::ios::binary);
        bytes.seekg(60);
        char c = 0;
        bytes.read(&c, 1);
        bytes.seekp(60);
        c = static_cast<char>(c ^ 0x40);
        bytes.write(&c, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_bitwise_equal(reference, run(MPI_COMM_WORLD, document, damaged, true));
    expect_continuous_output(damaged, reference_dir);
}

// One run on `from` ranks checkpoints after step 5 and is restarted on `to` ranks; the result is held to
// the uninterrupted run on `from` ranks. `from`/`to` are world size - 1 and world size.
void other_rank_count(bool grow) {
    if (world_size() < 2) {
        GTEST_SKIP() << "needs 2 or more ranks";
    }
    MPI_Comm fewer = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < world_size() - 1 ? 0 : MPI_UNDEFINED, world_rank(), &fewer);
    const MPI_Comm before = grow ? fewer : MPI_COMM_WORLD;
    const MPI_Comm after = grow ? MPI_COMM_WORLD : fewer;
    const std::string name = grow ? "grow" : "shrink";
    json document = restart_scene(k_steps);
    document["output"]["checkpoint_every"] = 5;
    json first = document;
    first["time"]["steps"] = 5;

    const std::string dir = dir_of(name);
    State reference;
    if (before != MPI_COMM_NULL) {
        reference = run(before, document, dir_of(name + "_reference"), false);
        run(before, first, dir, false);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    State restarted;
    if (after != MPI_COMM_NULL) {
        restarted = run(after, document, dir, true);
    }
    // Rank 0 is in both communicators and holds both states.
    if (world_rank() == 0) {
        const auto [dx, dv] = relative_difference(reference, restarted);
        EXPECT_LT(dx, 1e-6) << "positions, relative";
        EXPECT_LT(dv, 1e-6) << "velocities, relative";
        const auto lines = metrics_of(dir);
        ASSERT_EQ(lines.size(), static_cast<std::size_t>(k_steps + 1));
        for (std::size_t n = 0; n < lines.size(); ++n) {
            EXPECT_EQ(lines[n]["step"], static_cast<int>(n));
        }
        EXPECT_EQ(lines.back()["ranks"], grow ? world_size() : world_size() - 1);
    }
    if (fewer != MPI_COMM_NULL) {
        MPI_Comm_free(&fewer);
    }
}

TEST(Restart, OnMoreRanksWithinOneMillionth) {
    other_rank_count(true);
}

TEST(Restart, OnFewerRanksWithinOneMillionth) {
    other_rank_count(false);
}

// A restart whose scene differs: the error names the key, and the output folder is unchanged.
void expect_rejected(const std::string& dir, const json& changed, const std::string& key) {
    const std::string metrics_before = world_rank() == 0 ? text_of(fs::path(dir) / "metrics.jsonl") : "";
    const std::string pvd_before = world_rank() == 0 ? text_of(fs::path(dir) / "intact.pvd") : "";
    try {
        Simulation simulation(MPI_COMM_WORLD, parsed(changed), dir, true);
        ADD_FAILURE() << "a restart with a changed " << key << " was accepted";
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("key '" + key + "'"), std::string::npos) << message;
        EXPECT_NE(message.find("restart.json"), std::string::npos) << message;
        EXPECT_NE(message.find("fix:"), std::string::npos) << message;
    }
    if (world_rank() == 0) {
        EXPECT_EQ(text_of(fs::path(dir) / "metrics.jsonl"), metrics_before);
        EXPECT_EQ(text_of(fs::path(dir) / "intact.pvd"), pvd_before);
    }
}

TEST(Restart, AChangedSceneIsAnErrorNamingTheKey) {
    json document = restart_scene(4);
    document["output"]["checkpoint_every"] = 2;
    const std::string dir = dir_of("changed");
    run(MPI_COMM_WORLD, document, dir, false);

    json friction = document;
    friction["contact"]["friction"] = 0.5;
    expect_rejected(dir, friction, "contact.friction");
    json velocity = document;
    velocity["bodies"][0]["velocity"][0] = 0.0;
    expect_rejected(dir, velocity, "bodies[0].velocity[0]");
    json cells = document;
    cells["bodies"][1]["mesh"]["box"]["cells"] = {3, 2, 2};
    expect_rejected(dir, cells, "bodies[1].mesh.box.cells[0]");
    json dt = document;
    dt["time"]["dt"] = 0.005;
    dt["time"]["steps"] = 8;
    expect_rejected(dir, dt, "time.dt");
    json shorter = document;
    shorter["time"]["steps"] = 3; // the checkpoint is at 4
    expect_rejected(dir, shorter, "time.steps");

    // Output keys and the run's length may change.
    json longer = document;
    longer["time"]["steps"] = 6;
    longer["output"]["every"] = 1;
    longer["output"]["checkpoint_every"] = 0;
    const State state = run(MPI_COMM_WORLD, longer, dir, true);
    EXPECT_FALSE(state.x.empty());
}

// ---- Other step solvers and integrators -------------------------------------------------------------

constexpr int k_short_steps = 8;
constexpr int k_short_checkpoint = 4;

/// The restart scene run by another method: "al" (AL solver with friction, implicit Euler), "al_a_search"
/// (AL solver under A-search), "bal" (BAL solver, implicit Euler), an integrator with IPC ("bdf2",
/// "newmark", "a_search"), or "a_search_flight": A-search with both blocks in free flight through the
/// checkpoint (no moving boundary, the falling block 0.3 m higher), so the checkpoint holds a deferred
/// free-flight loss.
json variant_scene(const std::string& variant, int steps) {
    json s = restart_scene(steps);
    if (variant == "a_search_flight") {
        s["integrator"]["type"] = "a_search";
        s["bodies"][1].erase("moving");
        s["bodies"][0]["mesh"]["box"]["min"][2] = 0.305;
        s["bodies"][0]["mesh"]["box"]["max"][2] = 0.505;
        return s;
    }
    if (variant == "al" || variant == "al_a_search") {
        s["solver"]["type"] = "al";
    }
    if (variant == "bal") {
        s["solver"]["type"] = "bal";
    }
    if (variant == "al_a_search") {
        s["integrator"]["type"] = "a_search";
    } else if (variant != "al" && variant != "bal") {
        s["integrator"]["type"] = variant;
    }
    return s;
}

// The metrics a step's physics determines (present or absent alike in both lines).
void expect_same_physics(const json& a, const json& b) {
    EXPECT_EQ(verdict_of(a), verdict_of(b)) << "certificate at step " << a["step"];
    for (const char* key :
         {"step", "time", "newton_iterations", "linear_iterations", "contact_pairs", "kinetic_energy",
          "elastic_energy", "total_energy", "energy_target", "alpha", "dissipated_energy", "deferred_energy",
          "outer_iterations", "active_set_size", "barrier_stiffness"}) {
        EXPECT_EQ(a.contains(key), b.contains(key)) << "metrics key " << key << " at step " << a["step"];
        if (a.contains(key) && b.contains(key)) {
            EXPECT_EQ(a[key], b[key]) << "metrics key " << key << " at step " << a["step"];
        }
    }
}

class RestartMethod : public ::testing::TestWithParam<std::string> {};

TEST_P(RestartMethod, SameRankCountContinuesBitForBit) {
    const std::string variant = GetParam();
    const json document = variant_scene(variant, k_short_steps);
    const std::string reference_dir = dir_of(variant + "_reference");
    const State reference = run(MPI_COMM_WORLD, document, reference_dir, false);

    json first = variant_scene(variant, k_short_checkpoint);
    first["output"]["checkpoint_every"] = k_short_checkpoint;
    const std::string dir = dir_of(variant + "_interrupted");
    run(MPI_COMM_WORLD, first, dir, false);
    const State restarted = run(MPI_COMM_WORLD, document, dir, true);
    expect_bitwise_equal(reference, restarted);
    if (world_rank() == 0) {
        const auto lines = metrics_of(dir);
        const auto expected = metrics_of(reference_dir);
        ASSERT_EQ(lines.size(), static_cast<std::size_t>(k_short_steps + 1));
        ASSERT_EQ(expected.size(), lines.size());
        // The checkpoint must hold live state: bodies in contact (AL: constraints in the set), or for the
        // free-flight variant a deferred loss.
        const json& at_checkpoint = expected[static_cast<std::size_t>(k_short_checkpoint)];
        if (variant == "a_search_flight") {
            EXPECT_GT(at_checkpoint["deferred_energy"].get<double>(), 0.0)
                << "nothing deferred at the checkpoint";
        } else {
            EXPECT_GT(at_checkpoint["contact_pairs"].get<int>(), 0) << "no contact at the checkpoint";
        }
        if (variant.rfind("al", 0) == 0) {
            EXPECT_GT(at_checkpoint["active_set_size"].get<int>(), 0) << "no constraint at the checkpoint";
        }
        for (std::size_t n = 0; n < lines.size(); ++n) {
            expect_same_physics(lines[n], expected[n]);
        }
    }
}

TEST_P(RestartMethod, OnMoreRanksWithinOneMillionth) {
    if (world_size() < 2) {
        GTEST_SKIP() << "needs 2 or more ranks";
    }
    const std::string variant = GetParam();
    MPI_Comm fewer = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < world_size() - 1 ? 0 : MPI_UNDEFINED, world_rank(), &fewer);
    const json document = variant_scene(variant, k_short_steps);
    json first = variant_scene(variant, k_short_checkpoint);
    first["output"]["checkpoint_every"] = k_short_checkpoint;
    const std::string dir = dir_of(variant + "_grow");
    State reference;
    if (fewer != MPI_COMM_NULL) {
        reference = run(fewer, document, dir_of(variant + "_grow_reference"), false);
        run(fewer, first, dir, false);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const State restarted = run(MPI_COMM_WORLD, document, dir, true);
    if (world_rank() == 0) {
        const auto [dx, dv] = relative_difference(reference, restarted);
        EXPECT_LT(dx, 1e-6) << "positions, relative";
        EXPECT_LT(dv, 1e-6) << "velocities, relative";
    }
    if (fewer != MPI_COMM_NULL) {
        MPI_Comm_free(&fewer);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Methods,
    RestartMethod,
    ::testing::Values("al", "al_a_search", "bal", "bdf2", "newmark", "a_search", "a_search_flight"),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Restart, WithoutACheckpointIsAnErrorThatSaysSo) {
    const std::string dir = dir_of("none");
    run(MPI_COMM_WORLD, restart_scene(2), dir, false); // no checkpoint keys: none written
    try {
        Simulation simulation(MPI_COMM_WORLD, parsed(restart_scene(4)), dir, true);
        ADD_FAILURE() << "restarted without a checkpoint";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("no usable checkpoint"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("fix:"), std::string::npos) << e.what();
    }
}

} // namespace
