// Implicit elastodynamics end to end on 1-4 ranks: free fall, momentum, patch test, cantilever,
// inversion safety and rank-count equivalence.
#include "comm/collectives.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <filesystem>
#include <map>

namespace {

using namespace intact;
using nlohmann::json;
using test::box_selector;
using test::gather_positions;
using test::world_rank;
using test::world_size;

// One box body on [min, max] with `cells` hexahedra (6 tets each), contact off, tight solver tolerances.
json box_scene(const std::string& model, std::array<int, 3> cells, const Vec3& max = {0.4, 0.2, 0.2}) {
    json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 10}};
    scene["gravity"] = {0.0, 0.0, -9.81};
    scene["bodies"] = json::array({test::box_body(model, {0.0, 0.0, 0.0}, max, cells, 1e5)});
    scene["contact"] = {{"enabled", false}};
    scene["solver"] = {
        {"newton_tolerance", 1e-9}, {"linear_tolerance", 1e-12}, {"max_linear_iterations", 5000}};
    return scene;
}

json block_scene(const std::string& model, std::array<int, 3> cells) {
    return box_scene(model, cells);
}

Simulation make_simulation(const json& document, const std::string& name) {
    return test::make_simulation(document, "elastodynamics", name);
}

TEST(Elastodynamics, FreeFallMatchesImplicitEulerClosedForm) {
    for (const std::string model : {"neo_hookean", "linear"}) {
        auto document = block_scene(model, {4, 2, 2});
        document["bodies"][0]["velocity"] = {0.5, 0.0, 1.0};
        Simulation simulation = make_simulation(document, "free_fall_" + model);
        const auto start = gather_positions(simulation, MPI_COMM_WORLD);
        simulation.run();
        const auto end = gather_positions(simulation, MPI_COMM_WORLD);
        // x_n = x_0 + n h v_0 + h² g n(n+1)/2 for implicit Euler under constant gravity.
        const double h = 0.01;
        const int n = 10;
        const Vec3 v0{0.5, 0.0, 1.0};
        const Vec3 g{0.0, 0.0, -9.81};
        double error = 0.0;
        for (const auto& [id, x0] : start) {
            for (int c = 0; c < 3; ++c) {
                const double expected = x0[c] + n * h * v0[c] + h * h * g[c] * n * (n + 1) / 2.0;
                error = std::max(error, std::abs(end.at(id)[c] - expected));
            }
        }
        EXPECT_LT(error, 1e-10) << model;
    }
}

TEST(Elastodynamics, LinearMomentumIsConservedWithoutExternalForces) {
    auto document = block_scene("neo_hookean", {4, 2, 2});
    document["gravity"] = {0.0, 0.0, 0.0};
    // The momentum changes by h Σ r per step, r the force Newton leaves unbalanced: a tight force balance
    // makes that round-off, so the check below measures the discretisation, not the stopping point.
    document["solver"]["acceleration_tolerance"] = 1e-9;
    Simulation simulation = make_simulation(document, "momentum");
    // A spinning, stretching initial velocity: internal forces act, the total momentum must not move.
    const auto& local = simulation.local_mesh();
    auto v = Kokkos::create_mirror_view(simulation.velocities());
    for (int i = 0; i < local.num_local_nodes(); ++i) {
        const Vec3& x = local.rest_position[static_cast<std::size_t>(i)];
        v(i, 0) = 0.3 - 4.0 * (x[1] - 0.1) + 2.0 * x[0];
        v(i, 1) = 4.0 * (x[0] - 0.2);
        v(i, 2) = -1.0 * x[2];
    }
    Kokkos::deep_copy(simulation.velocities(), v);
    auto momentum = [&] {
        const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
        const auto vel = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
        std::array<double, 4> p{0.0, 0.0, 0.0, 0.0}; // and Σ m |v| for scale
        for (int i = 0; i < local.num_owned_nodes; ++i) {
            for (int c = 0; c < 3; ++c) {
                p[static_cast<std::size_t>(c)] += mass(i) * vel(i, c);
            }
            p[3] +=
                mass(i) * std::sqrt(vel(i, 0) * vel(i, 0) + vel(i, 1) * vel(i, 1) + vel(i, 2) * vel(i, 2));
        }
        for (auto& value : p) {
            value = comm::allreduce_sum(MPI_COMM_WORLD, value);
        }
        return p;
    };
    const auto before = momentum();
    double max_strain_energy = 0.0;
    for (int n = 0; n < 10; ++n) {
        EXPECT_TRUE(simulation.step().converged);
        max_strain_energy = std::max(max_strain_energy, simulation.energies()[1]);
    }
    const auto after = momentum();
    EXPECT_GT(max_strain_energy, 1e-3); // the body really deformed
    for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(after[static_cast<std::size_t>(c)], before[static_cast<std::size_t>(c)],
                    1e-11 * before[3]);
    }
}

TEST(Elastodynamics, PatchTestReproducesAnAffineField) {
    // Boundary nodes follow x = X + A X + b exactly (moving with velocity (A X + b) / h would need a
    // field; instead every node starts on the affine map, interior nodes are perturbed, and the
    // boundary is fixed there). Quasi-static: tiny density, no gravity, one big step.
    for (const std::string model :
         {"linear", "neo_hookean", "stvk", "fixed_corotated", "stable_neo_hookean"}) {
        auto document = block_scene(model, {4, 3, 3});
        document["gravity"] = {0.0, 0.0, 0.0};
        document["time"] = {{"dt", 1.0}, {"steps", 1}};
        document["bodies"][0]["material"]["density"] = 1e-9;
        // Fix the whole boundary (the box surface); interior nodes stay free.
        document["bodies"][0]["fixed"] =
            json::array({box_selector({-1, -1, -1}, {2, 2, 0.0}), box_selector({-1, -1, 0.2}, {2, 2, 2}),
                         box_selector({-1, -1, -1}, {2, 0.0, 2}), box_selector({-1, 0.2, -1}, {2, 2, 2}),
                         box_selector({-1, -1, -1}, {0.0, 2, 2}), box_selector({0.4, -1, -1}, {2, 2, 2})});
        Simulation simulation = make_simulation(document, "patch_" + model);
        const double A[3][3] = {{0.05, 0.02, -0.01}, {0.01, -0.03, 0.02}, {-0.02, 0.01, 0.04}};
        const auto& local = simulation.local_mesh();
        auto affine = [&](const Vec3& X) {
            Vec3 y{};
            for (int r = 0; r < 3; ++r) {
                y[static_cast<std::size_t>(r)] = X[static_cast<std::size_t>(r)] + 0.01 * (r + 1);
                for (int c = 0; c < 3; ++c) {
                    y[static_cast<std::size_t>(r)] += A[r][c] * X[static_cast<std::size_t>(c)];
                }
            }
            return y;
        };
        auto x = Kokkos::create_mirror_view(simulation.positions());
        for (int i = 0; i < local.num_local_nodes(); ++i) {
            const Vec3& X = local.rest_position[static_cast<std::size_t>(i)];
            const Vec3 y = affine(X);
            const bool free = local.constraint[static_cast<std::size_t>(i)] == NodeConstraint::free;
            for (int c = 0; c < 3; ++c) {
                x(i, c) =
                    y[static_cast<std::size_t>(c)] + (free ? 0.004 * std::sin(7.0 * X[0] + 3.0 * c) : 0.0);
            }
        }
        Kokkos::deep_copy(simulation.positions(), x);
        Kokkos::deep_copy(simulation.velocities(), 0.0);
        EXPECT_TRUE(simulation.step().converged) << model;
        Kokkos::deep_copy(x, simulation.positions());
        double error = 0.0;
        int free_nodes = 0;
        for (int i = 0; i < local.num_owned_nodes; ++i) {
            const Vec3 y = affine(local.rest_position[static_cast<std::size_t>(i)]);
            free_nodes += local.constraint[static_cast<std::size_t>(i)] == NodeConstraint::free;
            for (int c = 0; c < 3; ++c) {
                error = std::max(error, std::abs(x(i, c) - y[static_cast<std::size_t>(c)]));
            }
        }
        EXPECT_GT(comm::allreduce_sum(MPI_COMM_WORLD, std::int64_t{free_nodes}), 0);
        EXPECT_LT(comm::allreduce_max(MPI_COMM_WORLD, error), 1e-10) << model;
    }
}

TEST(Elastodynamics, CantileverTipDeflectionMatchesEulerBernoulli) {
    // Linear elasticity, ν = 0, small load; quasi-static through one implicit step with a long dt.
    const double L = 1.0, b = 0.1, E = 1e9, rho = 1000.0, g = 9.81;
    json document = box_scene("linear", {100, 10, 10}, {L, b, b});
    document["time"] = {{"dt", 100.0}, {"steps", 1}};
    document["bodies"][0]["material"] = {
        {"model", "linear"}, {"youngs_modulus", E}, {"poisson_ratio", 0.0}, {"density", rho}};
    document["bodies"][0]["fixed"] = json::array({box_selector({-1, -1, -1}, {1e-9, 1, 1})});
    document["solver"] = {
        {"newton_tolerance", 1e-12}, {"linear_tolerance", 1e-10}, {"max_linear_iterations", 20000}};
    Simulation simulation = make_simulation(document, "cantilever");
    simulation.run();
    const auto positions = gather_positions(simulation, MPI_COMM_WORLD);
    const auto& local = simulation.local_mesh();
    // Mean deflection of the tip face (x = L), against δ = q L⁴ / (8 E I), q = ρ g b², I = b⁴ / 12.
    double sum = 0.0;
    int count = 0;
    std::map<GlobalId, Vec3> rest;
    for (int i = 0; i < local.num_owned_nodes; ++i) {
        rest[local.node_global_id[static_cast<std::size_t>(i)]] =
            local.rest_position[static_cast<std::size_t>(i)];
    }
    for (const auto& [id, X] : rest) {
        if (std::abs(X[0] - L) < 1e-12) {
            sum += X[2] - positions.at(id)[2];
            ++count;
        }
    }
    sum = comm::allreduce_sum(MPI_COMM_WORLD, sum);
    count = static_cast<int>(comm::allreduce_sum(MPI_COMM_WORLD, std::int64_t{count}));
    const double deflection = sum / count;
    const double expected = rho * g * b * b * L * L * L * L / (8.0 * E * b * b * b * b / 12.0);
    if (world_rank() == 0) {
        std::printf("cantilever tip deflection %.6e m, Euler-Bernoulli %.6e m, ratio %.4f\n", deflection,
                    expected, deflection / expected);
    }
    EXPECT_NEAR(deflection / expected, 1.0, 0.05);
}

// No material inverts, though only neo-Hookean's energy is infinite there: the invertible models are
// defined for inverted elements, and the step bound keeps them from it all the same
// (ElasticTerm::max_step). Before it covered them, a fixed-corotated bar bending onto a mesh obstacle
// under `al` with A-search ended a step with three inverted tets at 3 ranks. `al` places the prescribed
// rows of its iterate by safe fractions (AlSolver::place_boundary); when it put them on their targets at
// once, this scene ended its second step with flat tets, and the crushing fourth and fifth with inverted
// ones.
TEST(Elastodynamics, NoMaterialInvertsUnderViolentCompression) {
    for (const std::string model :
         {"neo_hookean", "stable_neo_hookean", "fixed_corotated", "stvk", "linear"}) {
        for (const std::string solver : {"ipc", "al", "bal"}) {
            SCOPED_TRACE(model + " with " + solver);
            auto document = block_scene(model, {4, 2, 2});
            document["time"] = {{"dt", 0.05}, {"steps", 8}};
            document["gravity"] = {0.0, 0.0, 0.0};
            // The right face rushes left at 2 m/s: 0.1 m per step against a 0.4 m long soft block.
            document["bodies"][0]["fixed"] = json::array({box_selector({-1, -1, -1}, {1e-9, 1, 1})});
            json moving = box_selector({0.4 - 1e-9, -1, -1}, {1, 1, 1});
            moving["velocity"] = {-2.0, 0.0, 0.0};
            document["bodies"][0]["moving"] = json::array({moving});
            document["bodies"][0]["material"]["youngs_modulus"] = 1e4;
            // al's outer iterations capped at 30 (300 by default): from the fourth step on the face cannot
            // arrive and al's steps run to the cap (each outer iteration's PCG to its own cap on the
            // flattened elements) before the fallback; at 300 the test took 45 s at 2 ranks, at 100 16 s,
            // for the same checks.
            document["solver"] = {{"type", solver}, {"max_newton_iterations", 200}};
            if (solver == "al") {
                document["solver"]["al"] = {{"max_outer_iterations", 30}};
            }
            document["contact"] = {{"enabled", true}}; // al and bal need it; self-contact for all
            Simulation simulation = make_simulation(document, "inversion_" + model + "_" + solver);
            // 5 steps: the moving face's target passes the fixed face (x = 0) in the fifth; the prescribed
            // motion may then not arrive, and no element may invert.
            for (int n = 0; n < 5; ++n) {
                const auto result = simulation.step();
                const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.positions());
                const auto& local = simulation.local_mesh();
                if (n < 3 && model != "stvk") {
                    // Until then the face arrives where its motion takes it, and the step converges. Not
                    // StVK: its resistance to compression peaks at a stretch of 1/√3 and falls beyond, so
                    // the block buckles sideways and the face stops short with every solver. The stable
                    // neo-Hookean face arrives, but ipc's and bal's third steps end unconverged (al's
                    // B < ε does not measure that force balance): that
                    // model is finite for inverted elements, and its minimum at a quarter of the length
                    // inverts one, which the step bound forbids, so each Newton step takes that element to
                    // a fifth of its volume (traced: bounds 0.38, 0.077, 0.016, ...) until the line search
                    // fails.
                    if (model != "stable_neo_hookean") {
                        EXPECT_TRUE(result.converged) << "step " << n + 1;
                    }
                    double face = 0.0; // the largest miss of a moving node
                    for (int i = 0; i < local.num_owned_nodes; ++i) {
                        if (local.rest_position[static_cast<std::size_t>(i)][0] > 0.4 - 1e-9) {
                            face = std::max(face, std::abs(x(i, 0) - (0.4 - 0.1 * (n + 1))));
                        }
                    }
                    EXPECT_LT(comm::allreduce_max(MPI_COMM_WORLD, face), 1e-12) << "step " << n + 1;
                }
                double min_volume = 1e300;
                for (const auto& t : local.tets) {
                    auto p = [&](int k) {
                        const int i = t[static_cast<std::size_t>(k)];
                        return Vec3{x(i, 0), x(i, 1), x(i, 2)};
                    };
                    min_volume = std::min(min_volume, tet_signed_volume(p(0), p(1), p(2), p(3)));
                }
                EXPECT_GT(comm::allreduce_min(MPI_COMM_WORLD, min_volume), 0.0) << "step " << n + 1;
                EXPECT_TRUE(std::isfinite(simulation.energies()[1]));
            }
        }
    }
}

TEST(Elastodynamics, SameTrajectoryOnEveryRankCount) {
    // Several hundred tets, 20 steps, a moving boundary; the 1-rank reference runs on rank 0 alone.
    json document = block_scene("neo_hookean", {6, 3, 3});
    document["time"] = {{"dt", 0.01}, {"steps", 20}};
    document["bodies"][0]["fixed"] = json::array({box_selector({-1, -1, -1}, {1e-9, 1, 1})});
    json moving = box_selector({0.4 - 1e-9, -1, -1}, {1, 1, 1});
    moving["velocity"] = {0.0, 0.3, 0.5};
    document["bodies"][0]["moving"] = json::array({moving});
    const auto deviation = test::rank_count_deviation(document, "elastodynamics", "equivalence");
    ASSERT_TRUE(deviation.same_nodes);
    if (world_rank() == 0) {
        std::printf("rank-count equivalence: max |x_P - x_1| / max |x_1| = %.3e on %d ranks\n",
                    deviation.worst / deviation.scale, world_size());
    }
    EXPECT_LT(deviation.worst / deviation.scale, 1e-8);
}

} // namespace
