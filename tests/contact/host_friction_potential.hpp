#pragma once
/// @file host_friction_potential.hpp
/// @brief The host reference of the device friction (src/contact/friction_pairs.hpp), kept for tests
/// only. Lagged, smoothed Coulomb friction (IPC spec §6): D(x) = Σ_k μ N_k f0(‖u_k(x)‖).
///
/// The active contact pairs are frozen ("lagged") with their normal force N_k = −2 κ d_k b'(s_k) (times
/// the mollifier for edge pairs), closest-point coefficients c_k and tangent basis P_k, taken at a
/// lagging point: xᵗ at the start of a step, then the solution of each lagged solve (IPC spec §6.5;
/// `contact.friction_iterations` lagged solves at most, 1 by default). During a solve
/// u_k = P_kᵀ Σ_j c_kj (x_j − x_jᵗ) is the tangential slip of the pair since the step's start; f0 smooths
/// the stick–slip transition over ε_v h. Pairs that appear during a solve get friction from the next lag
/// on. Pairs are owned and evaluated exactly like the barrier's. Host code.

#include "tests/contact/host_barrier_potential.hpp"

#include <Eigen/Core>

#include <vector>

namespace intact::contact {

class FrictionPotential {
public:
    /// @param mu Coulomb coefficient; @param epsv smoothing velocity ε_v (m/s)
    FrictionPotential(MPI_Comm comm,
                      const ContactSurface& surface,
                      const BarrierPotential& barrier,
                      double mu,
                      double epsv);

    /// Freeze the pair set, normal forces, coefficients and bases at the lagging point `xs_lag`; slips
    /// are measured from the step's start `xs_start` (the same rows at a step's first lag). Local.
    void lag(const std::vector<Vec3>& xs_start, const std::vector<Vec3>& xs_lag, double kappa, double h);

    /// Σ over lagged pairs this rank owns of μ N f0(‖u‖), summed over ranks. Collective.
    double energy(const std::vector<Vec3>& xs) const;
    /// This rank's part of `energy` (no reduction). Local.
    double local_energy(const std::vector<Vec3>& xs) const;

    /// Gradient rows (owned local nodes) and PSD Hessian blocks of D at `xs`, added to `gradient` and
    /// `blocks`. Local.
    void derivatives(const std::vector<Vec3>& xs,
                     std::vector<double>& gradient,
                     std::vector<ContactBlock>& blocks) const;

    std::size_t num_pairs() const { return m_pairs.size(); }

private:
    struct Lagged {
        int count = 0;                 ///< stencil vertices used (1 to 4)
        std::array<int, 4> v{};        ///< surface vertices
        double normal_force = 0.0;     ///< N = h² λ (J/m)
        Eigen::Matrix<double, 4, 1> c; ///< closest-point coefficients (first `count` used)
        Eigen::Matrix<double, 3, 2> P; ///< tangent basis
        bool owned = false;            ///< energy counted on this rank
    };
    MPI_Comm m_comm;
    const ContactSurface& m_surface;
    const BarrierPotential& m_barrier;
    double m_mu;
    double m_epsv;
    double m_eps_v_h = 0.0;
    std::vector<Lagged> m_pairs;
    std::vector<Vec3> m_start; ///< surface positions at the start of the step
};

} // namespace intact::contact
