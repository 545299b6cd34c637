// K4's bounds on a move: the safety filter between regular CCDs (inversion and the pairs of B), the
// regular CCD that certifies the chord from the last certified state, and the prescribed rows' and
// obstacles' safe advance towards their targets.

#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "src/core/phase_timer.hpp"
#include "src/solver/stencil_descent/local_step.hpp"

#include <algorithm>

namespace intact::solver {

using namespace stencil_detail;

double StencilDescent::filter_bound(const NodeField& x) {
    // Inversion along the assembled update (the shared element bound), and every pair of B along it with
    // its local CCD (the pairs' rows' steps through the layout). Global MIN.
    double alpha = m_parts.potential.elastic().max_step(x, m_delta);
    const StencilData d = m_data;
    fill_surface(on_layout(m_delta), m_zero_rows, m_surface_step);
    const contact::SurfaceField ps = m_surface_step;
    double pairs = 1.0;
    Kokkos::parallel_reduce(
        "intact::solver::stencil_filter_pairs", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p, double& bound) {
            const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                 d.pairs.rows(p, 3)};
            const int kind = d.pairs.kind(p);
            KVec3 start[4], step[4];
            contact::pair_positions(kind, rows, d.xs, start);
            contact::pair_positions(kind, rows, ps, step);
            const double d0 = ::sqrt(contact::pair_squared_distance(kind, rows, d.xs, d.topology));
            const double t = contact::pair_time_of_impact_at(
                kind, start, step, contact::pair_plane_normal(kind, rows, d.topology), d0,
                k_local_ccd_iterations, contact::pair_offset(kind, rows, d.topology));
            bound = t < bound ? t : bound;
        },
        Kokkos::Min<double>(pairs));
    return comm::allreduce_min(m_parts.comm, std::min(alpha, pairs));
}

bool StencilDescent::certify(const NodeField& x, PhaseSeconds& seconds) {
    // Spec §5.2: a regular CCD (broad phase over every primitive) on the chord x_ck → x; the pairs it
    // sweeps join B; on a hit, x falls back to x_ck + t (x − x_ck) with t the safe fraction (80% of every
    // gap), which is collision-free because x_ck was and the chord is up to t.
    m_since_ccd = 0;
    const NodeField chord = m_product;
    const NodeField start = m_x_ck;
    Kokkos::parallel_for(
        "intact::solver::stencil_chord", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                chord(v, i) = x(v, i) - start(v, i);
            }
        });
    double t = 1.0;
    {
        ScopedTimer timer(seconds.step_bound);
        t = m_bound.along(m_x_ck, chord, m_parts.boundary);
    }
    {
        ScopedTimer timer(seconds.contact);
        if (add_pairs(m_contact->swept())) {
            refresh_pairs(false);
        }
    }
    if (t < 1.0) {
        Kokkos::parallel_for(
            "intact::solver::stencil_fall_back", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_local),
            KOKKOS_LAMBDA(const int v) {
                for (int i = 0; i < 3; ++i) {
                    x(v, i) = start(v, i) + t * chord(v, i);
                }
            });
        load_positions(x);
    }
    Kokkos::deep_copy(m_x_ck, x);
    return t < 1.0;
}

bool StencilDescent::advance_boundary(const NodeField& x, PhaseSeconds& seconds, bool during_sweeps) {
    // IPC's gradual arrival, taken apart from the sweeps: the prescribed rows (free rows stay) move by the
    // largest fraction of their remaining motion that inverts no element and closes no gap by more than
    // 80%; the pairs that motion sweeps join B. Collective.
    BoundaryMotion& boundary = m_parts.boundary;
    if (boundary.remaining(x) <= 0.0) {
        return true;
    }
    double alpha = 0.0;
    {
        ScopedTimer timer(seconds.step_bound);
        alpha = m_bound.along(x, boundary.step(), boundary);
    }
    if (alpha >= 1.0) {
        boundary.arrive(x);
    } else {
        boundary.trial_point(x, boundary.step(), alpha, m_product);
        boundary.accept_trial();
        boundary.hold(); // the sweeps' step bounds move free rows only
        Kokkos::deep_copy(x, m_product);
    }
    if (during_sweeps) {
        // B grows by the pairs that motion swept, and the layout sees the new positions.
        if (m_contact) {
            ScopedTimer timer(seconds.contact);
            if (add_pairs(m_contact->swept())) {
                refresh_pairs(false);
            }
        }
        load_positions(x);
        if (m_contact) {
            Kokkos::deep_copy(m_x_ck, x); // the step bound certified the boundary's advance
        }
    }
    return alpha >= 1.0;
}

} // namespace intact::solver
