// bench_integrators: one contact scene run with every integrator at the same time step.
//
// Sample run (one thread per rank):
//   OMP_NUM_THREADS=1 mpirun -n 2 bench_integrators --cells 4 --steps 120 --rate 120 --repeats 3
//   (--solver ipc by default, the solver of the figures in README "Benchmarks")
//
// Steps: 1. the scene: a soft block (0.1 m, cells³ hexahedra of 6 tets each, E = 1e5 Pa, 1 kg) dropped
// from 5 cm onto a plane with friction 0.2 and a sideways velocity of 0.3 m/s, h = 1 / rate; 2. for each
// integrator, `steps` steps `repeats` times; 3. print per integrator the run's wall time (min / median /
// max over repeats after a warm-up run, slowest rank; the steps only), Newton and PCG iterations, and the
// final over initial total energy (kinetic + elastic + gravitational + contact; gravity datum on the plane,
// so the start holds only the block's height).
#include "bench_common.hpp"
#include "src/core/runtime.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using nlohmann::json;

json drop_scene(const std::string& integrator, const std::string& solver, int cells, int steps, int rate) {
    json body;
    body["mesh"]["box"] = {
        {"min", {0.0, 0.0, 0.05}}, {"max", {0.1, 0.1, 0.15}}, {"cells", {cells, cells, cells}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["velocity"] = {0.3, 0.0, 0.0};
    json scene;
    scene["time"] = {{"dt", 1.0 / rate}, {"steps", steps}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({body});
    scene["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    scene["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.2}};
    scene["integrator"] = {{"type", integrator}};
    scene["solver"] = {{"type", solver}};
    scene["output"] = {{"every", 1000000}};
    return scene;
}

double total_energy(const intact::Simulation& simulation) {
    const auto e = simulation.energies();
    return e[0] + e[1] + e[2] + e[3];
}

} // namespace

int main(int argc, char** argv) {
    intact::Runtime runtime(argc, argv);
    const int cells = intact::bench::option(argc, argv, "--cells", 4);
    const int steps = intact::bench::option(argc, argv, "--steps", 120);
    const int rate = intact::bench::option(argc, argv, "--rate", 120);
    const int repeats = intact::bench::option(argc, argv, "--repeats", 3);
    const std::string solver = intact::bench::text_option(argc, argv, "--solver", "ipc");

    if (runtime.rank() == 0) {
        std::printf("bench_integrators: block of %d tets dropped on a plane (friction 0.2), h = 1/%d s, %d "
                    "steps, solver %s, %d rank(s), %s\n",
                    6 * cells * cells * cells, rate, steps, solver.c_str(), runtime.size(),
                    Kokkos::DefaultExecutionSpace::name());
        std::printf("%-18s %28s %8s %8s %12s\n", "integrator", "wall s (min/median/max)", "Newton", "PCG",
                    "E_end/E_0");
    }
    for (const std::string integrator :
         {"implicit_euler", "bdf2", "newmark", "implicit_midpoint", "a1", "a_search"}) {
        // 1-2. The scene, run `repeats` times after a warm-up; each run builds its own simulation.
        const json scene = drop_scene(integrator, solver, cells, steps, rate);
        long long newton = 0, pcg = 0;
        double ratio = 0.0;
        std::vector<double> times;
        for (int r = 0; r <= repeats; ++r) { // the first run warms up
            intact::Simulation simulation(MPI_COMM_WORLD, intact::io::parse_scene(scene, "bench_integrators"),
                                          "/tmp/intact_bench_integrators/" + integrator);
            const double initial = total_energy(simulation);
            newton = pcg = 0;
            MPI_Barrier(MPI_COMM_WORLD);
            Kokkos::Timer timer;
            for (int n = 0; n < steps; ++n) {
                const auto result = simulation.step();
                newton += result.iterations;
                pcg += result.linear_iterations;
            }
            double t = timer.seconds();
            MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r > 0) {
                times.push_back(t);
            }
            ratio = total_energy(simulation) / initial;
        }
        std::sort(times.begin(), times.end());
        const intact::bench::Stats stats{times.front(), times[times.size() / 2], times.back()};
        // 3. Figures.
        if (runtime.rank() == 0) {
            std::printf("%-18s %8.3f / %8.3f / %8.3f %8lld %8lld %12.4f\n", integrator.c_str(), stats.min,
                        stats.median, stats.max, newton, pcg, ratio);
        }
    }
    return 0;
}
