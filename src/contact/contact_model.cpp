#include "src/contact/contact_model.hpp"

#include "src/core/grow.hpp"

#include "comm/collectives.hpp"
#include "src/contact/ccd.hpp"
#include "src/contact/initial_contact.hpp"
#include "src/contact/pair_geometry.hpp"
#include "src/core/error.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace intact::contact {

ContactModel::ContactModel(MPI_Comm comm, ContactSurface& surface, double dhat)
    : m_comm(comm), m_surface(surface), m_dhat(dhat), m_reach(dhat + 2.0 * surface.max_offset()),
      m_search(surface, dhat), m_xs(surface.make_field("intact::contact::positions")),
      m_ps(surface.make_field("intact::contact::step")), m_ts(surface.make_field("intact::contact::trial")),
      m_ds(surface.make_field("intact::contact::direction")) {}

void ContactModel::update(const NodeField& x, const ConstSurfaceField& obstacles) {
    m_surface.update_ghosts(x, nullptr, m_reach);
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
    m_segment = false;
    m_trial_on_segment = false;
    fill(x, obstacles, m_xs);
    m_search.find(m_xs, ConstSurfaceField(), m_reach, m_candidates);
    select_active(m_candidates, m_xs, topology(), s_hat(), m_active);
}

void ContactModel::update_segment(const NodeField& x,
                                  const ConstSurfaceField& obstacles,
                                  const NodeField& d,
                                  const ConstSurfaceField& obstacle_step) {
    m_surface.update_ghosts(x, &d, m_reach);
    m_trial_on_segment = false;
    fill(x, obstacles, m_xs);
    fill(d, obstacle_step, m_ps);
    m_search.find(m_xs, m_ps, m_reach, m_swept);
    m_segment = true;
}

void ContactModel::gather_positions(const NodeField& x, const ConstSurfaceField& obstacles) {
    m_segment = false;
    m_trial_on_segment = false;
    fill(x, obstacles, m_xs);
}

void ContactModel::gather_trial(const NodeField& trial, const ConstSurfaceField& obstacles) {
    m_trial_on_segment = false;
    fill(trial, obstacles, m_ts);
}

void ContactModel::gather_segment_trial(const NodeField& trial, const ConstSurfaceField& obstacles) {
    fill(trial, obstacles, m_ts);
    m_trial_on_segment = m_segment;
}

void ContactModel::accept_trial() {
    m_segment = false;
    m_trial_on_segment = false;
    std::swap(m_xs, m_ts);
    std::swap(m_candidates, m_scratch);
    select_active(m_candidates, m_xs, topology(), s_hat(), m_active);
}

void ContactModel::gather_direction(const NodeField& p) {
    m_surface.gather(p, m_ds); // obstacle rows stay zero: gather never writes them
}

void ContactModel::gather_step(const NodeField& d, const ConstSurfaceField& obstacle_step) {
    m_segment = false; // step() is no longer the swept segment's
    m_trial_on_segment = false;
    fill(d, obstacle_step, m_ps);
}

const PairList& ContactModel::candidates_at(const ConstSurfaceField& xs) {
    if (xs.data() == m_xs.data()) {
        return m_candidates; // the iterate's, current since the last gather or accepted trial
    }
    if (m_trial_on_segment && xs.data() == m_ts.data()) {
        select_overlapping(m_swept, xs, m_reach, m_scratch);
        return m_scratch;
    }
    m_search.find(xs, ConstSurfaceField(), m_reach, m_scratch);
    return m_scratch;
}

double ContactModel::local_max_step() const {
    return max_step(m_swept, m_xs, m_ps, topology());
}

double ContactModel::local_max_step(Kokkos::View<double*, MemSpace>& toi) const {
    grow(toi, m_swept.count, "intact::contact::swept_toi");
    return times_of_impact(m_swept, m_xs, m_ps, topology(), toi);
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

ContactModel::PairReport ContactModel::closest_pair() const {
    // The smallest squared distance among this rank's owned active pairs, then the first pair at it (two
    // reductions, so the pair does not depend on thread order); only that pair reaches the host.
    // Start-up only.
    const auto kind = m_active.kind;
    const auto rows = m_active.rows;
    const SurfaceTopology topo = topology();
    const ConstSurfaceField xs = m_xs;
    const double none = std::numeric_limits<double>::infinity();
    double smallest = none;
    Kokkos::parallel_reduce(
        "intact::contact::closest_owned_pair", Kokkos::RangePolicy<ExecSpace>(0, m_active.count),
        KOKKOS_LAMBDA(const int k, double& value) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            if (owns_pair(kind(k), r, topo)) {
                const double s = pair_squared_distance(kind(k), r, xs, topo);
                value = s < value ? s : value;
            }
        },
        Kokkos::Min<double>(smallest));
    if (!(smallest < std::numeric_limits<double>::max())) {
        smallest = none; // no owned active pair (the reduction's identity is the largest double)
    }
    int first = m_active.count;
    Kokkos::parallel_reduce(
        "intact::contact::first_pair_at", Kokkos::RangePolicy<ExecSpace>(0, m_active.count),
        KOKKOS_LAMBDA(const int k, int& index) {
            const int r[4] = {rows(k, 0), rows(k, 1), rows(k, 2), rows(k, 3)};
            if (k < index && owns_pair(kind(k), r, topo) &&
                pair_squared_distance(kind(k), r, xs, topo) == smallest) {
                index = k;
            }
        },
        Kokkos::Min<int>(first));

    // The rank holding the global minimum describes its pair and broadcasts the text.
    int rank = 0;
    MPI_Comm_rank(m_comm, &rank);
    struct {
        double value;
        int rank;
    } mine{smallest, rank}, best{};
    INTACT_CHECK_MPI(MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, m_comm));
    PairReport report;
    report.distance = std::sqrt(best.value);
    if (best.value == none) {
        return report;
    }
    if (rank == best.rank) {
        INTACT_REQUIRE(first < m_active.count, "the closest pair's distance was not found again");
        const auto pair_kind = Kokkos::create_mirror_view_and_copy(
            HostSpace(), Kokkos::subview(kind, std::make_pair(first, first + 1)));
        const auto pair_rows = Kokkos::create_mirror_view_and_copy(
            HostSpace(), Kokkos::subview(rows, std::make_pair(first, first + 1), Kokkos::ALL));
        const int r[4] = {pair_rows(0, 0), pair_rows(0, 1), pair_rows(0, 2), pair_rows(0, 3)};
        std::ostringstream text;
        text.precision(6);
        // With contact offsets the distance reported is the gap of the offset surfaces.
        const char* beyond = m_surface.max_offset() > 0.0 ? " beyond the contact offsets" : "";
        if (pair_kind(0) == k_point_plane) {
            text << describe_surface_row(m_surface, r[0]);
            if (best.value > 0.0) {
                text << " is at distance " << report.distance << " m" << beyond << " from";
            } else {
                text << " is on or behind";
            }
            text << " obstacles[" << m_surface.planes()[static_cast<std::size_t>(r[1])].obstacle
                 << "] (plane)";
        } else {
            text << (pair_kind(0) == k_point_triangle ? "point-triangle" : "edge-edge") << " pair ("
                 << describe_surface_row(m_surface, r[0]) << ", " << describe_surface_row(m_surface, r[1])
                 << ", " << describe_surface_row(m_surface, r[2]) << ", "
                 << describe_surface_row(m_surface, r[3]) << ") is at distance " << report.distance << " m"
                 << beyond;
        }
        report.text = text.str();
    }
    int length = static_cast<int>(report.text.size());
    INTACT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, best.rank, m_comm));
    report.text.resize(static_cast<std::size_t>(length));
    INTACT_CHECK_MPI(MPI_Bcast(report.text.data(), length, MPI_CHAR, best.rank, m_comm));
    return report;
}

} // namespace intact::contact
