// PCG's warm start (solver/pcg.hpp) on a real distributed Hessian: started from the solution it takes no
// iteration; started near it, it converges to the same solution in fewer iterations than from zero. Runs
// on 1-4 ranks.
#include "comm/collectives.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "src/solver/pcg.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace intact;

// b(i) = smooth values; x = y + scale · perturbation, on the device.
void fill_rhs(const NodeField& b) {
    Kokkos::parallel_for(
        "fill_rhs", Kokkos::RangePolicy<ExecSpace>(0, b.extent(0)), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                b(i, c) = 1e-3 * (1.0 + 0.1 * c + 0.01 * (i % 13));
            }
        });
}
void perturbed(const NodeField& y, double scale, const NodeField& x) {
    Kokkos::parallel_for(
        "perturbed", Kokkos::RangePolicy<ExecSpace>(0, y.extent(0)), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                x(i, c) = y(i, c) * (1.0 + scale * ((i * 5 + c) % 7 - 3));
            }
        });
}
// max over owned rows and ranks of |a − b|, and of |b|.
std::pair<double, double> difference(MPI_Comm comm, int n, const NodeField& a, const NodeField& b) {
    const auto ha = Kokkos::create_mirror_view_and_copy(HostSpace(), a);
    const auto hb = Kokkos::create_mirror_view_and_copy(HostSpace(), b);
    double d = 0.0, m = 0.0;
    for (int i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) {
            d = std::max(d, std::abs(ha(i, c) - hb(i, c)));
            m = std::max(m, std::abs(hb(i, c)));
        }
    }
    return {comm::allreduce_max(comm, d), comm::allreduce_max(comm, m)};
}

TEST(Pcg, WarmStartFromTheSolutionTakesNoIterationAndNearItFewer) {
    nlohmann::json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 1}};
    scene["bodies"] = nlohmann::json::array(
        {{{"mesh", {{"box", {{"min", {0, 0, 0}}, {"max", {1, 0.2, 0.2}}, {"cells", {10, 2, 2}}}}}},
          {"material", {{"youngs_modulus", 1e6}, {"poisson_ratio", 0.3}, {"density", 1000.0}}},
          {"fixed", {{{"box", {{"min", {-1, -1, -1}}, {"max", {0.01, 1, 1}}}}}}}}});
    scene["contact"] = {{"enabled", false}};
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(scene, "pcg.json"),
                          test::output_dir("pcg", "warm", MPI_COMM_WORLD));
    simulation.step(); // assembles a Hessian
    auto& potential = simulation.potential();
    const int rows = potential.matrix().num_cols();
    NodeField b("b", rows), x("x", rows), y("y", rows);
    fill_rhs(b);
    solver::Pcg pcg(potential.num_owned(), rows, simulation.halo(), potential.free_mask());
    solver::BlockJacobi jacobi(potential.matrix(), potential.free_mask());
    const solver::LinearOperator hessian = [&](const NodeField& in, const NodeField& out) {
        potential.apply(in, out);
    };
    solver::PcgSettings settings;
    settings.tolerance = 1e-10;
    settings.max_iterations = 5000;

    const auto cold = pcg.solve(hessian, jacobi, b, y, settings);
    ASSERT_TRUE(cold.converged);
    ASSERT_GT(cold.iterations, 5);

    settings.warm_start = true;
    Kokkos::deep_copy(x, y);
    const auto exact = pcg.solve(hessian, jacobi, b, x, settings);
    EXPECT_TRUE(exact.converged);
    EXPECT_EQ(exact.iterations, 0);

    perturbed(y, 1e-3, x);
    const auto near = pcg.solve(hessian, jacobi, b, x, settings);
    EXPECT_TRUE(near.converged);
    EXPECT_GT(near.iterations, 0);
    EXPECT_LT(near.iterations, cold.iterations);
    const auto [d, m] = difference(MPI_COMM_WORLD, potential.num_owned(), x, y);
    EXPECT_LT(d, 1e-7 * m);
}

} // namespace
