// The CCD benchmark tool (src/tools/ccd_bench) on the shared sample of Wang et al. 2021 and on small
// hand-written files (valid and malformed), and the geometry probe (src/tools/geometry_probe) on
// hand values, finite differences and bad input.
#include "src/core/error.hpp"
#include "src/tools/ccd_bench.hpp"
#include "src/tools/geometry_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using intact::InputError;
using intact::tools::CcdBenchResult;
using intact::tools::run_ccd_bench;
using intact::tools::run_geometry_probe;

// ---- The benchmark on the shared sample -----------------------------------------------------------

TEST(CcdBench, SharedSampleHasNoFalseNegatives) {
    const fs::path directory = fs::path(INTACT_SHARED_DATA_DIR) / "ccd-queries";
    if (!fs::is_directory(directory)) {
        GTEST_SKIP() << "shared CCD queries not found at " << directory.string()
                     << " (set INTACT_SHARED_DATA_DIR to the shared/data folder)";
    }
    std::ostringstream report;
    const CcdBenchResult result = run_ccd_bench(directory.string(), report);
    std::cout << report.str();
    // shared/data/README.md: "2,429 queries" (19,432 rows of 8).
    EXPECT_EQ(result.queries, 2429);
    EXPECT_EQ(result.false_negatives, 0);
    EXPECT_GE(result.false_positives, 0);
    EXPECT_LT(result.false_positives, result.queries);
    EXPECT_GT(result.ns_per_query_mean, 0.0);
    EXPECT_GT(result.ns_per_query_median, 0.0);
    EXPECT_NE(report.str().find("total: 2429 queries, 0 false negatives"), std::string::npos);
}

// ---- Small hand-written files ---------------------------------------------------------------------

/// A fresh directory under the system temp folder, removed at the end of the test.
class TempDirectory {
public:
    explicit TempDirectory(const std::string& name)
        : m_path(fs::temp_directory_path() / ("intact_" + name + "_" + std::to_string(::getpid()))) {
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDirectory() {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    const fs::path& path() const { return m_path; }

    /// Write `text` to the relative path `name` (folders created).
    fs::path write(const std::string& name, const std::string& text) const {
        const fs::path file = m_path / name;
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text;
        return file;
    }

private:
    fs::path m_path;
};

/// 8 CSV rows for a point falling from z = 1 to z = -1 at (x, y) onto the unit right triangle z = 0,
/// written with denominators 2 and 4 to exercise the rationals.
std::string vertex_face_query(int x_quarters, int y_quarters, int flag) {
    std::ostringstream s;
    const std::string f = "," + std::to_string(flag) + "\n";
    for (int z : {1, -1}) {
        s << x_quarters << ",4," << y_quarters << ",4," << 2 * z << ",2" << f;
        s << "0,1,0,1,0,1" << f << "1,1,0,1,0,1" << f << "0,1,1,1,0,1" << f;
    }
    return s.str();
}

TEST(CcdBench, CountsHitsAndMissesOfAHandWrittenFile) {
    const TempDirectory dir("ccd_bench_valid");
    // Hits (inside the triangle), a miss (far outside), and a wrong ground truth on a miss, which
    // the tool must count as a false negative (flag 1, no contact).
    dir.write("set/vertex-face/data.csv",
              vertex_face_query(1, 1, 1) + vertex_face_query(8, 8, 0) + vertex_face_query(8, -8, 1));
    // Edge-edge: edge a crossing the static edge b at t = 0.5.
    dir.write("set/edge-edge/data.csv", "-1,1,0,1,1,1,1\n1,1,0,1,1,1,1\n0,1,-1,1,0,1,1\n0,1,1,1,0,1,1\n"
                                        "-1,1,0,1,-1,1,1\n1,1,0,1,-1,1,1\n0,1,-1,1,0,1,1\n0,1,1,1,0,1,1\n");
    std::ostringstream report;
    const CcdBenchResult result = run_ccd_bench(dir.path().string(), report);
    EXPECT_EQ(result.queries, 4);
    EXPECT_EQ(result.false_negatives, 1);
    EXPECT_EQ(result.false_positives, 0);
    EXPECT_NE(report.str().find("false negative: set/vertex-face/data.csv query 2 (lines 17-24)"),
              std::string::npos)
        << report.str();
    EXPECT_NE(report.str().find("set/edge-edge/data.csv: 1 queries, 0 false negatives"), std::string::npos)
        << report.str();
}

/// The InputError message of run_ccd_bench on `dir` (empty when none was thrown).
std::string bench_error(const TempDirectory& dir) {
    std::ostringstream report;
    try {
        run_ccd_bench(dir.path().string(), report);
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

TEST(CcdBench, MalformedFilesNameTheFileAndLine) {
    {
        const TempDirectory dir("ccd_bench_columns");
        std::string text = vertex_face_query(1, 1, 1);
        text.replace(text.find("0,1,0,1,0,1,1\n1,1"), 14, "0,1,0,1,0,1\n"); // line 2: 6 columns
        dir.write("vertex-face/bad.csv", text);
        const std::string message = bench_error(dir);
        EXPECT_NE(message.find("bad.csv:2: 6 columns"), std::string::npos) << message;
    }
    {
        const TempDirectory dir("ccd_bench_number");
        std::string text = vertex_face_query(1, 1, 1);
        text.replace(text.find("0,1,1,1,0,1,1"), 1, "x"); // line 4: not an integer
        dir.write("edge-edge/bad.csv", text);
        const std::string message = bench_error(dir);
        EXPECT_NE(message.find("bad.csv:4: 'x' is not an integer"), std::string::npos) << message;
    }
    {
        const TempDirectory dir("ccd_bench_rows");
        const std::string text = vertex_face_query(1, 1, 1);
        dir.write("vertex-face/short.csv", text.substr(0, text.rfind("0,1,1,1")));
        const std::string message = bench_error(dir);
        EXPECT_NE(message.find("short.csv:7: the file ends inside a query"), std::string::npos) << message;
    }
    {
        const TempDirectory dir("ccd_bench_kind");
        dir.write("queries/data.csv", vertex_face_query(1, 1, 1));
        const std::string message = bench_error(dir);
        EXPECT_NE(message.find("cannot tell the query kind"), std::string::npos) << message;
    }
    {
        const TempDirectory dir("ccd_bench_empty");
        EXPECT_NE(bench_error(dir).find("no *.csv query files"), std::string::npos);
    }
}

// ---- Geometry probe ---------------------------------------------------------------------------------

/// The numbers of each output line of the probe run on `input`.
std::vector<std::vector<double>> probe(const std::string& input, int* status = nullptr) {
    std::istringstream in(input);
    std::ostringstream out;
    const int rc = run_geometry_probe(in, out);
    if (status != nullptr) {
        *status = rc;
    }
    std::vector<std::vector<double>> lines;
    std::istringstream text(out.str());
    std::string line;
    while (std::getline(text, line)) {
        std::istringstream numbers(line);
        std::vector<double> values;
        double v;
        while (numbers >> v) {
            values.push_back(v);
        }
        lines.push_back(values);
    }
    return lines;
}

TEST(GeometryProbe, PointTriangleDistanceAboveTheInterior) {
    const auto lines = probe("pt_dist 0.2 0.2 1  0 0 0  1 0 0  0 1 0\n");
    ASSERT_EQ(lines.size(), 1u);
    // s = 1; r = (0, 0, 1), weights (1, -(1 - 0.4), -0.2, -0.2).
    const std::vector<double> expected{1, 0, 0, 2, 0, 0, -1.2, 0, 0, -0.4, 0, 0, -0.4};
    ASSERT_EQ(lines[0].size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        EXPECT_NEAR(lines[0][k], expected[k], 1e-15) << k;
    }
}

TEST(GeometryProbe, EdgeEdgeDistanceOfCrossingEdges) {
    const auto lines = probe("ee_dist -1 0 1  1 0 1  0 -1 0  0 1 0\n");
    ASSERT_EQ(lines.size(), 1u);
    const std::vector<double> expected{1, 0, 0, 1, 0, 0, 1, 0, 0, -1, 0, 0, -1};
    ASSERT_EQ(lines[0].size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        EXPECT_NEAR(lines[0][k], expected[k], 1e-15) << k;
    }
}

TEST(GeometryProbe, DistanceGradientsMatchFiniteDifferences) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const std::string command : {"pt_dist", "ee_dist"}) {
        for (int trial = 0; trial < 50; ++trial) {
            std::vector<double> x(12);
            for (double& v : x) {
                v = u(rng);
            }
            const auto line = [&](const std::vector<double>& y) {
                std::ostringstream s;
                s.precision(17);
                s << command;
                for (double v : y) {
                    s << ' ' << v;
                }
                return s.str() + "\n";
            };
            std::string input = line(x);
            const double h = 1e-6;
            for (int k = 0; k < 12; ++k) {
                std::vector<double> plus = x;
                std::vector<double> minus = x;
                plus[k] += h;
                minus[k] -= h;
                input += line(plus) + line(minus);
            }
            const auto lines = probe(input);
            ASSERT_EQ(lines.size(), 25u);
            for (int k = 0; k < 12; ++k) {
                const double fd = (lines[1 + 2 * k][0] - lines[2 + 2 * k][0]) / (2 * h);
                EXPECT_NEAR(lines[0][1 + k], fd, 1e-6 * (1 + std::abs(fd))) << command << " trial " << trial;
            }
        }
    }
}

TEST(GeometryProbe, BarrierAtHalfDhatMatchesTheFormula) {
    const double dhat = 1e-3;
    const double d = dhat / 2;
    std::ostringstream input;
    input.precision(17);
    input << "barrier " << d << ' ' << dhat << "\nbarrier " << 2 * dhat << ' ' << dhat << '\n';
    const auto lines = probe(input.str());
    ASSERT_EQ(lines.size(), 2u);
    ASSERT_EQ(lines[0].size(), 3u);
    const double diff = d - dhat;
    EXPECT_NEAR(lines[0][0], dhat * dhat / 4 * std::log(2.0), 1e-20);
    EXPECT_NEAR(lines[0][1], -2 * diff * std::log(0.5) - diff * diff / d, 1e-17);
    EXPECT_NEAR(lines[0][2], -2 * std::log(0.5) - 4 * diff / d + diff * diff / (d * d), 1e-13);
    EXPECT_EQ(lines[1], std::vector<double>({0, 0, 0}));
    // b' and b'' against central differences of b.
    const double h = 1e-9;
    std::ostringstream fd;
    fd.precision(17);
    fd << "barrier " << d + h << ' ' << dhat << "\nbarrier " << d - h << ' ' << dhat << '\n';
    const auto near_lines = probe(fd.str());
    EXPECT_NEAR((near_lines[0][0] - near_lines[1][0]) / (2 * h), lines[0][1], 1e-6 * std::abs(lines[0][1]));
    EXPECT_NEAR((near_lines[0][1] - near_lines[1][1]) / (2 * h), lines[0][2], 1e-6 * std::abs(lines[0][2]));
}

TEST(GeometryProbe, RawCcd) {
    const auto lines = probe(
        // A point falling through the triangle (contact at t = 0.5), then beside it.
        "pt_ccd_raw 0.2 0.2 1  0 0 0  1 0 0  0 1 0   0.2 0.2 -1  0 0 0  1 0 0  0 1 0  0 1\n"
        "pt_ccd_raw 2 2 1  0 0 0  1 0 0  0 1 0   2 2 -1  0 0 0  1 0 0  0 1 0  0 1\n"
        // Crossing edges (contact at t = 0.5).
        "ee_ccd_raw -1 0 1  1 0 1  0 -1 0  0 1 0   -1 0 -1  1 0 -1  0 -1 0  0 1 0  0 1\n");
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0][0], 1.0);
    EXPECT_GT(lines[0][1], 0.4);
    EXPECT_LE(lines[0][1], 0.5);
    EXPECT_EQ(lines[1], std::vector<double>({0, 1}));
    EXPECT_EQ(lines[2][0], 1.0);
    EXPECT_LE(lines[2][1], 0.5);
}

TEST(GeometryProbe, BadLinesPrintErrorsAndGoOn) {
    std::istringstream in("# a comment\n"
                          "\n"
                          "frobnicate 1 2\n"
                          "pt_dist 1 2 3\n"
                          "barrier 0.5 1\n"
                          "barrier 1e-4 abc\n"
                          "barrier -1 1\n");
    std::ostringstream out;
    EXPECT_NE(run_geometry_probe(in, out), 0);
    std::istringstream lines(out.str());
    std::string line;
    std::vector<std::string> all;
    while (std::getline(lines, line)) {
        all.push_back(line);
    }
    ASSERT_EQ(all.size(), 5u) << out.str();
    EXPECT_EQ(all[0], "error: unknown command 'frobnicate' (line 3)");
    EXPECT_EQ(all[1], "error: pt_dist needs 12 numbers, got 3 (line 4)");
    EXPECT_EQ(all[2].rfind("error", 0), std::string::npos);
    EXPECT_EQ(all[3], "error: bad number 'abc' (line 6)");
    EXPECT_EQ(all[4], "error: barrier needs d > 0 (it is infinite at contact) (line 7)");

    std::istringstream good("barrier 0.5 1\n");
    std::ostringstream good_out;
    EXPECT_EQ(run_geometry_probe(good, good_out), 0);
}

} // namespace
