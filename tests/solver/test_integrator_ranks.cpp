// The integrators on 1-4 ranks: momentum with gravity off (T4), α = 0 reproducing implicit Euler bit
// for bit (T6), and the same α and positions on every rank count.
#include "tests/solver/time_integration_scenes.hpp"

namespace {

using namespace intact;
using namespace intact::test::integration;
using test::gather_positions;
using test::world_rank;
using test::world_size;

TEST(TimeIntegration, MomentumIsConservedWithGravityOff) {
    // T4: a free, spinning and stretching block; internal forces (and A-search's force difference) sum to
    // zero, so total momentum stays put for every integrator.
    for (const std::string integrator :
         {"implicit_euler", "bdf2", "newmark", "implicit_midpoint", "a_search", "a1"}) {
        json document = beam_scene(integrator, 0.01, 10);
        document["bodies"][0].erase("fixed");
        // The momentum moves by h Σ r a step, r the force left unbalanced (Newton's last linear solve is as
        // loose as its forcing term): a tight force balance makes that round-off.
        document["solver"]["acceleration_tolerance"] = 1e-9;
        document["bodies"][0]["material"]["model"] = "neo_hookean";
        Simulation simulation = make_simulation(document, "momentum_" + integrator);
        const auto& local = simulation.local_mesh();
        auto v = Kokkos::create_mirror_view(simulation.velocities());
        for (int i = 0; i < local.num_local_nodes(); ++i) {
            const Vec3& x = local.rest_position[static_cast<std::size_t>(i)];
            v(i, 0) = 0.3 - 4.0 * (x[2] - 0.05) + 2.0 * x[0];
            v(i, 1) = 1.0 * x[0];
            v(i, 2) = 4.0 * (x[0] - 0.2);
        }
        Kokkos::deep_copy(simulation.velocities(), v);
        simulation.reset_integrator();
        auto momentum = [&] {
            const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.lumped_mass());
            const auto vel = Kokkos::create_mirror_view_and_copy(HostSpace(), simulation.velocities());
            std::array<double, 4> p{0.0, 0.0, 0.0, 0.0};
            for (int i = 0; i < local.num_owned_nodes; ++i) {
                for (std::size_t c = 0; c < 3; ++c) {
                    p[c] += mass(i) * vel(i, static_cast<int>(c));
                    p[3] += mass(i) * std::abs(vel(i, static_cast<int>(c)));
                }
            }
            for (auto& value : p) {
                value = comm::allreduce_sum(MPI_COMM_WORLD, value);
            }
            return p;
        };
        const auto before = momentum();
        for (int n = 0; n < 10; ++n) {
            simulation.step();
        }
        const auto after = momentum();
        for (std::size_t c = 0; c < 3; ++c) {
            EXPECT_NEAR(after[c], before[c], 1e-10 * before[3]) << integrator << " axis " << c;
        }
    }
}

TEST(TimeIntegration, AlphaZeroIsImplicitEulerBitForBit) {
    // T6, through an impact: the same positions and velocities to the last bit.
    const int steps = 24;
    json search = bounce_scene("a_search", steps);
    search["integrator"]["alpha_min"] = 0.0;
    search["integrator"]["alpha_max"] = 0.0;
    Simulation a = make_simulation(search, "alpha_zero");
    Simulation b = make_simulation(bounce_scene("implicit_euler", steps), "alpha_zero_reference");
    for (int n = 0; n < steps; ++n) {
        a.step();
        b.step();
    }
    const auto xa = Kokkos::create_mirror_view_and_copy(HostSpace(), a.positions());
    const auto xb = Kokkos::create_mirror_view_and_copy(HostSpace(), b.positions());
    const auto va = Kokkos::create_mirror_view_and_copy(HostSpace(), a.velocities());
    const auto vb = Kokkos::create_mirror_view_and_copy(HostSpace(), b.velocities());
    int differing = 0;
    for (int i = 0; i < a.local_mesh().num_local_nodes(); ++i) {
        for (int c = 0; c < 3; ++c) {
            differing += (xa(i, c) != xb(i, c) || va(i, c) != vb(i, c)) ? 1 : 0;
        }
    }
    EXPECT_EQ(differing, 0);
    EXPECT_LT(centre_height(a), 0.0999); // it has been falling
}

TEST(TimeIntegration, SameAlphaAndPositionsOnEveryRankCount) {
    const int steps = 20; // through the first impact
    const json document = bounce_scene("a_search", steps);
    auto follow = [&](Simulation& simulation, std::vector<double>& alphas) {
        for (int n = 0; n < steps; ++n) {
            simulation.step();
            alphas.push_back(*simulation.integrator().control()->alpha);
        }
    };
    std::map<GlobalId, Vec3> reference;
    std::vector<double> reference_alphas;
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone);
    if (world_rank() == 0) {
        {
            Simulation serial = make_simulation(document, "ranks", alone);
            follow(serial, reference_alphas);
            reference = gather_positions(serial, alone);
        }
        MPI_Comm_free(&alone);
    }
    Simulation parallel = make_simulation(document, "ranks", MPI_COMM_WORLD);
    std::vector<double> alphas;
    follow(parallel, alphas);
    const auto result = gather_positions(parallel, MPI_COMM_WORLD);
    if (world_rank() == 0) {
        const double worst = max_difference(reference, result) / 0.15;
        double worst_alpha = 0.0;
        for (std::size_t n = 0; n < alphas.size(); ++n) {
            worst_alpha = std::max(worst_alpha, std::abs(alphas[n] - reference_alphas[n]));
        }
        std::printf("A-search on %d ranks vs 1: positions %.3e relative, alpha %.3e\n", world_size(), worst,
                    worst_alpha);
        EXPECT_LT(worst, 1e-6);
        EXPECT_LT(worst_alpha, 1e-6);
    }
}

} // namespace
