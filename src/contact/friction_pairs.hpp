#pragma once
/// @file friction_pairs.hpp
/// @brief Lagged, smoothed Coulomb friction on a PairList, on the device (IPC spec §6):
/// D(x) = Σ_k μ N_k f0(‖u_k(x)‖), u_k = P_kᵀ Σ_j c_kj (x_j − x_jᵗ). The same math as the host
/// FrictionPotential, so both agree to round-off.
///
/// `lag` freezes, per pair of an active list, the stencil rows, the closest-point coefficients c, the
/// tangent basis P and the normal force N, all taken at the lagging point. Point–plane pairs use the
/// stencil {point, plane row} with c = (1, −1) and a basis ⟂ n (a moving plane drags the point along).
/// The normal force is an input per pair, so that any model can supply it: the barrier's
/// N = −2 κ w d b′(s) (barrier_normal_forces), an augmented-Lagrangian multiplier λ / h², or BAL's −φ′.
/// Pairs are owned exactly like the barrier's (owns_pair); every rank holding a pair writes its
/// derivatives and ContactMatrix keeps the owned rows. μ is per pair (pair_friction): an obstacle's own
/// coefficient against that obstacle, the scene's elsewhere.

#include "kernels/friction.hpp"
#include "src/contact/pair_list.hpp"
#include "src/contact/pair_stencils.hpp"

namespace intact::contact {

/// N_k = −2 κ w d b′(s) (J/m) per pair of `active` at xs (w: edge–edge mollifier; point–plane pairs use
/// the signed distance d), into `out` (grown to active.count when shorter). With contact offsets d is the
/// gap d − ξ and s = d² (pair_squared_distance): the norm of the gradient of b((d − ξ)², ŝ) along the
/// normal. Device work.
void barrier_normal_forces(const PairList& active,
                           const ConstSurfaceField& xs,
                           const SurfaceTopology& topology,
                           double s_hat,
                           double kappa,
                           Kokkos::View<double*, MemSpace>& out);

class FrictionPairs {
public:
    /// The lagged pairs as device data, for kernels that evaluate one pair at positions of their own
    /// (stencil descent's local steps and line search). Cheap to copy; valid until the next `lag`.
    struct Lagged {
        Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> rows;
        Kokkos::View<const int*, MemSpace> count;
        Kokkos::View<const double*, MemSpace> normal_force, mu;
        Kokkos::View<const double* [4], Kokkos::LayoutRight, MemSpace> coefficients;
        Kokkos::View<const double* [3][2], Kokkos::LayoutRight, MemSpace> basis;
        ConstSurfaceField start;
        double eps_v_h = 0.0;

        /// μ N f0(‖u‖) of pair i, and its gradient and PSD Hessian when `derivatives`, with its stencil
        /// rows (pair_stencil_rows order) at x; slots past count(i) are ignored and get zero derivatives.
        KOKKOS_INLINE_FUNCTION double evaluate(int i,
                                               const kernels::Vec3 (&x)[4],
                                               bool derivatives,
                                               kernels::VecN<12>& gradient,
                                               kernels::MatN<12>& hessian) const {
            kernels::VecN<4> c;
            kernels::Mat32 P;
            Eigen::Matrix<double, 4, 3> dx = Eigen::Matrix<double, 4, 3>::Zero();
            for (int k = 0; k < 4; ++k) {
                c(k) = coefficients(i, k);
            }
            for (int j = 0; j < count(i); ++j) {
                for (int a = 0; a < 3; ++a) {
                    dx(j, a) = x[j](a) - start(rows(i, j), a);
                }
            }
            for (int r = 0; r < 3; ++r) {
                for (int q = 0; q < 2; ++q) {
                    P(r, q) = basis(i, r, q);
                }
            }
            if (derivatives) {
                kernels::friction_pair_gradient_hessian<4>(mu(i), normal_force(i), c, P, dx, eps_v_h,
                                                           gradient, hessian);
            }
            return kernels::friction_pair_potential<4>(mu(i), normal_force(i), c, P, dx, eps_v_h);
        }
    };

    /// @param mu Coulomb coefficient of pairs without an obstacle μ; @param epsv smoothing velocity ε_v
    /// (m/s)
    FrictionPairs(double mu, double epsv) : m_mu(mu), m_epsv(epsv) {}

    /// Freeze the pairs of `active`, with `normal_force` (J/m, one per pair of `active`) and c, P taken at
    /// the lagging point `xs_lag`; slips are measured from the step's start `xs_start` (copied). Device
    /// work; Views grow only.
    void lag(const PairList& active,
             const ConstSurfaceField& xs_start,
             const ConstSurfaceField& xs_lag,
             const SurfaceTopology& topology,
             const Kokkos::View<const double*, MemSpace>& normal_force,
             double h);

    /// `lag` with the barrier's normal forces (barrier_normal_forces), as FrictionPotential::lag.
    void lag(const PairList& active,
             const ConstSurfaceField& xs_start,
             const ConstSurfaceField& xs_lag,
             const SurfaceTopology& topology,
             double s_hat,
             double kappa,
             double h);

    /// Σ over lagged pairs this rank owns of μ N f0(‖u‖) at xs. Not reduced over ranks. Device work, host
    /// result.
    double local_energy(const ConstSurfaceField& xs) const;

    /// Gradient and PSD Hessian of μ N f0(‖u‖) per lagged pair at xs, into `out` (every pair, in lag
    /// order). Device work.
    void derivatives(const ConstSurfaceField& xs, PairStencils& out) const;

    int num_pairs() const { return m_size; }
    Lagged lagged() const {
        return {m_rows, m_count, m_normal_force, m_pair_mu, m_coefficients, m_basis, m_start, m_eps_v_h};
    }

private:
    void reserve(int n);

    double m_mu;
    double m_epsv;
    double m_eps_v_h = 0.0;
    int m_size = 0;
    Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace> m_rows; ///< stencil rows, −1 unused
    Kokkos::View<int*, MemSpace> m_count;                         ///< stencil vertices used (2 or 4)
    Kokkos::View<double*, MemSpace> m_normal_force;               ///< N (J/m)
    Kokkos::View<double*, MemSpace> m_pair_mu;                    ///< μ per pair
    Kokkos::View<double* [4], Kokkos::LayoutRight, MemSpace> m_coefficients; ///< c, zero past count
    Kokkos::View<double* [3][2], Kokkos::LayoutRight, MemSpace> m_basis;     ///< P
    Kokkos::View<char*, MemSpace> m_owned;                                   ///< energy counted here
    SurfaceField m_start;                            ///< surface rows at the step's start
    Kokkos::View<double*, MemSpace> m_barrier_force; ///< scratch of the barrier-force `lag`
};

} // namespace intact::contact
