#include "src/solver/integrator.hpp"

#include "src/core/error.hpp"

namespace intact::solver {

ImplicitEuler::ImplicitEuler(int num_local)
    : m_x_hat("intact::solver::inertial_target", num_local),
      m_start("intact::solver::step_start", num_local) {}

void ImplicitEuler::begin_step(double h, const NodeField& x, const NodeField& v) {
    Kokkos::deep_copy(m_start, x);
    const auto x_hat = m_x_hat;
    Kokkos::parallel_for(
        "intact::solver::implicit_euler_predict", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                x_hat(i, c) = x(i, c) + h * v(i, c);
            }
        });
}

void ImplicitEuler::end_step(double h, const NodeField& x, const NodeField& v) {
    const double inverse_h = 1.0 / h;
    const auto start = m_start;
    Kokkos::parallel_for(
        "intact::solver::implicit_euler_correct", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                v(i, c) = (x(i, c) - start(i, c)) * inverse_h;
            }
        });
}

std::unique_ptr<Integrator> make_integrator(const std::string& type, int num_local) {
    INTACT_REQUIRE(type == "implicit_euler",
                   "unknown integrator '" << type << "' (the scene reader checks this)");
    return std::make_unique<ImplicitEuler>(num_local);
}

} // namespace intact::solver
