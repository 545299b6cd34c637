#include "src/tools/ccd_bench.hpp"

#include "kernels/ccd_additive.hpp"
#include "kernels/small_matrix.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace intact::tools {

namespace {

namespace fs = std::filesystem;

enum class QueryKind { vertex_face, edge_edge };

/// One benchmark query: the 4 vertices at t = 0 (x[0..3]) and t = 1 (x[4..7]).
struct Query {
    std::array<kernels::Vec3, 8> x;
    bool collides = false;
    long long first_line = 0;
};

/// Queries faster than this are timed as the mean of k_repetitions back-to-back runs (the clock costs
/// tens of nanoseconds, about a fast query's cost).
constexpr double k_single_run_ns = 5000.0;
constexpr int k_repetitions = 16;

/// Keeps the compiler from merging or hoisting repeated runs of the same (pure, inlined) query.
inline void compiler_barrier() {
#if defined(__GNUC__)
    asm volatile("" ::: "memory");
#endif
}

/// The query kind from the folder names on the path (`vertex-face` or `edge-edge`).
QueryKind kind_of(const fs::path& relative, const fs::path& file) {
    for (const fs::path& part : relative.parent_path()) {
        if (part == "vertex-face") {
            return QueryKind::vertex_face;
        }
        if (part == "edge-edge") {
            return QueryKind::edge_edge;
        }
    }
    throw InputError(
        file.string() +
        ": cannot tell the query kind; put the file under a folder named 'vertex-face' or 'edge-edge'");
}

[[noreturn]] void malformed(const fs::path& file, long long line, const std::string& what) {
    throw InputError(file.string() + ":" + std::to_string(line) + ": " + what +
                     " (expected 7 comma-separated integers: xn,xd,yn,yd,zn,zd,flag; 8 rows per query)");
}

/// A decimal integer token (optional sign, then digits), surrounding blanks allowed; its value rounded
/// to long double.
long double parse_integer(std::string token, const fs::path& file, long long line) {
    const auto first = token.find_first_not_of(" \t\r");
    const auto last = token.find_last_not_of(" \t\r");
    token = first == std::string::npos ? std::string() : token.substr(first, last - first + 1);
    std::size_t k = (!token.empty() && (token[0] == '-' || token[0] == '+')) ? 1 : 0;
    if (k == token.size()) {
        malformed(file, line, "empty number");
    }
    for (; k < token.size(); ++k) {
        if (token[k] < '0' || token[k] > '9') {
            malformed(file, line, "'" + token + "' is not an integer");
        }
    }
    return std::strtold(token.c_str(), nullptr);
}

/// All queries of one file.
std::vector<Query> read_queries(const fs::path& file) {
    std::ifstream in(file);
    if (!in) {
        throw InputError(file.string() + ": cannot open the file");
    }
    std::vector<Query> queries;
    std::string text;
    long long line = 0;
    int row = 0;
    while (std::getline(in, text)) {
        ++line;
        if (text.find_first_not_of(" \t\r") == std::string::npos) {
            continue;
        }
        std::vector<std::string> fields;
        std::size_t start = 0;
        while (true) {
            const std::size_t comma = text.find(',', start);
            fields.push_back(text.substr(start, comma - start));
            if (comma == std::string::npos) {
                break;
            }
            start = comma + 1;
        }
        if (fields.size() != 7) {
            malformed(file, line, std::to_string(fields.size()) + " columns");
        }
        long double values[7];
        for (int c = 0; c < 7; ++c) {
            values[c] = parse_integer(fields[c], file, line);
        }
        if (values[6] != 0.0L && values[6] != 1.0L) {
            malformed(file, line, "ground-truth flag must be 0 or 1");
        }
        if (row == 0) {
            queries.emplace_back();
            queries.back().collides = values[6] == 1.0L;
            queries.back().first_line = line;
        } else if ((values[6] == 1.0L) != queries.back().collides) {
            malformed(file, line, "ground-truth flag differs from the query's first row");
        }
        kernels::Vec3 point;
        for (int c = 0; c < 3; ++c) {
            if (values[2 * c + 1] == 0.0L) {
                malformed(file, line, "zero denominator");
            }
            point(c) = static_cast<double>(values[2 * c] / values[2 * c + 1]);
        }
        queries.back().x[row] = point;
        row = (row + 1) % 8;
    }
    if (row != 0) {
        malformed(file, line, "the file ends inside a query (" + std::to_string(row) + " of 8 rows)");
    }
    return queries;
}

bool run_query(QueryKind kind, const Query& q) {
    const auto& x = q.x;
    double toi;
    if (kind == QueryKind::vertex_face) {
        return kernels::point_triangle_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.0, 1.0, toi);
    }
    return kernels::edge_edge_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], 0.0, 1.0, toi);
}

/// Wall-clock nanoseconds of one run of q (mean of k_repetitions runs for fast queries).
double time_query(QueryKind kind, const Query& q) {
    using clock = std::chrono::steady_clock;
    int hits = 0;
    auto start = clock::now();
    hits += run_query(kind, q);
    compiler_barrier();
    double ns = std::chrono::duration<double, std::nano>(clock::now() - start).count();
    if (ns < k_single_run_ns) {
        start = clock::now();
        for (int r = 0; r < k_repetitions; ++r) {
            hits += run_query(kind, q);
            compiler_barrier();
        }
        ns = std::chrono::duration<double, std::nano>(clock::now() - start).count() / k_repetitions;
    }
    volatile int sink = hits;
    (void)sink;
    return ns;
}

double median(std::vector<double> values) {
    if (values.empty()) {
        return 0.0;
    }
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + mid, values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) {
        return upper;
    }
    return 0.5 * (upper + *std::max_element(values.begin(), values.begin() + mid));
}

double mean(const std::vector<double>& values) {
    double sum = 0.0;
    for (double v : values) {
        sum += v;
    }
    return values.empty() ? 0.0 : sum / values.size();
}

void print_line(std::ostream& report, const std::string& name, const CcdBenchResult& r) {
    char buffer[256];
    std::snprintf(
        buffer, sizeof(buffer),
        "%s: %lld queries, %lld false negatives, %lld false positives, ns/query mean %.1f median %.1f",
        name.c_str(), r.queries, r.false_negatives, r.false_positives, r.ns_per_query_mean,
        r.ns_per_query_median);
    report << buffer << '\n';
}

} // namespace

CcdBenchResult run_ccd_bench(const std::string& directory, std::ostream& report) {
    const fs::path root(directory);
    std::error_code error;
    if (!fs::is_directory(root, error)) {
        throw InputError(
            directory +
            ": not a directory (expected the CCD benchmark queries, e.g. shared/data/ccd-queries)");
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.is_regular_file() && entry.path().extension() == ".csv") {
            files.push_back(entry.path());
        }
    }
    if (files.empty()) {
        throw InputError(directory + ": no *.csv query files found");
    }
    std::sort(files.begin(), files.end());

    report << "ccd-bench: additive CCD (rescaling " << kernels::k_accd_conservative_rescaling
           << ", min_distance 0, t_max 1) on " << directory << '\n';
    CcdBenchResult total;
    std::vector<double> all_ns;
    for (const fs::path& file : files) {
        const fs::path relative = fs::relative(file, root);
        const QueryKind kind = kind_of(relative, file);
        const std::vector<Query> queries = read_queries(file);
        CcdBenchResult result;
        std::vector<double> ns;
        ns.reserve(queries.size());
        for (std::size_t k = 0; k < queries.size(); ++k) {
            const Query& q = queries[k];
            const bool hit = run_query(kind, q);
            ns.push_back(time_query(kind, q));
            if (q.collides && !hit) {
                ++result.false_negatives;
                report << "  false negative: " << relative.string() << " query " << k << " (lines "
                       << q.first_line << "-" << q.first_line + 7 << ")\n";
            }
            if (!q.collides && hit) {
                ++result.false_positives;
            }
        }
        result.queries = static_cast<long long>(queries.size());
        result.ns_per_query_mean = mean(ns);
        result.ns_per_query_median = median(ns);
        print_line(report, relative.string(), result);
        total.queries += result.queries;
        total.false_negatives += result.false_negatives;
        total.false_positives += result.false_positives;
        all_ns.insert(all_ns.end(), ns.begin(), ns.end());
    }
    total.ns_per_query_mean = mean(all_ns);
    total.ns_per_query_median = median(all_ns);
    print_line(report, "total", total);
    return total;
}

} // namespace intact::tools
