#include "src/solver/boundary_motion.hpp"

#include "comm/collectives.hpp"
#include "kernels/rigid_motion.hpp"
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
                               const io::Scene& scene,
                               contact::ContactSurface* surface)
    : m_comm(comm), m_surface(surface), m_free(make_free_mask(mesh.constraint)),
      m_motion("intact::solver::node_motion", mesh.motion.size()), m_selectors(scene.moving_selectors()),
      m_released(m_selectors.size(), 0), m_maps("intact::solver::motion_maps", m_selectors.size()),
      m_maps_host(Kokkos::create_mirror_view(m_maps)),
      m_target("intact::solver::boundary_target", mesh.num_local_nodes()),
      m_step("intact::solver::boundary_step", mesh.num_local_nodes()) {
    auto motion = Kokkos::create_mirror_view(m_motion);
    for (std::size_t i = 0; i < mesh.motion.size(); ++i) {
        motion(i) = mesh.motion[i];
    }
    Kokkos::deep_copy(m_motion, motion);
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

void BoundaryMotion::release(int k) {
    const auto free = m_free;
    const auto motion = m_motion;
    Kokkos::parallel_for(
        "intact::solver::release_moving_box", Kokkos::RangePolicy<ExecSpace>(0, motion.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            if (motion(i) == k) {
                free(i) = 1.0;
            }
        });
    if (m_surface) {
        m_surface->release_motion(k);
    }
}

void BoundaryMotion::begin_step(const NodeField& x, double h, double start_time, double obstacle_time) {
    const double t = start_time;
    // 1. Moving boxes whose window ended by t are released (every rank decides alike from t).
    for (std::size_t k = 0; k < m_selectors.size(); ++k) {
        const auto& end = m_selectors[k].window.end;
        if (!m_released[k] && end && t >= *end) {
            release(static_cast<int>(k));
            m_released[k] = 1;
        }
    }
    // 2. Each box's map over the step: its motion acting for the step's seconds inside the window, from
    //    where its centre is at t.
    for (std::size_t k = 0; k < m_selectors.size(); ++k) {
        const io::MovingSelector& selector = m_selectors[k];
        const io::RigidMotion& motion = selector.motion;
        const kernels::Vec3 v = kernels::from_array(motion.velocity);
        const kernels::Vec3 w = kernels::from_array(motion.angular_velocity);
        const double before = selector.window.active_before(t);
        const kernels::Vec3 center = kernels::from_array(motion.center) + before * v;
        kernels::Mat3 R;
        kernels::Vec3 b;
        kernels::rigid_motion_increment(v, w, center, selector.window.active_seconds(t, h), R, b);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                m_maps_host(k, 3 * r + c) = R(r, c);
            }
            m_maps_host(k, 9 + r) = b(r);
        }
    }
    Kokkos::deep_copy(m_maps, m_maps_host);
    // 3. Targets: moving nodes by their map, fixed (and free) ones where they are.
    const auto target = m_target;
    const auto node_motion = m_motion;
    const auto free = m_free;
    const auto maps = m_maps;
    Kokkos::parallel_for(
        "intact::solver::boundary_targets", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            const int k = node_motion(i);
            for (int r = 0; r < 3; ++r) {
                double y = x(i, r);
                if (k >= 0 && free(i) == 0.0) {
                    y = maps(k, 9 + r);
                    for (int c = 0; c < 3; ++c) {
                        y += maps(k, 3 * r + c) * x(i, c);
                    }
                }
                target(i, r) = y;
            }
        });
    if (m_surface) {
        m_surface->obstacle_positions(obstacle_time, m_obstacle_target);
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

void BoundaryMotion::hold() {
    Kokkos::deep_copy(m_step, 0.0);
    if (m_surface) {
        m_surface->combine_obstacle_rows(0.0, m_obstacle_step, 0.0, m_obstacle_step, m_obstacle_step);
    }
}

void BoundaryMotion::trial_point(
    const NodeField& x, const NodeField& p, double alpha, const NodeField& trial, bool snap) {
    const bool arrive = snap && alpha == 1.0;
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
