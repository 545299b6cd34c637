#include "src/solver/applied_forces.hpp"

#include "comm/collectives.hpp"

namespace intact::solver {

namespace {

// Every box's forces in one list, bodies in order, with the body each belongs to.
std::vector<io::ForceSelector> all_forces(const io::Scene& scene, std::vector<int>& body) {
    std::vector<io::ForceSelector> forces;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        for (const auto& force : scene.bodies[b].forces) {
            forces.push_back(force);
            body.push_back(static_cast<int>(b));
        }
    }
    return forces;
}

} // namespace

AppliedForces::AppliedForces(MPI_Comm comm,
                             const LocalMesh& mesh,
                             const io::Scene& scene,
                             Kokkos::View<const double*, MemSpace> lumped_mass) {
    std::vector<int> body;
    m_forces = all_forces(scene, body);
    if (m_forces.empty()) {
        return;
    }
    const std::size_t boxes = m_forces.size();
    const auto mass = Kokkos::create_mirror_view_and_copy(HostSpace(), lumped_mass);
    const int owned = mesh.num_owned_nodes;
    // Selected owned nodes and the box masses summed over ranks (owned rows count each node once).
    std::vector<double> total(boxes, 0.0);
    std::vector<char> inside(static_cast<std::size_t>(owned) * boxes, 0);
    for (std::size_t k = 0; k < boxes; ++k) {
        for (int i = 0; i < owned; ++i) {
            const auto n = static_cast<std::size_t>(i);
            if (mesh.node_body[n] == body[k] && m_forces[k].box.contains(mesh.rest_position[n])) {
                inside[n * boxes + k] = 1;
                total[k] += mass(i);
            }
        }
        total[k] = comm::allreduce_sum(comm, total[k]);
    }
    m_share = decltype(m_share)("intact::solver::force_share", static_cast<std::size_t>(owned), boxes);
    auto share = Kokkos::create_mirror_view(m_share);
    for (int i = 0; i < owned; ++i) {
        for (std::size_t k = 0; k < boxes; ++k) {
            // build_scene_mesh rejects a box without nodes, so the total is positive.
            share(i, k) = inside[static_cast<std::size_t>(i) * boxes + k] ? mass(i) / total[k] : 0.0;
        }
    }
    Kokkos::deep_copy(m_share, share);
    m_box_force = decltype(m_box_force)("intact::solver::box_force", boxes);
    m_box_force_host = Kokkos::create_mirror_view(m_box_force);
    m_field = NodeField("intact::solver::applied_force", mesh.num_local_nodes());
}

void AppliedForces::evaluate(double t, double h) {
    if (m_forces.empty()) {
        return;
    }
    for (std::size_t k = 0; k < m_forces.size(); ++k) {
        const double fraction = m_forces[k].window.active_seconds(t, h) / h;
        for (int c = 0; c < 3; ++c) {
            m_box_force_host(k, c) = fraction * m_forces[k].force[static_cast<std::size_t>(c)];
        }
    }
    Kokkos::deep_copy(m_box_force, m_box_force_host);
    const auto share = m_share;
    const auto box_force = m_box_force;
    const auto field = m_field;
    const int boxes = static_cast<int>(m_forces.size());
    Kokkos::parallel_for(
        "intact::solver::applied_forces", Kokkos::RangePolicy<ExecSpace>(0, share.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                double f = 0.0;
                for (int k = 0; k < boxes; ++k) {
                    f += share(i, k) * box_force(k, c);
                }
                field(i, c) = f;
            }
        });
}

} // namespace intact::solver
