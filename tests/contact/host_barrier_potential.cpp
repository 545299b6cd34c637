#include "tests/contact/host_barrier_potential.hpp"

#include "comm/collectives.hpp"
#include "kernels/barrier.hpp"
#include "kernels/ccd_additive.hpp"
#include "kernels/edge_edge_mollifier.hpp"
#include "kernels/pair_distance.hpp"
#include "kernels/small_matrix.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace intact::contact {

namespace {

using kernels::Mat12;
using kernels::Vec12;

struct Box {
    Vec3 lo, hi;
};

// Box of points a (and a + p when sweeping), inflated by r.
Box box_of(std::initializer_list<int> ids,
           const std::vector<Vec3>& xs,
           const std::vector<Vec3>* ps,
           double r) {
    Box box{{1e300, 1e300, 1e300}, {-1e300, -1e300, -1e300}};
    for (const int id : ids) {
        for (int c = 0; c < 3; ++c) {
            const double a = xs[static_cast<std::size_t>(id)][static_cast<std::size_t>(c)];
            const double b = ps ? a + (*ps)[static_cast<std::size_t>(id)][static_cast<std::size_t>(c)] : a;
            box.lo[static_cast<std::size_t>(c)] = std::min({box.lo[static_cast<std::size_t>(c)], a, b});
            box.hi[static_cast<std::size_t>(c)] = std::max({box.hi[static_cast<std::size_t>(c)], a, b});
        }
    }
    for (int c = 0; c < 3; ++c) {
        box.lo[static_cast<std::size_t>(c)] -= r;
        box.hi[static_cast<std::size_t>(c)] += r;
    }
    return box;
}

// Upload host boxes to a device BoxList (reallocated only when the count changes; each list of
// BarrierPotential::candidates has its own BoxList, so that happens only when the ghost plan changes).
void upload(const std::vector<Box>& boxes, BoxList& list) {
    if (list.size() != static_cast<int>(boxes.size()) || !list.lo.data()) {
        list.lo = Kokkos::View<double* [3], MemSpace>("intact::contact::box_lo", boxes.size());
        list.hi = Kokkos::View<double* [3], MemSpace>("intact::contact::box_hi", boxes.size());
    }
    const auto lo = Kokkos::create_mirror_view(list.lo);
    const auto hi = Kokkos::create_mirror_view(list.hi);
    for (std::size_t i = 0; i < boxes.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
            lo(i, c) = boxes[i].lo[static_cast<std::size_t>(c)];
            hi(i, c) = boxes[i].hi[static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(list.lo, lo);
    Kokkos::deep_copy(list.hi, hi);
}

// b(s), and w b for mollified edge pairs, with the gradient and (PSD) Hessian over the 12 stencil DOFs.
struct PairValue {
    double energy = 0.0;
    Vec12 gradient = Vec12::Zero();
    Mat12 hessian = Mat12::Zero();
};

// Hash cell: the mean rest length of the bodies' boundary edges (obstacle meshes may be far coarser), at
// least 2 d̂.
double broad_phase_cell(const ContactSurface& surface, double dhat) {
    double total = 0.0;
    int count = 0;
    for (const auto& e : surface.edges()) {
        if (surface.is_obstacle(e[0])) {
            continue;
        }
        const auto& a = surface.rest_positions()[static_cast<std::size_t>(e[0])];
        const auto& b = surface.rest_positions()[static_cast<std::size_t>(e[1])];
        total += std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                           (a[2] - b[2]) * (a[2] - b[2]));
        ++count;
    }
    return std::max(count == 0 ? 1.0 : total / count, 2.0 * dhat);
}

} // namespace

BarrierPotential::BarrierPotential(MPI_Comm comm, const ContactSurface& surface, double dhat)
    : m_comm(comm), m_surface(surface), m_dhat(dhat), m_hash(broad_phase_cell(surface, dhat)) {}

bool BarrierPotential::owns(const Pair& pair) const {
    const auto& gid = m_surface.vertex_gid();
    const int count = pair.kind == Kind::point_plane ? 1 : 4;
    int smallest = pair.v[0];
    for (int k = 1; k < count; ++k) {
        if (gid[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])] <
            gid[static_cast<std::size_t>(smallest)]) {
            smallest = pair.v[static_cast<std::size_t>(k)];
        }
    }
    return m_surface.owns(smallest);
}

std::vector<BarrierPotential::Pair> BarrierPotential::candidates(const std::vector<Vec3>& xs,
                                                                 const std::vector<Vec3>* ps,
                                                                 double inflation) const {
    const auto& tris = m_surface.triangles();
    const auto& edges = m_surface.edges();
    const auto& constrained = m_surface.vertex_constrained();
    std::vector<Pair> pairs;
    auto owned = [&](int id) { return m_surface.owns(id); };
    auto has_owned = [&](std::initializer_list<int> ids) {
        return std::any_of(ids.begin(), ids.end(), owned);
    };
    // A pair is kept when this rank owns one of its rows and not all of them are prescribed.
    auto keep = [&](std::initializer_list<int> ids) {
        return has_owned(ids) && !std::all_of(ids.begin(), ids.end(), [&](int id) {
                   return constrained[static_cast<std::size_t>(id)] != 0;
               });
    };

    // Boxes of the known primitives (half the inflation on each side), then the device spatial hash.
    // Only pairs with a row this rank owns matter, so the queries are: owned points against all known
    // triangles, other known points against triangles with an owned corner, and edges with an owned row
    // against all known edges. Each pair is found once.
    const auto& known_triangles = m_surface.known_triangles();
    const auto& known_edges = m_surface.known_edges();
    std::vector<int> owned_points, other_points, owned_triangles, owned_edges, other_edges;
    for (const int v : m_surface.known_vertices()) {
        (owned(v) ? owned_points : other_points).push_back(v);
    }
    for (const int t : known_triangles) {
        const auto& tri = tris[static_cast<std::size_t>(t)];
        if (has_owned({tri[0], tri[1], tri[2]})) {
            owned_triangles.push_back(t);
        }
    }
    for (const int e : known_edges) {
        const bool mine =
            has_owned({edges[static_cast<std::size_t>(e)][0], edges[static_cast<std::size_t>(e)][1]});
        (mine ? owned_edges : other_edges).push_back(e);
    }
    auto upload_boxes = [&](const std::vector<int>& items, auto rows_of, BoxList& list) {
        std::vector<Box> boxes(items.size());
        for (std::size_t i = 0; i < items.size(); ++i) {
            boxes[i] = rows_of(items[i]);
        }
        upload(boxes, list);
    };
    const auto point_box = [&](int v) { return box_of({v}, xs, ps, 0.5 * inflation); };
    const auto triangle_box = [&](int t) {
        const auto& tri = tris[static_cast<std::size_t>(t)];
        return box_of({tri[0], tri[1], tri[2]}, xs, ps, 0.5 * inflation);
    };
    const auto edge_box = [&](int e) {
        const auto& edge = edges[static_cast<std::size_t>(e)];
        return box_of({edge[0], edge[1]}, xs, ps, 0.5 * inflation);
    };

    auto add_point_triangle = [&](int v, int t) {
        const auto& tri = tris[static_cast<std::size_t>(t)];
        if (tri[0] != v && tri[1] != v && tri[2] != v && keep({v, tri[0], tri[1], tri[2]})) {
            pairs.push_back({Kind::point_triangle, {v, tri[0], tri[1], tri[2]}});
        }
    };
    upload_boxes(owned_points, point_box, m_owned_point_boxes);
    upload_boxes(known_triangles, triangle_box, m_known_triangle_boxes);
    for (const auto& [i, j] : m_hash.query(m_owned_point_boxes, m_known_triangle_boxes)) {
        add_point_triangle(owned_points[static_cast<std::size_t>(i)],
                           known_triangles[static_cast<std::size_t>(j)]);
    }
    upload_boxes(other_points, point_box, m_other_point_boxes);
    upload_boxes(owned_triangles, triangle_box, m_owned_triangle_boxes);
    for (const auto& [i, j] : m_hash.query(m_other_point_boxes, m_owned_triangle_boxes)) {
        add_point_triangle(other_points[static_cast<std::size_t>(i)],
                           owned_triangles[static_cast<std::size_t>(j)]);
    }

    // Edge–edge, each unordered pair stored with the smaller edge index first: pairs of edges with an owned
    // row (each once), and such edges against the other known edges.
    auto add_edge_edge = [&](int a, int b) {
        const auto& ea = edges[static_cast<std::size_t>(std::min(a, b))];
        const auto& eb = edges[static_cast<std::size_t>(std::max(a, b))];
        if (ea[0] != eb[0] && ea[0] != eb[1] && ea[1] != eb[0] && ea[1] != eb[1] &&
            keep({ea[0], ea[1], eb[0], eb[1]})) {
            pairs.push_back({Kind::edge_edge, {ea[0], ea[1], eb[0], eb[1]}});
        }
    };
    upload_boxes(owned_edges, edge_box, m_owned_edge_boxes);
    for (const auto& [i, j] : m_hash.query_self(m_owned_edge_boxes)) {
        add_edge_edge(owned_edges[static_cast<std::size_t>(i)], owned_edges[static_cast<std::size_t>(j)]);
    }
    upload_boxes(other_edges, edge_box, m_other_edge_boxes);
    for (const auto& [i, j] : m_hash.query(m_owned_edge_boxes, m_other_edge_boxes)) {
        add_edge_edge(owned_edges[static_cast<std::size_t>(i)], other_edges[static_cast<std::size_t>(j)]);
    }

    // Point–plane: every owned free row against every plane (a plane is prescribed, so prescribed rows
    // are skipped like every all-prescribed pair, and a moving plane passes through fixed nodes as a
    // moving mesh obstacle does).
    const auto& planes = m_surface.planes();
    for (std::size_t k = 0; k < planes.size(); ++k) {
        for (const int v : m_surface.owned_surface()) {
            if (!constrained[static_cast<std::size_t>(v)]) {
                pairs.push_back({Kind::point_plane, {v, static_cast<int>(k), planes[k].row, 0}});
            }
        }
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end(),
                            [](const Pair& x, const Pair& y) { return x.kind == y.kind && x.v == y.v; }),
                pairs.end());
    return pairs;
}

double BarrierPotential::plane_distance(const Pair& pair, const std::vector<Vec3>& xs) const {
    const Vec3& n = m_surface.planes()[static_cast<std::size_t>(pair.v[1])].normal;
    const Vec3& p = xs[static_cast<std::size_t>(pair.v[0])];
    const Vec3& q = xs[static_cast<std::size_t>(pair.v[2])];
    return n[0] * (p[0] - q[0]) + n[1] * (p[1] - q[1]) + n[2] * (p[2] - q[2]);
}

double BarrierPotential::pair_squared_distance(const Pair& pair, const std::vector<Vec3>& xs) const {
    const auto x = [&](int k) {
        return kernels::from_array(xs[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])]);
    };
    switch (pair.kind) {
    case Kind::point_triangle:
        return kernels::point_triangle_distance(x(0), x(1), x(2), x(3),
                                                kernels::point_triangle_case(x(0), x(1), x(2), x(3)));
    case Kind::edge_edge:
        return kernels::edge_edge_distance(x(0), x(1), x(2), x(3),
                                           kernels::edge_edge_case(x(0), x(1), x(2), x(3)));
    case Kind::point_plane:
        break;
    }
    const double d = plane_distance(pair, xs);
    return d > 0.0 ? d * d : 0.0; // on or behind the plane: no admissible distance
}

std::vector<BarrierPotential::Pair> BarrierPotential::active_pairs(const std::vector<Vec3>& xs) const {
    std::vector<Pair> active;
    const double s_hat = m_dhat * m_dhat;
    for (const Pair& pair : candidates(xs, nullptr, m_dhat)) {
        if (pair_squared_distance(pair, xs) < s_hat) {
            active.push_back(pair);
        }
    }
    return active;
}

namespace {

// Barrier value, gradient and PSD Hessian of one pair over its stencil (PT/EE: 12 DOFs).
// What evaluate_pair computes beyond the energy.
enum class Order { energy, gradient, hessian };

PairValue evaluate_pair(
    BarrierPotential::Kind kind, const kernels::Vec3 x[4], double s_hat, double eps_x, Order order) {
    const bool derivatives = order != Order::energy;
    const bool hessian = order == Order::hessian;
    PairValue value;
    double s = 0.0;
    Vec12 gs = Vec12::Zero();
    Mat12 hs = Mat12::Zero();
    if (kind == BarrierPotential::Kind::point_triangle) {
        const auto which = kernels::point_triangle_case(x[0], x[1], x[2], x[3]);
        s = kernels::point_triangle_distance(x[0], x[1], x[2], x[3], which);
        if (derivatives && s > 0.0 && s < s_hat) {
            gs = kernels::point_triangle_distance_gradient(x[0], x[1], x[2], x[3], which);
            if (hessian) {
                hs = kernels::point_triangle_distance_hessian(x[0], x[1], x[2], x[3], which);
            }
        }
    } else {
        const auto which = kernels::edge_edge_case(x[0], x[1], x[2], x[3]);
        s = kernels::edge_edge_distance(x[0], x[1], x[2], x[3], which);
        if (derivatives && s > 0.0 && s < s_hat) {
            gs = kernels::edge_edge_distance_gradient(x[0], x[1], x[2], x[3], which);
            if (hessian) {
                hs = kernels::edge_edge_distance_hessian(x[0], x[1], x[2], x[3], which);
            }
        }
    }
    if (!(s > 0.0)) {
        value.energy = std::numeric_limits<double>::infinity();
        return value;
    }
    if (s >= s_hat) {
        return value;
    }
    const double b = kernels::barrier(s, s_hat);
    const double db = kernels::barrier_first_derivative(s, s_hat);
    const double ddb = kernels::barrier_second_derivative(s, s_hat);
    double e = 1.0;
    Vec12 ge = Vec12::Zero();
    Mat12 he = Mat12::Zero();
    if (kind == BarrierPotential::Kind::edge_edge) {
        e = kernels::edge_edge_mollifier(x[0], x[1], x[2], x[3], eps_x);
        if (derivatives && e < 1.0) {
            ge = kernels::edge_edge_mollifier_gradient(x[0], x[1], x[2], x[3], eps_x);
            if (hessian) {
                he = kernels::edge_edge_mollifier_hessian(x[0], x[1], x[2], x[3], eps_x);
            }
        }
    }
    value.energy = e * b;
    if (derivatives) {
        value.gradient = e * db * gs + b * ge;
    }
    if (hessian) {
        value.hessian = e * (ddb * gs * gs.transpose() + db * hs) +
                        db * (ge * gs.transpose() + gs * ge.transpose()) + b * he;
        kernels::project_psd<12>(value.hessian);
    }
    return value;
}

} // namespace

double BarrierPotential::local_energy(const std::vector<Vec3>& xs) const {
    const double s_hat = m_dhat * m_dhat;
    double total = 0.0;
    for (const Pair& pair : candidates(xs, nullptr, m_dhat)) {
        if (!owns(pair)) {
            continue;
        }
        if (pair.kind == Kind::point_plane) {
            const double s = pair_squared_distance(pair, xs);
            total += s <= 0.0 ? std::numeric_limits<double>::infinity()
                              : (s < s_hat ? kernels::barrier(s, s_hat) : 0.0);
            continue;
        }
        kernels::Vec3 x[4];
        for (int k = 0; k < 4; ++k) {
            x[k] = kernels::from_array(xs[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])]);
        }
        const double eps_x = pair.kind == Kind::edge_edge ? mollifier_threshold(pair) : 0.0;
        total += evaluate_pair(pair.kind, x, s_hat, eps_x, Order::energy).energy;
    }
    return total;
}

double BarrierPotential::energy(const std::vector<Vec3>& xs) const {
    return comm::allreduce_sum(m_comm, local_energy(xs));
}

double BarrierPotential::mollifier_threshold(const Pair& pair) const {
    const auto rest = [&](int k) {
        return kernels::from_array(
            m_surface.rest_positions()[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])]);
    };
    return kernels::edge_edge_mollifier_threshold(rest(0), rest(1), rest(2), rest(3));
}

double BarrierPotential::min_squared_distance(const std::vector<Vec3>& xs) const {
    double smallest = std::numeric_limits<double>::infinity();
    for (const Pair& pair : candidates(xs, nullptr, m_dhat)) {
        smallest = std::min(smallest, pair_squared_distance(pair, xs));
    }
    return comm::allreduce_min(m_comm, smallest);
}

void BarrierPotential::derivatives(const std::vector<Vec3>& xs,
                                   double kappa,
                                   std::vector<double>& gradient,
                                   std::vector<ContactBlock>* blocks) const {
    const double s_hat = m_dhat * m_dhat;
    // Blocks keyed by (row local node, column surface vertex), summed in pair order: deterministic.
    std::map<std::pair<int, int>, std::array<double, 9>> sums;
    auto add = [&](int a_surface, int b_surface, const double* block, int stride) {
        if (!blocks) {
            return;
        }
        const int row = m_surface.local_of_surface(a_surface);
        auto& target = sums[{row, b_surface}];
        for (int p = 0; p < 3; ++p) {
            for (int q = 0; q < 3; ++q) {
                target[static_cast<std::size_t>(3 * p + q)] += kappa * block[p * stride + q];
            }
        }
    };
    for (const Pair& pair : active_pairs(xs)) {
        if (pair.kind == Kind::point_plane) {
            const Vec3& n = m_surface.planes()[static_cast<std::size_t>(pair.v[1])].normal;
            const double d = plane_distance(pair, xs);
            const double s = d * d;
            const double db = kernels::barrier_first_derivative(s, s_hat);
            const double ddb = kernels::barrier_second_derivative(s, s_hat);
            // ∇s = 2 d n, ∇²s = 2 n nᵀ for the vertex (the plane's row enters with the opposite sign):
            // the Hessian is (4 d² b'' + 2 b') n nᵀ, clamped at zero (PSD).
            const double curvature = std::max(0.0, 4.0 * s * ddb + 2.0 * db);
            const int row = m_surface.local_of_surface(pair.v[0]);
            double block[9], coupling[9];
            for (int c = 0; c < 3; ++c) {
                gradient[static_cast<std::size_t>(3 * row + c)] +=
                    kappa * db * 2.0 * d * n[static_cast<std::size_t>(c)];
                for (int e = 0; e < 3; ++e) {
                    block[3 * c + e] =
                        curvature * n[static_cast<std::size_t>(c)] * n[static_cast<std::size_t>(e)];
                    coupling[3 * c + e] = -block[3 * c + e];
                }
            }
            add(pair.v[0], pair.v[0], block, 3);
            add(pair.v[0], pair.v[2], coupling, 3); // a moving plane pushes through this block
            continue;
        }
        kernels::Vec3 x[4];
        for (int k = 0; k < 4; ++k) {
            x[k] = kernels::from_array(xs[static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)])]);
        }
        const double eps_x = pair.kind == Kind::edge_edge ? mollifier_threshold(pair) : 0.0;
        const PairValue value =
            evaluate_pair(pair.kind, x, s_hat, eps_x, blocks ? Order::hessian : Order::gradient);
        for (int a = 0; a < 4; ++a) {
            const int va = pair.v[static_cast<std::size_t>(a)];
            if (!m_surface.owns(va)) {
                continue; // another rank adds this row
            }
            const int row = m_surface.local_of_surface(va);
            for (int c = 0; c < 3; ++c) {
                gradient[static_cast<std::size_t>(3 * row + c)] += kappa * value.gradient(3 * a + c);
            }
            for (int b = 0; b < 4; ++b) {
                double block[9];
                for (int p = 0; p < 3; ++p) {
                    for (int q = 0; q < 3; ++q) {
                        block[3 * p + q] = value.hessian(3 * a + p, 3 * b + q);
                    }
                }
                add(va, pair.v[static_cast<std::size_t>(b)], block, 3);
            }
        }
    }
    if (!blocks) {
        return;
    }
    for (const auto& [key, values] : sums) {
        ContactBlock block{key.first, key.second, {}};
        for (int p = 0; p < 3; ++p) {
            for (int q = 0; q < 3; ++q) {
                block.value[p][q] = values[static_cast<std::size_t>(3 * p + q)];
            }
        }
        blocks->push_back(block);
    }
}

double BarrierPotential::max_step(const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) const {
    return comm::allreduce_min(m_comm, local_max_step(xs, ps));
}

double BarrierPotential::local_max_step(const std::vector<Vec3>& xs, const std::vector<Vec3>& ps) const {
    double alpha = 1.0;
    for (const Pair& pair : candidates(xs, &ps, m_dhat)) {
        const double d0 = std::sqrt(pair_squared_distance(pair, xs));
        if (pair.kind == Kind::point_plane) {
            const Vec3& n = m_surface.planes()[static_cast<std::size_t>(pair.v[1])].normal;
            const Vec3& p = ps[static_cast<std::size_t>(pair.v[0])];
            const Vec3& q = ps[static_cast<std::size_t>(pair.v[2])];
            const double approach = -(n[0] * (p[0] - q[0]) + n[1] * (p[1] - q[1]) + n[2] * (p[2] - q[2]));
            if (approach > 0.0) {
                alpha = std::min(alpha, 0.8 * d0 / approach); // keep 20% of the gap
            }
            continue;
        }
        kernels::Vec3 start[4], end[4];
        for (int k = 0; k < 4; ++k) {
            const auto i = static_cast<std::size_t>(pair.v[static_cast<std::size_t>(k)]);
            start[k] = kernels::from_array(xs[i]);
            end[k] = start[k] + kernels::from_array(ps[i]);
        }
        double toi = 1.0;
        const double separation = 0.2 * d0; // no pair closes more than 80% of its gap in one step
        const bool hit = pair.kind == Kind::point_triangle
                             ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0],
                                                           end[1], end[2], end[3], separation, alpha, toi)
                             : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                      end[2], end[3], separation, alpha, toi);
        if (hit && toi < 1e-6 * alpha) {
            // Too close to separate by 20%: use 80% of the time of impact itself (IPC spec §8.2).
            double touch = alpha;
            const bool touches =
                pair.kind == Kind::point_triangle
                    ? kernels::point_triangle_ccd(start[0], start[1], start[2], start[3], end[0], end[1],
                                                  end[2], end[3], 0.0, alpha, touch)
                    : kernels::edge_edge_ccd(start[0], start[1], start[2], start[3], end[0], end[1], end[2],
                                             end[3], 0.0, alpha, touch);
            toi = touches ? std::max(toi, 0.8 * touch) : alpha; // the longer of two safe bounds
        }
        if (hit) {
            alpha = std::min(alpha, toi);
        }
    }
    return alpha;
}

std::string BarrierPotential::describe_row(int s) const {
    const int body = m_surface.vertex_body()[static_cast<std::size_t>(s)];
    if (body >= 0) {
        return "body " + std::to_string(body) + " node " +
               std::to_string(m_surface.vertex_gid()[static_cast<std::size_t>(s)]);
    }
    int first = s; // obstacle rows of one obstacle are contiguous
    while (first > 0 && m_surface.vertex_body()[static_cast<std::size_t>(first - 1)] == body) {
        --first;
    }
    return "obstacles[" + std::to_string(-1 - body) + "] vertex " + std::to_string(s - first);
}

std::string BarrierPotential::first_close_pair(const std::vector<Vec3>& xs) const {
    const double s_hat = m_dhat * m_dhat;
    std::string found;
    for (const Pair& pair : candidates(xs, nullptr, m_dhat)) {
        const double s = pair_squared_distance(pair, xs);
        if (s < s_hat && owns(pair)) {
            std::ostringstream text;
            text.precision(6);
            if (pair.kind == Kind::point_plane) {
                text << describe_row(pair.v[0]) << " is at distance " << std::sqrt(s) << " m from obstacles["
                     << m_surface.planes()[static_cast<std::size_t>(pair.v[1])].obstacle << "] (plane)";
            } else {
                text << (pair.kind == Kind::point_triangle ? "point-triangle" : "edge-edge") << " pair ("
                     << describe_row(pair.v[0]) << ", " << describe_row(pair.v[1]) << ", "
                     << describe_row(pair.v[2]) << ", " << describe_row(pair.v[3]) << ") is at distance "
                     << std::sqrt(s) << " m";
            }
            found = text.str();
            break;
        }
    }
    return comm::agree_on_error(m_comm, found);
}

} // namespace intact::contact
