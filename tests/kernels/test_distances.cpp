// Contact distances: case selection of point-triangle and edge-edge pairs against a brute-force solution
// of the constrained minimization (long double, every active set enumerated; itself checked against
// dense sampling), the closed-form squared distances of every case and their gradients and Hessians
// against central finite differences, and the parallel-edge mollifier. Random and degenerate
// configurations: parallel and nearly parallel edges, coplanar edges, point on an edge, point exactly
// above a vertex or an edge, coplanar point and triangle. Kernels run on the default execution space;
// brute force and finite differences run on the host.
#include "kernels/distance_type.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/small_matrix.hpp"
#include "tests/kernels/kernel_test_utils.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace intact::kernels;
using intact::ExecSpace;
using intact::kernels::test::from_device;
using intact::kernels::test::near;
using intact::kernels::test::pack;
using intact::kernels::test::Table;
using intact::kernels::test::to_device;
using intact::kernels::test::unpack_row;
/// (p, t0, t1, t2) for point-triangle, (a0, a1, b0, b1) for edge-edge.
using Stencil = std::array<Vec3, 4>;

constexpr int k_pt_cases = 7;
constexpr int k_ee_cases = 9;
constexpr int k_cases = k_pt_cases + k_ee_cases; // index k < 7: PointTriangleCase k; else EdgeEdgeCase k - 7

// ---- Device launches (free functions: a CUDA lambda may not live in a TEST body) ----------------

struct SelectedCases {
    std::vector<PointTriangleCase> pt_case; // stencil read as (p, t0, t1, t2)
    std::vector<EdgeEdgeCase> ee_case;      // stencil read as (a0, a1, b0, b1)
    std::vector<double> pt_distance;        // point_triangle_distance in the selected case
    std::vector<double> ee_distance;        // edge_edge_distance in the selected case
};

SelectedCases select_cases(const std::vector<Stencil>& stencils) {
    std::vector<Vec12> rows;
    for (const Stencil& s : stencils) {
        rows.push_back(pack(s));
    }
    const Table x = to_device("x", rows);
    const int n = static_cast<int>(stencils.size());
    Table out("out", n, 4);
    Kokkos::parallel_for(
        "intact::test::select_cases", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 v[4];
            unpack_row(x, c, v);
            const PointTriangleCase pt = point_triangle_case(v[0], v[1], v[2], v[3]);
            const EdgeEdgeCase ee = edge_edge_case(v[0], v[1], v[2], v[3]);
            out(c, 0) = static_cast<double>(static_cast<int>(pt));
            out(c, 1) = static_cast<double>(static_cast<int>(ee));
            out(c, 2) = point_triangle_distance(v[0], v[1], v[2], v[3], pt);
            out(c, 3) = edge_edge_distance(v[0], v[1], v[2], v[3], ee);
        });
    SelectedCases r;
    for (const VecN<4>& row : from_device<VecN<4>>(out)) {
        r.pt_case.push_back(static_cast<PointTriangleCase>(static_cast<int>(row(0))));
        r.ee_case.push_back(static_cast<EdgeEdgeCase>(static_cast<int>(row(1))));
        r.pt_distance.push_back(row(2));
        r.ee_distance.push_back(row(3));
    }
    return r;
}

/// Value, gradient and Hessian of every case formula (all 16) on each stencil, through the dispatchers.
struct AllCaseDerivatives {
    std::vector<std::array<double, k_cases>> value;
    std::vector<std::array<Vec12, k_cases>> gradient;
    std::vector<std::array<Mat12, k_cases>> hessian;
};

AllCaseDerivatives evaluate_all_cases(const std::vector<Stencil>& stencils) {
    std::vector<Vec12> rows;
    for (const Stencil& s : stencils) {
        rows.push_back(pack(s));
    }
    const Table x = to_device("x", rows);
    const int n = static_cast<int>(stencils.size());
    Table value("value", n, k_cases);
    Table gradient("gradient", n, 12 * k_cases);
    Table hessian("hessian", n, 144 * k_cases);
    Kokkos::parallel_for(
        "intact::test::evaluate_all_cases", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 v[4];
            unpack_row(x, c, v);
            for (int k = 0; k < k_pt_cases; ++k) {
                const auto pc = static_cast<PointTriangleCase>(k);
                value(c, k) = point_triangle_distance(v[0], v[1], v[2], v[3], pc);
                Eigen::Map<Vec12>(&gradient(c, 12 * k)) =
                    point_triangle_distance_gradient(v[0], v[1], v[2], v[3], pc);
                Eigen::Map<Mat12>(&hessian(c, 144 * k)) =
                    point_triangle_distance_hessian(v[0], v[1], v[2], v[3], pc);
            }
            for (int k = 0; k < k_ee_cases; ++k) {
                const auto ec = static_cast<EdgeEdgeCase>(k);
                const int j = k_pt_cases + k;
                value(c, j) = edge_edge_distance(v[0], v[1], v[2], v[3], ec);
                Eigen::Map<Vec12>(&gradient(c, 12 * j)) =
                    edge_edge_distance_gradient(v[0], v[1], v[2], v[3], ec);
                Eigen::Map<Mat12>(&hessian(c, 144 * j)) =
                    edge_edge_distance_hessian(v[0], v[1], v[2], v[3], ec);
            }
        });
    const auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), value);
    const auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), gradient);
    const auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hessian);
    AllCaseDerivatives r;
    r.value.resize(n);
    r.gradient.resize(n);
    r.hessian.resize(n);
    for (int c = 0; c < n; ++c) {
        for (int k = 0; k < k_cases; ++k) {
            r.value[c][k] = hv(c, k);
            r.gradient[c][k] = Eigen::Map<const Vec12>(&hg(c, 12 * k));
            r.hessian[c][k] = Eigen::Map<const Mat12>(&hh(c, 144 * k));
        }
    }
    return r;
}

struct MollifierValues {
    std::vector<VecN<4>> scalars; // c, e, threshold from the rest stencil, e from the scalar mollifier(c)
    std::vector<Vec12> c_gradient;
    std::vector<Mat12> c_hessian;
    std::vector<Vec12> e_gradient;
    std::vector<Mat12> e_hessian;
};

MollifierValues evaluate_mollifier(const std::vector<Stencil>& stencils,
                                   const std::vector<Stencil>& rest,
                                   const std::vector<double>& eps) {
    std::vector<Vec12> rows;
    std::vector<Vec12> rest_rows;
    std::vector<VecN<1>> eps_rows;
    for (std::size_t c = 0; c < stencils.size(); ++c) {
        rows.push_back(pack(stencils[c]));
        rest_rows.push_back(pack(rest[c]));
        eps_rows.push_back(VecN<1>(eps[c]));
    }
    const Table x = to_device("x", rows);
    const Table X = to_device("X", rest_rows);
    const Table eps_x = to_device("eps_x", eps_rows);
    const int n = static_cast<int>(stencils.size());
    Table scalars("scalars", n, 4);
    Table c_gradient("c_gradient", n, 12);
    Table c_hessian("c_hessian", n, 144);
    Table e_gradient("e_gradient", n, 12);
    Table e_hessian("e_hessian", n, 144);
    Kokkos::parallel_for(
        "intact::test::evaluate_mollifier", Kokkos::RangePolicy<ExecSpace>(0, n), KOKKOS_LAMBDA(const int c) {
            Vec3 v[4];
            Vec3 r[4];
            unpack_row(x, c, v);
            unpack_row(X, c, r);
            const double eps_c = eps_x(c, 0);
            const double cross_c = edge_edge_cross_squared_norm(v[0], v[1], v[2], v[3]);
            scalars(c, 0) = cross_c;
            scalars(c, 1) = edge_edge_mollifier(v[0], v[1], v[2], v[3], eps_c);
            scalars(c, 2) = edge_edge_mollifier_threshold(r[0], r[1], r[2], r[3]);
            scalars(c, 3) = mollifier(cross_c, eps_c);
            Eigen::Map<Vec12>(&c_gradient(c, 0)) =
                edge_edge_cross_squared_norm_gradient(v[0], v[1], v[2], v[3]);
            Eigen::Map<Mat12>(&c_hessian(c, 0)) =
                edge_edge_cross_squared_norm_hessian(v[0], v[1], v[2], v[3]);
            Eigen::Map<Vec12>(&e_gradient(c, 0)) =
                edge_edge_mollifier_gradient(v[0], v[1], v[2], v[3], eps_c);
            Eigen::Map<Mat12>(&e_hessian(c, 0)) = edge_edge_mollifier_hessian(v[0], v[1], v[2], v[3], eps_c);
        });
    return {from_device<VecN<4>>(scalars), from_device<Vec12>(c_gradient), from_device<Mat12>(c_hessian),
            from_device<Vec12>(e_gradient), from_device<Mat12>(e_hessian)};
}

/// The scalar mollifier and its derivatives at the given (c, eps_x) pairs: rows (e, e', e'').
std::vector<Vec3> evaluate_scalar_mollifier(const std::vector<VecN<2>>& c_eps) {
    const Table in = to_device("c_eps", c_eps);
    const int n = static_cast<int>(c_eps.size());
    Table out("out", n, 3);
    Kokkos::parallel_for(
        "intact::test::evaluate_scalar_mollifier", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int c) {
            out(c, 0) = mollifier(in(c, 0), in(c, 1));
            out(c, 1) = mollifier_first_derivative(in(c, 0), in(c, 1));
            out(c, 2) = mollifier_second_derivative(in(c, 0), in(c, 1));
        });
    return from_device<Vec3>(out);
}

// ---- Host references: brute-force closest features (long double) ---------------------------------

using LD = long double;
using V3L = Eigen::Matrix<LD, 3, 1>;

V3L ld(const Vec3& v) {
    return v.cast<LD>();
}

/// One active set of the constrained minimization: its squared distance and the case it corresponds to.
struct Candidate {
    LD value;
    int label;
};

/// The minimum over the candidates, and the label if no other label ties with it (-1 otherwise).
struct BruteForce {
    double value;
    int label;
};

BruteForce resolve(const std::vector<Candidate>& candidates) {
    LD best = candidates[0].value;
    for (const Candidate& c : candidates) {
        best = std::min(best, c.value);
    }
    int label = -2;
    for (const Candidate& c : candidates) {
        if (c.value <= best * (1.0L + 1e-9L) + 1e-30L) {
            label = (label == -2 || label == c.label) ? c.label : -1;
        }
    }
    return {static_cast<double>(best), label};
}

/// Closest point of p on segment [a, b]: squared distance and the clamped parameter.
std::pair<LD, LD> point_segment(const V3L& p, const V3L& a, const V3L& b) {
    const V3L e = b - a;
    const LD t = std::clamp((p - a).dot(e) / e.squaredNorm(), 0.0L, 1.0L);
    return {(p - (a + t * e)).squaredNorm(), t};
}

/// Candidate of the vertex p against segment [a, b]: point-point at an end, else point-edge.
Candidate vertex_segment(const V3L& p, const V3L& a, const V3L& b, int pp_a, int pp_b, int pe) {
    const auto [value, t] = point_segment(p, a, b);
    return {value, t <= 0.0L ? pp_a : (t >= 1.0L ? pp_b : pe)};
}

BruteForce brute_force_point_triangle(const Stencil& x) {
    const V3L p = ld(x[0]);
    const V3L t[3] = {ld(x[1]), ld(x[2]), ld(x[3])};
    using C = PointTriangleCase;
    std::vector<Candidate> candidates;
    const int pp[3] = {int(C::pp0), int(C::pp1), int(C::pp2)};
    const int pe[3] = {int(C::pe01), int(C::pe12), int(C::pe20)};
    for (int i = 0; i < 3; ++i) {
        const int j = (i + 1) % 3;
        candidates.push_back(vertex_segment(p, t[i], t[j], pp[i], pp[j], pe[i]));
    }
    // Interior: the projection onto the plane, when it lies strictly inside the triangle.
    const V3L e1 = t[1] - t[0];
    const V3L e2 = t[2] - t[0];
    const V3L d = p - t[0];
    const LD a11 = e1.dot(e1);
    const LD a12 = e1.dot(e2);
    const LD a22 = e2.dot(e2);
    const LD det = a11 * a22 - a12 * a12;
    const LD b1 = (a22 * e1.dot(d) - a12 * e2.dot(d)) / det;
    const LD b2 = (a11 * e2.dot(d) - a12 * e1.dot(d)) / det;
    if (b1 > 0.0L && b2 > 0.0L && b1 + b2 < 1.0L) {
        candidates.push_back({(d - b1 * e1 - b2 * e2).squaredNorm(), int(C::interior)});
    }
    return resolve(candidates);
}

BruteForce brute_force_edge_edge(const Stencil& x) {
    const V3L a0 = ld(x[0]);
    const V3L a1 = ld(x[1]);
    const V3L b0 = ld(x[2]);
    const V3L b1 = ld(x[3]);
    using C = EdgeEdgeCase;
    std::vector<Candidate> candidates = {
        vertex_segment(a0, b0, b1, int(C::pp_a0b0), int(C::pp_a0b1), int(C::pe_a0_b)),
        vertex_segment(a1, b0, b1, int(C::pp_a1b0), int(C::pp_a1b1), int(C::pe_a1_b)),
        vertex_segment(b0, a0, a1, int(C::pp_a0b0), int(C::pp_a1b0), int(C::pe_b0_a)),
        vertex_segment(b1, a0, a1, int(C::pp_a0b1), int(C::pp_a1b1), int(C::pe_b1_a))};
    // Interior: the stationary point of |a0 + s u - b0 - t v|^2, when both parameters are inside.
    const V3L u = a1 - a0;
    const V3L v = b1 - b0;
    const V3L w = a0 - b0;
    const LD A = u.dot(u);
    const LD B = u.dot(v);
    const LD Cc = v.dot(v);
    const LD D = u.dot(w);
    const LD E = v.dot(w);
    const LD delta = A * Cc - B * B;
    if (delta > 0.0L) {
        // s from the 2x2 solve, then t as the projection of a(s) onto line b: the remaining parameter
        // error lies along the soft direction of nearly parallel lines, where it costs nothing.
        const LD s = (B * E - Cc * D) / delta;
        const LD t = (E + s * B) / Cc;
        if (s > 0.0L && s < 1.0L && t > 0.0L && t < 1.0L) {
            candidates.push_back({(w + s * u - t * v).squaredNorm(), int(C::interior)});
        }
    }
    return resolve(candidates);
}

/// Minimum squared distance over a dense parameter grid (an upper bound on the true minimum).
double sampled_point_triangle(const Stencil& x, int n) {
    double best = infinity();
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; i + j <= n; ++j) {
            const Vec3 q = x[1] + (double(i) / n) * (x[2] - x[1]) + (double(j) / n) * (x[3] - x[1]);
            best = std::min(best, (x[0] - q).squaredNorm());
        }
    }
    return best;
}

double sampled_edge_edge(const Stencil& x, int n) {
    double best = infinity();
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            const Vec3 pa = x[0] + (double(i) / n) * (x[1] - x[0]);
            const Vec3 pb = x[2] + (double(j) / n) * (x[3] - x[2]);
            best = std::min(best, (pa - pb).squaredNorm());
        }
    }
    return best;
}

// ---- Host references: finite differences ----------------------------------------------------------

/// Central differences of the scalar f(Stencil) (step h).
template <class F> Vec12 fd_gradient(const F& f, const Stencil& x, double h) {
    Vec12 g;
    for (int k = 0; k < 12; ++k) {
        Stencil xp = x;
        Stencil xm = x;
        xp[k / 3](k % 3) += h;
        xm[k / 3](k % 3) -= h;
        g(k) = (f(xp) - f(xm)) / (2.0 * h);
    }
    return g;
}

/// Central differences of the 12-vector g(Stencil) (step h); column k is d g / d x_k.
template <class G> Mat12 fd_jacobian(const G& g, const Stencil& x, double h) {
    Mat12 J;
    for (int k = 0; k < 12; ++k) {
        Stencil xp = x;
        Stencil xm = x;
        xp[k / 3](k % 3) += h;
        xm[k / 3](k % 3) -= h;
        J.col(k) = (g(xp) - g(xm)) / (2.0 * h);
    }
    return J;
}

double stencil_scale(const Stencil& x) {
    double L = 0.0;
    for (int a = 0; a < 4; ++a) {
        for (int b = a + 1; b < 4; ++b) {
            L = std::max(L, (x[a] - x[b]).norm());
        }
    }
    return L;
}

std::string scientific(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.3e", v);
    return buffer;
}

std::string describe(const Stencil& x) {
    std::string s;
    for (const Vec3& v : x) {
        s += "(" + std::to_string(v(0)) + ", " + std::to_string(v(1)) + ", " + std::to_string(v(2)) + ") ";
    }
    return s;
}

// ---- Configurations --------------------------------------------------------------------------------

Vec3 random_vec(std::mt19937& rng, double scale = 1.0) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    return scale * Vec3(u(rng), u(rng), u(rng));
}

Mat3 random_rotation(std::mt19937& rng) {
    // Gram-Schmidt of a random matrix, with det +1.
    Mat3 Q;
    Q.col(0) = random_vec(rng).normalized();
    Vec3 b = random_vec(rng);
    Q.col(1) = (b - b.dot(Q.col(0)) * Q.col(0)).normalized();
    Q.col(2) = cross(Q.col(0), Q.col(1));
    return Q;
}

Stencil transform(const Stencil& x, const Mat3& R, const Vec3& t, double scale) {
    Stencil y;
    for (int a = 0; a < 4; ++a) {
        y[a] = scale * (R * x[a]) + t;
    }
    return y;
}

/// A point near a random triangle: in-plane position from barycentrics in [-0.6, 1.6] (any region),
/// offset from the plane by gap.
Stencil near_point_triangle(std::mt19937& rng, double gap) {
    std::uniform_real_distribution<double> u(-0.6, 1.6);
    Stencil x;
    x[1] = random_vec(rng);
    x[2] = random_vec(rng);
    x[3] = random_vec(rng);
    const Vec3 n = cross(x[2] - x[1], x[3] - x[1]).normalized();
    x[0] = x[1] + u(rng) * (x[2] - x[1]) + u(rng) * (x[3] - x[1]) + gap * n;
    return x;
}

/// Two edges whose lines are gap apart, the closest points at random parameters in [-0.4, 1.4].
Stencil near_edge_edge(std::mt19937& rng, double gap) {
    std::uniform_real_distribution<double> u(-0.4, 1.4);
    Stencil x;
    x[0] = random_vec(rng);
    x[1] = random_vec(rng);
    const Vec3 v = random_vec(rng);
    const Vec3 n = cross(x[1] - x[0], v).normalized();
    x[2] = x[0] + u(rng) * (x[1] - x[0]) + gap * n - u(rng) * v;
    x[3] = x[2] + v;
    return x;
}

/// Edge a = (0,0,0)-(1,0,0) and edge b of length length_b at angle theta to it, offset out of plane by
/// gap, its midpoint over x = shift (so the common perpendicular is interior to b).
Stencil nearly_parallel(double theta, double gap, double shift, double length_b) {
    const Vec3 direction(std::cos(theta), std::sin(theta), 0.0);
    const Vec3 b0 = Vec3(shift, 0.0, gap) - 0.5 * length_b * direction;
    return {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), b0, b0 + length_b * direction};
}

struct Labeled {
    Stencil x;
    int expected; // PointTriangleCase / EdgeEdgeCase as int
    std::string name;
};

std::vector<Labeled> labeled_point_triangle() {
    using C = PointTriangleCase;
    const Vec3 t0(0.0, 0.0, 0.0);
    const Vec3 t1(1.0, 0.0, 0.0);
    const Vec3 t2(0.0, 1.0, 0.0);
    auto make = [&](const Vec3& p, C c, const std::string& name) {
        return Labeled{{p, t0, t1, t2}, int(c), name};
    };
    return {make(Vec3(-0.5, -0.5, 0.3), C::pp0, "beyond t0"),
            make(Vec3(1.5, -0.2, 0.1), C::pp1, "beyond t1"),
            make(Vec3(-0.2, 1.5, -0.2), C::pp2, "beyond t2"),
            make(Vec3(0.5, -0.5, 0.2), C::pe01, "outside edge 01"),
            make(Vec3(0.8, 0.8, -0.1), C::pe12, "outside edge 12"),
            make(Vec3(-0.5, 0.5, 0.3), C::pe20, "outside edge 20"),
            make(Vec3(0.2, 0.2, 0.5), C::interior, "above the interior"),
            make(Vec3(0.2, 0.2, -0.5), C::interior, "below the interior"),
            make(Vec3(0.0, 0.0, 0.5), C::pp0, "exactly above t0"),
            make(Vec3(1.0, 0.0, -0.5), C::pp1, "exactly below t1"),
            make(Vec3(0.5, 0.0, 0.5), C::pe01, "exactly above edge 01"),
            make(Vec3(0.5, 0.5, 0.5), C::pe12, "exactly above edge 12"),
            make(Vec3(0.2, 0.3, 0.0), C::interior, "coplanar, inside"),
            make(Vec3(0.5, -0.3, 0.0), C::pe01, "coplanar, outside edge 01"),
            make(Vec3(-0.3, -0.2, 0.0), C::pp0, "coplanar, beyond t0"),
            make(Vec3(1.4, 0.0, 0.0), C::pp1, "coplanar, on the line of edge 01 beyond t1"),
            make(Vec3(0.5, 0.0, 0.0), C::pe01, "point on edge 01")};
}

std::vector<Labeled> labeled_edge_edge() {
    using C = EdgeEdgeCase;
    auto make = [](const Vec3& a0, const Vec3& a1, const Vec3& b0, const Vec3& b1, C c,
                   const std::string& n) {
        return Labeled{{a0, a1, b0, b1}, int(c), n};
    };
    const Vec3 o(0.0, 0.0, 0.0);
    const Vec3 x1(1.0, 0.0, 0.0);
    const Vec3 xm(-1.0, 0.0, 0.0);
    // b runs away from a0 and a runs away from b0: both clamp to the end vertices.
    const Vec3 q0(0.3, 0.4, 0.2);
    const Vec3 q1(1.0, 0.8, 1.1);
    return {
        make(xm, x1, Vec3(0.0, -1.0, 0.5), Vec3(0.0, 1.0, 0.5), C::interior, "crossing skew"),
        make(Vec3(0.0, 0.0, 0.5), Vec3(2.0, 0.0, 1.0), Vec3(0.0, -1.0, 0.0), Vec3(0.0, 1.0, 0.0), C::pe_a0_b,
             "a0 over b"),
        make(Vec3(2.0, 0.0, 1.0), Vec3(0.0, 0.0, 0.5), Vec3(0.0, -1.0, 0.0), Vec3(0.0, 1.0, 0.0), C::pe_a1_b,
             "a1 over b"),
        make(xm, x1, Vec3(0.0, 0.0, 0.5), Vec3(0.0, 2.0, 1.0), C::pe_b0_a, "b0 over a"),
        make(xm, x1, Vec3(0.0, 2.0, 1.0), Vec3(0.0, 0.0, 0.5), C::pe_b1_a, "b1 over a"),
        make(o, xm, q0, q1, C::pp_a0b0, "a0 b0"),
        make(o, xm, q1, q0, C::pp_a0b1, "a0 b1"),
        make(xm, o, q0, q1, C::pp_a1b0, "a1 b0"),
        make(xm, o, q1, q0, C::pp_a1b1, "a1 b1"),
        make(o, x1, Vec3(2.0, 0.2, 0.0), Vec3(3.0, 0.2, 0.0), C::pp_a1b0, "parallel, disjoint"),
        make(o, x1, Vec3(-2.0, 0.2, 0.1), Vec3(-1.0, 0.2, 0.1), C::pp_a0b1, "parallel, disjoint, behind"),
        make(o, x1, Vec3(0.5, 0.5, 0.0), Vec3(0.8, 1.0, 0.0), C::pe_b0_a, "coplanar, b0 over a"),
        make(o, x1, Vec3(0.5, 1.0, 0.0), Vec3(0.5, 0.3, 0.0), C::pe_b1_a, "coplanar T"),
        make(o, x1, Vec3(1.5, 0.5, 0.0), Vec3(2.0, -0.5, 0.0), C::pe_a1_b, "coplanar, a1 against b"),
        make(o, x1, Vec3(0.5, 0.0, 0.0), Vec3(0.5, 1.0, 1.0), C::pe_b0_a, "b0 on edge a"),
        make(o, x1, Vec3(1.0, 0.0, 0.0), Vec3(1.0, 1.0, 1.0), C::pp_a1b0, "b0 on a1"),
        make(o, x1, Vec3(0.5, -1.0, 0.5), Vec3(0.5, 1.0, 0.5), C::interior,
             "b exactly above the middle of a"),
    };
}

/// |s - reference| within rtol relative plus the round-off floor (1e-13 m)^2.
::testing::AssertionResult distance_matches(double s, double reference, double rtol) {
    const double error = std::abs(s - reference);
    if (error <= rtol * reference + 1e-26) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "s = " << s << ", brute force " << reference << ", relative error " << error / reference;
}

// ---- Tests: case selection -------------------------------------------------------------------------

TEST(DistanceCases, HandPickedConfigurationsSelectTheExpectedCase) {
    std::mt19937 rng(11);
    const std::vector<Labeled> pt = labeled_point_triangle();
    const std::vector<Labeled> ee = labeled_edge_edge();
    // Each labeled configuration as given and under a random rigid motion and scaling (case-invariant).
    std::vector<Stencil> pt_x;
    std::vector<Stencil> ee_x;
    std::vector<double> scales = {1.0, 1e-3, 7.0};
    for (const Labeled& l : pt) {
        pt_x.push_back(l.x);
    }
    for (const Labeled& l : ee) {
        ee_x.push_back(l.x);
    }
    const std::size_t n_pt = pt_x.size();
    const std::size_t n_ee = ee_x.size();
    for (double scale : scales) {
        const Mat3 R = random_rotation(rng);
        const Vec3 t = random_vec(rng);
        for (std::size_t c = 0; c < n_pt; ++c) {
            pt_x.push_back(transform(pt_x[c], R, t, scale));
        }
        for (std::size_t c = 0; c < n_ee; ++c) {
            ee_x.push_back(transform(ee_x[c], R, t, scale));
        }
    }
    const SelectedCases pt_sel = select_cases(pt_x);
    const SelectedCases ee_sel = select_cases(ee_x);
    for (std::size_t c = 0; c < pt_x.size(); ++c) {
        const Labeled& l = pt[c % n_pt];
        SCOPED_TRACE("point-triangle: " + l.name + (c < n_pt ? "" : " (moved)"));
        const bool on_boundary = l.name.find("exactly") != std::string::npos ||
                                 l.name.find("coplanar") != std::string::npos ||
                                 l.name.find("on edge") != std::string::npos;
        // Ties (exactly above a vertex or on a region boundary) keep their label only without round-off.
        if (c < n_pt || !on_boundary) {
            EXPECT_EQ(int(pt_sel.pt_case[c]), l.expected);
        }
        const BruteForce bf = brute_force_point_triangle(pt_x[c]);
        EXPECT_TRUE(distance_matches(pt_sel.pt_distance[c], bf.value, 1e-12));
    }
    for (std::size_t c = 0; c < ee_x.size(); ++c) {
        const Labeled& l = ee[c % n_ee];
        SCOPED_TRACE("edge-edge: " + l.name + (c < n_ee ? "" : " (moved)"));
        const bool on_boundary =
            l.name.find("exactly") != std::string::npos || l.name.find("coplanar") != std::string::npos ||
            l.name.find(" on ") != std::string::npos || l.name.find("parallel") != std::string::npos;
        if (c < n_ee || !on_boundary) {
            EXPECT_EQ(int(ee_sel.ee_case[c]), l.expected);
        }
        const BruteForce bf = brute_force_edge_edge(ee_x[c]);
        EXPECT_TRUE(distance_matches(ee_sel.ee_distance[c], bf.value, 1e-12));
    }
}

TEST(DistanceCases, RandomConfigurationsMatchBruteForceAndCoverEveryCase) {
    std::mt19937 rng(12);
    std::vector<Stencil> x;
    // Free random stencils, then near-contact ones (gap 1e-1 .. 1e-4 of the size, every region).
    for (int c = 0; c < 4000; ++c) {
        x.push_back({random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)});
    }
    for (const double gap : {1e-1, 1e-2, 1e-3, 1e-4}) {
        for (int c = 0; c < 1000; ++c) {
            x.push_back(near_point_triangle(rng, gap));
            x.push_back(near_edge_edge(rng, gap));
        }
    }
    const SelectedCases sel = select_cases(x);
    std::array<int, k_pt_cases> pt_count{};
    std::array<int, k_ee_cases> ee_count{};
    int pt_labels_checked = 0;
    int ee_labels_checked = 0;
    double worst_pt = 0.0;
    double worst_ee = 0.0;
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("stencil " + std::to_string(c) + ": " + describe(x[c]));
        ++pt_count[int(sel.pt_case[c])];
        ++ee_count[int(sel.ee_case[c])];
        // The squared distance has condition number ~L / d in the inputs (size L, gap d), so any double
        // evaluation, the closed forms included, is off by a few eps L / d relative.
        const double L = stencil_scale(x[c]);
        const BruteForce pt = brute_force_point_triangle(x[c]);
        const double pt_tol = 1e-12 + 4e-15 * L / std::sqrt(pt.value);
        EXPECT_TRUE(distance_matches(sel.pt_distance[c], pt.value, pt_tol));
        worst_pt = std::max(worst_pt, std::abs(sel.pt_distance[c] - pt.value) / pt.value);
        if (pt.label >= 0) {
            EXPECT_EQ(int(sel.pt_case[c]), pt.label);
            ++pt_labels_checked;
        }
        const BruteForce ee = brute_force_edge_edge(x[c]);
        const double ee_tol = 1e-12 + 4e-15 * L / std::sqrt(ee.value);
        EXPECT_TRUE(distance_matches(sel.ee_distance[c], ee.value, ee_tol));
        worst_ee = std::max(worst_ee, std::abs(sel.ee_distance[c] - ee.value) / ee.value);
        if (ee.label >= 0) {
            EXPECT_EQ(int(sel.ee_case[c]), ee.label);
            ++ee_labels_checked;
        }
    }
    for (int k = 0; k < k_pt_cases; ++k) {
        EXPECT_GT(pt_count[k], 10) << "point-triangle case " << k << " is exercised";
    }
    for (int k = 0; k < k_ee_cases; ++k) {
        EXPECT_GT(ee_count[k], 10) << "edge-edge case " << k << " is exercised";
    }
    EXPECT_GT(pt_labels_checked, 0.95 * x.size());
    EXPECT_GT(ee_labels_checked, 0.95 * x.size());
    RecordProperty("worst_pt_relative_error", scientific(worst_pt));
    RecordProperty("worst_ee_relative_error", scientific(worst_ee));
}

TEST(DistanceCases, BruteForceIsBelowDenseSampling) {
    // The reference itself: its minimum is never above a dense sample of the feasible set, and close to it.
    std::mt19937 rng(13);
    for (int c = 0; c < 200; ++c) {
        const Stencil x = {random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)};
        const double pt = brute_force_point_triangle(x).value;
        const double pt_sampled = sampled_point_triangle(x, 200);
        EXPECT_LE(pt, pt_sampled * (1.0 + 1e-14));
        EXPECT_NEAR(pt, pt_sampled, 1e-3 * (1.0 + pt));
        const double ee = brute_force_edge_edge(x).value;
        const double ee_sampled = sampled_edge_edge(x, 200);
        EXPECT_LE(ee, ee_sampled * (1.0 + 1e-14));
        EXPECT_NEAR(ee, ee_sampled, 1e-3 * (1.0 + ee));
    }
}

TEST(DistanceCases, ParallelAndNearlyParallelEdgesMatchBruteForce) {
    std::vector<Stencil> x;
    std::vector<double> theta;
    // Angles from exactly parallel to well-conditioned, overlapping and disjoint, both orientations.
    for (const double angle : {0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2}) {
        for (const double shift : {-1.5, -0.3, 0.2, 0.9, 1.4}) {
            for (const double length_b : {0.5, 1.0, -1.0, 2.0}) {
                for (const double gap : {1e-3, 0.3}) {
                    x.push_back(nearly_parallel(angle, gap, shift, length_b));
                    theta.push_back(angle);
                }
            }
        }
    }
    const SelectedCases sel = select_cases(x);
    int interior = 0;
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("theta " + std::to_string(theta[c]) + ": " + describe(x[c]));
        const BruteForce bf = brute_force_edge_edge(x[c]);
        // The line-line form loses eps / sin(theta) relative accuracy; the guard keeps theta <= 1e-10 out
        // of it, and a coarse angle costs ~eps / theta^2 in |u x v|^2.
        const double tol = 1e-12 + (theta[c] > 0.0 ? 4e-16 / theta[c] : 0.0);
        EXPECT_TRUE(distance_matches(sel.ee_distance[c], bf.value, tol));
        if (sel.ee_case[c] == EdgeEdgeCase::interior) {
            ++interior;
            EXPECT_GT(theta[c], 1e-10) << "the near-parallel guard never selects interior";
        }
    }
    EXPECT_GT(interior, 0);
}

// ---- Tests: derivatives ----------------------------------------------------------------------------

/// Host evaluation of case k (0..15) on a stencil.
double case_value(const Stencil& x, int k) {
    if (k < k_pt_cases) {
        return point_triangle_distance(x[0], x[1], x[2], x[3], static_cast<PointTriangleCase>(k));
    }
    return edge_edge_distance(x[0], x[1], x[2], x[3], static_cast<EdgeEdgeCase>(k - k_pt_cases));
}

Vec12 case_gradient(const Stencil& x, int k) {
    if (k < k_pt_cases) {
        return point_triangle_distance_gradient(x[0], x[1], x[2], x[3], static_cast<PointTriangleCase>(k));
    }
    return edge_edge_distance_gradient(x[0], x[1], x[2], x[3], static_cast<EdgeEdgeCase>(k - k_pt_cases));
}

TEST(DistanceDerivatives, EveryCaseMatchesFiniteDifferences) {
    std::mt19937 rng(14);
    std::vector<Stencil> x;
    for (int c = 0; c < 150; ++c) {
        x.push_back({random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)});
    }
    for (const double gap : {1e-2, 1e-4}) {
        for (int c = 0; c < 30; ++c) {
            x.push_back(near_point_triangle(rng, gap));
            x.push_back(near_edge_edge(rng, gap));
        }
    }
    for (const Labeled& l : labeled_point_triangle()) {
        x.push_back(l.x);
    }
    for (const Labeled& l : labeled_edge_edge()) {
        x.push_back(l.x);
    }
    for (const double angle : {0.0, 1e-3, 1e-2}) {
        x.push_back(nearly_parallel(angle, 0.1, 0.3, 1.0));
    }
    // Scaled copies: derivatives scale as L^1 (gradient) and L^0 (Hessian).
    for (int c = 0; c < 10; ++c) {
        x.push_back(transform(x[c], random_rotation(rng), random_vec(rng), 1e-3));
        x.push_back(transform(x[c], random_rotation(rng), random_vec(rng), 1e2));
    }
    const AllCaseDerivatives d = evaluate_all_cases(x);
    int checked = 0;
    for (std::size_t c = 0; c < x.size(); ++c) {
        const Stencil& xc = x[c];
        const double L = stencil_scale(xc);
        const double h = 1e-7 * L;
        const Vec3 u = xc[1] - xc[0];
        const Vec3 v = xc[3] - xc[2];
        // Each stencil is read both ways, as (p, t0, t1, t2) and as (a0, a1, b0, b1); the triangle
        // formulas need a non-degenerate triangle and the line-line formula non-parallel edges (it is
        // never selected for parallel ones).
        const Vec3 e1 = xc[2] - xc[1];
        const Vec3 e2 = xc[3] - xc[1];
        const bool triangle_ok = cross(e1, e2).squaredNorm() > 1e-7 * e1.squaredNorm() * e2.squaredNorm();
        const bool ee_interior_ok = cross(u, v).squaredNorm() > 1e-7 * u.squaredNorm() * v.squaredNorm();
        for (int k = 0; k < k_cases; ++k) {
            if ((k < k_pt_cases && !triangle_ok) || (k == k_cases - 1 && !ee_interior_ok)) {
                continue;
            }
            SCOPED_TRACE("stencil " + std::to_string(c) + ", case " + std::to_string(k) + ": " +
                         describe(xc));
            const double host_value = case_value(xc, k);
            EXPECT_NEAR(d.value[c][k], host_value, 1e-14 * std::max(L * L, host_value)) << "device vs host";
            const Vec12 g_fd = fd_gradient([k](const Stencil& y) { return case_value(y, k); }, xc, h);
            EXPECT_TRUE(near(d.gradient[c][k], g_fd, 1e-6, 1e-8 * L)) << "gradient";
            const Mat12 H_fd = fd_jacobian([k](const Stencil& y) { return case_gradient(y, k); }, xc, h);
            EXPECT_TRUE(near(d.hessian[c][k], H_fd, 1e-6, 1e-7)) << "Hessian";
            EXPECT_TRUE(near(d.hessian[c][k], Mat12(d.hessian[c][k].transpose()), 1e-14, 0.0)) << "symmetric";
            // Translation invariance: the gradient blocks sum to zero.
            Vec3 sum = Vec3::Zero();
            for (int a = 0; a < 4; ++a) {
                sum += d.gradient[c][k].segment<3>(3 * a);
            }
            EXPECT_LE(sum.norm(), 1e-12 * L);
            ++checked;
        }
    }
    EXPECT_GT(checked, 16 * 300);
}

TEST(DistanceDerivatives, HandValuesAndEmbedding) {
    // p at height z over the unit right triangle's interior, and the same p against edge 01 and vertex t0.
    const double z = 0.5;
    const Stencil x = {Vec3(0.2, 0.3, z), Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.0, 1.0, 0.0)};
    const AllCaseDerivatives d = evaluate_all_cases({x});
    using C = PointTriangleCase;
    EXPECT_NEAR(d.value[0][int(C::interior)], z * z, 1e-15);
    EXPECT_NEAR(d.value[0][int(C::pe01)], 0.3 * 0.3 + z * z, 1e-15);
    EXPECT_NEAR(d.value[0][int(C::pp0)], 0.04 + 0.09 + z * z, 1e-15);
    EXPECT_NEAR(d.value[0][int(C::pp1)], 0.64 + 0.09 + z * z, 1e-15);
    EXPECT_NEAR(d.value[0][int(C::pe12)], std::pow(0.5 / std::sqrt(2.0), 2) + z * z, 1e-15);
    // Interior: ds/dp = 2 z n̂, and the triangle vertices take -2 z n̂ times the barycentrics (0.5, 0.2, 0.3).
    Vec12 g;
    g << 0.0, 0.0, 2 * z, 0.0, 0.0, -2 * z * 0.5, 0.0, 0.0, -2 * z * 0.2, 0.0, 0.0, -2 * z * 0.3;
    EXPECT_TRUE(near(d.gradient[0][int(C::interior)], g, 0.0, 1e-15));
    // Point-point embedding: only the p and t1 blocks are non-zero, and they are 2 [[I, -I], [-I, I]].
    const Mat12& H = d.hessian[0][int(C::pp1)];
    Mat12 expected = Mat12::Zero();
    expected.block<3, 3>(0, 0) = 2.0 * Mat3::Identity();
    expected.block<3, 3>(6, 6) = 2.0 * Mat3::Identity();
    expected.block<3, 3>(0, 6) = -2.0 * Mat3::Identity();
    expected.block<3, 3>(6, 0) = -2.0 * Mat3::Identity();
    EXPECT_TRUE(near(H, expected, 0.0, 0.0));
    // Edge-edge with b over the middle of a at height 0.5: line-line distance 0.25, gradient along z.
    const Stencil e = {Vec3(0.0, 0.0, 0.0), Vec3(1.0, 0.0, 0.0), Vec3(0.5, -1.0, 0.5), Vec3(0.5, 1.0, 0.5)};
    const AllCaseDerivatives de = evaluate_all_cases({e});
    const int interior = k_pt_cases + int(EdgeEdgeCase::interior);
    EXPECT_NEAR(de.value[0][interior], 0.25, 1e-15);
    Vec12 ge;
    ge << 0.0, 0.0, -0.5, 0.0, 0.0, -0.5, 0.0, 0.0, 0.5, 0.0, 0.0, 0.5;
    EXPECT_TRUE(near(de.gradient[0][interior], ge, 0.0, 1e-15));
}

// ---- Tests: parallel-edge mollifier ------------------------------------------------------------------

TEST(EdgeEdgeMollifier, ThresholdValuesAndFiniteDifferences) {
    std::mt19937 rng(15);
    std::vector<Stencil> x;
    std::vector<Stencil> rest;
    std::vector<double> eps;
    // Near-parallel pairs with eps_x from their rest shape (the pair itself): c < eps_x for sin^2 < 1e-3.
    for (const double angle : {0.0, 1e-6, 1e-3, 1e-2, 0.02, 0.03, 0.05, 0.3}) {
        const Stencil s = nearly_parallel(angle, 0.01, 0.3, 1.3);
        x.push_back(s);
        rest.push_back(s);
        eps.push_back(edge_edge_mollifier_threshold(s[0], s[1], s[2], s[3]));
    }
    // Random pairs with eps_x placed on either side of c, and random rest shapes.
    for (int c = 0; c < 60; ++c) {
        const Stencil s = {random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)};
        const double cross_c = edge_edge_cross_squared_norm(s[0], s[1], s[2], s[3]);
        x.push_back(s);
        rest.push_back({random_vec(rng), random_vec(rng), random_vec(rng), random_vec(rng)});
        eps.push_back(cross_c * (c % 3 == 0 ? 0.5 : (c % 3 == 1 ? 1.5 : 10.0)));
    }
    const MollifierValues m = evaluate_mollifier(x, rest, eps);
    for (std::size_t c = 0; c < x.size(); ++c) {
        SCOPED_TRACE("pair " + std::to_string(c) + ": " + describe(x[c]));
        const Stencil& s = x[c];
        const double L = stencil_scale(s);
        const double h = 1e-7 * L;
        const Vec3 u = s[1] - s[0];
        const Vec3 v = s[3] - s[2];
        const double cross_c = u.squaredNorm() * v.squaredNorm() - std::pow(u.dot(v), 2);
        EXPECT_NEAR(m.scalars[c](0), cross_c, 1e-14 * u.squaredNorm() * v.squaredNorm());
        const double threshold =
            1e-3 * (rest[c][1] - rest[c][0]).squaredNorm() * (rest[c][3] - rest[c][2]).squaredNorm();
        EXPECT_NEAR(m.scalars[c](2), threshold, 1e-15 * threshold);
        const double r = m.scalars[c](0) / eps[c];
        EXPECT_NEAR(m.scalars[c](1), r < 1.0 ? 2.0 * r - r * r : 1.0, 1e-15);
        EXPECT_EQ(m.scalars[c](1), m.scalars[c](3));
        EXPECT_GE(m.scalars[c](1), 0.0);
        EXPECT_LE(m.scalars[c](1), 1.0);

        auto c_of = [](const Stencil& y) { return edge_edge_cross_squared_norm(y[0], y[1], y[2], y[3]); };
        auto dc_of = [](const Stencil& y) {
            return edge_edge_cross_squared_norm_gradient(y[0], y[1], y[2], y[3]);
        };
        const double L4 = std::pow(L, 4);
        EXPECT_TRUE(near(m.c_gradient[c], fd_gradient(c_of, s, h), 1e-6, 1e-8 * L4 / L)) << "dc";
        EXPECT_TRUE(near(m.c_hessian[c], fd_jacobian(dc_of, s, h), 1e-6, 1e-7 * L4 / (L * L))) << "d2c";

        const double e_c = eps[c];
        auto e_of = [e_c](const Stencil& y) { return edge_edge_mollifier(y[0], y[1], y[2], y[3], e_c); };
        auto de_of = [e_c](const Stencil& y) {
            return edge_edge_mollifier_gradient(y[0], y[1], y[2], y[3], e_c);
        };
        // Away from the kink at c = eps_x (e is C^1 there, not C^2), within 1% of it the Hessian is skipped.
        const bool smooth = std::abs(r - 1.0) > 1e-2;
        if (smooth) {
            const double e_scale = 1.0 / L; // e is dimensionless, de ~ 1/L, d2e ~ 1/L^2
            EXPECT_TRUE(near(m.e_gradient[c], fd_gradient(e_of, s, h), 1e-6, 1e-8 * e_scale)) << "de";
            EXPECT_TRUE(near(m.e_hessian[c], fd_jacobian(de_of, s, h), 1e-6, 1e-7 * e_scale * e_scale))
                << "d2e";
        }
        if (r >= 1.0) {
            EXPECT_EQ(m.e_gradient[c].norm(), 0.0);
            EXPECT_EQ(m.e_hessian[c].norm(), 0.0);
        }
    }
    // Exactly parallel: c = 0, e = 0 and dc = 0 (c is minimal there).
    EXPECT_EQ(m.scalars[0](0), 0.0);
    EXPECT_EQ(m.scalars[0](1), 0.0);
    EXPECT_EQ(m.c_gradient[0].norm(), 0.0);
}

TEST(EdgeEdgeMollifier, ScalarMollifierIsC1AtTheThreshold) {
    const double eps_x = 2.5e-3;
    std::vector<VecN<2>> c_eps;
    for (const double r : {0.0, 0.25, 0.5, 0.999999, 1.0, 1.000001, 2.0}) {
        c_eps.push_back(VecN<2>(r * eps_x, eps_x));
    }
    const std::vector<Vec3> e = evaluate_scalar_mollifier(c_eps);
    EXPECT_EQ(e[0](0), 0.0);
    EXPECT_DOUBLE_EQ(e[0](1), 2.0 / eps_x);
    EXPECT_DOUBLE_EQ(e[1](0), 0.4375);
    EXPECT_DOUBLE_EQ(e[2](0), 0.75);
    for (int k = 0; k < 4; ++k) {
        EXPECT_DOUBLE_EQ(e[k](2), -2.0 / (eps_x * eps_x));
    }
    // Left and right of the threshold: e -> 1, e' -> 0 (C^1); e'' jumps from -2 / eps^2 to 0.
    EXPECT_NEAR(e[3](0), 1.0, 1e-11);
    EXPECT_NEAR(e[3](1), 0.0, 1e-5 / eps_x);
    EXPECT_EQ(e[4](0), 1.0);
    EXPECT_EQ(e[4](1), 0.0);
    EXPECT_EQ(e[5](0), 1.0);
    EXPECT_EQ(e[5](1), 0.0);
    EXPECT_EQ(e[6](2), 0.0);
    // e' against central differences of e in c.
    for (const double r : {0.1, 0.5, 0.9}) {
        const double c = r * eps_x;
        const double hc = 1e-7 * eps_x;
        const double fd = (mollifier(c + hc, eps_x) - mollifier(c - hc, eps_x)) / (2.0 * hc);
        EXPECT_NEAR(mollifier_first_derivative(c, eps_x), fd, 1e-6 / eps_x);
        const double fd2 =
            (mollifier_first_derivative(c + hc, eps_x) - mollifier_first_derivative(c - hc, eps_x)) /
            (2.0 * hc);
        EXPECT_NEAR(mollifier_second_derivative(c, eps_x), fd2, 1e-6 / (eps_x * eps_x));
    }
}

} // namespace
