// Device residency of the contact path (DESIGN.md, "Device residency"): inside a PCG iteration the
// contact gather and the contact product are kernels only. Kokkos' profiling hooks count every
// deep_copy (host↔device or not) and every allocation while the Hessian operator with contact terms is
// applied, and while PCG iterates: both must be zero per iteration. A positive control shows the hooks
// see a copy when there is one. Runs on 1-4 ranks (contact across ranks on more than one).
#include "comm/collectives.hpp"
#include "src/io/scene.hpp"
#include "src/simulation.hpp"
#include "src/solver/pcg.hpp"
#include "tests/simulation_test_utils.hpp"

#include <gtest/gtest.h>

namespace {

using namespace intact;
using nlohmann::json;

struct Counts {
    long long copies = 0;
    long long allocations = 0;
    long long kernels = 0;
};
Counts g_counts;

void count_copy(Kokkos_Profiling_SpaceHandle,
                const char*,
                const void*,
                Kokkos_Profiling_SpaceHandle,
                const char*,
                const void*,
                uint64_t) {
    ++g_counts.copies;
}
void count_allocation(const Kokkos_Profiling_SpaceHandle, const char*, const void*, const uint64_t) {
    ++g_counts.allocations;
}
void count_kernel(const char*, const uint32_t, uint64_t*) {
    ++g_counts.kernels;
}

// Count copies, allocations and kernel launches made by `work`.
template <class Work> Counts counted(Work&& work) {
    Kokkos::fence();
    g_counts = Counts{};
    Kokkos::Tools::Experimental::set_begin_deep_copy_callback(count_copy);
    Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_kernel);
    work();
    Kokkos::fence();
    Kokkos::Tools::Experimental::set_begin_deep_copy_callback(nullptr);
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    return g_counts;
}

// A direction p with every entry in [−5e-3, 5e-3] and a right-hand side b, on the device.
void fill_fields(const NodeField& p, const NodeField& b) {
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<ExecSpace>(0, p.extent(0)), KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                p(i, c) = 1e-3 * ((i * 7 + c * 3) % 11 - 5);
                b(i, c) = 1.0 + 0.1 * c;
            }
        });
}

// Two soft blocks pressed together on a plane with friction: contact pairs between the blocks (across
// ranks when there are several), with the plane, barrier and friction terms.
json pressed_blocks() {
    auto block = [](double x0, double vx) {
        json body;
        body["mesh"]["box"] = {
            {"min", {x0, 0.0, 0.002}}, {"max", {x0 + 0.1, 0.1, 0.102}}, {"cells", {3, 3, 3}}};
        body["material"] = {
            {"model", "neo_hookean"}, {"youngs_modulus", 1e5}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
        body["velocity"] = {vx, 0.0, 0.0};
        return body;
    };
    json s;
    s["time"] = {{"dt", 0.01}, {"steps", 3}};
    s["bodies"] = json::array({block(0.0, 0.3), block(0.1015, -0.3)});
    s["obstacles"] = json::array({{{"plane", {{"point", {0, 0, 0}}, {"normal", {0, 0, 1}}}}}});
    s["contact"] = {{"enabled", true}, {"dhat", 1e-3}, {"friction", 0.3}};
    s["solver"] = {{"type", "ipc"}}; // its barrier term (the default for this scene is `al`)
    return s;
}

TEST(DeviceResidency, ContactPathOfAPcgIterationMakesNoCopiesAndNoAllocations) {
    Simulation simulation(MPI_COMM_WORLD, io::parse_scene(pressed_blocks(), "residency.json"),
                          test::output_dir("residency", "pcg", MPI_COMM_WORLD));
    long long pairs = 0;
    for (int n = 0; n < 3; ++n) {
        pairs = simulation.step().contact_pairs;
    }
    ASSERT_GT(pairs, 0) << "the blocks must be in contact for this test to mean anything";
    auto& potential = simulation.potential();
    ASSERT_EQ(potential.terms().size(), 2u); // barrier and friction

    // A direction with current ghost rows, and the product it goes into.
    const int rows = potential.matrix().num_cols();
    NodeField p("p", rows), y("y", rows), b("b", rows);
    fill_fields(p, b);
    simulation.halo().gather(p);
    potential.apply(p, y); // first use may size buffers

    // 1. The Hessian operator with contact (spmv, contact gather, contact product), ten times.
    const Counts apply = counted([&] {
        for (int k = 0; k < 10; ++k) {
            potential.apply(p, y);
        }
    });
    EXPECT_EQ(apply.copies, 0);
    EXPECT_EQ(apply.allocations, 0);
    EXPECT_GE(apply.kernels, 10 * 3); // spmv, the gather's kernels and the contact product, every time

    // 2. Whole PCG solves: the copies and allocations of 40 iterations equal those of 4 (set-up only).
    solver::Pcg pcg(potential.num_owned(), rows, simulation.halo(), potential.free_mask());
    solver::BlockJacobi jacobi(potential.matrix(), potential.free_mask());
    const solver::LinearOperator hessian = [&](const NodeField& in, const NodeField& out) {
        potential.apply(in, out);
    };
    auto solve = [&](int iterations) {
        solver::PcgSettings settings;
        settings.tolerance = 1e-300; // never converges: exactly `iterations` iterations
        settings.max_iterations = iterations;
        return counted([&] { pcg.solve(hessian, jacobi, b, p, settings); });
    };
    solve(4); // warm-up
    const Counts short_solve = solve(4);
    const Counts long_solve = solve(40);
    EXPECT_EQ(long_solve.copies, short_solve.copies) << "deep copies inside PCG iterations";
    EXPECT_EQ(long_solve.allocations, short_solve.allocations) << "allocations inside PCG iterations";
    EXPECT_GT(long_solve.kernels, short_solve.kernels);

    // 3. Positive control: a real copy to a host mirror is seen.
    auto mirror = Kokkos::create_mirror(HostSpace(), p);
    const Counts control = counted([&] { Kokkos::deep_copy(mirror, p); });
    EXPECT_EQ(control.copies, 1);
}

} // namespace
