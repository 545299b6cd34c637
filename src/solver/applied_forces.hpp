#pragma once
/// @file applied_forces.hpp
/// @brief Applied forces of `bodies[].forces[]`: a total force F_k (N) on the nodes of a box, spread over
/// them by lumped mass, during a time window.
///
/// The step's force on node i is f_i = Σ_k (τ_k / h) F_k m_i / M_k over the boxes k that hold i, with
/// M_k the box's total lumped mass and τ_k the seconds of the step [t, t + h] inside the window, so a
/// window that ends inside a step gives exactly the impulse F_k · (end − start) for any h. The force
/// enters the incremental potential as the energy −c h² Σ f_i · x_i, weighted like gravity (StepProblem),
/// so every method sees it. Shares on prescribed nodes are taken by the prescription.

#include "src/io/scene.hpp"
#include "src/mesh/distribute.hpp"

#include <mpi.h>

#include <vector>

namespace intact::solver {

class AppliedForces {
public:
    /// Selects the nodes of every force box (world coordinates at time 0, the body's nodes only) and
    /// sums their masses over ranks. `lumped_mass` is complete on owned rows. Collective.
    AppliedForces(MPI_Comm comm,
                  const LocalMesh& mesh,
                  const io::Scene& scene,
                  Kokkos::View<const double*, MemSpace> lumped_mass);

    /// Whether the scene has force boxes at all.
    bool empty() const { return m_forces.empty(); }

    /// The force field (N per local node; owned rows meaningful) of the step [t, t + h]: device kernel,
    /// 3 numbers per box from the host. Local.
    void evaluate(double t, double h);

    /// The last evaluated field (an empty View when the scene has no force boxes).
    NodeField field() const { return m_field; }

private:
    std::vector<io::ForceSelector> m_forces;
    Kokkos::View<double**, Kokkos::LayoutRight, MemSpace> m_share; ///< m_i / M_k (owned rows × boxes)
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace> m_box_force;
    Kokkos::View<double* [3], Kokkos::LayoutRight, MemSpace>::HostMirror m_box_force_host;
    NodeField m_field;
};

} // namespace intact::solver
