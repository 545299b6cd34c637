// Output checker: the exact orientation predicate on near-degenerate input (checked against exact integer
// arithmetic), triangle–triangle intersection in every configuration, and check_output on small series
// written with the real VtkSeriesWriter (separate, overlapping, touching and barely apart boxes, inverted
// and flat tets, a multi-step series, pieces merged by global id, missing files, static and moving plane
// and mesh obstacles, a missing or malformed scene.resolved.json) and on a real run.
#include "src/tools/check_output.hpp"

#include "src/core/error.hpp"
#include "src/io/obstacle_output.hpp"
#include "src/io/scene.hpp"
#include "src/io/vtk_writer.hpp"
#include "src/mesh/box_mesh.hpp"
#include "src/mesh/scene_mesh.hpp"
#include "src/simulation.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using intact::GlobalId;
using intact::TetMesh;
using intact::Vec3;
using intact::tools::check_output;
using intact::tools::CheckReport;
using intact::tools::orient3d;
using intact::tools::triangles_intersect;
using Triangle = std::array<Vec3, 3>;

// ---- orient3d ---------------------------------------------------------------------------------------------

/// Exact sign of the z component of (b-a)×(c-a) for coordinates that are multiples of 2^-31 below 1: as
/// integers the differences have at most 31 bits and the products fit in 64.
int reference_normal_z(const Vec3& a, const Vec3& b, const Vec3& c) {
    const auto fixed = [](double x) {
        const double scaled = std::ldexp(x, 31);
        EXPECT_EQ(scaled, std::trunc(scaled)) << x << " is not a multiple of 2^-31";
        return static_cast<long long>(scaled);
    };
    const long long nz = (fixed(b[0]) - fixed(a[0])) * (fixed(c[1]) - fixed(a[1])) -
                         (fixed(b[1]) - fixed(a[1])) * (fixed(c[0]) - fixed(a[0]));
    return (nz > 0) - (nz < 0);
}

TEST(Orient3d, SignFollowsIntactsTetOrientation) {
    const Vec3 o = {0, 0, 0};
    const Vec3 x = {1, 0, 0};
    const Vec3 y = {0, 1, 0};
    const Vec3 z = {0, 0, 1};
    EXPECT_EQ(orient3d(o, x, y, z), 1);
    EXPECT_EQ(orient3d(o, y, x, z), -1);
    EXPECT_EQ(orient3d(o, x, y, {0.25, 0.5, 0.0}), 0);
    // Far below the filter's resolution: a height of one subnormal is still seen.
    const double tiny = std::numeric_limits<double>::denorm_min();
    EXPECT_EQ(orient3d(o, x, y, {0.25, 0.25, tiny}), 1);
    EXPECT_EQ(orient3d(o, x, y, {0.25, 0.25, -tiny}), -1);
    // Repeated points are coplanar.
    EXPECT_EQ(orient3d(o, o, y, z), 0);
}

TEST(Orient3d, PointsCoplanarUpToOneUlpAreClassifiedExactly) {
    // Points on the tilted plane z = x + y with x, y in [0.5, 1) on a 2^-31 grid, so z is exact; d is moved
    // off the plane by -1, 0 or +1 ulp of its z. Then det[b-a, c-a, d-a] = (ulp shift) × ((b-a)×(c-a))_z
    // exactly, and rounded double evaluation gets many of these wrong.
    std::mt19937_64 random(20240611);
    std::uniform_int_distribution<long long> grid(0, (1LL << 30) - 1);
    const auto on_plane = [&] {
        const double x = 0.5 + std::ldexp(static_cast<double>(grid(random)), -31);
        const double y = 0.5 + std::ldexp(static_cast<double>(grid(random)), -31);
        return Vec3{x, y, x + y};
    };
    int naive_wrong = 0;
    int checked = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        const Vec3 a = on_plane();
        const Vec3 b = on_plane();
        const Vec3 c = on_plane();
        const Vec3 base = on_plane();
        const int normal_z = reference_normal_z(a, b, c);
        for (const int direction : {-1, 0, 1}) {
            Vec3 d = base;
            if (direction != 0) {
                d[2] = std::nextafter(d[2], 4.0 * direction);
            }
            const int expected = direction * normal_z;
            ASSERT_EQ(orient3d(a, b, c, d), expected) << "trial " << trial << " direction " << direction;
            const auto sub = [](const Vec3& p, const Vec3& q) {
                return Vec3{p[0] - q[0], p[1] - q[1], p[2] - q[2]};
            };
            const Vec3 u = sub(b, a);
            const Vec3 v = sub(c, a);
            const Vec3 w = sub(d, a);
            const double naive = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                                 u[2] * (v[0] * w[1] - v[1] * w[0]);
            naive_wrong += ((naive > 0) - (naive < 0)) != expected ? 1 : 0;
            ++checked;
        }
    }
    // The inputs are hard: plain double arithmetic fails on a good share of them.
    EXPECT_GT(naive_wrong, checked / 20) << naive_wrong << " of " << checked;
}

// ---- triangles_intersect ----------------------------------------------------------------------------------

const Triangle k_unit = {Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}};

/// Both argument orders, and every cyclic order of the second triangle's vertices, give `expected`.
void expect_intersection(const Triangle& t, const Triangle& u, bool expected) {
    for (int shift = 0; shift < 3; ++shift) {
        const Triangle v = {u[shift], u[(shift + 1) % 3], u[(shift + 2) % 3]};
        EXPECT_EQ(triangles_intersect(t, v), expected) << "shift " << shift;
        EXPECT_EQ(triangles_intersect(v, t), expected) << "shift " << shift << ", swapped";
    }
}

TEST(TrianglesIntersect, Crossing) {
    expect_intersection(k_unit, {Vec3{0.25, 0.25, -1}, Vec3{0.25, 0.25, 1}, Vec3{2, 2, 0}}, true);
    // An edge through the interior; the other triangle's vertices all off the first's plane.
    expect_intersection(k_unit, {Vec3{0.2, 0.2, -1}, Vec3{0.3, 0.2, 1}, Vec3{5, 5, 1}}, true);
    // Missing the hypotenuse by a hair.
    const double past = std::nextafter(0.5, 1.0);
    expect_intersection(k_unit, {Vec3{past, past, -1}, Vec3{past, past, 1}, Vec3{2, 2, 0}}, false);
}

TEST(TrianglesIntersect, TouchingAtAPointCounts) {
    // A vertex on the other's interior, on its edge, on its vertex.
    expect_intersection(k_unit, {Vec3{0.25, 0.25, 0}, Vec3{0.25, 0.5, 1}, Vec3{0.5, 0.25, 1}}, true);
    expect_intersection(k_unit, {Vec3{0.5, 0.5, 0}, Vec3{0.5, 0.5, 1}, Vec3{1, 1, 1}}, true);
    expect_intersection(k_unit, {Vec3{1, 0, 0}, Vec3{2, 0, 1}, Vec3{2, 1, 1}}, true);
    // The same vertex lifted by the smallest positive double: apart.
    const double tiny = std::numeric_limits<double>::denorm_min();
    expect_intersection(k_unit, {Vec3{0.25, 0.25, tiny}, Vec3{0.25, 0.5, 1}, Vec3{0.5, 0.25, 1}}, false);
}

TEST(TrianglesIntersect, CoplanarOverlappingAndDisjoint) {
    // Edges crossing, one inside the other (no edge crossing), sharing part of an edge, touching at a point.
    expect_intersection(k_unit, {Vec3{0.5, 0.5, 0}, Vec3{-0.5, 0.5, 0}, Vec3{0.5, -0.5, 0}}, true);
    expect_intersection(k_unit, {Vec3{0.1, 0.1, 0}, Vec3{0.2, 0.1, 0}, Vec3{0.1, 0.2, 0}}, true);
    expect_intersection(k_unit, {Vec3{0.25, 0, 0}, Vec3{0.75, 0, 0}, Vec3{0.5, -1, 0}}, true);
    expect_intersection(k_unit, {Vec3{0.5, 0.5, 0}, Vec3{1, 1, 0}, Vec3{0.5, 1, 0}}, true);
    // Disjoint, also just past the hypotenuse x + y = 1.
    expect_intersection(k_unit, {Vec3{1, 1, 0}, Vec3{2, 1, 0}, Vec3{1, 2, 0}}, false);
    const double past = std::nextafter(0.5, 1.0);
    expect_intersection(k_unit, {Vec3{past, past, 0}, Vec3{1, 1, 0}, Vec3{0.5, 1, 0}}, false);
    // In the tilted plane x + y + z = 1 (all vertices exactly on it): inside, and outside.
    const Triangle tilted = {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
    expect_intersection(tilted, {Vec3{0.25, 0.25, 0.5}, Vec3{0.5, 0.25, 0.25}, Vec3{0.25, 0.5, 0.25}}, true);
    expect_intersection(tilted, {Vec3{0.75, 0.75, -0.5}, Vec3{1, 0.5, -0.5}, Vec3{0.75, 1, -0.75}}, false);
}

TEST(TrianglesIntersect, ParallelAndClose) {
    const auto shifted = [](double dz) {
        return Triangle{Vec3{0.1, 0.1, dz}, Vec3{1.1, 0.1, dz}, Vec3{0.1, 1.1, dz}};
    };
    expect_intersection(k_unit, shifted(1e-15), false);
    expect_intersection(k_unit, shifted(-1e-300), false);
    expect_intersection(k_unit, shifted(0.0), true);
}

TEST(TrianglesIntersect, DegenerateTriangles) {
    // Collinear vertices: a segment through the unit triangle, and one passing beside it.
    expect_intersection(k_unit, {Vec3{0.25, 0.25, -1}, Vec3{0.25, 0.25, 0}, Vec3{0.25, 0.25, 1}}, true);
    expect_intersection(k_unit, {Vec3{0.75, 0.75, -1}, Vec3{0.75, 0.75, 0}, Vec3{0.75, 0.75, 1}}, false);
    // A point triangle on the hypotenuse, and one beside it.
    expect_intersection(k_unit, {Vec3{0.5, 0.5, 0}, Vec3{0.5, 0.5, 0}, Vec3{0.5, 0.5, 0}}, true);
    expect_intersection(k_unit, {Vec3{0.5, 0.5, 1}, Vec3{0.5, 0.5, 1}, Vec3{0.5, 0.5, 1}}, false);
    // Two skew segments whose projections all cross, and two that meet.
    const Triangle s = {Vec3{0, 0, 0}, Vec3{1, 1, 1}, Vec3{2, 2, 2}};
    expect_intersection(s, {Vec3{0, 2, 1.5}, Vec3{1, 1, 1.5}, Vec3{2, 0, 1.5}}, false);
    expect_intersection(s, {Vec3{0, 2, 1}, Vec3{1, 1, 1}, Vec3{2, 0, 1}}, true);
}

// ---- check_output on written series -----------------------------------------------------------------------

/// A fresh folder under the build tree.
std::string output_dir(const std::string& name) {
    const fs::path dir = fs::path(INTACT_BINARY_DIR) / "test_output" / "check" / name;
    fs::remove_all(dir);
    return dir.string();
}

/// One piece holding `bodies` (body b is bodies[b]): global node and cell ids count on across bodies.
intact::io::VtkPiece scene_piece(const std::vector<TetMesh>& bodies) {
    intact::io::VtkPiece piece;
    for (std::size_t b = 0; b < bodies.size(); ++b) {
        const int offset = static_cast<int>(piece.points.size());
        for (const Vec3& x : bodies[b].nodes) {
            piece.point_global_id.push_back(static_cast<GlobalId>(piece.points.size()));
            piece.points.push_back(x);
            piece.displacement.push_back({0, 0, 0});
            piece.velocity.push_back({0, 0, 0});
        }
        for (const auto& tet : bodies[b].tets) {
            piece.cell_global_id.push_back(static_cast<GlobalId>(piece.cells.size()));
            piece.cells.push_back({tet[0] + offset, tet[1] + offset, tet[2] + offset, tet[3] + offset});
            piece.cell_rank.push_back(0);
            piece.cell_body.push_back(static_cast<int>(b));
        }
    }
    return piece;
}

/// Writes step s of the series at time 0.01 s.
void write_series(const std::string& dir, const std::vector<std::vector<TetMesh>>& steps) {
    intact::io::VtkSeriesWriter writer(MPI_COMM_WORLD, dir);
    for (std::size_t s = 0; s < steps.size(); ++s) {
        writer.write(static_cast<int>(s), 0.01 * static_cast<double>(s), scene_piece(steps[s]));
    }
}

CheckReport check(const std::string& dir) {
    std::ostringstream log;
    CheckReport report = check_output(dir, log);
    std::cout << log.str();
    return report;
}

TetMesh box(double x0, double x1, const std::array<int, 3>& cells = {2, 1, 1}) {
    return intact::make_box_mesh({x0, 0.0, 0.0}, {x1, 1.0, 1.0}, cells);
}

class CheckOutput : public ::testing::Test {
protected:
    void SetUp() override {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size != 1) {
            GTEST_SKIP() << "the synthetic series are written by one rank";
        }
    }
};

TEST_F(CheckOutput, SeparateBoxesAreClean) {
    const std::string dir = output_dir("separate");
    write_series(dir, {{box(0.0, 1.0), box(1.5, 2.5, {3, 2, 2})}});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_TRUE(report.clean());
    EXPECT_EQ(report.steps[0].step_index, 0);
    EXPECT_EQ(report.steps[0].intersecting_pairs, 0);
    EXPECT_EQ(report.steps[0].inverted_tets, 0);
    EXPECT_TRUE(report.steps[0].examples.empty());
}

TEST_F(CheckOutput, OverlappingBoxesIntersect) {
    const std::string dir = output_dir("overlapping");
    write_series(dir, {{box(0.0, 1.0), box(0.5, 1.5)}});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_FALSE(report.clean());
    EXPECT_GT(report.steps[0].intersecting_pairs, 0);
    EXPECT_EQ(report.steps[0].inverted_tets, 0);
    ASSERT_FALSE(report.steps[0].examples.empty());
    EXPECT_LE(report.steps[0].examples.size(), 5u);
    // Inter-body: the examples name triangles of both bodies.
    EXPECT_NE(report.steps[0].examples[0].find("bodies[0] triangle"), std::string::npos)
        << report.steps[0].examples[0];
    EXPECT_NE(report.steps[0].examples[0].find("bodies[1] triangle"), std::string::npos)
        << report.steps[0].examples[0];
}

TEST_F(CheckOutput, FaceToFaceBoxesApartBy1e12AreCleanAndTouchingOnesAreNot) {
    const std::string apart = output_dir("face_apart");
    write_series(apart, {{box(0.0, 1.0), box(1.0 + 1e-12, 2.0)}});
    EXPECT_TRUE(check(apart).clean());

    // Coincident faces touch: closed triangles that meet count.
    const std::string touching = output_dir("face_touching");
    write_series(touching, {{box(0.0, 1.0), box(1.0, 2.0)}});
    const CheckReport report = check(touching);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_GT(report.steps[0].intersecting_pairs, 0);
    EXPECT_EQ(report.steps[0].inverted_tets, 0);
}

TEST_F(CheckOutput, OneInvertedTetIsCounted) {
    TetMesh mesh = box(0.0, 1.0);
    std::swap(mesh.tets[3][1], mesh.tets[3][2]);
    const std::string dir = output_dir("inverted");
    write_series(dir, {{mesh}});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_EQ(report.steps[0].inverted_tets, 1);
    EXPECT_EQ(report.steps[0].intersecting_pairs, 0);
    ASSERT_EQ(report.steps[0].examples.size(), 1u);
    EXPECT_NE(report.steps[0].examples[0].find("tet 3 "), std::string::npos) << report.steps[0].examples[0];
    EXPECT_NE(report.steps[0].examples[0].find("inverted"), std::string::npos) << report.steps[0].examples[0];
}

TEST_F(CheckOutput, FlatTetIsCounted) {
    TetMesh flat;
    flat.nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1.0 / 3.0, 1.0 / 3.0, 0}};
    flat.tets = {{0, 1, 2, 3}};
    const std::string dir = output_dir("flat");
    write_series(dir, {{flat, box(2.0, 3.0)}});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_EQ(report.steps[0].inverted_tets, 1);
    ASSERT_FALSE(report.steps[0].examples.empty());
    EXPECT_NE(report.steps[0].examples.back().find("flat"), std::string::npos)
        << report.steps[0].examples.back();
}

TEST_F(CheckOutput, OnlyTheStepThatIntersectsIsReported) {
    const std::string dir = output_dir("series");
    write_series(dir, {{box(0.0, 1.0), box(2.0, 3.0)},
                       {box(0.0, 1.0), box(1.25, 2.25)},
                       {box(0.0, 1.0), box(0.75, 1.75)},
                       {box(0.0, 1.0), box(1.25, 2.25)}});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 4u);
    EXPECT_FALSE(report.clean());
    for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(report.steps[s].step_index, s);
        EXPECT_DOUBLE_EQ(report.steps[s].time, 0.01 * s);
        EXPECT_NE(report.steps[s].file.find("step_00000" + std::to_string(s) + ".pvtu"), std::string::npos);
        EXPECT_EQ(report.steps[s].inverted_tets, 0);
        if (s == 2) {
            EXPECT_GT(report.steps[s].intersecting_pairs, 0);
        } else {
            EXPECT_EQ(report.steps[s].intersecting_pairs, 0) << "step " << s;
        }
    }
}

/// A box [0,2]×[0,1]×[0,1] written as two pieces (tets left and right of x = 1) of one step, by two
/// single-rank writers whose files are then listed together in one .pvtu. `shift_right_ids` gives the
/// right piece's nodes other global ids, so interface nodes are no longer recognised as the same.
std::string write_two_piece_box(const std::string& name, GlobalId shift_right_ids) {
    const TetMesh mesh = intact::make_box_mesh({0, 0, 0}, {2, 1, 1}, {2, 2, 2});
    const std::string dir = output_dir(name);
    for (int part = 0; part < 2; ++part) {
        intact::io::VtkPiece piece;
        std::vector<int> local(mesh.nodes.size(), -1);
        for (std::size_t t = 0; t < mesh.tets.size(); ++t) {
            const auto& tet = mesh.tets[t];
            double centre = 0.0;
            for (const int node : tet) {
                centre += 0.25 * mesh.nodes[static_cast<std::size_t>(node)][0];
            }
            if ((centre > 1.0) != (part == 1)) {
                continue;
            }
            std::array<int, 4> cell;
            for (int k = 0; k < 4; ++k) {
                int& index = local[static_cast<std::size_t>(tet[k])];
                if (index < 0) {
                    index = static_cast<int>(piece.points.size());
                    piece.points.push_back(mesh.nodes[static_cast<std::size_t>(tet[k])]);
                    piece.point_global_id.push_back(tet[k] + (part == 1 ? shift_right_ids : 0));
                    piece.displacement.push_back({0, 0, 0});
                    piece.velocity.push_back({0, 0, 0});
                }
                cell[k] = index;
            }
            piece.cells.push_back(cell);
            piece.cell_global_id.push_back(static_cast<GlobalId>(t));
            piece.cell_rank.push_back(part);
            piece.cell_body.push_back(0);
        }
        intact::io::VtkSeriesWriter writer(MPI_COMM_WORLD, dir + "/part" + std::to_string(part));
        writer.write(0, 0.0, piece);
    }
    fs::create_directories(dir + "/steps/step_000000");
    fs::copy_file(dir + "/part0/intact.pvd", dir + "/intact.pvd");
    fs::copy_file(dir + "/part0/steps/step_000000/piece_0000.vtu", dir + "/steps/step_000000/piece_0000.vtu");
    fs::copy_file(dir + "/part1/steps/step_000000/piece_0000.vtu", dir + "/steps/step_000000/piece_0001.vtu");
    std::ifstream in(dir + "/part0/steps/step_000000.pvtu");
    std::stringstream text;
    text << in.rdbuf();
    std::string pvtu = text.str();
    const std::string first = "<Piece Source=\"step_000000/piece_0000.vtu\"/>";
    const std::size_t at = pvtu.find(first);
    EXPECT_NE(at, std::string::npos) << pvtu;
    pvtu.insert(at + first.size(), "\n    <Piece Source=\"step_000000/piece_0001.vtu\"/>");
    std::ofstream(dir + "/steps/step_000000.pvtu") << pvtu;
    return dir;
}

TEST_F(CheckOutput, PiecesAreMergedByGlobalId) {
    const CheckReport merged = check(write_two_piece_box("two_pieces", 0));
    ASSERT_EQ(merged.steps.size(), 1u);
    EXPECT_TRUE(merged.clean());

    // Without the shared ids the interface faces are boundary in both pieces and coincide.
    const CheckReport split = check(write_two_piece_box("two_pieces_unmerged", 1000));
    ASSERT_EQ(split.steps.size(), 1u);
    EXPECT_GT(split.steps[0].intersecting_pairs, 0);
}

TEST_F(CheckOutput, MissingFilesAreInputErrorsNamingThem) {
    const std::string empty = output_dir("no_series");
    fs::create_directories(empty);
    try {
        check(empty);
        FAIL() << "no InputError";
    } catch (const intact::InputError& error) {
        std::cout << "InputError: " << error.what() << "\n";
        EXPECT_NE(std::string(error.what()).find("intact.pvd"), std::string::npos) << error.what();
    }

    const std::string dir = output_dir("missing_pvtu");
    write_series(dir, {{box(0.0, 1.0)}, {box(0.0, 1.0)}});
    fs::remove(fs::path(dir) / "steps" / "step_000001.pvtu");
    try {
        check(dir);
        FAIL() << "no InputError";
    } catch (const intact::InputError& error) {
        std::cout << "InputError: " << error.what() << "\n";
        EXPECT_NE(std::string(error.what()).find("step_000001.pvtu"), std::string::npos) << error.what();
    }

    fs::remove(fs::path(dir) / "steps" / "step_000000" / "piece_0000.vtu");
    fs::copy_file(fs::path(dir) / "steps" / "step_000000.pvtu", fs::path(dir) / "steps" / "step_000001.pvtu");
    try {
        check(dir);
        FAIL() << "no InputError";
    } catch (const intact::InputError& error) {
        std::cout << "InputError: " << error.what() << "\n";
        EXPECT_NE(std::string(error.what()).find("piece_0000.vtu"), std::string::npos) << error.what();
    }
}

TEST_F(CheckOutput, CorruptPieceIsAnInputError) {
    const std::string dir = output_dir("corrupt_piece");
    write_series(dir, {{box(0.0, 1.0)}});
    std::ofstream(fs::path(dir) / "steps" / "step_000000" / "piece_0000.vtu") << "<VTKFile type=\"Unstr";
    try {
        check(dir);
        FAIL() << "no InputError";
    } catch (const intact::InputError& error) {
        std::cout << "InputError: " << error.what() << "\n";
        EXPECT_NE(std::string(error.what()).find("piece_0000.vtu"), std::string::npos) << error.what();
    }
}

// ---- obstacles --------------------------------------------------------------------------------------------

/// Writes `obstacles` as the `obstacles` key of `dir`/scene.resolved.json, beside keys the checker ignores.
void write_resolved_scene(const std::string& dir, const nlohmann::json& obstacles) {
    nlohmann::json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 3}};
    scene["obstacles"] = obstacles;
    std::ofstream(fs::path(dir) / "scene.resolved.json") << scene.dump(2) << "\n";
}

/// The same with a list of obstacles (a braced list of one json object would become that object, not an
/// array).
void write_obstacles(const std::string& dir, const std::vector<nlohmann::json>& obstacles) {
    write_resolved_scene(dir, nlohmann::json(obstacles));
}

nlohmann::json plane(double z, double normal_z = 1.0) {
    return {{"plane", {{"point", {0.0, 0.0, z}}, {"normal", {0.0, 0.0, normal_z}}}}};
}

/// A square [-1, 3] × [-1, 2] at height z as an .obj of two triangles, written into `dir`; its absolute path.
std::string write_square_obj(const std::string& dir, const std::string& name, double z) {
    const fs::path path = fs::absolute(fs::path(dir) / name);
    std::ofstream out(path);
    out << "v -1 -1 " << z << "\nv 3 -1 " << z << "\nv 3 2 " << z << "\nv -1 2 " << z << "\n";
    out << "f 1 2 3\nf 1 3 4\n";
    return path.string();
}

nlohmann::json mesh_obstacle(const std::string& file) {
    return {{"mesh", {{"file", file}}}};
}

bool any_example_has(const intact::tools::StepReport& step, const std::string& text) {
    for (const std::string& example : step.examples) {
        if (example.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

TEST_F(CheckOutput, BodyOnOrBehindAPlaneIsReportedAndOneAboveItIsClean) {
    // box(0, 1) with 2×1×1 cells spans z in [0, 1]; its bottom face has 3 × 2 = 6 vertices.
    const std::string above = output_dir("plane_above");
    write_series(above, {{box(0.0, 1.0)}});
    write_obstacles(above, {plane(-1e-12)});
    const CheckReport clean = check(above);
    ASSERT_EQ(clean.steps.size(), 1u);
    EXPECT_TRUE(clean.obstacles_checked);
    EXPECT_EQ(clean.planes, 1);
    EXPECT_TRUE(clean.clean());
    EXPECT_EQ(clean.steps[0].vertices_behind_planes, 0);

    // Touching: the bottom vertices lie on the plane.
    const std::string on = output_dir("plane_on");
    write_series(on, {{box(0.0, 1.0)}});
    write_obstacles(on, {plane(0.0)});
    const CheckReport touching = check(on);
    ASSERT_EQ(touching.steps.size(), 1u);
    EXPECT_FALSE(touching.clean());
    EXPECT_EQ(touching.steps[0].vertices_behind_planes, 6);
    EXPECT_EQ(touching.steps[0].intersecting_pairs, 0);
    EXPECT_EQ(touching.steps[0].obstacle_triangle_pairs, 0);
    ASSERT_EQ(touching.steps[0].examples.size(), 5u);
    EXPECT_NE(touching.steps[0].examples[0].find("bodies[0] node "), std::string::npos)
        << touching.steps[0].examples[0];
    EXPECT_NE(touching.steps[0].examples[0].find(" is on obstacles[0] (plane)"), std::string::npos)
        << touching.steps[0].examples[0];

    // A plane just above the top face with its free side below (normal -z): clean. A plane through the
    // middle (the second obstacle): the 6 bottom vertices are behind it.
    const std::string behind = output_dir("plane_behind");
    write_series(behind, {{box(0.0, 1.0)}});
    write_obstacles(behind, {plane(1.0 + 1e-9, -1.0), plane(0.5)});
    const CheckReport report = check(behind);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_EQ(report.planes, 2);
    EXPECT_EQ(report.steps[0].vertices_behind_planes, 6);
    ASSERT_FALSE(report.steps[0].examples.empty());
    EXPECT_NE(report.steps[0].examples[0].find("0.5 m behind obstacles[1] (plane)"), std::string::npos)
        << report.steps[0].examples[0];
    EXPECT_FALSE(any_example_has(report.steps[0], "obstacles[0]"));
}

TEST_F(CheckOutput, MovingPlaneIsReportedOnlyOnceItHasReachedTheBody) {
    // Steps at t = 0, 0.01, 0.02, 0.03; the plane rises at 1 m/s from z = -0.015: at z = -0.015, -0.005,
    // 0.005 and 0.015, so the bottom vertices (z = 0) are behind it in the last two steps.
    const std::string dir = output_dir("plane_moving");
    write_series(dir, {{box(0.0, 1.0)}, {box(0.0, 1.0)}, {box(0.0, 1.0)}, {box(0.0, 1.0)}});
    nlohmann::json rising = plane(-0.015);
    rising["velocity"] = {0.0, 0.0, 1.0};
    write_obstacles(dir, {rising});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 4u);
    EXPECT_FALSE(report.clean());
    const std::array<long long, 4> expected = {0, 0, 6, 6};
    for (std::size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(report.steps[s].vertices_behind_planes, expected[s]) << "step " << s;
        EXPECT_EQ(report.steps[s].clean(), expected[s] == 0) << "step " << s;
    }
    // 0.005 m behind at t = 0.02 (up to the rounding of -0.015 + 1 × 0.02).
    ASSERT_FALSE(report.steps[2].examples.empty());
    EXPECT_NE(report.steps[2].examples[0].find("0.005 m behind obstacles[0]"), std::string::npos)
        << report.steps[2].examples[0];
}

TEST_F(CheckOutput, MeshObstacleMeetingABodyTriangleIsReportedAndASeparatedOneIsNot) {
    // Two boxes apart in x; the obstacle square covers both in x and y.
    const std::vector<TetMesh> bodies = {box(0.0, 1.0), box(1.5, 2.5)};

    const std::string apart = output_dir("mesh_apart");
    write_series(apart, {bodies});
    write_obstacles(apart, {plane(-5.0), mesh_obstacle(write_square_obj(apart, "below.obj", -1e-12))});
    const CheckReport clean = check(apart);
    ASSERT_EQ(clean.steps.size(), 1u);
    EXPECT_EQ(clean.planes, 1);
    EXPECT_EQ(clean.obstacle_meshes, 1);
    EXPECT_TRUE(clean.clean());

    // Through the middle of both boxes (z = 0.5): the side faces of both cross it.
    const std::string through = output_dir("mesh_through");
    write_series(through, {bodies});
    write_obstacles(through, {plane(-5.0), mesh_obstacle(write_square_obj(through, "mid.obj", 0.5))});
    const CheckReport crossing = check(through);
    ASSERT_EQ(crossing.steps.size(), 1u);
    EXPECT_FALSE(crossing.clean());
    EXPECT_GT(crossing.steps[0].obstacle_triangle_pairs, 0);
    EXPECT_EQ(crossing.steps[0].intersecting_pairs, 0);
    EXPECT_EQ(crossing.steps[0].vertices_behind_planes, 0);
    ASSERT_FALSE(crossing.steps[0].examples.empty());
    EXPECT_NE(crossing.steps[0].examples[0].find(" meets obstacles[1] (mesh) triangle "), std::string::npos)
        << crossing.steps[0].examples[0];

    // Touching the bottom faces (z = 0) counts.
    const std::string touching = output_dir("mesh_touching");
    write_series(touching, {bodies});
    write_obstacles(touching, {mesh_obstacle(write_square_obj(touching, "floor.obj", 0.0))});
    EXPECT_GT(check(touching).steps.at(0).obstacle_triangle_pairs, 0);

    // Overlapping bodies are still reported beside a mesh obstacle (one broad phase for both).
    const std::string both = output_dir("mesh_and_overlap");
    write_series(both, {{box(0.0, 1.0), box(0.5, 1.5)}});
    write_obstacles(both, {mesh_obstacle(write_square_obj(both, "floor.obj", -1.0))});
    const CheckReport overlap = check(both);
    EXPECT_GT(overlap.steps.at(0).intersecting_pairs, 0);
    EXPECT_EQ(overlap.steps.at(0).obstacle_triangle_pairs, 0);
}

TEST_F(CheckOutput, MovingMeshObstacleIsReportedOnlyWhileItCutsTheBody) {
    // The square rises at 50 m/s from z = -0.015: z = -0.015, 0.485, 0.985, 1.485 at t = 0 … 0.03.
    const std::string dir = output_dir("mesh_moving");
    write_series(dir, {{box(0.0, 1.0)}, {box(0.0, 1.0)}, {box(0.0, 1.0)}, {box(0.0, 1.0)}});
    nlohmann::json rising = mesh_obstacle(write_square_obj(dir, "square.obj", -0.015));
    rising["velocity"] = {0.0, 0.0, 50.0};
    write_obstacles(dir, {rising});
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 4u);
    for (std::size_t s = 0; s < 4; ++s) {
        const bool cuts = s == 1 || s == 2;
        EXPECT_EQ(report.steps[s].obstacle_triangle_pairs > 0, cuts) << "step " << s;
        EXPECT_EQ(report.steps[s].clean(), !cuts) << "step " << s;
    }
}

void expect_input_error(const std::string& dir, const std::vector<std::string>& texts);

TEST_F(CheckOutput, WrittenObstaclesAreCheckedWhereTheSimulationHeldThem) {
    // The square's motion would cut the box at t = 0.01 and 0.02 (as in the test above), but the written
    // obstacles hold it below the box, as a simulation does whose steps ended before its obstacles reached
    // their targets; the plane is held 5.5 m above its prescribed place at t = 0.03, through the box. The
    // obstacles are written as the simulation writes them (io::ObstacleOutput from the obstacle rows); the
    // check follows the file.
    const std::string dir = output_dir("mesh_held");
    fs::create_directories(dir);
    nlohmann::json rising = mesh_obstacle(write_square_obj(dir, "square.obj", -0.015));
    rising["velocity"] = {0.0, 0.0, 50.0};
    write_obstacles(dir, {plane(-5.0), rising});

    // The same two obstacles as the simulation holds them: a scene and its placed obstacle meshes.
    intact::io::Scene scene;
    scene.obstacles.resize(2);
    scene.obstacles[0].kind = intact::io::Obstacle::Kind::plane;
    scene.obstacles[0].point = {0.0, 0.0, -5.0};
    scene.obstacles[0].normal = {0.0, 0.0, 1.0};
    scene.obstacles[1].kind = intact::io::Obstacle::Kind::mesh;
    scene.obstacles[1].motion.velocity = {0.0, 0.0, 50.0};
    intact::SceneMesh scene_mesh;
    scene_mesh.obstacle_meshes.resize(2);
    intact::TriMesh& square = scene_mesh.obstacle_meshes[1];
    square.nodes = {{-1, -1, -0.015}, {3, -1, -0.015}, {3, 2, -0.015}, {-1, 2, -0.015}};
    square.tris = {{0, 1, 2}, {0, 2, 3}};
    scene_mesh.bbox_min = {0.0, 0.0, 0.0};
    scene_mesh.bbox_max = {2.0, 1.0, 1.0};
    const intact::io::ObstacleOutput obstacles(scene_mesh, scene);
    {
        intact::io::VtkSeriesWriter writer(MPI_COMM_WORLD, dir);
        for (int s = 0; s < 4; ++s) {
            // Obstacle rows: the square's vertices where it stayed, then the plane's point.
            std::vector<Vec3> rows = square.nodes;
            rows.push_back({0.0, 0.0, s == 3 ? 0.5 : -5.0});
            const intact::io::VtkObstacles held = obstacles.at(0.01 * static_cast<double>(s), rows);
            writer.write(s, 0.01 * static_cast<double>(s), scene_piece({box(0.0, 1.0)}), &held);
        }
    }
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 4u);
    for (std::size_t s = 0; s < 4; ++s) {
        EXPECT_EQ(report.steps[s].obstacle_triangle_pairs, 0) << "step " << s;
        EXPECT_EQ(report.steps[s].vertices_behind_planes > 0, s == 3) << "step " << s;
    }
}

TEST_F(CheckOutput, ACorruptWrittenObstacleFileIsOneInputErrorNamingIt) {
    const std::string dir = output_dir("obstacles_corrupt");
    fs::create_directories(dir);
    write_obstacles(dir, {plane(-5.0)});
    {
        intact::io::VtkSeriesWriter writer(MPI_COMM_WORLD, dir);
        intact::io::VtkObstacles held;
        held.points = {{-9, -9, -5}, {9, -9, -5}, {9, 9, -5}, {-9, 9, -5}};
        held.cells = {{0, 1, 2, 3}};
        held.cell_obstacle = {0};
        writer.write(0, 0.0, scene_piece({box(0.0, 1.0)}), &held);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<fs::path> written;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.path().filename() == "obstacles.vtu") {
            written.push_back(entry.path());
        }
    }
    ASSERT_EQ(written.size(), 1u);
    if (rank == 0) {
        std::ofstream(written[0]) << "<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece Number";
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_input_error(dir, {written[0].string(), "cannot be read as a VTK unstructured grid"});
}

TEST_F(CheckOutput, WithoutTheResolvedSceneObstaclesAreNotCheckedAndTheLogSaysSo) {
    const std::string dir = output_dir("no_resolved_scene");
    write_series(dir, {{box(0.0, 1.0)}});
    std::ostringstream log;
    const CheckReport report = check_output(dir, log);
    std::cout << log.str();
    EXPECT_FALSE(report.obstacles_checked);
    EXPECT_TRUE(report.clean());
    EXPECT_NE(log.str().find("obstacles not checked: '" + dir + "/scene.resolved.json' not found"),
              std::string::npos)
        << log.str();
    EXPECT_NE(
        log.str().find("clean (no intersecting triangles, no inverted tetrahedra; obstacles not checked)"),
        std::string::npos)
        << log.str();
}

/// check(dir) throws an InputError whose message holds every one of `texts`.
void expect_input_error(const std::string& dir, const std::vector<std::string>& texts) {
    try {
        check(dir);
        ADD_FAILURE() << "no InputError";
    } catch (const intact::InputError& error) {
        std::cout << "InputError: " << error.what() << "\n";
        for (const std::string& text : texts) {
            EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
        }
    }
}

TEST_F(CheckOutput, MalformedObstacleEntryIsAnInputErrorNamingTheKey) {
    const std::string dir = output_dir("malformed_obstacles");
    write_series(dir, {{box(0.0, 1.0)}});
    const std::string file = "scene.resolved.json";

    // Neither "plane" nor "mesh".
    write_obstacles(dir, {plane(-1.0), {{"sphere", {{"radius", 1.0}}}}});
    expect_input_error(dir, {file, "key 'obstacles[1]'", "exactly one of \"plane\" and \"mesh\"", "fix:"});
    // A normal with two components.
    nlohmann::json flat = plane(-1.0);
    flat["plane"]["normal"] = {0.0, 1.0};
    write_obstacles(dir, {flat});
    expect_input_error(dir, {file, "key 'obstacles[0].plane.normal'", "three numbers", "fix:"});
    // A velocity that is not numbers.
    nlohmann::json fast = plane(-1.0);
    fast["velocity"] = {"up", 0, 0};
    write_obstacles(dir, {fast});
    expect_input_error(dir, {file, "key 'obstacles[0].velocity'"});
    // A mesh file that is not there, and one that is not a mesh.
    write_obstacles(dir, {plane(-1.0), mesh_obstacle("/nonexistent/floor.obj")});
    expect_input_error(dir, {file, "key 'obstacles[1].mesh.file'", "/nonexistent/floor.obj", "fix:"});
    const std::string broken = (fs::absolute(fs::path(dir)) / "broken.obj").string();
    std::ofstream(broken) << "v 0 0 0\nf 1 2 3\n";
    write_obstacles(dir, {mesh_obstacle(broken)});
    expect_input_error(dir, {file, "key 'obstacles[0].mesh.file'", "broken.obj"});
    // `obstacles` not an array; and a file that is not JSON.
    write_resolved_scene(dir, plane(-1.0));
    expect_input_error(dir, {file, "key 'obstacles'", "must be an array"});
    std::ofstream(fs::path(dir) / file) << "{\"obstacles\": [";
    expect_input_error(dir, {file, "not valid JSON", "fix:"});
}

TEST_F(CheckOutput, RealSimulationOutputIsClean) {
    nlohmann::json body;
    body["mesh"]["box"] = {{"min", {0.0, 0.0, 0.0}}, {"max", {0.3, 0.2, 0.2}}, {"cells", {6, 4, 4}}};
    body["material"] = {
        {"model", "neo_hookean"}, {"youngs_modulus", 1e4}, {"poisson_ratio", 0.3}, {"density", 1000.0}};
    body["velocity"] = {0.0, 0.5, 0.0};
    body["fixed"] = nlohmann::json::array({{{"box", {{"min", {-1, -1, -1}}, {"max", {1e-9, 1, 1}}}}}});
    nlohmann::json scene;
    scene["time"] = {{"dt", 0.01}, {"steps", 3}};
    scene["bodies"] = nlohmann::json::array({body});
    scene["contact"] = {{"enabled", false}};
    // Far below the hanging box: checked, and not touched.
    scene["obstacles"] = nlohmann::json::array({plane(-10.0)});
    const std::string dir = output_dir("simulation");
    {
        intact::Simulation simulation(MPI_COMM_WORLD, intact::io::parse_scene(scene, "hanging_box.json"),
                                      dir);
        simulation.run();
    }
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 4u);
    EXPECT_TRUE(report.obstacles_checked);
    EXPECT_EQ(report.planes, 1);
    EXPECT_TRUE(report.clean());
}

TEST_F(CheckOutput, SegmentAndPointObstaclesArePlacedMovedAndChecked) {
    // box(0, 1): [0, 1]³. An .obj with a segment and a lone vertex, written at the origin and placed by
    // the resolved scene's scale, rotate_deg and translate, then turned by its angular velocity.
    const std::string dir = output_dir("codim");
    const fs::path obj = fs::absolute(fs::path(dir) / "wire.obj");
    fs::create_directories(dir);
    std::ofstream(obj) << "v 0 0 0\nv 1 0 0\nv 0 0 0.5\nl 1 2\n";
    const auto wire = [&](const intact::Vec3& translate) {
        nlohmann::json entry = mesh_obstacle(obj.string());
        entry["scale"] = 3.0;                   // segment (0,0,0)–(3,0,0), point (0,0,1.5)
        entry["rotate_deg"] = {0.0, 0.0, 90.0}; // segment along +y, point unchanged
        entry["translate"] = {translate[0], translate[1], translate[2]};
        return entry;
    };
    // 1. Clear of the box: the segment at x = −0.5 along y, the point at (−0.5, 0, 1.5): clean.
    write_series(dir, {{box(0.0, 1.0)}});
    write_obstacles(dir, {wire({-0.5, -1.0, 0.5})});
    EXPECT_TRUE(check(dir).clean());
    // 2. The segment through the box (x = 0.5, z = 0.5): it meets side faces; the point (0.5, −1, 2) is out.
    write_obstacles(dir, {wire({0.5, -1.0, 0.5})});
    CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_GT(report.steps[0].obstacle_triangle_pairs, 0);
    EXPECT_TRUE(any_example_has(report.steps[0], "(mesh) segment 0")) << report.steps[0].examples.front();
    // 3. Only the point inside: translate (0.5, 0.5, −1) puts the segment below the box at z = −1 and the
    //    point at (0.5, 0.5, 0.5), touching no boundary triangle.
    write_obstacles(dir, {wire({0.5, 0.5, -1.0})});
    report = check(dir);
    EXPECT_EQ(report.steps[0].obstacle_vertices_inside, 1);
    EXPECT_EQ(report.steps[0].obstacle_triangle_pairs, 0);
    EXPECT_TRUE(any_example_has(report.steps[0], "obstacles[0] (mesh) vertex 2 is inside bodies[0]"));
    // 4. Rotating: the point starts outside at (1.5, 0.5, 0.5) and turns about the z axis through (1, 0.5)
    //    at 100 π rad/s: half a turn at the second step (t = 0.01 s) brings it to (0.5, 0.5, 0.5), inside.
    nlohmann::json turning = wire({1.5, 0.5, -1.0});
    turning["angular_velocity"] = {0.0, 0.0, 100.0 * 3.14159265358979323846};
    turning["center"] = {1.0, 0.5, 0.0};
    write_series(dir, {{box(0.0, 1.0)}, {box(0.0, 1.0)}});
    write_obstacles(dir, {turning});
    report = check(dir);
    ASSERT_EQ(report.steps.size(), 2u);
    EXPECT_EQ(report.steps[0].obstacle_vertices_inside, 0);
    EXPECT_EQ(report.steps[1].obstacle_vertices_inside, 1);
}

} // namespace

TEST_F(CheckOutput, MessagesNameBodiesByTheirSceneNames) {
    // bodies[0] is named in the resolved scene; bodies[1] carries the default name, which is no name.
    const std::string dir = output_dir("named_bodies");
    write_series(dir, {{box(0.0, 1.0), box(0.5, 1.5)}});
    nlohmann::json scene;
    scene["bodies"] = {{{"name", "left"}}, {{"name", "body1"}}};
    std::ofstream(fs::path(dir) / "scene.resolved.json") << scene.dump(2) << "\n";
    const CheckReport report = check(dir);
    ASSERT_EQ(report.steps.size(), 1u);
    EXPECT_TRUE(any_example_has(report.steps[0], "bodies[0] (\"left\") triangle"))
        << report.steps[0].examples[0];
    EXPECT_TRUE(any_example_has(report.steps[0], "bodies[1] triangle")) << report.steps[0].examples[0];
}
