#include "src/solver/elastic_term.hpp"

#include "kernels/elastic_element.hpp"
#include "kernels/material_fixed_corotated.hpp"
#include "kernels/material_linear.hpp"
#include "kernels/material_neo_hookean.hpp"
#include "kernels/material_stable_neo_hookean.hpp"
#include "kernels/material_stvk.hpp"
#include "kernels/tet_geometry.hpp"
#include "src/core/error.hpp"

#include <limits>

namespace intact::solver {

MaterialModel material_model(const std::string& name) {
    if (name == "neo_hookean") {
        return MaterialModel::neo_hookean;
    }
    if (name == "stable_neo_hookean") {
        return MaterialModel::stable_neo_hookean;
    }
    if (name == "fixed_corotated") {
        return MaterialModel::fixed_corotated;
    }
    if (name == "stvk") {
        return MaterialModel::stvk;
    }
    INTACT_REQUIRE(name == "linear",
                   "unknown material model '" << name << "' (the scene reader checks this)");
    return MaterialModel::linear;
}

namespace {

// Run `work(material)` with the material struct of `group`'s model.
template <class Group, class Work> auto with_material(const Group& group, Work&& work) {
    switch (group.model) {
    case MaterialModel::neo_hookean:
        return work(kernels::NeoHookean{group.mu, group.lambda});
    case MaterialModel::stable_neo_hookean:
        return work(kernels::StableNeoHookean{group.mu, group.lambda});
    case MaterialModel::fixed_corotated:
        return work(kernels::FixedCorotated{group.mu, group.lambda});
    case MaterialModel::stvk:
        return work(kernels::StVK{group.mu, group.lambda});
    case MaterialModel::linear:
        break;
    }
    return work(kernels::LinearElastic{group.mu, group.lambda});
}

// The corners of local element e in field x.
KOKKOS_INLINE_FUNCTION void
load_corners(const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace>& tets,
             const NodeField& x,
             int e,
             kernels::Vec3 corners[4]) {
    for (int a = 0; a < 4; ++a) {
        const int n = tets(e, a);
        corners[a] = kernels::Vec3(x(n, 0), x(n, 1), x(n, 2));
    }
}

KOKKOS_INLINE_FUNCTION kernels::Mat3
matrix_of(const Kokkos::View<double* [3][3], Kokkos::LayoutRight, MemSpace>& m, int e) {
    kernels::Mat3 a;
    for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) {
            a(r, c) = m(e, r, c);
        }
    }
    return a;
}

} // namespace

ElasticTerm::ElasticTerm(const LocalMesh& mesh, const io::Scene& scene)
    : m_num_owned_elements(mesh.num_owned_elements), m_tets("intact::solver::tets", mesh.tets.size()),
      m_dm_inverse("intact::solver::dm_inverse", mesh.tets.size()),
      m_volume("intact::solver::rest_volume", mesh.tets.size()),
      m_mass("intact::solver::lumped_mass", mesh.rest_position.size()) {
    // 1. Rest geometry and lumped mass on the host (once), then to the device.
    auto tets = Kokkos::create_mirror_view(m_tets);
    auto dm_inverse = Kokkos::create_mirror_view(m_dm_inverse);
    auto volume = Kokkos::create_mirror_view(m_volume);
    auto mass = Kokkos::create_mirror_view(m_mass);
    Kokkos::deep_copy(mass, 0.0);
    for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
        kernels::Vec3 X[4];
        for (int a = 0; a < 4; ++a) {
            const int n = mesh.tets[e][static_cast<std::size_t>(a)];
            tets(e, a) = n;
            X[a] = kernels::from_array(mesh.rest_position[static_cast<std::size_t>(n)]);
        }
        const kernels::Mat3 Dm_inv = kernels::rest_shape_inverse(X);
        const double V = kernels::rest_volume(X);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                dm_inverse(e, r, c) = Dm_inv(r, c);
            }
        }
        volume(e) = V;
        const double density = scene.bodies[static_cast<std::size_t>(mesh.element_body[e])].material.density;
        for (int a = 0; a < 4; ++a) {
            mass(tets(e, a)) += density * V / 4.0;
        }
    }
    Kokkos::deep_copy(m_tets, tets);
    Kokkos::deep_copy(m_dm_inverse, dm_inverse);
    Kokkos::deep_copy(m_volume, volume);
    Kokkos::deep_copy(m_mass, mass);

    // 2. One group per body: its material and its local (and owned) elements.
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
        const auto& material = scene.bodies[b].material;
        std::vector<int> elements, owned;
        for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
            if (mesh.element_body[e] == static_cast<int>(b)) {
                elements.push_back(static_cast<int>(e));
                if (static_cast<int>(e) < mesh.num_owned_elements) {
                    owned.push_back(static_cast<int>(e));
                }
            }
        }
        if (elements.empty()) {
            continue;
        }
        const auto lame = kernels::lame_from_youngs<>(material.youngs_modulus, material.poisson_ratio);
        Group group{material_model(material.model), lame.mu, lame.lambda,
                    Kokkos::View<int*, MemSpace>("intact::solver::group_elements", elements.size()),
                    Kokkos::View<int*, MemSpace>("intact::solver::group_owned", owned.size())};
        auto host_elements = Kokkos::create_mirror_view(group.elements);
        auto host_owned = Kokkos::create_mirror_view(group.owned);
        std::copy(elements.begin(), elements.end(), host_elements.data());
        std::copy(owned.begin(), owned.end(), host_owned.data());
        Kokkos::deep_copy(group.elements, host_elements);
        Kokkos::deep_copy(group.owned, host_owned);
        m_groups.push_back(group);
    }
}

template <class Material>
double ElasticTerm::energy_of(const Material& material, const NodeField& x, int group) const {
    const auto owned = m_groups[static_cast<std::size_t>(group)].owned;
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets = m_tets;
    const auto dm_inverse = m_dm_inverse;
    const auto volume = m_volume;
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::elastic_energy", Kokkos::RangePolicy<ExecSpace>(0, owned.extent(0)),
        KOKKOS_LAMBDA(const int k, double& total) {
            const int e = owned(k);
            kernels::Vec3 q[4];
            load_corners(tets, x, e, q);
            total +=
                kernels::elastic_element(material, q, matrix_of(dm_inverse, e), volume(e), nullptr, nullptr);
        },
        sum);
    return sum;
}

double ElasticTerm::energy(const NodeField& x) const {
    double total = 0.0;
    for (std::size_t g = 0; g < m_groups.size(); ++g) {
        total += with_material(
            m_groups[g], [&](const auto& material) { return energy_of(material, x, static_cast<int>(g)); });
    }
    return total;
}

template <class Material>
std::pair<double, double> ElasticTerm::energy_change_of(const Material& material,
                                                        const NodeField& x,
                                                        const NodeField& trial,
                                                        int group) const {
    const auto owned = m_groups[static_cast<std::size_t>(group)].owned;
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets = m_tets;
    const auto dm_inverse = m_dm_inverse;
    const auto volume = m_volume;
    double change = 0.0;
    double magnitude = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::elastic_energy_change", Kokkos::RangePolicy<ExecSpace>(0, owned.extent(0)),
        KOKKOS_LAMBDA(const int k, double& sum_change, double& sum_magnitude) {
            const int e = owned(k);
            const kernels::Mat3 Dm_inv = matrix_of(dm_inverse, e);
            kernels::Vec3 q[4], step[4];
            load_corners(tets, x, e, q);
            for (int a = 0; a < 4; ++a) {
                for (int c = 0; c < 3; ++c) {
                    step[a](c) = trial(tets(e, a), c) - x(tets(e, a), c);
                }
            }
            const double before = kernels::elastic_element(material, q, Dm_inv, volume(e), nullptr, nullptr);
            sum_change += kernels::elastic_energy_change(material, q, step, Dm_inv, volume(e));
            sum_magnitude += before < 0 ? -before : before;
        },
        change, magnitude);
    return {change, magnitude};
}

std::pair<double, double> ElasticTerm::energy_change(const NodeField& x, const NodeField& trial) const {
    std::pair<double, double> total{0.0, 0.0};
    for (std::size_t g = 0; g < m_groups.size(); ++g) {
        const auto part = with_material(m_groups[g], [&](const auto& material) {
            return energy_change_of(material, x, trial, static_cast<int>(g));
        });
        total.first += part.first;
        total.second += part.second;
    }
    return total;
}

template <class Material>
void ElasticTerm::evaluate_group(
    const Material& material, const NodeField& x, int group, bool with_hessians, bool project) {
    const auto elements = m_groups[static_cast<std::size_t>(group)].elements;
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets = m_tets;
    const auto dm_inverse = m_dm_inverse;
    const auto volume = m_volume;
    const auto gradients = m_gradients;
    const auto hessians = m_hessians;
    Kokkos::parallel_for(
        "intact::solver::elastic_element_derivatives", Kokkos::RangePolicy<ExecSpace>(0, elements.extent(0)),
        KOKKOS_LAMBDA(const int k) {
            const int e = elements(k);
            kernels::Vec3 q[4];
            load_corners(tets, x, e, q);
            kernels::Vec12 g;
            kernels::Mat12 H;
            kernels::elastic_element(material, q, matrix_of(dm_inverse, e), volume(e), &g,
                                     with_hessians ? &H : nullptr, project);
            for (int i = 0; i < 12; ++i) {
                gradients(e, i) = g(i);
                if (with_hessians) {
                    for (int j = 0; j < 12; ++j) {
                        hessians(e, i, j) = H(i, j);
                    }
                }
            }
        });
}

void ElasticTerm::share_rest_data(const ElasticTerm& larger) {
    const int n = static_cast<int>(m_tets.extent(0));
    INTACT_REQUIRE(static_cast<int>(larger.m_tets.extent(0)) >= n,
                   "ElasticTerm::share_rest_data: the larger term has fewer elements");
    const auto mine = m_tets;
    const auto theirs = larger.m_tets;
    int differing = 0;
    Kokkos::parallel_reduce(
        "intact::solver::compare_tets", Kokkos::RangePolicy<ExecSpace>(0, n),
        KOKKOS_LAMBDA(const int e, int& count) {
            for (int a = 0; a < 4; ++a) {
                count += mine(e, a) != theirs(e, a) ? 1 : 0;
            }
        },
        differing);
    INTACT_REQUIRE(differing == 0, "ElasticTerm::share_rest_data: the larger term's leading elements differ");
    const auto rows = Kokkos::make_pair(0, n);
    m_tets = Kokkos::subview(larger.m_tets, rows, Kokkos::ALL);
    m_dm_inverse = Kokkos::subview(larger.m_dm_inverse, rows, Kokkos::ALL, Kokkos::ALL);
    m_volume = Kokkos::subview(larger.m_volume, rows);
}

void ElasticTerm::allocate_derivatives(bool hessians) {
    if (m_gradients.extent(0) != m_tets.extent(0)) {
        m_gradients = ElementGradients("intact::solver::element_gradients", m_tets.extent(0));
    }
    if (hessians && m_hessians.extent(0) != m_tets.extent(0)) {
        m_hessians = ElementHessians("intact::solver::element_hessians", m_tets.extent(0));
    }
}

void ElasticTerm::evaluate(const NodeField& x, bool hessians) {
    allocate_derivatives(hessians);
    for (std::size_t g = 0; g < m_groups.size(); ++g) {
        with_material(m_groups[g], [&](const auto& material) {
            evaluate_group(material, x, static_cast<int>(g), hessians, m_project);
            return 0;
        });
    }
}

double ElasticTerm::max_step(const NodeField& x, const NodeField& p, double rest_floor) const {
    // Every material, not only neo-Hookean (whose energy is +∞ there): the invertible models are
    // defined for inverted elements, but no accepted state of Intact inverts one (`intact check` flags
    // it), so a step never takes an element below a fifth of its volume.
    const Kokkos::View<const int* [4], Kokkos::LayoutRight, MemSpace> tets = m_tets;
    const auto rest = m_volume;
    double alpha = 1.0;
    Kokkos::parallel_reduce(
        "intact::solver::inversion_bound", Kokkos::RangePolicy<ExecSpace>(0, tets.extent(0)),
        KOKKOS_LAMBDA(const int e, double& smallest) {
            kernels::Vec3 q[4], d[4];
            load_corners(tets, x, e, q);
            load_corners(tets, p, e, d);
            double keep = 0.2; // of the current volume
            if (rest_floor > 0.0) {
                // At or below the floor, the volume may not fall at all.
                const double floor = rest_floor * rest(e) / kernels::signed_volume(q);
                keep = floor > keep ? (floor < 1.0 - 1e-12 ? floor : 1.0 - 1e-12) : keep;
            }
            const double step = kernels::max_step_keeping_volume(q, d, keep, 1.0);
            smallest = step < smallest ? step : smallest;
        },
        Kokkos::Min<double>(alpha));
    // A reduction over no element (a rank that holds only shells and rods) yields Min's identity, the
    // largest double, not the 1 it started from.
    return alpha < 1.0 ? alpha : 1.0;
}

} // namespace intact::solver
