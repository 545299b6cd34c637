// intact: distributed simulation of penetration-free elastodynamics.
//
// Sample runs:
//   mpirun -n 2 intact run inputs/default.json --output out/default
//   srun -n 8 intact run scene.json --set time.dt=0.005 --set output.every=10
//   intact partition scene.json -n 8 --output scene.8.part     (then: intact run scene.json --partition
//   scene.8.part)
//
// Steps of `intact run`:
//   1. start MPI and Kokkos, print the rank -> host/device map;
//   2. read and validate the scene on every rank (same file, same overrides, same verdict);
//   3. build, partition and distribute the mesh; build the halo plan; prepare the output folder;
//   4. take the time steps, writing output, metrics and checkpoints (--restart: continue from the newest
//      checkpoint in the output folder); SIGTERM/SIGUSR1 stop after the current step with a checkpoint.
// Input errors stop every rank with one message naming the file, the key and the fix, exit status 2; a
// run stopped by a signal (checkpoint written) ends with exit status 3.
#include "comm/collectives.hpp"
#include "intact/config.hpp"
#include "partition/dual_graph.hpp"
#include "partition/metis_partitioner.hpp"
#include "partition/ownership.hpp"
#include "partition/partition_file.hpp"
#include "partition/partition_stats.hpp"
#include "src/core/error.hpp"
#include "src/core/log.hpp"
#include "src/core/runtime.hpp"
#include "src/core/stop_signals.hpp"
#include "src/io/checkpoint.hpp"
#include "src/io/mesh_reader.hpp"
#include "src/io/scene.hpp"
#include "src/io/scene_keys.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "src/simulation.hpp"
#include "src/tools/ccd_bench.hpp"
#include "src/tools/check_output.hpp"
#include "src/tools/geometry_probe.hpp"

#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace {

/// Exit status for bad input (command line, scene, meshes); internal failures end with MPI_Abort (1).
constexpr int exit_input = 2;
/// Exit status of a run stopped on request (SIGTERM, SIGUSR1) after writing its checkpoint: not a failure,
/// and not finished either; `intact run --restart` continues it.
constexpr int exit_stopped = 3;

const char* usage_text =
    "usage:\n"
    "  intact run SCENE.json [--output DIR] [--set key.path=value ...] [--partition FILE]\n"
    "  intact run [SCENE.json] --restart DIR [--set key.path=value ...] [--partition FILE]\n"
    "  intact partition MESH_OR_SCENE -n P [--output FILE] [--set key.path=value ...]\n"
    "  intact check OUTPUT_DIR\n"
    "  intact geometry < queries.txt\n"
    "  intact ccd-bench DIR\n"
    "  intact schema\n"
    "  intact --version | --help\n"
    "\n"
    "run        simulate SCENE.json on all MPI ranks; results in DIR (default: the scene's output.dir)\n"
    "           --set overrides a scene key (repeatable), e.g. --set time.dt=0.005 --set "
    "bodies.0.velocity=[0,0,-1]\n"
    "           --partition uses a partition written by `intact partition` instead of running METIS\n"
    "           --restart continues the run in DIR from its newest checkpoint, into DIR (any rank count), "
    "with\n"
    "           the scene and --set keys it was started with; keys set again here replace those\n"
    "partition  split a mesh file (.msh .mesh .node/.ele .vtu .vtk) or a scene's combined mesh into P parts\n"
    "           with METIS and write them to FILE (default: <input>.part.<P>)\n"
    "check      report intersecting surface triangles, inverted tetrahedra and bodies touching or passing\n"
    "           through obstacles in every step of a run's output (exit status 1 if any)\n"
    "geometry   answer distance, barrier and CCD queries read from standard input, one line each\n"
    "           (pt_dist, ee_dist, barrier, pt_ccd_raw, ee_ccd_raw; see README)\n"
    "ccd-bench  run the CCD over benchmark query files (CSV, Wang et al. 2021) under DIR and report false\n"
    "           negatives, false positives and ns per query\n"
    "schema     print the JSON Schema of scene files (draft 2020-12; also docs/scene.schema.json)\n"
    "\n"
    "Pictures and movies of an output folder, without a display: intact-render OUTPUT_DIR (installed beside\n"
    "intact; drivers/intact_render.sh in the sources; intact-render --help).\n";

struct Arguments {
    std::string command;
    std::string input;
    std::string output;
    std::string partition;
    std::string restart;
    int parts = 0;
    std::vector<std::string> overrides;
};

// Parse argv; throws InputError with a usage hint. Every rank parses the same argv.
Arguments parse_arguments(int argc, char** argv) {
    Arguments args;
    std::vector<std::string> words(argv + 1, argv + argc);
    if (words.empty()) {
        throw intact::InputError(std::string("no command given\n") + usage_text);
    }
    args.command = words[0];
    for (std::size_t i = 1; i < words.size(); ++i) {
        const std::string& word = words[i];
        auto value = [&](const char* flag) {
            if (i + 1 >= words.size()) {
                throw intact::InputError(std::string(flag) + " needs a value\n" + usage_text);
            }
            return words[++i];
        };
        if (word == "--output" || word == "-o") {
            args.output = value("--output");
        } else if (word == "--set") {
            args.overrides.push_back(value("--set"));
        } else if (word == "--partition") {
            args.partition = value("--partition");
        } else if (word == "--restart") {
            args.restart = value("--restart");
        } else if (word == "-n") {
            const std::string text = value("-n");
            char* end = nullptr;
            const long n = std::strtol(text.c_str(), &end, 10);
            if (end == text.c_str() || *end != '\0' || n < 1 || n > 1000000) {
                throw intact::InputError("-n takes a number of parts from 1 to 1000000, got '" + text + "'");
            }
            args.parts = static_cast<int>(n);
        } else if (!word.empty() && word[0] == '-') {
            throw intact::InputError("unknown option '" + word + "'\n" + usage_text);
        } else if (args.input.empty()) {
            args.input = word;
        } else {
            throw intact::InputError("unexpected argument '" + word + "'\n" + usage_text);
        }
    }
    // Options that do not belong to the command are errors, not silently ignored.
    if (args.command == "run" && args.parts != 0) {
        throw intact::InputError("-n belongs to `intact partition`; `intact run` uses every MPI rank\n" +
                                 std::string(usage_text));
    }
    if (args.command == "partition" && !args.partition.empty()) {
        throw intact::InputError("--partition belongs to `intact run`\n" + std::string(usage_text));
    }
    if (args.command == "schema" &&
        (args.parts != 0 || !args.partition.empty() || !args.output.empty() || !args.overrides.empty())) {
        throw intact::InputError("`intact schema` takes no options\n" + std::string(usage_text));
    }
    if (args.command != "run" && !args.restart.empty()) {
        throw intact::InputError("--restart belongs to `intact run`\n" + std::string(usage_text));
    }
    // A restart continues into the folder it reads; another --output would split the run's output.
    if (!args.restart.empty() && !args.output.empty() && args.output != args.restart) {
        throw intact::InputError("--restart " + args.restart + " continues into that folder; drop --output " +
                                 args.output + " (or give the same folder)");
    }
    return args;
}

int run(const Arguments& args, MPI_Comm comm, const char* program) {
    const bool restart = !args.restart.empty();
    std::string scene_file = args.input;
    std::vector<std::string> overrides;
    if (restart) {
        // The run goes on with the scene and the `--set` overrides it was started with, as its checkpoints
        // record them; a scene or keys given on this command line replace those.
        const nlohmann::json command = intact::io::recorded_command(comm, args.restart);
        if (!command.is_null()) {
            if (scene_file.empty()) {
                scene_file = command.at("scene").get<std::string>();
            }
            overrides = command.at("overrides").get<std::vector<std::string>>();
        } else if (scene_file.empty()) {
            const std::string missing = intact::io::describe_missing_checkpoint(args.restart);
            throw intact::InputError(
                "--restart " + args.restart + ": " +
                (missing.empty()
                     ? "its checkpoint does not record the run's scene (an older Intact wrote it); "
                       "fix: give the scene and the --set keys the run was started with: intact "
                       "run SCENE.json --restart " +
                           args.restart
                     : "no usable checkpoint: " + missing));
        }
    } else if (scene_file.empty()) {
        throw intact::InputError(std::string("run needs a scene file\n") + usage_text);
    }
    overrides.insert(overrides.end(), args.overrides.begin(), args.overrides.end());
    if (!args.partition.empty()) {
        overrides.push_back("partition.file=\"" + args.partition + "\"");
    }
    // Every rank reads the scene; a rank that fails (say, the file is missing on its node) stops all.
    intact::io::Scene scene;
    std::string error;
    try {
        scene = intact::io::load_scene(scene_file, overrides);
    } catch (const intact::InputError& e) {
        error = e.what();
    }
    error = intact::comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw intact::InputError(error);
    }
    if (!args.partition.empty()) {
        scene.partition_file = args.partition; // as given on the command line, relative to the working folder
    }
    intact::Simulation simulation(comm, std::move(scene), restart ? args.restart : args.output, restart);
    simulation.run();
    intact::log::info() << "open in ParaView: " << simulation.pvd_path();
    if (simulation.stopped()) {
        int ranks = 1;
        INTACT_CHECK_MPI(MPI_Comm_size(comm, &ranks));
        intact::log::info() << "continue with: mpirun -n " << ranks << " " << program << " run --restart "
                            << simulation.output_dir();
    }
    return simulation.stopped() ? exit_stopped : 0;
}

// `intact partition`: serial work on rank 0; other ranks only wait for the verdict.
int partition(const Arguments& args, MPI_Comm comm, int rank) {
    if (args.input.empty() || args.parts < 1) {
        throw intact::InputError(std::string("partition needs an input and -n P\n") + usage_text);
    }
    std::string error;
    if (rank == 0) {
        try {
            const bool is_scene =
                args.input.size() > 5 && args.input.substr(args.input.size() - 5) == ".json";
            intact::TetMesh mesh;
            std::vector<std::array<int, 4>> elements; // tets, shell triangles, rod segments
            if (is_scene) {
                const auto scene_mesh =
                    intact::build_scene_mesh(intact::io::load_scene(args.input, args.overrides));
                mesh = scene_mesh.mesh;
                elements = intact::partition_elements(scene_mesh);
            } else {
                mesh = intact::io::read_tet_mesh(args.input);
                elements = mesh.tets;
            }
            if (static_cast<long long>(elements.size()) < args.parts) {
                throw intact::InputError("'" + args.input + "' has " + std::to_string(elements.size()) +
                                         " elements, fewer than the " + std::to_string(args.parts) +
                                         " parts asked for; fix: ask for fewer parts");
            }
            const auto graph = intact::partition::build_element_dual_graph(elements);
            const auto parts = intact::partition::partition_graph(graph, args.parts,
                                                                  intact::partition::element_work(elements));
            const auto owners =
                intact::partition::node_owners(elements, parts, static_cast<int>(mesh.nodes.size()));
            intact::log::info() << intact::partition::describe(
                intact::partition::compute_partition_stats(graph, elements, parts, owners, args.parts));
            const std::string path =
                args.output.empty() ? args.input + ".part." + std::to_string(args.parts) : args.output;
            intact::partition::write_partition_file(path, parts, args.parts);
            intact::log::info() << "wrote " << path;
        } catch (const intact::InputError& e) {
            error = e.what();
        }
    }
    error = intact::comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw intact::InputError(error);
    }
    return 0;
}

// The serial tools run on rank 0; other ranks wait for the verdict and the exit status.
int serial_tool(const Arguments& args, MPI_Comm comm, int rank) {
    int status = 0;
    std::string error;
    if (rank == 0) {
        try {
            if (args.command == "check") {
                if (args.input.empty()) {
                    throw intact::InputError(std::string("check needs an output folder\n") + usage_text);
                }
                status = intact::tools::check_output(args.input, std::cout).clean() ? 0 : 1;
            } else if (args.command == "schema") {
                if (!args.input.empty()) {
                    throw intact::InputError("schema takes no argument, got '" + args.input + "'\n" +
                                             usage_text);
                }
                std::cout << intact::io::scene_json_schema().dump(2) << "\n";
            } else if (args.command == "geometry") {
                status = intact::tools::run_geometry_probe(std::cin, std::cout);
            } else {
                if (args.input.empty()) {
                    throw intact::InputError(std::string("ccd-bench needs a folder of query files\n") +
                                             usage_text);
                }
                const auto result = intact::tools::run_ccd_bench(args.input, std::cout);
                status = result.false_negatives == 0 ? 0 : 1;
            }
        } catch (const intact::InputError& e) {
            error = e.what();
        }
    }
    error = intact::comm::agree_on_error(comm, error);
    if (!error.empty()) {
        throw intact::InputError(error);
    }
    INTACT_CHECK_MPI(MPI_Bcast(&status, 1, MPI_INT, 0, comm));
    return status;
}

} // namespace

int main(int argc, char** argv) {
    // 0. For `run`, SIGTERM/SIGUSR1 ask for a checkpoint after the first step that ends after them, from
    // the very start: a Slurm time-limit signal may come while MPI starts, and must not kill the rank.
    std::optional<intact::StopSignals> stop_signals;
    if (argc > 1 && std::string(argv[1]) == "run") {
        stop_signals.emplace();
    }
    // 1. MPI and Kokkos.
    intact::Runtime runtime(argc, argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int status = 0;
    try {
        // 2. Command line (every rank parses the same words).
        const Arguments args = parse_arguments(argc, argv);
        if (args.command == "--help" || args.command == "-h" || args.command == "help") {
            intact::log::info() << usage_text;
        } else if (args.command == "--version") {
            intact::log::info() << "intact " << INTACT_VERSION << " (Kokkos " << KOKKOS_VERSION << ", "
                                << Kokkos::DefaultExecutionSpace::name()
                                << (INTACT_ENABLE_NCCL ? ", NCCL" : "") << ")";
        } else if (args.command == "run") {
            const std::string placement = runtime.placement_report();
            intact::log::info() << "intact " << INTACT_VERSION << " on " << runtime.size() << " rank(s):\n"
                                << placement.substr(0, placement.empty() ? 0 : placement.size() - 1);
            // 3-4. Set up and run.
            status = run(args, comm, argv[0]);
        } else if (args.command == "partition") {
            status = partition(args, comm, runtime.rank());
        } else if (args.command == "check" || args.command == "geometry" || args.command == "ccd-bench" ||
                   args.command == "schema") {
            status = serial_tool(args, comm, runtime.rank());
        } else if (args.command == "render") {
            throw intact::InputError(
                "pictures are made by a program of their own: intact-render OUTPUT_DIR "
                "[--frame N|last] [--color rank|body|speed|displacement] (installed beside "
                "intact; drivers/intact_render.sh in the sources)");
        } else {
            throw intact::InputError("unknown command '" + args.command + "'\n" + usage_text);
        }
    } catch (const intact::InputError& error) {
        // Every rank reaches here with the same message (agreed collectively upstream): rank 0 prints it
        // once, and every rank ends with the same status; no MPI_Abort, no core dump, output untouched.
        if (runtime.rank() == 0) {
            std::fprintf(stderr, "intact: error: %s\n", error.what());
        }
        status = exit_input;
    }
    return status;
}
