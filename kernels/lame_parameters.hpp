#pragma once
/// @file lame_parameters.hpp
/// @brief Lamé parameters from Young's modulus and Poisson's ratio, for every material struct.

#include <Kokkos_Core.hpp>

namespace intact::kernels {

/// The two Lamé parameters of an isotropic material (Pa).
struct LameParameters {
    double mu;     ///< shear modulus mu = E / (2 (1 + nu))
    double lambda; ///< first Lamé parameter lambda = E nu / ((1 + nu)(1 - 2 nu))
};

/// A material struct {mu, lambda} (any of the material_*.hpp structs, or LameParameters) from Young's
/// modulus E (Pa) and Poisson's ratio nu (dimensionless, -1 < nu < 0.5), as in IPC spec section 1.4:
///   auto material = lame_from_youngs<NeoHookean>(1e5, 0.4);
template <class Material = LameParameters>
KOKKOS_INLINE_FUNCTION Material lame_from_youngs(double youngs_modulus, double poisson_ratio) {
    Material m;
    m.mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio));
    m.lambda = youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio));
    return m;
}

} // namespace intact::kernels
