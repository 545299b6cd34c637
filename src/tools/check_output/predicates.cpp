/// @file predicates.cpp
/// @brief Exact predicates: floating-point filters with Shewchuk's error bounds and an expansion-arithmetic
/// fallback; orient3d, the plane side, and segment–triangle and triangle–triangle intersection built on
/// them (declared in check_output.hpp and predicates.hpp).

#include "src/tools/check_output/predicates.hpp"

#include "src/tools/check_output.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace intact::tools {
namespace {

// ---- Exact arithmetic ---------------------------------------------------------------------------------
// Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates" (1997).
// An expansion is an exact sum of doubles: nonoverlapping, increasing magnitude, zeros removed (zero is the
// empty expansion), so its sign is the sign of its last component. Only the rare inputs that the
// floating-point filter cannot decide come here, so plain vectors are fast enough.

using Expansion = std::vector<double>;

/// Unit roundoff of double (Shewchuk's epsilon).
constexpr double k_epsilon = 0x1p-53;
/// Error bounds of the filters (Shewchuk's ccwerrboundA and o3derrboundA): when |det| exceeds
/// bound × permanent, the floating-point determinant has the exact sign.
constexpr double k_orient2d_bound = (3.0 + 16.0 * k_epsilon) * k_epsilon;
constexpr double k_orient3d_bound = (7.0 + 56.0 * k_epsilon) * k_epsilon;
/// Error bound of the filter in plane_side: three rounded products of rounded differences and two rounded
/// sums err by less than 4ε (1 + O(ε)) times the sum of the terms' magnitudes; 5ε leaves a margin.
constexpr double k_plane_side_bound = (5.0 + 64.0 * k_epsilon) * k_epsilon;

/// a + b = x + y exactly, |y| <= ulp(x) / 2.
void two_sum(double a, double b, double& x, double& y) {
    x = a + b;
    const double b_virtual = x - a;
    const double a_virtual = x - b_virtual;
    y = (a - a_virtual) + (b - b_virtual);
}

/// a - b = x + y exactly.
void two_diff(double a, double b, double& x, double& y) {
    x = a - b;
    const double b_virtual = a - x;
    const double a_virtual = x + b_virtual;
    y = (a - a_virtual) + (b_virtual - b);
}

/// a * b = x + y exactly: the fused multiply-add returns the rounding error of the product (correct with
/// or without hardware FMA, and immune to the compiler contracting expressions).
void two_product(double a, double b, double& x, double& y) {
    x = a * b;
    y = std::fma(a, b, -x);
}

/// a - b as an expansion.
Expansion difference(double a, double b) {
    double x = 0.0;
    double y = 0.0;
    two_diff(a, b, x, y);
    Expansion e;
    if (y != 0.0) {
        e.push_back(y);
    }
    if (x != 0.0) {
        e.push_back(x);
    }
    return e;
}

/// e + b (Shewchuk's GROW-EXPANSION with zero elimination).
Expansion grow(const Expansion& e, double b) {
    Expansion h;
    h.reserve(e.size() + 1);
    double q = b;
    for (const double component : e) {
        double sum = 0.0;
        double error = 0.0;
        two_sum(q, component, sum, error);
        if (error != 0.0) {
            h.push_back(error);
        }
        q = sum;
    }
    if (q != 0.0) {
        h.push_back(q);
    }
    return h;
}

/// e + f, one component of f at a time.
Expansion sum(Expansion e, const Expansion& f) {
    for (const double component : f) {
        e = grow(e, component);
    }
    return e;
}

/// e * b (Shewchuk's SCALE-EXPANSION with zero elimination).
Expansion scale(const Expansion& e, double b) {
    Expansion h;
    if (e.empty() || b == 0.0) {
        return h;
    }
    h.reserve(2 * e.size());
    double q = 0.0;
    double error = 0.0;
    two_product(e[0], b, q, error);
    if (error != 0.0) {
        h.push_back(error);
    }
    for (std::size_t i = 1; i < e.size(); ++i) {
        double product = 0.0;
        double product_error = 0.0;
        double partial = 0.0;
        two_product(e[i], b, product, product_error);
        two_sum(q, product_error, partial, error);
        if (error != 0.0) {
            h.push_back(error);
        }
        two_sum(product, partial, q, error);
        if (error != 0.0) {
            h.push_back(error);
        }
    }
    if (q != 0.0) {
        h.push_back(q);
    }
    return h;
}

/// e * f.
Expansion product(const Expansion& e, const Expansion& f) {
    Expansion result;
    for (const double component : f) {
        result = sum(std::move(result), scale(e, component));
    }
    return result;
}

Expansion negated(Expansion e) {
    for (double& component : e) {
        component = -component;
    }
    return e;
}

/// p q - r s.
Expansion cross_term(const Expansion& p, const Expansion& q, const Expansion& r, const Expansion& s) {
    return sum(product(p, q), negated(product(r, s)));
}

int sign_of(const Expansion& e) {
    return e.empty() ? 0 : (e.back() > 0.0 ? 1 : -1);
}

int sign_of(double value) {
    return (value > 0.0) - (value < 0.0);
}

// ---- Predicates -----------------------------------------------------------------------------------------

/// A point of a coordinate plane (a projection of a 3D point).
struct Point2 {
    double x;
    double y;
};

/// The projection that drops coordinate `axis`.
Point2 project(const Vec3& p, int axis) {
    return {p[(axis + 1) % 3], p[(axis + 2) % 3]};
}

/// Sign of (b-a)×(c-a): +1 when a, b, c turn counterclockwise, 0 when collinear. Exact.
int orient2d(const Point2& a, const Point2& b, const Point2& c) {
    const double left = (b.x - a.x) * (c.y - a.y);
    const double right = (b.y - a.y) * (c.x - a.x);
    const double det = left - right;
    const double bound = k_orient2d_bound * (std::abs(left) + std::abs(right));
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    return sign_of(
        cross_term(difference(b.x, a.x), difference(c.y, a.y), difference(b.y, a.y), difference(c.x, a.x)));
}

int orient3d_exact(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    std::array<Expansion, 3> ba;
    std::array<Expansion, 3> ca;
    std::array<Expansion, 3> da;
    for (int k = 0; k < 3; ++k) {
        ba[k] = difference(b[k], a[k]);
        ca[k] = difference(c[k], a[k]);
        da[k] = difference(d[k], a[k]);
    }
    Expansion det = product(ba[0], cross_term(ca[1], da[2], ca[2], da[1]));
    det = sum(std::move(det), product(ca[0], cross_term(da[1], ba[2], da[2], ba[1])));
    det = sum(std::move(det), product(da[0], cross_term(ba[1], ca[2], ba[2], ca[1])));
    return sign_of(det);
}

/// Whether c (collinear with a and b) lies on the closed segment ab.
bool within_segment(const Point2& a, const Point2& b, const Point2& c) {
    return std::min(a.x, b.x) <= c.x && c.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= c.y &&
           c.y <= std::max(a.y, b.y);
}

/// Closed segments ab and cd share a point. Also right for degenerate segments (a == b).
bool segments_meet_2d(const Point2& a, const Point2& b, const Point2& c, const Point2& d) {
    const int o1 = orient2d(a, b, c);
    const int o2 = orient2d(a, b, d);
    const int o3 = orient2d(c, d, a);
    const int o4 = orient2d(c, d, b);
    if (o1 * o2 < 0 && o3 * o4 < 0) {
        return true;
    }
    return (o1 == 0 && within_segment(a, b, c)) || (o2 == 0 && within_segment(a, b, d)) ||
           (o3 == 0 && within_segment(c, d, a)) || (o4 == 0 && within_segment(c, d, b));
}

/// Closed segment ab meets the closed triangle pqr (which may be degenerate).
bool segment_meets_triangle_2d(
    const Point2& a, const Point2& b, const Point2& p, const Point2& q, const Point2& r) {
    if (orient2d(p, q, r) != 0) {
        const auto inside = [&](const Point2& x) {
            const int s1 = orient2d(p, q, x);
            const int s2 = orient2d(q, r, x);
            const int s3 = orient2d(r, p, x);
            return !((s1 < 0 || s2 < 0 || s3 < 0) && (s1 > 0 || s2 > 0 || s3 > 0));
        };
        if (inside(a) || inside(b)) {
            return true;
        }
    }
    // Otherwise the segment crosses the boundary, or the triangle is degenerate (the union of its edges).
    return segments_meet_2d(a, b, p, q) || segments_meet_2d(a, b, q, r) || segments_meet_2d(a, b, r, p);
}

/// Whether the three coordinate projections of (a, b, c) are all collinear: the points are collinear.
bool collinear(const Vec3& a, const Vec3& b, const Vec3& c) {
    for (int axis = 0; axis < 3; ++axis) {
        if (orient2d(project(a, axis), project(b, axis), project(c, axis)) != 0) {
            return false;
        }
    }
    return true;
}

/// Closed segments ab and cd in space share a point.
bool segments_meet_3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    if (orient3d(a, b, c, d) != 0) {
        return false;
    }
    // Coplanar: some coordinate projection is one-to-one on a plane holding all four points, and every
    // projection of a common point is common, so the segments meet iff all three projections meet.
    for (int axis = 0; axis < 3; ++axis) {
        if (!segments_meet_2d(project(a, axis), project(b, axis), project(c, axis), project(d, axis))) {
            return false;
        }
    }
    return true;
}

} // namespace

namespace detail {

int plane_side(const Vec3& x, const Vec3& q, const Vec3& n) {
    double det = 0.0;
    double permanent = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double term = n[k] * (x[k] - q[k]);
        det += term;
        permanent += std::abs(term);
    }
    const double bound = k_plane_side_bound * permanent;
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    Expansion exact;
    for (int k = 0; k < 3; ++k) {
        exact = sum(std::move(exact), scale(difference(x[k], q[k]), n[k]));
    }
    return sign_of(exact);
}

bool segment_meets_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r) {
    if (collinear(p, q, r)) {
        return segments_meet_3d(a, b, p, q) || segments_meet_3d(a, b, q, r) || segments_meet_3d(a, b, r, p);
    }
    const int side_a = orient3d(p, q, r, a);
    const int side_b = orient3d(p, q, r, b);
    if (side_a * side_b > 0) {
        return false;
    }
    if (side_a == 0 && side_b == 0) {
        // In the triangle's plane: as in segments_meet_3d, all three projections must meet.
        for (int axis = 0; axis < 3; ++axis) {
            if (!segment_meets_triangle_2d(project(a, axis), project(b, axis), project(p, axis),
                                           project(q, axis), project(r, axis))) {
                return false;
            }
        }
        return true;
    }
    // The segment reaches the plane at one point; it lies in the triangle iff the line ab passes every
    // edge on the same side (zero: through the edge).
    const int s1 = orient3d(a, b, p, q);
    const int s2 = orient3d(a, b, q, r);
    const int s3 = orient3d(a, b, r, p);
    return !((s1 < 0 || s2 < 0 || s3 < 0) && (s1 > 0 || s2 > 0 || s3 > 0));
}

bool finite(const Vec3& x) {
    return std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]);
}

} // namespace detail

int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const double bax = b[0] - a[0];
    const double bay = b[1] - a[1];
    const double baz = b[2] - a[2];
    const double cax = c[0] - a[0];
    const double cay = c[1] - a[1];
    const double caz = c[2] - a[2];
    const double dax = d[0] - a[0];
    const double day = d[1] - a[1];
    const double daz = d[2] - a[2];
    const double m1 = cay * daz;
    const double m2 = caz * day;
    const double m3 = day * baz;
    const double m4 = daz * bay;
    const double m5 = bay * caz;
    const double m6 = baz * cay;
    const double det = bax * (m1 - m2) + cax * (m3 - m4) + dax * (m5 - m6);
    const double permanent = std::abs(bax) * (std::abs(m1) + std::abs(m2)) +
                             std::abs(cax) * (std::abs(m3) + std::abs(m4)) +
                             std::abs(dax) * (std::abs(m5) + std::abs(m6));
    const double bound = k_orient3d_bound * permanent;
    if (det > bound || -det > bound) {
        return sign_of(det);
    }
    return orient3d_exact(a, b, c, d);
}

bool triangles_intersect(const std::array<Vec3, 3>& t, const std::array<Vec3, 3>& u) {
    for (int k = 0; k < 3; ++k) {
        const double t_lo = std::min({t[0][k], t[1][k], t[2][k]});
        const double t_hi = std::max({t[0][k], t[1][k], t[2][k]});
        const double u_lo = std::min({u[0][k], u[1][k], u[2][k]});
        const double u_hi = std::max({u[0][k], u[1][k], u[2][k]});
        if (t_hi < u_lo || u_hi < t_lo) {
            return false;
        }
    }
    // One triangle strictly on one side of the other's plane: apart (cheap and common).
    const auto apart = [](const std::array<Vec3, 3>& plane, const std::array<Vec3, 3>& other) {
        const int s0 = orient3d(plane[0], plane[1], plane[2], other[0]);
        const int s1 = orient3d(plane[0], plane[1], plane[2], other[1]);
        const int s2 = orient3d(plane[0], plane[1], plane[2], other[2]);
        return (s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0);
    };
    if (apart(t, u) || apart(u, t)) {
        return false;
    }
    // Closed triangles meet iff an edge of one meets the other: the ends of their common part lie on edges.
    for (int e = 0; e < 3; ++e) {
        if (detail::segment_meets_triangle(t[e], t[(e + 1) % 3], u[0], u[1], u[2]) ||
            detail::segment_meets_triangle(u[e], u[(e + 1) % 3], t[0], t[1], t[2])) {
            return true;
        }
    }
    return false;
}

} // namespace intact::tools
