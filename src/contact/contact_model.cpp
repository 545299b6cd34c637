#include "src/contact/contact_model.hpp"

#include "comm/collectives.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/pair_geometry.hpp"

#include <cmath>
#include <sstream>
#include <utility>

namespace intact::contact {

ContactModel::ContactModel(MPI_Comm comm, ContactSurface& surface, double dhat)
    : m_comm(comm), m_surface(surface), m_dhat(dhat), m_search(surface, dhat),
      m_xs(surface.make_field("intact::contact::positions")),
      m_ps(surface.make_field("intact::contact::step")), m_ts(surface.make_field("intact::contact::trial")),
      m_ds(surface.make_field("intact::contact::direction")) {}

void ContactModel::update(const NodeField& x, const ConstSurfaceField& obstacles) {
    m_surface.update_ghosts(x, nullptr, m_dhat);
    gather(x, obstacles);
}

void ContactModel::gather(const NodeField& x, const ConstSurfaceField& obstacles) {
    m_surface.combine_obstacle_rows(1.0, obstacles, 0.0, obstacles, m_xs);
    m_surface.gather(x, m_xs);
    m_search.find(m_xs, ConstSurfaceField(), m_dhat, m_candidates);
    select_active(m_candidates, m_xs, topology(), s_hat(), m_active);
}

void ContactModel::update_segment(const NodeField& x,
                                  const ConstSurfaceField& obstacles,
                                  const NodeField& d,
                                  const ConstSurfaceField& obstacle_step) {
    m_surface.update_ghosts(x, &d, m_dhat);
    m_surface.combine_obstacle_rows(1.0, obstacles, 0.0, obstacles, m_xs);
    m_surface.gather(x, m_xs);
    gather_step(d, obstacle_step);
    m_search.find(m_xs, m_ps, m_dhat, m_swept);
}

void ContactModel::gather_trial(const NodeField& trial, const ConstSurfaceField& obstacles) {
    m_surface.combine_obstacle_rows(1.0, obstacles, 0.0, obstacles, m_ts);
    m_surface.gather(trial, m_ts);
}

void ContactModel::accept_trial() {
    std::swap(m_xs, m_ts);
    std::swap(m_candidates, m_scratch);
    select_active(m_candidates, m_xs, topology(), s_hat(), m_active);
}

void ContactModel::gather_direction(const NodeField& p) {
    m_surface.gather(p, m_ds); // obstacle rows stay zero: gather never writes them
}

void ContactModel::gather_step(const NodeField& d, const ConstSurfaceField& obstacle_step) {
    m_surface.combine_obstacle_rows(1.0, obstacle_step, 0.0, obstacle_step, m_ps);
    m_surface.gather(d, m_ps);
}

const PairList& ContactModel::candidates_at(const ConstSurfaceField& xs) {
    m_search.find(xs, ConstSurfaceField(), m_dhat, m_scratch);
    return m_scratch;
}

double ContactModel::local_max_step() const {
    return max_step(m_swept, m_xs, m_ps, topology());
}

double ContactModel::min_squared_distance() const {
    return comm::allreduce_min(m_comm, contact::min_squared_distance(m_candidates, m_xs, topology()));
}

long long ContactModel::count_active_pairs() const {
    const auto kind = m_active.kind;
    const auto rows = m_active.rows;
    const SurfaceTopology topo = topology();
    std::int64_t count = 0;
    Kokkos::parallel_reduce(
        "intact::contact::count_owned_pairs", Kokkos::RangePolicy<ExecSpace>(0, m_active.count),
        KOKKOS_LAMBDA(const int k, std::int64_t& sum) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            sum += owns_pair(kind(k), r, topo) ? 1 : 0;
        },
        count);
    return comm::allreduce_sum(m_comm, count);
}

std::string ContactModel::describe_row(int s) const {
    const auto& body_of = m_surface.vertex_body();
    const int body = body_of[static_cast<std::size_t>(s)];
    if (body >= 0) {
        return "body " + std::to_string(body) + " node " +
               std::to_string(m_surface.vertex_gid()[static_cast<std::size_t>(s)]);
    }
    int first = s; // obstacle rows of one obstacle are contiguous
    while (first > 0 && body_of[static_cast<std::size_t>(first - 1)] == body) {
        --first;
    }
    return "obstacles[" + std::to_string(-1 - body) + "] vertex " + std::to_string(s - first);
}

std::string ContactModel::first_close_pair() const {
    // The first owned active pair (pairs are sorted, so every run names the same one). Start-up only: the
    // pair list is copied to the host here.
    const auto kind = Kokkos::create_mirror_view_and_copy(HostSpace(), m_active.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(HostSpace(), m_active.rows);
    const auto xs = Kokkos::create_mirror_view_and_copy(HostSpace(), m_xs);
    std::string found;
    for (int k = 0; k < m_active.count && found.empty(); ++k) {
        const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
        const auto& gid = m_surface.vertex_gid();
        const int count = kind(k) == k_point_plane ? 1 : 4;
        int smallest = r[0];
        for (int j = 1; j < count; ++j) {
            smallest = gid[static_cast<std::size_t>(r[j])] < gid[static_cast<std::size_t>(smallest)]
                           ? r[j]
                           : smallest;
        }
        if (!m_surface.owns(smallest)) {
            continue;
        }
        std::ostringstream text;
        text.precision(6);
        if (kind(k) == k_point_plane) {
            const auto& plane = m_surface.planes()[static_cast<std::size_t>(r[1])];
            double d = 0.0;
            for (int c = 0; c < 3; ++c) {
                d += plane.normal[static_cast<std::size_t>(c)] * (xs(r[0], c) - xs(r[2], c));
            }
            text << describe_row(r[0]) << " is at distance " << std::max(d, 0.0) << " m from obstacles["
                 << plane.obstacle << "] (plane)";
        } else {
            kernels::Vec3 x[4];
            for (int j = 0; j < 4; ++j) {
                x[j] = kernels::Vec3(xs(r[j], 0), xs(r[j], 1), xs(r[j], 2));
            }
            const double s =
                kind(k) == k_point_triangle
                    ? kernels::point_triangle_distance(x[0], x[1], x[2], x[3],
                                                       kernels::point_triangle_case(x[0], x[1], x[2], x[3]))
                    : kernels::edge_edge_distance(x[0], x[1], x[2], x[3],
                                                  kernels::edge_edge_case(x[0], x[1], x[2], x[3]));
            text << (kind(k) == k_point_triangle ? "point-triangle" : "edge-edge") << " pair ("
                 << describe_row(r[0]) << ", " << describe_row(r[1]) << ", " << describe_row(r[2]) << ", "
                 << describe_row(r[3]) << ") is at distance " << std::sqrt(s) << " m";
        }
        found = text.str();
    }
    return comm::agree_on_error(m_comm, found);
}

} // namespace intact::contact
