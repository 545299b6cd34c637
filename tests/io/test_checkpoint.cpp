// Checkpoint files and the output a restart continues: the rank file format (round trip, a damaged,
// truncated or foreign file is rejected), the scene comparison (which keys may change, the key path
// named), the folder rules (a checkpoint without its manifest does not count; old ones are pruned), and
// the metrics and .pvd series cut back to the checkpoint's step.
#include "src/core/error.hpp"
#include "src/io/atomic_file.hpp"
#include "src/io/checkpoint.hpp"
#include "src/io/metrics.hpp"
#include "src/io/vtk_writer.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using namespace intact;
using nlohmann::json;

fs::path fresh_folder(const std::string& name) {
    const fs::path folder = fs::path(INTACT_BINARY_DIR) / "test_output" / "checkpoint" / name;
    fs::remove_all(folder);
    fs::create_directories(folder);
    return folder;
}

NodeField field_of(const std::vector<Vec3>& rows) {
    NodeField field("test::field", rows.size());
    auto host = Kokkos::create_mirror_view(field);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
            host(i, c) = rows[i][static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(field, host);
    return field;
}

io::CheckpointInfo info_at(std::int64_t step) {
    io::CheckpointInfo info;
    info.step = step;
    info.time = 0.01 * static_cast<double>(step);
    info.ranks = 1;
    info.scene = {{"time", {{"dt", 0.01}}}};
    return info;
}

TEST(CheckpointFile, RoundTripKeepsEverySectionBitForBit) {
    io::CheckpointWriter writer({7, 3, 11});
    // Two of the three owned rows of a field with a ghost row; values that text would round.
    writer.put_node_field("x", field_of({{0.1, 1.0 / 3.0, -2e-300}, {4, 5, 6}, {7, 8, 9}, {99, 99, 99}}));
    writer.put_values("obstacles", {1.5, -0.0, 1e300});
    writer.put_bytes("pairs", std::string("\0\1\2 keyed", 9));
    io::CheckpointInfo info = info_at(42);
    info.scene_hash = 0x0123456789abcdefull;
    const std::string bytes = writer.encode(info, 0);

    io::CheckpointFile file;
    ASSERT_EQ(io::decode_checkpoint(bytes, file), "");
    EXPECT_EQ(file.step, 42);
    EXPECT_EQ(file.time, 0.42);
    EXPECT_EQ(file.ranks, 1);
    EXPECT_EQ(file.scene_hash, 0x0123456789abcdefull);
    ASSERT_EQ(file.sections.count("node/x"), 1u);
    ASSERT_EQ(file.sections.at("node/x").size(), 9 * sizeof(double)); // owned rows only
    double third = 0.0;
    std::memcpy(&third, file.sections.at("node/x").data() + sizeof(double), sizeof(double));
    EXPECT_EQ(third, 1.0 / 3.0);
    EXPECT_EQ(file.sections.at("bytes/pairs"), std::string("\0\1\2 keyed", 9));
    EXPECT_EQ(file.sections.at("values/obstacles").size(), 3 * sizeof(double));
}

TEST(CheckpointFile, DamagedTruncatedAndForeignFilesAreRejected) {
    io::CheckpointWriter writer({0, 1});
    writer.put_node_field("x", field_of({{1, 2, 3}, {4, 5, 6}}));
    const std::string bytes = writer.encode(info_at(3), 0);
    io::CheckpointFile file;

    std::string flipped = bytes;
    flipped[bytes.size() / 2] ^= 0x10;
    EXPECT_NE(io::decode_checkpoint(flipped, file).find("checksum"), std::string::npos);
    EXPECT_NE(io::decode_checkpoint(bytes.substr(0, bytes.size() - 5), file).find("checksum"),
              std::string::npos);
    EXPECT_NE(io::decode_checkpoint("", file).find("not an Intact checkpoint"), std::string::npos);
    EXPECT_NE(io::decode_checkpoint("P3\n1 1\n255\n0 0 0", file).find("not an Intact checkpoint"),
              std::string::npos);
}

TEST(CheckpointScene, OnlyTimeLengthOutputAndLayoutKeysMayChange) {
    const json resolved = {{"time", {{"dt", 0.01}, {"steps", 10}, {"end", 0.1}}},
                           {"output", {{"dir", "a"}, {"every", 2}, {"checkpoint_every", 5}}},
                           {"partition", {{"file", "p.part"}}},
                           {"parallel", {{"halo_transport", "mpi"}}},
                           {"contact", {{"friction", 0.3}}},
                           {"bodies", json::array({{{"velocity", {0, 0, -1}}}})}};
    const json kept = io::compared_scene(resolved);
    EXPECT_FALSE(kept.contains("output"));
    EXPECT_FALSE(kept.contains("partition"));
    EXPECT_FALSE(kept.contains("parallel"));
    EXPECT_EQ(kept["time"], json({{"dt", 0.01}}));

    json longer = resolved;
    longer["time"]["steps"] = 500;
    longer["output"]["every"] = 7;
    EXPECT_EQ(io::first_difference(kept, io::compared_scene(longer)).key, "");

    json rubbed = resolved;
    rubbed["contact"]["friction"] = 0.5;
    const io::SceneDifference friction = io::first_difference(kept, io::compared_scene(rubbed));
    EXPECT_EQ(friction.key, "contact.friction");
    EXPECT_EQ(friction.was, "0.3");
    EXPECT_EQ(friction.now, "0.5");

    json faster = resolved;
    faster["bodies"][0]["velocity"][2] = -2;
    EXPECT_EQ(io::first_difference(kept, io::compared_scene(faster)).key, "bodies[0].velocity[2]");

    json finer = resolved;
    finer["time"]["dt"] = 0.005;
    EXPECT_EQ(io::first_difference(kept, io::compared_scene(finer)).key, "time.dt");

    json more = resolved;
    more["bodies"].push_back({{"velocity", {0, 0, 0}}});
    EXPECT_EQ(io::first_difference(kept, io::compared_scene(more)).key, "bodies");

    json gravity = resolved;
    gravity["gravity"] = {0, 0, -1};
    const io::SceneDifference added = io::first_difference(kept, io::compared_scene(gravity));
    EXPECT_EQ(added.key, "gravity");
    EXPECT_EQ(added.was, "absent");
}

TEST(CheckpointFolder, AnIncompleteCheckpointDoesNotCountAndOldOnesArePruned) {
    const fs::path folder = fresh_folder("prune");
    for (const std::int64_t step : {2, 4, 6}) {
        io::CheckpointWriter writer({0});
        writer.put_node_field("x", field_of({{1.0 * static_cast<double>(step), 0, 0}}));
        io::write_checkpoint(MPI_COMM_SELF, folder.string(), writer, info_at(step));
    }
    // Two complete checkpoints stay.
    EXPECT_FALSE(fs::exists(folder / io::checkpoint_folder(2)));
    EXPECT_TRUE(fs::exists(folder / io::checkpoint_folder(4) / "manifest.json"));
    EXPECT_TRUE(fs::exists(folder / io::checkpoint_folder(6) / "manifest.json"));
    EXPECT_TRUE(fs::exists(folder / io::checkpoint_folder(6) / "rank_000000.ckpt"));

    // A job killed while writing step 8: its rank file is there, its manifest is not.
    fs::create_directories(folder / io::checkpoint_folder(8));
    fs::copy_file(folder / io::checkpoint_folder(6) / "rank_000000.ckpt",
                  folder / io::checkpoint_folder(8) / "rank_000000.ckpt");
    std::ofstream(folder / io::checkpoint_folder(8) / "rank_000000.ckpt.tmp") << "torn";
    const json manifest = json::parse(std::ifstream(folder / io::checkpoint_folder(6) / "manifest.json"));
    EXPECT_EQ(manifest["step"], 6);
    EXPECT_EQ(manifest["ranks"], 1);
    EXPECT_EQ(manifest["scene"], info_at(6).scene);

    // The next write (a restart from 6 that reached 7) removes the abandoned 8 and keeps 6 as the older one.
    io::CheckpointWriter writer({0});
    writer.put_node_field("x", field_of({{7, 0, 0}}));
    io::write_checkpoint(MPI_COMM_SELF, folder.string(), writer, info_at(7));
    EXPECT_FALSE(fs::exists(folder / io::checkpoint_folder(8)));
    EXPECT_FALSE(fs::exists(folder / io::checkpoint_folder(4)));
    EXPECT_TRUE(fs::exists(folder / io::checkpoint_folder(6) / "manifest.json"));
    EXPECT_TRUE(fs::exists(folder / io::checkpoint_folder(7) / "manifest.json"));
}

// "No usable checkpoint" says which case it is and how to go on: a missing folder, one without
// checkpoints, and one whose only checkpoint is incomplete; a complete one is found with the command that
// started its run.
TEST(CheckpointFolder, NothingToContinueNamesTheCaseAndTheFix) {
    const fs::path folder = fresh_folder("nothing");
    const std::string missing = io::describe_missing_checkpoint((folder / "no_such_run").string());
    EXPECT_NE(missing.find("does not exist; fix: give the output folder of the run"), std::string::npos)
        << missing;

    std::ofstream(folder / "metrics.jsonl") << "{}\n"; // the output of a run that wrote no checkpoint
    const std::string none = io::describe_missing_checkpoint(folder.string());
    EXPECT_NE(none.find("holds no checkpoint: the run wrote none; fix: start the run anew"),
              std::string::npos)
        << none;
    EXPECT_NE(none.find("output.checkpoint_every"), std::string::npos) << none;

    fs::create_directories(folder / io::checkpoint_folder(5));
    std::ofstream(folder / io::checkpoint_folder(5) / "rank_000000.ckpt") << "torn";
    const std::string incomplete = io::describe_missing_checkpoint(folder.string());
    EXPECT_NE(incomplete.find("step_000000005 is incomplete (no manifest.json"), std::string::npos)
        << incomplete;
    EXPECT_NE(incomplete.find("fix: start the run anew"), std::string::npos) << incomplete;
    EXPECT_TRUE(io::recorded_command(MPI_COMM_SELF, folder.string()).is_null());

    io::CheckpointWriter writer({0});
    writer.put_node_field("x", field_of({{1, 0, 0}}));
    io::CheckpointInfo info = info_at(3);
    info.command = {{"scene", "/a/scene.json"}, {"overrides", {"time.end=2"}}};
    io::write_checkpoint(MPI_COMM_SELF, folder.string(), writer, info);
    EXPECT_EQ(io::describe_missing_checkpoint(folder.string()), "");
    EXPECT_EQ(io::recorded_command(MPI_COMM_SELF, folder.string()), info.command);
}

TEST(CheckpointFolder, AnUnwritableFolderIsAnErrorNamingThePath) {
    const fs::path folder = fresh_folder("unwritable");
    std::ofstream(folder / "checkpoints") << "a file where the folder should be";
    io::CheckpointWriter writer({0});
    try {
        io::write_checkpoint(MPI_COMM_SELF, folder.string(), writer, info_at(1));
        FAIL() << "expected an InputError";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("checkpoints"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("fix:"), std::string::npos) << e.what();
    }
}

TEST(AtomicFile, ReplacesWholeOrLeavesTheOldFile) {
    const fs::path folder = fresh_folder("atomic");
    ASSERT_EQ(io::write_file_atomically(folder / "a.txt", "old"), "");
    ASSERT_EQ(io::write_file_atomically(folder / "a.txt", "new text"), "");
    std::string text;
    ASSERT_EQ(io::read_file(folder / "a.txt", text), "");
    EXPECT_EQ(text, "new text");
    EXPECT_FALSE(fs::exists(folder / "a.txt.tmp"));
    // A write that cannot happen leaves the file as it was.
    EXPECT_NE(io::write_file_atomically(folder / "no_such_folder" / "a.txt", "x"), "");
    ASSERT_EQ(io::read_file(folder / "a.txt", text), "");
    EXPECT_EQ(text, "new text");
}

TEST(RestartOutput, MetricsKeepTheLinesUpToTheCheckpointOnly) {
    const fs::path folder = fresh_folder("metrics");
    const std::string path = (folder / "metrics.jsonl").string();
    {
        io::MetricsWriter writer(path);
        for (int step = 0; step <= 6; ++step) {
            writer.write({{"step", step}, {"time", 0.01 * step}});
        }
    }
    std::ofstream(path, std::ios::app) << "{\"step\": 7, \"ti"; // torn by the kill
    {
        io::MetricsWriter writer(path, 4);
        writer.write({{"step", 5}, {"time", 0.05}});
    }
    std::ifstream in(path);
    std::vector<int> steps;
    for (std::string line; std::getline(in, line);) {
        steps.push_back(json::parse(line)["step"].get<int>());
    }
    EXPECT_EQ(steps, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(RestartOutput, TheSeriesKeepsItsStepsUpToTheCheckpointAndDropsLaterFiles) {
    const fs::path folder = fresh_folder("series");
    io::VtkPiece piece; // empty pieces are valid
    {
        io::VtkSeriesWriter writer(MPI_COMM_SELF, folder.string());
        for (int step = 0; step <= 6; step += 2) {
            writer.write(step, 0.01 * step, piece);
        }
    }
    {
        io::VtkSeriesWriter writer(MPI_COMM_SELF, folder.string(), true, 3);
        EXPECT_FALSE(fs::exists(folder / "steps" / "step_000004"));
        EXPECT_FALSE(fs::exists(folder / "steps" / "step_000006.pvtu"));
        EXPECT_TRUE(fs::exists(folder / "steps" / "step_000002.pvtu"));
        writer.write(4, 0.04, piece);
    }
    std::ifstream in(folder / "intact.pvd");
    std::stringstream text;
    text << in.rdbuf();
    const std::string pvd = text.str();
    for (const char* listed : {"step_000000.pvtu", "step_000002.pvtu", "step_000004.pvtu"}) {
        EXPECT_NE(pvd.find(listed), std::string::npos) << listed;
    }
    EXPECT_EQ(pvd.find("step_000006"), std::string::npos);
    EXPECT_NE(pvd.find("timestep=\"0.02\""), std::string::npos);
    // Each step once.
    EXPECT_EQ(pvd.find("step_000004.pvtu"), pvd.rfind("step_000004.pvtu"));
}

} // namespace
