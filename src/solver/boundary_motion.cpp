#include "src/solver/boundary_motion.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/io/checkpoint.hpp"

#include <cmath>

namespace intact::solver {

namespace {

Kokkos::View<double*, MemSpace> make_free_mask(const std::vector<NodeConstraint>& constraint) {
    Kokkos::View<double*, MemSpace> mask("intact::solver::free_mask", constraint.size());
    auto host = Kokkos::create_mirror_view(mask);
    for (std::size_t i = 0; i < constraint.size(); ++i) {
        host(i) = constraint[i] == NodeConstraint::free ? 1.0 : 0.0;
    }
    Kokkos::deep_copy(mask, host);
    return mask;
}

} // namespace

BoundaryMotion::BoundaryMotion(MPI_Comm comm,
                               const LocalMesh& mesh,
                               NodeField prescribed_velocity,
                               const contact::ContactSurface* surface)
    : m_comm(comm), m_surface(surface), m_free(make_free_mask(mesh.constraint)),
      m_velocity(std::move(prescribed_velocity)),
      m_target("intact::solver::boundary_target", mesh.num_local_nodes()),
      m_step("intact::solver::boundary_step", mesh.num_local_nodes()) {
    if (m_surface) {
        m_obstacle_x = m_surface->make_field("intact::solver::obstacle_positions");
        m_obstacle_target = m_surface->make_field("intact::solver::obstacle_target");
        m_obstacle_step = m_surface->make_field("intact::solver::obstacle_step");
        m_obstacle_trial = m_surface->make_field("intact::solver::obstacle_trial");
        m_surface->obstacle_positions(0.0, m_obstacle_x);
        m_surface->obstacle_positions(0.0, m_obstacle_target);
        m_surface->obstacle_positions(0.0, m_obstacle_trial);
    }
}

void BoundaryMotion::accept_trial() {
    if (m_surface) {
        m_surface->combine_obstacle_rows(1.0, m_obstacle_trial, 0.0, m_obstacle_trial, m_obstacle_x);
    }
}

void BoundaryMotion::save(io::CheckpointWriter& out) const {
    if (!m_surface) {
        return;
    }
    const auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), m_obstacle_x);
    std::vector<double> rows;
    for (int s = m_surface->num_body_vertices(); s < m_surface->num_vertices(); ++s) {
        rows.insert(rows.end(), {x(s, 0), x(s, 1), x(s, 2)});
    }
    out.put_values("boundary/obstacle_positions", std::move(rows));
}

void BoundaryMotion::restore(const io::CheckpointReader& in) {
    if (!m_surface) {
        return;
    }
    const std::vector<double> rows = in.values("boundary/obstacle_positions");
    const int first = m_surface->num_body_vertices();
    INTACT_REQUIRE(rows.size() == 3 * static_cast<std::size_t>(m_surface->num_obstacle_rows()),
                   "the checkpoint holds " << rows.size() / 3 << " obstacle rows, the scene "
                                           << m_surface->num_obstacle_rows());
    auto x = Kokkos::create_mirror_view_and_copy(HostSpace(), m_obstacle_x);
    for (std::size_t k = 0; 3 * k < rows.size(); ++k) {
        for (int c = 0; c < 3; ++c) {
            x(first + static_cast<int>(k), c) = rows[3 * k + static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(m_obstacle_x, x);
}

void BoundaryMotion::begin_step(const NodeField& x, double h, double end_time) {
    const auto target = m_target;
    const auto velocity = m_velocity;
    Kokkos::parallel_for(
        "intact::solver::boundary_targets", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                target(i, c) = x(i, c) + h * velocity(i, c);
            }
        });
    if (m_surface) {
        m_surface->obstacle_positions(end_time, m_obstacle_target);
    }
}

double BoundaryMotion::remaining(const NodeField& x) {
    const auto free = m_free;
    const auto target = m_target;
    const auto delta = m_step;
    double remaining = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::boundary_step", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i, double& largest) {
            for (int c = 0; c < 3; ++c) {
                const double d = free(i) == 0.0 ? target(i, c) - x(i, c) : 0.0;
                delta(i, c) = d;
                const double size = d < 0 ? -d : d;
                largest = size > largest ? size : largest;
            }
        },
        Kokkos::Max<double>(remaining));
    remaining = comm::allreduce_max(m_comm, remaining);
    if (m_surface) { // obstacle rows are replicated: the same on every rank
        m_surface->combine_obstacle_rows(1.0, m_obstacle_target, -1.0, m_obstacle_x, m_obstacle_step);
        remaining = std::max(remaining, m_surface->obstacle_max_abs(m_obstacle_step));
    }
    return remaining;
}

void BoundaryMotion::arrive(const NodeField& x) {
    const auto free = m_free;
    const auto target = m_target;
    const auto delta = m_step;
    Kokkos::parallel_for(
        "intact::solver::boundary_arrive", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                if (free(i) == 0.0) {
                    x(i, c) = target(i, c);
                }
                delta(i, c) = 0.0;
            }
        });
    if (m_surface) {
        m_surface->combine_obstacle_rows(1.0, m_obstacle_target, 0.0, m_obstacle_target, m_obstacle_x);
        m_surface->combine_obstacle_rows(0.0, m_obstacle_step, 0.0, m_obstacle_step, m_obstacle_step);
    }
}

void BoundaryMotion::trial_point(const NodeField& x,
                                 const NodeField& p,
                                 double alpha,
                                 const NodeField& trial) {
    const bool arrive = alpha == 1.0;
    const auto free = m_free;
    const auto target = m_target;
    Kokkos::parallel_for(
        "intact::solver::trial_point", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                // Prescribed rows land exactly on their target when the whole step is taken.
                trial(i, c) = arrive && free(i) == 0.0 ? target(i, c) : x(i, c) + alpha * p(i, c);
            }
        });
    if (m_surface) {
        if (arrive) {
            m_surface->combine_obstacle_rows(1.0, m_obstacle_target, 0.0, m_obstacle_target,
                                             m_obstacle_trial);
        } else {
            m_surface->combine_obstacle_rows(1.0, m_obstacle_x, alpha, m_obstacle_step, m_obstacle_trial);
        }
    }
}

} // namespace intact::solver
