#include "src/solver/codim_term.hpp"

#include "src/core/error.hpp"
#include "src/solver/codim_stencil.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace intact::solver {

namespace {

constexpr double k_pi = 3.14159265358979323846;

// Corners of stencil s in field x (unused corners: the first corner, never read by the kernels).
KOKKOS_INLINE_FUNCTION void
load_stencil(const CodimTerm::Stencils& stencils, const NodeField& x, int s, kernels::Vec3 q[4]) {
    for (int a = 0; a < 4; ++a) {
        const int n = stencils(s, a) >= 0 ? stencils(s, a) : stencils(s, 0);
        q[a] = kernels::Vec3(x(n, 0), x(n, 1), x(n, 2));
    }
}

} // namespace

std::vector<CodimMaterial> codim_materials(const io::Scene& scene) {
    std::vector<CodimMaterial> materials;
    for (const auto& body : scene.bodies) {
        const io::Material& in = body.material;
        CodimMaterial m;
        m.density = in.density;
        if (body.type == io::BodyType::shell) {
            const double E = in.youngs_modulus;
            const double nu = in.poisson_ratio;
            m.kind = CodimMaterial::Kind::shell;
            m.membrane = in.model == "neo_hookean" ? CodimMaterial::Membrane::neo_hookean
                                                   : CodimMaterial::Membrane::stvk;
            m.mu = E / (2.0 * (1.0 + nu));
            m.lambda = kernels::plane_stress_lambda(m.mu, E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)));
            m.thickness = in.thickness;
            m.bending_stiffness = in.bending_stiffness > 0.0 ? in.bending_stiffness
                                                             : E * in.thickness * in.thickness *
                                                                   in.thickness / (12.0 * (1.0 - nu * nu));
        } else if (body.type == io::BodyType::rod) {
            const double r = in.radius;
            m.kind = CodimMaterial::Kind::rod;
            m.radius = r;
            m.stretch_stiffness = in.youngs_modulus * k_pi * r * r;
            m.bending_stiffness = in.bending_stiffness > 0.0 ? in.bending_stiffness
                                                             : in.youngs_modulus * k_pi * r * r * r * r / 4.0;
        }
        materials.push_back(m);
    }
    return materials;
}

CodimTerm::CodimTerm(const std::vector<Vec3>& rest_position,
                     const CodimElements& elements,
                     const std::vector<CodimMaterial>& materials)
    : m_stencils("intact::solver::codim_stencils", static_cast<std::size_t>(elements.num_stencils())),
      m_parameters("intact::solver::codim_parameters", static_cast<std::size_t>(elements.num_stencils())),
      m_owned("intact::solver::codim_owned", static_cast<std::size_t>(elements.num_stencils())),
      m_mass("intact::solver::codim_lumped_mass", rest_position.size()) {
    // 1. Stencils, ownership, rest data and lumped mass on the host (once), then to the device.
    auto stencils = Kokkos::create_mirror_view(m_stencils);
    auto parameters = Kokkos::create_mirror_view(m_parameters);
    auto owned = Kokkos::create_mirror_view(m_owned);
    auto mass = Kokkos::create_mirror_view(m_mass);
    Kokkos::deep_copy(parameters, 0.0);
    Kokkos::deep_copy(mass, 0.0);
    const auto material_of = [&](int body, CodimMaterial::Kind kind) -> const CodimMaterial& {
        INTACT_REQUIRE(body >= 0 && body < static_cast<int>(materials.size()) &&
                           materials[static_cast<std::size_t>(body)].kind == kind,
                       "CodimTerm: body " << body << " has no "
                                          << (kind == CodimMaterial::Kind::shell ? "shell" : "rod")
                                          << " material");
        return materials[static_cast<std::size_t>(body)];
    };
    std::vector<double> triangle_mass(elements.triangles.size()); // each corner's share (kg)
    std::vector<double> segment_mass(elements.segments.size());   // each end's share (kg)
    int s = 0;
    const auto add = [&](const auto& nodes, bool is_owned) {
        for (int a = 0; a < 4; ++a) {
            stencils(s, a) = a < static_cast<int>(nodes.size()) ? nodes[static_cast<std::size_t>(a)] : -1;
        }
        owned(s) = is_owned ? 1 : 0;
        m_host_stencils.push_back({stencils(s, 0), stencils(s, 1), stencils(s, 2), stencils(s, 3)});
    };
    const auto rest = [&](int node) {
        return kernels::from_array(rest_position[static_cast<std::size_t>(node)]);
    };

    m_triangles.begin = s;
    for (std::size_t t = 0; t < elements.triangles.size(); ++t, ++s) {
        const auto& tri = elements.triangles[t];
        const CodimMaterial& m = material_of(elements.triangle_body[t], CodimMaterial::Kind::shell);
        add(tri, static_cast<int>(t) < elements.num_owned_triangles);
        const kernels::Vec3 X[3] = {rest(tri[0]), rest(tri[1]), rest(tri[2])};
        const double area = kernels::triangle_area(X);
        INTACT_REQUIRE(area > 0.0, "CodimTerm: degenerate shell triangle (the scene reader checks this)");
        const kernels::Mat2 Dm_inv = kernels::triangle_rest_inverse(X);
        parameters(s, 0) = Dm_inv(0, 0);
        parameters(s, 1) = Dm_inv(0, 1);
        parameters(s, 2) = Dm_inv(1, 0);
        parameters(s, 3) = Dm_inv(1, 1);
        parameters(s, 4) = area * m.thickness;
        parameters(s, 5) = m.mu;
        parameters(s, 6) = m.lambda;
        parameters(s, 7) = m.membrane == CodimMaterial::Membrane::stvk ? 0.0 : 1.0;
        triangle_mass[t] = m.density * m.thickness * area / 3.0;
    }
    m_triangles.end = s;

    m_hinges.begin = s;
    for (std::size_t k = 0; k < elements.hinges.size(); ++k, ++s) {
        const auto& hinge = elements.hinges[k];
        const CodimMaterial& m = material_of(elements.hinge_body[k], CodimMaterial::Kind::shell);
        add(hinge, static_cast<int>(k) < elements.num_owned_hinges);
        const kernels::Vec3 X[4] = {rest(hinge[0]), rest(hinge[1]), rest(hinge[2]), rest(hinge[3])};
        parameters(s, 0) = kernels::dihedral_angle(X);
        parameters(s, 1) = kernels::hinge_weight(X, m.bending_stiffness);
    }
    m_hinges.end = s;

    m_segments.begin = s;
    for (std::size_t k = 0; k < elements.segments.size(); ++k, ++s) {
        const auto& seg = elements.segments[k];
        const CodimMaterial& m = material_of(elements.segment_body[k], CodimMaterial::Kind::rod);
        add(seg, static_cast<int>(k) < elements.num_owned_segments);
        const double length = (rest(seg[1]) - rest(seg[0])).norm();
        INTACT_REQUIRE(length > 0.0, "CodimTerm: zero-length rod segment (the scene reader checks this)");
        parameters(s, 0) = length;
        parameters(s, 1) = m.stretch_stiffness;
        segment_mass[k] = 0.5 * m.density * k_pi * m.radius * m.radius * length;
    }
    m_segments.end = s;

    m_rod_vertices.begin = s;
    for (std::size_t k = 0; k < elements.rod_vertices.size(); ++k, ++s) {
        const auto& v = elements.rod_vertices[k];
        const CodimMaterial& m = material_of(elements.rod_vertex_body[k], CodimMaterial::Kind::rod);
        add(v, static_cast<int>(k) < elements.num_owned_rod_vertices);
        const kernels::Vec3 X[3] = {rest(v[0]), rest(v[1]), rest(v[2])};
        const double kappa = kernels::rod_curvature(X);
        INTACT_REQUIRE(kernels::is_finite(kappa), "CodimTerm: a rod folds back on itself at rest");
        parameters(s, 0) = kappa;
        parameters(s, 1) = kernels::rod_bend_weight(X, m.bending_stiffness);
    }
    m_rod_vertices.end = s;

    // Lumped masses: each node's share of its triangles, then of its segments, each in scene-wide element
    // order (a LocalMesh lists its owned elements first), so that a node's mass does not depend on the
    // partition.
    const auto in_scene_order = [](std::size_t count, const std::vector<long long>& ids) {
        std::vector<std::size_t> order(count);
        std::iota(order.begin(), order.end(), std::size_t{0});
        if (ids.size() == count) {
            std::sort(order.begin(), order.end(),
                      [&](std::size_t a, std::size_t b) { return ids[a] < ids[b]; });
        }
        return order;
    };
    for (const std::size_t t : in_scene_order(elements.triangles.size(), elements.triangle_id)) {
        for (const int node : elements.triangles[t]) {
            mass(node) += triangle_mass[t];
        }
    }
    for (const std::size_t k : in_scene_order(elements.segments.size(), elements.segment_id)) {
        for (const int node : elements.segments[k]) {
            mass(node) += segment_mass[k];
        }
    }

    Kokkos::deep_copy(m_stencils, stencils);
    Kokkos::deep_copy(m_parameters, parameters);
    Kokkos::deep_copy(m_owned, owned);
    Kokkos::deep_copy(m_mass, mass);
}

CodimTerm::Range CodimTerm::range_of(int kind) const {
    switch (kind) {
    case k_codim_triangle:
        return m_triangles;
    case k_codim_hinge:
        return m_hinges;
    case k_codim_segment:
        return m_segments;
    default:
        return m_rod_vertices;
    }
}

double CodimTerm::energy_of_range(const NodeField& x, int kind) const {
    const Range range = range_of(kind);
    const auto stencils = m_stencils;
    const auto parameters = m_parameters;
    const auto owned = m_owned;
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::codim_energy", Kokkos::RangePolicy<ExecSpace>(range.begin, range.end),
        KOKKOS_LAMBDA(const int s, double& total) {
            if (owned(s) == 0) {
                return;
            }
            kernels::Vec3 q[4];
            load_stencil(stencils, x, s, q);
            total += codim_stencil_energy(kind, parameters, s, q, nullptr, nullptr);
        },
        sum);
    return sum;
}

double CodimTerm::energy(const NodeField& x) const {
    double total = 0.0;
    for (int kind = k_codim_triangle; kind <= k_codim_rod_vertex; ++kind) {
        total += energy_of_range(x, kind);
    }
    return total;
}

std::pair<double, double>
CodimTerm::energy_change_of_range(const NodeField& x, const NodeField& trial, int kind) const {
    const Range range = range_of(kind);
    const auto stencils = m_stencils;
    const auto parameters = m_parameters;
    const auto owned = m_owned;
    double change = 0.0;
    double magnitude = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::codim_energy_change", Kokkos::RangePolicy<ExecSpace>(range.begin, range.end),
        KOKKOS_LAMBDA(const int s, double& sum_change, double& sum_magnitude) {
            if (owned(s) == 0) {
                return;
            }
            kernels::Vec3 q[4];
            kernels::Vec3 t[4];
            load_stencil(stencils, x, s, q);
            load_stencil(stencils, trial, s, t);
            kernels::Vec3 step[4];
            for (int a = 0; a < 4; ++a) {
                step[a] = t[a] - q[a];
            }
            double before = 0.0;
            sum_change += codim_stencil_energy_change(kind, parameters, s, q, step, &before);
            sum_magnitude += before < 0 ? -before : before;
        },
        change, magnitude);
    return {change, magnitude};
}

std::pair<double, double> CodimTerm::energy_change(const NodeField& x, const NodeField& trial) const {
    std::pair<double, double> total{0.0, 0.0};
    for (int kind = k_codim_triangle; kind <= k_codim_rod_vertex; ++kind) {
        const auto part = energy_change_of_range(x, trial, kind);
        total.first += part.first;
        total.second += part.second;
    }
    return total;
}

void CodimTerm::evaluate_range(const NodeField& x, int kind, bool with_hessians, bool project) {
    const Range range = range_of(kind);
    const auto stencils = m_stencils;
    const auto parameters = m_parameters;
    const auto gradients = m_gradients;
    const auto hessians = m_hessians;
    Kokkos::parallel_for(
        "intact::solver::codim_derivatives", Kokkos::RangePolicy<ExecSpace>(range.begin, range.end),
        KOKKOS_LAMBDA(const int s) {
            kernels::Vec3 q[4];
            load_stencil(stencils, x, s, q);
            kernels::Vec12 g;
            kernels::Mat12 H;
            codim_stencil_energy(kind, parameters, s, q, &g, with_hessians ? &H : nullptr, project);
            for (int i = 0; i < 12; ++i) {
                gradients(s, i) = g(i);
                if (with_hessians) {
                    for (int j = 0; j < 12; ++j) {
                        hessians(s, i, j) = H(i, j);
                    }
                }
            }
        });
}

void CodimTerm::evaluate(const NodeField& x, bool hessians) {
    const auto n = m_stencils.extent(0);
    if (m_gradients.extent(0) != n) {
        m_gradients = StencilGradients("intact::solver::codim_gradients", n);
    }
    if (hessians && m_hessians.extent(0) != n) {
        m_hessians = StencilHessians("intact::solver::codim_hessians", n);
    }
    for (int kind = k_codim_triangle; kind <= k_codim_rod_vertex; ++kind) {
        evaluate_range(x, kind, hessians, m_project);
    }
}

} // namespace intact::solver
