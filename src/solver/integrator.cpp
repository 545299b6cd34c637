#include "src/solver/integrator.hpp"

#include "src/core/error.hpp"

namespace intact::solver {

void ImplicitEuler::predict(double h, const NodeField& x, const NodeField& v, const NodeField& x_hat) const {
    Kokkos::parallel_for(
        "intact::solver::implicit_euler_predict", Kokkos::RangePolicy<ExecSpace>(0, x.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                x_hat(i, c) = x(i, c) + h * v(i, c);
            }
        });
}

void ImplicitEuler::correct(double h,
                            const NodeField& x_old,
                            const NodeField& x_new,
                            const NodeField& v) const {
    const double inverse_h = 1.0 / h;
    Kokkos::parallel_for(
        "intact::solver::implicit_euler_correct", Kokkos::RangePolicy<ExecSpace>(0, x_new.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                v(i, c) = (x_new(i, c) - x_old(i, c)) * inverse_h;
            }
        });
}

std::unique_ptr<Integrator> make_integrator(const std::string& type) {
    INTACT_REQUIRE(type == "implicit_euler",
                   "unknown integrator '" << type << "' (the scene reader checks this)");
    return std::make_unique<ImplicitEuler>();
}

} // namespace intact::solver
