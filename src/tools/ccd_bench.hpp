#pragma once
/// @file ccd_bench.hpp
/// @brief `intact ccd-bench`: additive CCD (kernels/ccd_additive.hpp) over the CCD benchmark queries of
/// Wang et al. 2021 ("A Large Scale Benchmark and an Inclusion-Based Algorithm for Continuous Collision
/// Detection"), counting false negatives and positives against the benchmark's ground truth and timing
/// each query. Host, serial.
///
/// Input format (shared/data/ccd-queries/README.md): every `*.csv` file under the directory (searched
/// recursively) holds 8 rows per query, each row `xn,xd,yn,yd,zn,zd,flag`: three exact rationals
/// numerator/denominator (arbitrary-length decimal integers) and the 0/1 ground truth, equal on the 8
/// rows. Rows are the 4 vertices at t = 0, then at t = 1: `v, f0, f1, f2` for files under a folder named
/// `vertex-face` (run with point_triangle_ccd) and `ea0, ea1, eb0, eb1` under `edge-edge` (edge_edge_ccd).
/// Each query runs with min_distance 0 and t_max 1.
///
/// Rounding: each rational is converted to the nearest double through long double (numerator and
/// denominator parsed with strtold, divided, rounded to double): within one ulp of the exact value, and
/// exact when it is a double (the Erleben sets are doubles over power-of-two denominators). A rounded
/// query can differ from the exact one in grazing cases; a false negative caused that way is still
/// counted and listed, never hidden.

#include <iosfwd>
#include <string>

namespace intact::tools {

/// Totals of one benchmark run (or one file of it).
struct CcdBenchResult {
    long long queries = 0;
    long long false_negatives = 0; ///< ground truth 1, CCD reported no hit (a missed collision)
    long long false_positives = 0; ///< ground truth 0, CCD reported a hit (conservative, allowed)
    double ns_per_query_mean = 0.0;
    double ns_per_query_median = 0.0;
};

/// Run every query under `directory` and print, to `report`, one line per file (path relative to the
/// directory, queries, false negatives, false positives, ns per query mean and median), one line per
/// false negative, and a total line. Times are wall-clock per query on one host thread, averaged over
/// repetitions for queries faster than a few microseconds.
/// @throws InputError when the directory is missing or holds no *.csv file, when a file's kind cannot be
/// told from its folder names, or when a file is malformed (the message names the file and line).
CcdBenchResult run_ccd_bench(const std::string& directory, std::ostream& report);

} // namespace intact::tools
