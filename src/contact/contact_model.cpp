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

void ContactModel::fill(const NodeField& field,
                        const ConstSurfaceField& obstacle_rows,
                        const SurfaceField& out) {
    // Obstacle rows first: the gather writes only body rows.
    m_surface.combine_obstacle_rows(1.0, obstacle_rows, 0.0, obstacle_rows, out);
    m_surface.gather(field, out);
}

void ContactModel::gather(const NodeField& x, const ConstSurfaceField& obstacles) {
    fill(x, obstacles, m_xs);
    m_search.find(m_xs, ConstSurfaceField(), m_dhat, m_candidates);
    select_active(m_candidates, m_xs, topology(), s_hat(), m_active);
}

void ContactModel::update_segment(const NodeField& x,
                                  const ConstSurfaceField& obstacles,
                                  const NodeField& d,
                                  const ConstSurfaceField& obstacle_step) {
    m_surface.update_ghosts(x, &d, m_dhat);
    fill(x, obstacles, m_xs);
    fill(d, obstacle_step, m_ps);
    m_search.find(m_xs, m_ps, m_dhat, m_swept);
}

void ContactModel::gather_positions(const NodeField& x, const ConstSurfaceField& obstacles) {
    fill(x, obstacles, m_xs);
}

void ContactModel::gather_trial(const NodeField& trial, const ConstSurfaceField& obstacles) {
    fill(trial, obstacles, m_ts);
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
    fill(d, obstacle_step, m_ps);
}

const PairList& ContactModel::candidates_at(const ConstSurfaceField& xs) {
    if (xs.data() == m_xs.data()) {
        return m_candidates; // the iterate's, current since the last gather or accepted trial
    }
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
    // The first active pair this rank owns (pairs are sorted, so every run names the same one), found
    // and measured on the device; only that pair reaches the host. Start-up only.
    const auto kind = m_active.kind;
    const auto rows = m_active.rows;
    const SurfaceTopology topo = topology();
    const ConstSurfaceField xs = m_xs;
    int first = m_active.count;
    Kokkos::parallel_reduce(
        "intact::contact::first_owned_pair", Kokkos::RangePolicy<ExecSpace>(0, m_active.count),
        KOKKOS_LAMBDA(const int k, int& smallest) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            if (owns_pair(kind(k), r, topo) && k < smallest) {
                smallest = k;
            }
        },
        Kokkos::Min<int>(first));
    std::string found;
    if (first < m_active.count) {
        double s = 0.0;
        Kokkos::parallel_reduce(
            "intact::contact::first_pair_distance", Kokkos::RangePolicy<ExecSpace>(first, first + 1),
            KOKKOS_LAMBDA(const int k, double& value) {
                const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
                value = pair_squared_distance(kind(k), r, xs, topo);
            },
            s);
        const auto pair_kind = Kokkos::create_mirror_view_and_copy(
            HostSpace(), Kokkos::subview(kind, std::make_pair(first, first + 1)));
        const auto pair_rows = Kokkos::create_mirror_view_and_copy(
            HostSpace(), Kokkos::subview(rows, std::make_pair(first, first + 1), Kokkos::ALL));
        const int r[4] = {pair_rows(0, 0), pair_rows(0, 1), pair_rows(0, 2), pair_rows(0, 3)};
        std::ostringstream text;
        text.precision(6);
        if (pair_kind(0) == k_point_plane) {
            text << describe_row(r[0]) << " is at distance " << std::sqrt(s) << " m from obstacles["
                 << m_surface.planes()[static_cast<std::size_t>(r[1])].obstacle << "] (plane)";
        } else {
            text << (pair_kind(0) == k_point_triangle ? "point-triangle" : "edge-edge") << " pair ("
                 << describe_row(r[0]) << ", " << describe_row(r[1]) << ", " << describe_row(r[2]) << ", "
                 << describe_row(r[3]) << ") is at distance " << std::sqrt(s) << " m";
        }
        found = text.str();
    }
    return comm::agree_on_error(m_comm, found);
}

} // namespace intact::contact
