// The codimensional-body term on small sheets and rods: hinge and rod-vertex topology, the stencil
// layout (summed per-stencil gradients and Hessians against finite differences of the total energy),
// lumped masses, ownership, and closed forms: the reaction force of a uniaxially stretched membrane,
// the bending energy of a sheet rolled into a cylinder and of a rod bent into an arc.
#include "kernels/shell_membrane.hpp"
#include "src/mesh/codim_elements.hpp"
#include "src/solver/codim_term.hpp"

#include <Eigen/Dense>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

using intact::CodimElements;
using intact::NodeField;
using intact::Vec3;
using intact::solver::CodimMaterial;
using intact::solver::CodimTerm;

constexpr double k_pi = 3.14159265358979323846;

// A flat sheet [0, length] × [0, width] at z = 0 with nx × ny cells, each split by its (0,0)-(1,1)
// diagonal. Node (i, j) is i + (nx + 1) j.
struct Sheet {
    std::vector<Vec3> nodes;
    CodimElements elements;
};

Sheet make_sheet(double length, double width, int nx, int ny) {
    Sheet sheet;
    for (int j = 0; j <= ny; ++j) {
        for (int i = 0; i <= nx; ++i) {
            sheet.nodes.push_back({length * i / nx, width * j / ny, 0.0});
        }
    }
    const auto id = [&](int i, int j) { return i + (nx + 1) * j; };
    for (int j = 0; j < ny; ++j) {
        for (int i = 0; i < nx; ++i) {
            sheet.elements.triangles.push_back({id(i, j), id(i + 1, j), id(i + 1, j + 1)});
            sheet.elements.triangles.push_back({id(i, j), id(i + 1, j + 1), id(i, j + 1)});
        }
    }
    sheet.elements.triangle_body.assign(sheet.elements.triangles.size(), 0);
    sheet.elements.num_owned_triangles = static_cast<int>(sheet.elements.triangles.size());
    intact::add_hinges(sheet.elements);
    sheet.elements.num_owned_hinges = static_cast<int>(sheet.elements.hinges.size());
    return sheet;
}

CodimMaterial shell(double E, double nu, double thickness, double density, bool neo_hookean = false) {
    CodimMaterial m;
    m.kind = CodimMaterial::Kind::shell;
    m.membrane = neo_hookean ? CodimMaterial::Membrane::neo_hookean : CodimMaterial::Membrane::stvk;
    m.mu = E / (2.0 * (1.0 + nu));
    m.lambda = intact::kernels::plane_stress_lambda(m.mu, E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)));
    m.thickness = thickness;
    m.bending_stiffness = E * thickness * thickness * thickness / (12.0 * (1.0 - nu * nu));
    m.density = density;
    return m;
}

// A straight rod of n segments along x, node k at (k L / n, 0, 0).
struct Rod {
    std::vector<Vec3> nodes;
    CodimElements elements;
};

Rod make_rod(double length, int n) {
    Rod rod;
    for (int k = 0; k <= n; ++k) {
        rod.nodes.push_back({length * k / n, 0.0, 0.0});
    }
    for (int k = 0; k < n; ++k) {
        rod.elements.segments.push_back({k, k + 1});
    }
    rod.elements.segment_body.assign(static_cast<std::size_t>(n), 0);
    rod.elements.num_owned_segments = n;
    intact::add_rod_vertices(rod.elements);
    rod.elements.num_owned_rod_vertices = static_cast<int>(rod.elements.rod_vertices.size());
    return rod;
}

CodimMaterial rod_material(double E, double radius, double density) {
    CodimMaterial m;
    m.kind = CodimMaterial::Kind::rod;
    m.radius = radius;
    m.density = density;
    m.stretch_stiffness = E * k_pi * radius * radius;
    m.bending_stiffness = E * k_pi * radius * radius * radius * radius / 4.0;
    return m;
}

NodeField to_field(const std::vector<Vec3>& points) {
    NodeField x("x", points.size());
    auto host = Kokkos::create_mirror_view(x);
    for (std::size_t n = 0; n < points.size(); ++n) {
        for (int c = 0; c < 3; ++c) {
            host(n, c) = points[n][static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(x, host);
    return x;
}

// The term's total gradient (per node) and Hessian (dense), summed from its stencils on the host.
struct Assembled {
    Eigen::VectorXd gradient;
    Eigen::MatrixXd hessian;
};

Assembled assemble(CodimTerm& term, const std::vector<Vec3>& points) {
    term.evaluate(to_field(points), true);
    const auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), term.gradients());
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), term.hessians());
    const int n = static_cast<int>(points.size());
    Assembled out{Eigen::VectorXd::Zero(3 * n), Eigen::MatrixXd::Zero(3 * n, 3 * n)};
    const auto& stencils = term.host_stencils();
    for (std::size_t s = 0; s < stencils.size(); ++s) {
        for (int a = 0; a < 4; ++a) {
            const int na = stencils[s][static_cast<std::size_t>(a)];
            if (na < 0) {
                continue;
            }
            for (int i = 0; i < 3; ++i) {
                out.gradient(3 * na + i) += g(s, 3 * a + i);
                for (int b = 0; b < 4; ++b) {
                    const int nb = stencils[s][static_cast<std::size_t>(b)];
                    for (int k = 0; nb >= 0 && k < 3; ++k) {
                        out.hessian(3 * na + i, 3 * nb + k) += h(s, 3 * a + i, 3 * b + k);
                    }
                }
            }
        }
    }
    return out;
}

double energy(const CodimTerm& term, const std::vector<Vec3>& points) {
    return term.energy(to_field(points));
}

// Central differences of the total energy against the assembled gradient, and of the assembled gradient
// against the assembled Hessian (the state must keep every stencil's Hessian PSD, so the projection is
// the identity).
void expect_assembly_matches_fd(CodimTerm& term, const std::vector<Vec3>& points, double rtol) {
    const Assembled at = assemble(term, points);
    const int n = static_cast<int>(points.size());
    const double eps = 1e-7;
    Eigen::VectorXd fd_gradient(3 * n);
    Eigen::MatrixXd fd_hessian(3 * n, 3 * n);
    for (int k = 0; k < 3 * n; ++k) {
        std::vector<Vec3> plus = points;
        std::vector<Vec3> minus = points;
        plus[static_cast<std::size_t>(k / 3)][static_cast<std::size_t>(k % 3)] += eps;
        minus[static_cast<std::size_t>(k / 3)][static_cast<std::size_t>(k % 3)] -= eps;
        fd_gradient(k) = (energy(term, plus) - energy(term, minus)) / (2.0 * eps);
        fd_hessian.col(k) = (assemble(term, plus).gradient - assemble(term, minus).gradient) / (2.0 * eps);
    }
    EXPECT_LE((at.gradient - fd_gradient).cwiseAbs().maxCoeff(), rtol * at.gradient.cwiseAbs().maxCoeff());
    EXPECT_LE((at.hessian - fd_hessian).cwiseAbs().maxCoeff(), rtol * at.hessian.cwiseAbs().maxCoeff());
}

TEST(CodimTopology, HingesAreTheInteriorEdgesAndRodVerticesTheInteriorNodes) {
    const Sheet sheet = make_sheet(1.0, 0.5, 4, 3);
    const int edges = 4 * (3 + 1) + 3 * (4 + 1) + 4 * 3;
    const int boundary = 2 * 4 + 2 * 3;
    EXPECT_EQ(static_cast<int>(sheet.elements.hinges.size()), edges - boundary);
    for (const auto& h : sheet.elements.hinges) {
        // The opposite corners lie on either side of the shared edge: the rest angle is 0, not ±π.
        const Vec3& a = sheet.nodes[static_cast<std::size_t>(h[0])];
        const Vec3& b = sheet.nodes[static_cast<std::size_t>(h[1])];
        const Vec3& c = sheet.nodes[static_cast<std::size_t>(h[2])];
        const Vec3& d = sheet.nodes[static_cast<std::size_t>(h[3])];
        const double side_c = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
        const double side_d = (b[0] - a[0]) * (d[1] - a[1]) - (b[1] - a[1]) * (d[0] - a[0]);
        EXPECT_LT(side_c * side_d, 0.0);
    }
    const Rod rod = make_rod(1.0, 5);
    ASSERT_EQ(rod.elements.rod_vertices.size(), 4u);
    EXPECT_EQ(rod.elements.rod_vertices[0], (std::array<int, 3>{0, 1, 2}));
    // A junction of three segments and a non-manifold edge are reported, without stencils.
    CodimElements star;
    star.segments = {{0, 1}, {0, 2}, {0, 3}};
    star.segment_body = {0, 0, 0};
    EXPECT_EQ(intact::add_rod_vertices(star).rod_junctions, 1);
    EXPECT_TRUE(star.rod_vertices.empty());
    CodimElements fan;
    fan.triangles = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}};
    fan.triangle_body = {0, 0, 0};
    EXPECT_EQ(intact::add_hinges(fan).non_manifold_edges, 1);
    EXPECT_TRUE(fan.hinges.empty());
}

TEST(CodimTerm, SheetGradientAndHessianMatchFiniteDifferencesOfTheTotalEnergy) {
    for (bool neo_hookean : {false, true}) {
        Sheet sheet = make_sheet(0.3, 0.2, 3, 2);
        CodimTerm term(sheet.nodes, sheet.elements, {shell(1e5, 0.3, 1e-3, 500.0, neo_hookean)});
        // Stretched by 10% in both directions and flat: every stencil's Hessian is PSD.
        std::vector<Vec3> x = sheet.nodes;
        for (auto& p : x) {
            p = {1.1 * p[0] + 0.2, 1.1 * p[1] - 0.1, 0.3};
        }
        expect_assembly_matches_fd(term, x, 1e-5);
    }
}

TEST(CodimTerm, RodGradientAndHessianMatchFiniteDifferencesOfTheTotalEnergy) {
    Rod rod = make_rod(0.5, 4);
    CodimTerm term(rod.nodes, rod.elements, {rod_material(1e7, 2e-3, 1000.0)});
    // Stretched and straight along a tilted line.
    std::vector<Vec3> x = rod.nodes;
    for (auto& p : x) {
        p = {1.05 * p[0], 0.5 * 1.05 * p[0], 0.1};
    }
    expect_assembly_matches_fd(term, x, 1e-5);
    // Gradient only at a bent, partly compressed state (the Hessians are projected there).
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> jitter(-0.02, 0.02);
    for (auto& p : x) {
        p = {0.9 * p[0] + jitter(rng), p[1] + jitter(rng), p[2] + jitter(rng)};
    }
    const Assembled at = assemble(term, x);
    for (int k = 0; k < 3 * static_cast<int>(x.size()); ++k) {
        std::vector<Vec3> plus = x;
        std::vector<Vec3> minus = x;
        plus[static_cast<std::size_t>(k / 3)][static_cast<std::size_t>(k % 3)] += 1e-7;
        minus[static_cast<std::size_t>(k / 3)][static_cast<std::size_t>(k % 3)] -= 1e-7;
        const double fd = (energy(term, plus) - energy(term, minus)) / 2e-7;
        EXPECT_NEAR(at.gradient(k), fd, 1e-5 * at.gradient.cwiseAbs().maxCoeff());
    }
}

TEST(CodimTerm, LumpedMassesAddUpToTheBodies) {
    const Sheet sheet = make_sheet(0.4, 0.3, 4, 3);
    const CodimTerm sheet_term(sheet.nodes, sheet.elements, {shell(1e5, 0.3, 2e-3, 800.0)});
    const auto mass = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sheet_term.lumped_mass());
    double total = 0.0;
    for (std::size_t n = 0; n < mass.extent(0); ++n) {
        total += mass(n);
    }
    EXPECT_NEAR(total, 800.0 * 2e-3 * 0.4 * 0.3, 1e-12);
    const Rod rod = make_rod(2.0, 8);
    const CodimTerm rod_term(rod.nodes, rod.elements, {rod_material(1e7, 5e-3, 1200.0)});
    const auto rod_mass = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rod_term.lumped_mass());
    EXPECT_NEAR(rod_mass(0), 1200.0 * k_pi * 25e-6 * 0.25 / 2.0, 1e-12);
    EXPECT_NEAR(rod_mass(4), 1200.0 * k_pi * 25e-6 * 0.25, 1e-12);
}

// A strip stretched by s along x with its free lateral contraction t: the reaction on the right edge is
// the first Piola-Kirchhoff stress times the reference section, s S_xx W h with S_xx = E (s² − 1)/2.
TEST(CodimTerm, UniaxiallyStretchedMembraneReactsWithTheClosedFormForce) {
    const double E = 1e6, nu = 0.3, h = 1e-3, length = 0.4, width = 0.1;
    const Sheet sheet = make_sheet(length, width, 8, 3);
    const CodimMaterial material = shell(E, nu, h, 300.0);
    CodimTerm term(sheet.nodes, sheet.elements, {material});
    for (double s : {1.02, 1.1, 1.3}) {
        const double exx = 0.5 * (s * s - 1.0);
        const double t = std::sqrt(1.0 - 2.0 * material.lambda * exx / (2.0 * material.mu + material.lambda));
        std::vector<Vec3> x = sheet.nodes;
        for (auto& p : x) {
            p = {s * p[0], t * p[1], 0.0};
        }
        const Assembled at = assemble(term, x);
        double reaction = 0.0;
        double interior = 0.0;
        for (std::size_t n = 0; n < x.size(); ++n) {
            if (sheet.nodes[n][0] == length) {
                reaction += at.gradient(3 * static_cast<int>(n));
            } else if (sheet.nodes[n][0] > 0.0) {
                interior = std::max(interior, at.gradient.segment<3>(3 * static_cast<int>(n)).norm());
            }
        }
        const double expected = s * E * exx * width * h;
        EXPECT_NEAR(reaction, expected, 1e-3 * expected) << "s = " << s; // the issue asks for 2%
        EXPECT_LT(interior, 1e-9 * expected) << "interior nodes are in equilibrium, s = " << s;
    }
}

// Rolled about the y axis into a cylinder of radius R, the sheet's hinges store ½ k_b κ² per area over
// the part between the first and the last column of hinges (the hinge calibration, hinge_bending.hpp).
TEST(CodimTerm, SheetRolledIntoACylinderStoresThePlateBendingEnergy) {
    const double length = 0.3, width = 0.2, R = 0.5;
    const int nx = 12, ny = 5;
    const Sheet sheet = make_sheet(length, width, nx, ny);
    CodimMaterial material = shell(1e6, 0.3, 2e-3, 300.0);
    material.mu = 0.0; // bending alone
    material.lambda = 0.0;
    const CodimTerm term(sheet.nodes, sheet.elements, {material});
    std::vector<Vec3> x = sheet.nodes;
    for (auto& p : x) {
        p = {R * std::sin(p[0] / R), p[1], R * (1.0 - std::cos(p[0] / R))};
    }
    const double dx = length / nx;
    const double expected = 0.5 * material.bending_stiffness / (R * R) * (length - dx) * width;
    EXPECT_NEAR(energy(term, x), expected, 1e-9 * expected);
}

// Bent into an arc of radius R, a rod stores ½ E I κ² per length over its interior vertices' shares, to
// O(φ²) (|κb| = 2 tan(φ/2) ≈ φ).
TEST(CodimTerm, RodBentIntoAnArcStoresTheBeamBendingEnergy) {
    const double length = 1.0, R = 2.0;
    const int n = 20;
    const Rod rod = make_rod(length, n);
    CodimMaterial material = rod_material(1e7, 1e-3, 1000.0);
    const CodimTerm term(rod.nodes, rod.elements, {material});
    std::vector<Vec3> x = rod.nodes;
    const double l = length / n;
    const double chord = 2.0 * R * std::sin(0.5 * l / R);
    for (auto& p : x) {
        // Vertices on the circle, at arc spacing l; segments then are chords (stretch handled below).
        p = {R * std::sin(p[0] / R), R * (1.0 - std::cos(p[0] / R)), 0.0};
    }
    const double stretch = n * 0.5 * material.stretch_stiffness * l * std::pow(chord / l - 1.0, 2);
    const double bending = 0.5 * material.bending_stiffness / (R * R) * (length - l);
    EXPECT_NEAR(energy(term, x) - stretch, bending, 1e-3 * bending);
}

TEST(CodimTerm, OnlyOwnedStencilsCountInTheEnergyAndItsChange) {
    Sheet sheet = make_sheet(0.3, 0.2, 3, 2);
    std::vector<Vec3> x = sheet.nodes;
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> jitter(-0.01, 0.01);
    for (auto& p : x) {
        p = {p[0] + jitter(rng), p[1] + jitter(rng), p[2] + jitter(rng)};
    }
    std::vector<Vec3> y = x;
    for (auto& p : y) {
        p[2] += jitter(rng);
    }
    const CodimMaterial material = shell(1e5, 0.3, 1e-3, 500.0, true);
    const CodimTerm all(sheet.nodes, sheet.elements, {material});
    CodimElements part = sheet.elements;
    part.num_owned_triangles = 5;
    part.num_owned_hinges = 4;
    const CodimTerm some(sheet.nodes, part, {material});
    // The owned part alone: the same stencils, the rest dropped.
    CodimElements owned = sheet.elements;
    owned.triangles.resize(5);
    owned.triangle_body.resize(5);
    owned.num_owned_triangles = 5;
    owned.hinges.resize(4);
    owned.hinge_body.resize(4);
    owned.num_owned_hinges = 4;
    const CodimTerm reference(sheet.nodes, owned, {material});
    EXPECT_NEAR(energy(some, x), energy(reference, x), 1e-15);
    EXPECT_LT(energy(some, x), energy(all, x));
    const auto change = all.energy_change(to_field(x), to_field(y));
    EXPECT_NEAR(change.first, energy(all, y) - energy(all, x), 1e-12 * change.second);
    EXPECT_NEAR(change.second, energy(all, x), 1e-15);
}

} // namespace
