// bench_contact: contact throughput and a stacking scene at 1 rank and at all ranks of the job.
//
// Sample runs:
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_contact --cells 12 --steps 20 --repeats 5
//
// Steps: 1. two boxes of cells × cells × 2 hexahedra face to face, 0.4 d̂ apart: time the contact
// derivatives on the device (barrier gradients and PSD Hessians per pair, and their per-row sum into the
// gradient and the contact matrix) and print active pairs per second; 2. a stack of three boxes settling on a
// plane: time `steps` implicit steps on rank 0 alone and on all ranks; print seconds per step, Newton
// iterations, and the strong-scaling efficiency. (CCD throughput: `intact ccd-bench DIR` on the public query
// sample.)
#include "bench_common.hpp"
#include "src/contact/barrier_pairs.hpp"
#include "src/contact/contact_matrix.hpp"
#include "src/contact/contact_model.hpp"
#include "src/core/runtime.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <cstdio>

namespace {

using nlohmann::json;

json box_body(const intact::Vec3& lo, const intact::Vec3& hi, std::array<int, 3> cells) {
    json body;
    body["mesh"]["box"] = {{"min", lo}, {"max", hi}, {"cells", cells}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 2e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    return body;
}

struct StackRun {
    intact::bench::Stats per_step;
    long long newton_iterations = 0;
};

StackRun run_stack(MPI_Comm comm, int steps, int repeats, const std::string& dir) {
    json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({box_body({-0.1, -0.1, 0.002}, {0.1, 0.1, 0.102}, {4, 4, 4}),
                                   box_body({-0.08, -0.07, 0.11}, {0.09, 0.1, 0.19}, {4, 4, 4}),
                                   box_body({-0.06, -0.05, 0.2}, {0.05, 0.06, 0.26}, {4, 4, 4})});
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.3}};
    StackRun run;
    std::vector<double> per_step;
    for (int r = 0; r < repeats; ++r) {
        intact::Simulation simulation(comm, intact::io::parse_scene(scene, "bench_contact_stack"), dir);
        MPI_Barrier(comm);
        Kokkos::Timer timer;
        run.newton_iterations = 0;
        for (int n = 0; n < steps; ++n) {
            run.newton_iterations += simulation.step().iterations;
        }
        double t = timer.seconds() / steps;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        per_step.push_back(t);
    }
    std::sort(per_step.begin(), per_step.end());
    run.per_step = {per_step.front(), per_step[per_step.size() / 2], per_step.back()};
    return run;
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int cells = intact::bench::option(argc, argv, "--cells", 12);
    const int steps = intact::bench::option(argc, argv, "--steps", 20);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 3);

    // 1. Contact derivatives of two boxes face to face (every rank its own copy).
    const double dhat = 1e-3;
    json pair_scene;
    pair_scene["time"] = {{"dt", 0.01}, {"steps", 1}};
    pair_scene["bodies"] = json::array({box_body({0, 0, 0}, {1, 1, 0.1}, {cells, cells, 2}),
                                        box_body({0, 0, 0.1 + 0.4 * dhat}, {1, 1, 0.2}, {cells, cells, 2})});
    const auto scene = intact::io::parse_scene(pair_scene, "bench_contact_pairs");
    const auto scene_mesh = intact::build_scene_mesh(scene);
    const auto local =
        intact::distribute_mesh(MPI_COMM_SELF, scene_mesh, std::vector<int>(scene_mesh.mesh.tets.size(), 0));
    intact::contact::ContactSurface surface(MPI_COMM_SELF, scene_mesh, scene.obstacles, local);
    intact::contact::ContactModel contact(MPI_COMM_SELF, surface, dhat);
    intact::NodeField x("intact::bench::surface_positions", local.rest_position.size());
    const auto host_x = Kokkos::create_mirror_view(x);
    for (std::size_t i = 0; i < local.rest_position.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
            host_x(i, c) = local.rest_position[i][static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(x, host_x);
    const intact::contact::SurfaceField obstacles = surface.make_field("intact::bench::obstacles");
    surface.obstacle_positions(0.0, obstacles);
    surface.begin_step(x);
    contact.update(x, obstacles);
    const auto pairs = static_cast<double>(contact.active().count);
    // The device path of one assembly: barrier gradients and PSD Hessians per pair, then the per-row sum
    // into the gradient, the diagonal blocks and the kept contact blocks.
    intact::solver::BlockMatrix matrix(local.num_owned_nodes, local.num_local_nodes(), local.tets);
    intact::contact::ContactMatrix contact_matrix(local.num_owned_nodes);
    intact::contact::PairStencils stencils;
    intact::NodeField gradient("intact::bench::gradient", local.rest_position.size());
    const auto assembly = intact::bench::time_repeated(MPI_COMM_WORLD, 2 * repeats, [&] {
        intact::contact::barrier_derivatives(contact.active(), contact.positions(), contact.topology(),
                                             dhat * dhat, 1.0, true, stencils);
        contact_matrix.assemble({&stencils}, contact.topology(), gradient, &matrix);
    });

    // 2. Stack on rank 0 alone, then on all ranks.
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, runtime.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    StackRun one;
    if (runtime.rank() == 0) {
        one = run_stack(alone, steps, repeats, "/tmp/intact_bench_contact/np1");
        MPI_Comm_free(&alone);
    }
    MPI_Bcast(&one.per_step, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&one.newton_iterations, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    const StackRun all = run_stack(MPI_COMM_WORLD, steps, repeats,
                                   "/tmp/intact_bench_contact/np" + std::to_string(runtime.size()));

    if (runtime.rank() == 0) {
        std::printf("bench_contact: %d rank(s), %s, %d thread(s) per rank\n", runtime.size(),
                    Kokkos::DefaultExecutionSpace::name(),
                    static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
        std::printf("contact derivatives: %.0f active pairs, %.5f / %.5f / %.5f s (min/median/max), "
                    "%.3f M pairs/s (median)\n",
                    pairs, assembly.min, assembly.median, assembly.max, pairs / assembly.median * 1e-6);
        std::printf("stack of 3 boxes on a plane (1152 tets, friction 0.3), %d steps:\n", steps);
        std::printf("%-8s %14s %14s %14s %18s\n", "ranks", "min s/step", "median s/step", "max s/step",
                    "Newton iterations");
        std::printf("%-8d %14.4f %14.4f %14.4f %18lld\n", 1, one.per_step.min, one.per_step.median,
                    one.per_step.max, one.newton_iterations);
        std::printf("%-8d %14.4f %14.4f %14.4f %18lld\n", runtime.size(), all.per_step.min,
                    all.per_step.median, all.per_step.max, all.newton_iterations);
        std::printf("strong-scaling efficiency on %d ranks (medians): %.1f %%\n", runtime.size(),
                    100.0 * one.per_step.median / (runtime.size() * all.per_step.median));
    }
    return 0;
}
