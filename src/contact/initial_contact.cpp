#include "src/contact/initial_contact.hpp"

#include "src/contact/broad_phase.hpp"
#include "src/tools/check_output.hpp"

#include <algorithm>
#include <sstream>

namespace intact::contact {

namespace {

// "bodies[b] ("name") triangle (nodes a, b, c)" or "obstacles[k] triangle (vertices a, b, c)".
std::string describe_triangle(const ContactSurface& surface, const std::array<int, 3>& triangle) {
    const int body = surface.vertex_body()[static_cast<std::size_t>(triangle[0])];
    std::ostringstream text;
    if (body >= 0) {
        text << surface.body_label(body) << " triangle (nodes";
    } else {
        text << "obstacles[" << -1 - body << "] triangle (vertices";
    }
    for (int k = 0; k < 3; ++k) {
        const std::string row = describe_surface_row(surface, triangle[static_cast<std::size_t>(k)]);
        text << (k == 0 ? " " : ", ") << row.substr(row.rfind(' ') + 1);
    }
    text << ")";
    return text.str();
}

} // namespace

std::string describe_surface_row(const ContactSurface& surface, int row) {
    const auto& body_of = surface.vertex_body();
    const int body = body_of[static_cast<std::size_t>(row)];
    if (body >= 0) {
        return surface.body_label(body) + " node " +
               std::to_string(surface.vertex_gid()[static_cast<std::size_t>(row)]);
    }
    int first = row; // obstacle rows of one obstacle are contiguous
    while (first > 0 && body_of[static_cast<std::size_t>(first - 1)] == body) {
        --first;
    }
    return "obstacles[" + std::to_string(-1 - body) + "] vertex " + std::to_string(row - first);
}

std::string first_meeting_triangles(const ContactSurface& surface) {
    const auto& triangles = surface.triangles();
    const auto& x = surface.rest_positions();
    const int n = static_cast<int>(triangles.size());
    if (n < 2) {
        return "";
    }
    // 1. Triangle boxes on the device; the hash cell is the mean box size.
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> points("intact::contact::initial_points",
                                                                    x.size());
    Kokkos::View<int* [3], MemSpace> rows("intact::contact::initial_triangles", triangles.size());
    auto points_host = Kokkos::create_mirror_view(points);
    auto rows_host = Kokkos::create_mirror_view(rows);
    for (std::size_t i = 0; i < x.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
            points_host(i, c) = x[i][static_cast<std::size_t>(c)];
        }
    }
    double size = 0.0;
    for (std::size_t t = 0; t < triangles.size(); ++t) {
        double extent = 0.0;
        for (int c = 0; c < 3; ++c) {
            double lo = 1e300, hi = -1e300;
            for (int k = 0; k < 3; ++k) {
                rows_host(t, k) = triangles[t][static_cast<std::size_t>(k)];
                const double v = x[static_cast<std::size_t>(triangles[t][static_cast<std::size_t>(k)])]
                                  [static_cast<std::size_t>(c)];
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
            extent = std::max(extent, hi - lo);
        }
        size += extent / n;
    }
    Kokkos::deep_copy(points, points_host);
    Kokkos::deep_copy(rows, rows_host);
    BoxList boxes;
    triangle_boxes(rows, points, ConstPointField(), 0.0, boxes);
    SpatialHash hash(size > 0.0 ? size : 1.0);
    const auto& pairs = hash.query_self(boxes); // sorted: the first meeting pair is the same on every rank

    // 2. Exact tests; two obstacle triangles are no pair (obstacles may overlap each other).
    const auto& body_of = surface.vertex_body();
    for (const auto& [i, j] : pairs) {
        const auto& s = triangles[static_cast<std::size_t>(i)];
        const auto& t = triangles[static_cast<std::size_t>(j)];
        if (body_of[static_cast<std::size_t>(s[0])] < 0 && body_of[static_cast<std::size_t>(t[0])] < 0) {
            continue;
        }
        if (tools::surface_triangles_meet(s, t, x)) {
            return describe_triangle(surface, s) + " meets " + describe_triangle(surface, t);
        }
    }
    return "";
}

} // namespace intact::contact
