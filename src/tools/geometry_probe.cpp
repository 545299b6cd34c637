#include "src/tools/geometry_probe.hpp"

#include "kernels/ccd_additive.hpp"
#include "kernels/small_matrix.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace intact::tools {

namespace {

/// A query line that cannot be answered; the message becomes `error: <what> (line N)`.
struct BadQuery {
    std::string what;
};

kernels::Vec3 point_at(const std::vector<double>& v, int index) {
    return kernels::Vec3(v[3 * index], v[3 * index + 1], v[3 * index + 2]);
}

/// Squared point–triangle distance and its gradient: with the closest point c = (1 − b1 − b2) t0 +
/// b1 t1 + b2 t2 and r = p − c, ∇s = 2 (r, −(1 − b1 − b2) r, −b1 r, −b2 r).
double point_triangle_distance_gradient(const kernels::Vec3& p,
                                        const kernels::Vec3& t0,
                                        const kernels::Vec3& t1,
                                        const kernels::Vec3& t2,
                                        kernels::Vec12& g) {
    double b1;
    double b2;
    const double s = kernels::accd::point_triangle_closest(p, t0, t1, t2, b1, b2);
    const kernels::Vec3 r = (p - t0) - b1 * (t1 - t0) - b2 * (t2 - t0);
    g.segment<3>(0) = 2.0 * r;
    g.segment<3>(3) = -2.0 * (1.0 - b1 - b2) * r;
    g.segment<3>(6) = -2.0 * b1 * r;
    g.segment<3>(9) = -2.0 * b2 * r;
    return s;
}

/// Squared segment–segment distance and its gradient: with the closest points (1 − ga) a0 + ga a1 and
/// (1 − gb) b0 + gb b1 and r their difference, ∇s = 2 ((1 − ga) r, ga r, −(1 − gb) r, −gb r).
double edge_edge_distance_gradient(const kernels::Vec3& a0,
                                   const kernels::Vec3& a1,
                                   const kernels::Vec3& b0,
                                   const kernels::Vec3& b1,
                                   kernels::Vec12& g) {
    double ga;
    double gb;
    const double s = kernels::accd::edge_edge_closest(a0, a1, b0, b1, ga, gb);
    const kernels::Vec3 r = (a0 - b0) + ga * (a1 - a0) - gb * (b1 - b0);
    g.segment<3>(0) = 2.0 * (1.0 - ga) * r;
    g.segment<3>(3) = 2.0 * ga * r;
    g.segment<3>(6) = -2.0 * (1.0 - gb) * r;
    g.segment<3>(9) = -2.0 * gb * r;
    return s;
}

/// b, b', b'' of the IPC barrier in the unsquared distance (zero from d̂ on).
void barrier_derivatives(double d, double dhat, double out[3]) {
    if (d >= dhat) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    const double diff = d - dhat;
    const double log_ratio = std::log(d / dhat);
    out[0] = -diff * diff * log_ratio;
    out[1] = -2.0 * diff * log_ratio - diff * diff / d;
    out[2] = -2.0 * log_ratio - 4.0 * diff / d + diff * diff / (d * d);
}

double parse_number(const std::string& token) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(token.c_str(), &end);
    if (end == token.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) {
        throw BadQuery{"bad number '" + token + "'"};
    }
    return value;
}

std::string format_numbers(const std::vector<double>& values) {
    std::string line;
    char buffer[32];
    for (std::size_t k = 0; k < values.size(); ++k) {
        std::snprintf(buffer, sizeof(buffer), "%.17g", values[k]);
        if (k > 0) {
            line += ' ';
        }
        line += buffer;
    }
    return line;
}

void require_count(const std::string& command, const std::vector<double>& args, std::size_t count) {
    if (args.size() != count) {
        throw BadQuery{command + " needs " + std::to_string(count) + " numbers, got " +
                       std::to_string(args.size())};
    }
}

/// The answer to one query line (its numbers already parsed).
std::vector<double> answer(const std::string& command, const std::vector<double>& args) {
    if (command == "pt_dist" || command == "ee_dist") {
        require_count(command, args, 12);
        kernels::Vec12 g;
        const double s = command == "pt_dist"
                             ? point_triangle_distance_gradient(point_at(args, 0), point_at(args, 1),
                                                                point_at(args, 2), point_at(args, 3), g)
                             : edge_edge_distance_gradient(point_at(args, 0), point_at(args, 1),
                                                           point_at(args, 2), point_at(args, 3), g);
        std::vector<double> out{s};
        out.insert(out.end(), g.data(), g.data() + 12);
        return out;
    }
    if (command == "barrier") {
        require_count(command, args, 2);
        if (!(args[1] > 0.0)) {
            throw BadQuery{"barrier needs dhat > 0"};
        }
        if (!(args[0] > 0.0)) {
            throw BadQuery{"barrier needs d > 0 (it is infinite at contact)"};
        }
        double b[3];
        barrier_derivatives(args[0], args[1], b);
        return {b[0], b[1], b[2]};
    }
    if (command == "pt_ccd_raw" || command == "ee_ccd_raw") {
        require_count(command, args, 26);
        const double min_distance = args[24];
        const double t_max = args[25];
        if (min_distance < 0.0) {
            throw BadQuery{command + " needs min_separation >= 0"};
        }
        if (t_max < 0.0) {
            throw BadQuery{command + " needs t_max >= 0"};
        }
        kernels::Vec3 x[8];
        for (int k = 0; k < 8; ++k) {
            x[k] = point_at(args, k);
        }
        double toi = 0.0;
        const bool hit = command == "pt_ccd_raw"
                             ? kernels::point_triangle_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7],
                                                           min_distance, t_max, toi)
                             : kernels::edge_edge_ccd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7],
                                                      min_distance, t_max, toi);
        return {hit ? 1.0 : 0.0, toi};
    }
    throw BadQuery{"unknown command '" + command + "'"};
}

} // namespace

int run_geometry_probe(std::istream& in, std::ostream& out) {
    int status = 0;
    std::string line;
    long long line_number = 0;
    while (std::getline(in, line)) {
        ++line_number;
        std::istringstream tokens(line);
        std::string command;
        if (!(tokens >> command) || command[0] == '#') {
            continue;
        }
        try {
            std::vector<double> args;
            std::string token;
            while (tokens >> token) {
                args.push_back(parse_number(token));
            }
            out << format_numbers(answer(command, args)) << '\n';
        } catch (const BadQuery& bad) {
            out << "error: " << bad.what << " (line " << line_number << ")\n";
            status = 1;
        }
    }
    return status;
}

} // namespace intact::tools
