// StencilDescent's stencil layout: construction, the static device data of the sweeps (materials,
// element adjacency in global element order, lumped masses, batches, edges, colors, surface rows), the
// rebuild when B needs other nodes, and fields moved onto the layout's rows.

#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "kernels/lame_parameters.hpp"
#include "src/solver/stencil_descent/stencil_terms.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace intact::solver {

using namespace stencil_detail;

StencilDescent::StencilDescent(const StepParts& parts, const NewtonSettings& settings, const LocalMesh& local)
    : m_parts(parts), m_settings(settings), m_options(parts.scene.stencil_descent), m_local(local),
      m_layout(build_stencil_layout(parts.comm, local, parts.scene.halo_transport)),
      m_coloring(global_stencil_coloring(parts.comm, local, m_options.colors, m_options.schemes)),
      m_bound(parts.comm, parts.potential.elastic(), parts.contact), m_contact(parts.contact),
      m_delta("intact::solver::stencil_delta", local.num_local_nodes()),
      m_product("intact::solver::stencil_product", local.num_local_nodes()),
      m_assembled("intact::solver::stencil_assembled", local.num_local_nodes()),
      m_jacobi("intact::solver::stencil_jacobi", local.num_local_nodes()) {
    if (m_contact) {
        const int rows = m_contact->surface().num_vertices();
        m_xs = contact::SurfaceField("intact::solver::stencil_xs", rows);
        m_surface_step = contact::SurfaceField("intact::solver::stencil_surface_step", rows);
        m_zero_rows = contact::SurfaceField("intact::solver::stencil_zero_rows", rows);
        m_x_ck = NodeField("intact::solver::stencil_x_ck", local.num_local_nodes());
        m_data.xs = m_xs;
        m_data.topology = m_contact->topology();
    }
    for (const auto& body : parts.scene.bodies) {
        m_has_codim = m_has_codim || body.type != io::BodyType::solid;
    }
    build_codim_data();
    build_elastic();
    build_static_data();
    if (m_contact) {
        double mass = 0.0;
        const auto host_mass = Kokkos::create_mirror_view_and_copy(HostSpace(), m_data.mass);
        for (int i = 0; i < m_data.num_owned; ++i) {
            mass += host_mass(i);
        }
        const double nodes =
            static_cast<double>(comm::allreduce_sum(parts.comm, std::int64_t{m_data.num_owned}));
        m_kappa.emplace(comm::allreduce_sum(parts.comm, mass) / nodes, m_contact->dhat(), parts.length);
        m_parts.potential.set_contact(*m_contact);
        if (parts.scene.has_friction()) {
            m_friction.emplace(parts.scene.contact.friction, parts.scene.contact.epsv);
            const int rows = m_contact->surface().num_vertices();
            m_friction_start = contact::SurfaceField("intact::solver::stencil_friction_start", rows);
            m_obstacle_start = contact::SurfaceField("intact::solver::stencil_obstacle_start", rows);
        }
        m_x_start = NodeField("intact::solver::stencil_x_start", local.num_local_nodes());
    }
}

void StencilDescent::build_codim_data() {
    StencilData& d = m_data;
    d.has_codim = m_has_codim;
    if (!m_has_codim) {
        return;
    }
    const CodimTerm& codim = m_parts.potential.codim();
    d.num_codim = codim.num_stencils();
    codim.kind_begins(d.codim_begin);
    d.codim_nodes = codim.stencils();
    d.codim_parameters = codim.parameters();
    d.codim_steps = decltype(d.codim_steps)("intact::solver::stencil_codim_steps", d.num_codim);
    d.codim_sums = decltype(d.codim_sums)("intact::solver::stencil_codim_sums", 0);

    // The stencils around each LocalMesh node, ordered by (kind, global ids of the corners), so that every
    // per-vertex sum adds the same terms in the same order on every rank count.
    const auto& stencils = codim.host_stencils();
    const int num_local = m_local.num_local_nodes();
    using Key = std::array<long long, 6>; // kind, four global ids (−1 for unused corners), corner
    std::vector<std::vector<std::pair<Key, std::array<int, 2>>>> around(static_cast<std::size_t>(num_local));
    for (int c = 0; c < d.num_codim; ++c) {
        const auto& nodes = stencils[static_cast<std::size_t>(c)];
        Key key{codim_kind_of(d.codim_begin, c), -1, -1, -1, -1, 0};
        for (int a = 0; a < 4; ++a) {
            const int n = nodes[static_cast<std::size_t>(a)];
            key[static_cast<std::size_t>(1 + a)] =
                n < 0 ? -1 : static_cast<long long>(m_local.node_global_id[static_cast<std::size_t>(n)]);
        }
        for (int a = 0; a < 4; ++a) {
            const int n = nodes[static_cast<std::size_t>(a)];
            if (n >= 0) {
                key[5] = a;
                around[static_cast<std::size_t>(n)].push_back({key, {c, a}});
            }
        }
    }
    d.codim_offsets = StencilData::IntView("intact::solver::stencil_codim_offsets", num_local + 1);
    auto offsets = Kokkos::create_mirror_view(d.codim_offsets);
    offsets(0) = 0;
    for (int v = 0; v < num_local; ++v) {
        auto& list = around[static_cast<std::size_t>(v)];
        std::sort(list.begin(), list.end());
        offsets(v + 1) = offsets(v) + static_cast<int>(list.size());
    }
    d.codim_entries = decltype(d.codim_entries)("intact::solver::stencil_codim_entries", offsets(num_local));
    auto entries = Kokkos::create_mirror_view(d.codim_entries);
    for (int v = 0; v < num_local; ++v) {
        int k = offsets(v);
        for (const auto& [key, entry] : around[static_cast<std::size_t>(v)]) {
            entries(k, 0) = entry[0];
            entries(k, 1) = entry[1];
            ++k;
        }
    }
    Kokkos::deep_copy(d.codim_offsets, offsets);
    Kokkos::deep_copy(d.codim_entries, entries);
}

void StencilDescent::add_codim_masses() {
    // Codimensional nodes are in no tetrahedron: their whole mass is the CodimTerm's, complete on the
    // owned rows, and the layout's other rows take their owners'.
    if (!m_has_codim) {
        return;
    }
    const StencilData d = m_data;
    const int rows = m_layout.mesh.num_local_nodes();
    Kokkos::View<double*, MemSpace> masses("intact::solver::stencil_codim_masses", rows);
    const auto lumped = m_parts.potential.codim().lumped_mass();
    Kokkos::parallel_for(
        "intact::solver::stencil_codim_owned_masses", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) { masses(v) = lumped(v); });
    m_layout.halo->gather(masses);
    Kokkos::parallel_for(
        "intact::solver::stencil_codim_masses", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
        KOKKOS_LAMBDA(const int v) { d.mass(v) += masses(v); });
}

void StencilDescent::release_static_data() {
    // The views build_static_data() makes for the layout, so that the old layout's and the new are not
    // held together (the peak memory of a rebuild counted both). Not these: the old rest data (tets, D_m⁻¹,
    // V) stays alive through the potential's elastic term until build_elastic() shares the new one, and
    // the new StencilLayout exists already.
    StencilData& d = m_data;
    d.tets = {};
    d.dm_inverse = {};
    d.volume = {};
    d.model = d.element_offsets = d.element_entries = d.element_order = d.element_position = {};
    d.mu = d.lambda = d.mass = d.free = {};
    d.batch_gradient = {};
    d.batch_hessian = {};
    d.elastic_gradient = d.x = d.x_hat = d.force = d.gradient = {};
    d.elastic_diagonal = {};
    d.diagonal = {};
    d.stencil_edges = {};
    d.edge_nodes = {};
    d.edge_block = {};
    d.color = {};
    d.batch_steps = {};
    d.step_sum = {};
    d.pair_offsets = {};
    d.pair_edges = {};
    m_layout_scratch = {};
    d.codim_sums = {};
    m_node_row = {};
    m_elastic.reset();
}

void StencilDescent::build_elastic() {
    m_elastic.emplace(m_layout.mesh, m_parts.scene);
    // The layout's elements start with the LocalMesh's, so the potential's elastic term (line search,
    // energies, inversion bound) reads its rest data from this one instead of keeping its own copy.
    m_parts.potential.elastic().share_rest_data(*m_elastic);
}

void StencilDescent::build_static_data() {
    const LocalMesh& mesh = m_layout.mesh;
    StencilData& d = m_data;
    d.num_nodes = m_layout.num_vertices;
    d.num_local = m_local.num_local_nodes();
    d.num_owned = m_local.num_owned_nodes;
    d.num_elements = m_layout.num_stencils;
    d.cg_iterations = m_options.cg_iterations;
    d.toi_factor = m_options.toi_factor;
    d.tets = m_elastic->tets();
    d.dm_inverse = m_elastic->dm_inverses();
    d.volume = m_elastic->volumes();

    // Materials per layout element.
    const int num_layout_elements = mesh.num_local_elements();
    d.model = StencilData::IntView("intact::solver::stencil_model", num_layout_elements);
    d.mu = StencilData::RealView("intact::solver::stencil_mu", num_layout_elements);
    d.lambda = StencilData::RealView("intact::solver::stencil_lambda", num_layout_elements);
    auto model = Kokkos::create_mirror_view(d.model);
    auto mu = Kokkos::create_mirror_view(d.mu);
    auto lambda = Kokkos::create_mirror_view(d.lambda);
    std::vector<double> density(static_cast<std::size_t>(num_layout_elements));
    for (int e = 0; e < num_layout_elements; ++e) {
        const auto& material =
            m_parts.scene.bodies[static_cast<std::size_t>(mesh.element_body[static_cast<std::size_t>(e)])]
                .material;
        const auto lame = kernels::lame_from_youngs<>(material.youngs_modulus, material.poisson_ratio);
        model(e) = static_cast<int>(material_model(material.model));
        mu(e) = lame.mu;
        lambda(e) = lame.lambda;
        density[static_cast<std::size_t>(e)] = material.density;
    }
    Kokkos::deep_copy(d.model, model);
    Kokkos::deep_copy(d.mu, mu);
    Kokkos::deep_copy(d.lambda, lambda);

    // Elements around each stencil vertex, by ascending global element id (the fixed order of every sum),
    // and the lumped masses summed in that order.
    std::vector<std::vector<std::pair<GlobalId, std::array<int, 2>>>> around(
        static_cast<std::size_t>(d.num_nodes));
    for (int e = 0; e < num_layout_elements; ++e) {
        for (int a = 0; a < 4; ++a) {
            const int n = mesh.tets[static_cast<std::size_t>(e)][static_cast<std::size_t>(a)];
            if (n < d.num_nodes) {
                around[static_cast<std::size_t>(n)].push_back(
                    {mesh.element_global_id[static_cast<std::size_t>(e)], {e, a}});
            }
        }
    }
    const auto volume = Kokkos::create_mirror_view_and_copy(HostSpace(), m_elastic->volumes());
    d.element_offsets = StencilData::IntView("intact::solver::stencil_element_offsets", d.num_nodes + 1);
    d.mass = StencilData::RealView("intact::solver::stencil_mass", d.num_nodes);
    auto offsets = Kokkos::create_mirror_view(d.element_offsets);
    auto mass = Kokkos::create_mirror_view(d.mass);
    offsets(0) = 0;
    for (int v = 0; v < d.num_nodes; ++v) {
        auto& list = around[static_cast<std::size_t>(v)];
        std::sort(list.begin(), list.end());
        offsets(v + 1) = offsets(v) + static_cast<int>(list.size());
    }
    d.element_entries = StencilData::IntView("intact::solver::stencil_element_entries", offsets(d.num_nodes));
    auto entries = Kokkos::create_mirror_view(d.element_entries);
    for (int v = 0; v < d.num_nodes; ++v) {
        mass(v) = 0.0;
        int k = offsets(v);
        for (const auto& [gid, entry] : around[static_cast<std::size_t>(v)]) {
            entries(k) = 4 * entry[0] + entry[1];
            mass(v) += density[static_cast<std::size_t>(entry[0])] * volume(entry[0]) / 4.0;
            ++k;
        }
    }
    Kokkos::deep_copy(d.element_offsets, offsets);
    Kokkos::deep_copy(d.element_entries, entries);
    Kokkos::deep_copy(d.mass, mass);
    add_codim_masses();

    // Elasticity's batches: layout elements in ascending global id, `element_batch` at a time (automatic:
    // a sixteenth of the layout, so the batch buffers (720 bytes per element) stay a small share of the
    // memory, and at least 1024 on a GPU, so that a batch still fills its cores reasonably, 256 on the
    // host, whose threads a batch fills at any size; three kernels per batch and sweep).
    std::vector<int> order(static_cast<std::size_t>(num_layout_elements));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        return mesh.element_global_id[static_cast<std::size_t>(a)] <
               mesh.element_global_id[static_cast<std::size_t>(b)];
    });
    d.element_order = StencilData::IntView("intact::solver::stencil_element_order", num_layout_elements);
    d.element_position =
        StencilData::IntView("intact::solver::stencil_element_position", num_layout_elements);
    auto order_host = Kokkos::create_mirror_view(d.element_order);
    auto position = Kokkos::create_mirror_view(d.element_position);
    for (int k = 0; k < num_layout_elements; ++k) {
        order_host(k) = order[static_cast<std::size_t>(k)];
        position(order[static_cast<std::size_t>(k)]) = k;
    }
    Kokkos::deep_copy(d.element_order, order_host);
    Kokkos::deep_copy(d.element_position, position);
    constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
    const int automatic = std::max(on_host ? 256 : 1024, (num_layout_elements + 15) / 16);
    d.batch = std::max(
        1, std::min(num_layout_elements, m_options.element_batch > 0 ? m_options.element_batch : automatic));
    // The local steps' batches (sweep_update): elasticity's on the host. On a GPU at least 65 536 stencils
    // (every element when fewer): each is one long thread (a 12 × 12 CG, CCD and line search), so the
    // batches run one after another at the speed of one thread each, and a batch of a few thousand would
    // leave most of the device idle. An explicit element_batch sets both.
    constexpr int k_device_step_batch = 65536;
    d.step_batch = m_options.element_batch > 0 || on_host
                       ? d.batch
                       : std::max(1, std::min(num_layout_elements, std::max(d.batch, k_device_step_batch)));
    d.batch_steps = decltype(d.batch_steps)("intact::solver::stencil_batch_steps", d.step_batch);
    d.batch_gradient = decltype(d.batch_gradient)("intact::solver::stencil_batch_gradient", d.batch);
    d.batch_hessian = decltype(d.batch_hessian)("intact::solver::stencil_batch_hessian", d.batch);
    d.elastic_gradient = NodeField("intact::solver::stencil_elastic_gradient", d.num_nodes);
    d.elastic_diagonal =
        decltype(d.elastic_diagonal)("intact::solver::stencil_elastic_diagonal", d.num_nodes);

    // Edges between stencil vertices (every vertex pair of a layout element), and those of each element
    // stencil.
    m_edge_of.clear();
    std::vector<std::array<int, 2>> edges;
    auto edge_of = [&](int a, int b) {
        const auto [it, inserted] = m_edge_of.emplace(edge_key(a, b), static_cast<int>(edges.size()));
        if (inserted) {
            edges.push_back({std::min(a, b), std::max(a, b)});
        }
        return it->second;
    };
    d.stencil_edges = decltype(d.stencil_edges)("intact::solver::stencil_edges", d.num_elements);
    auto stencil_edges = Kokkos::create_mirror_view(d.stencil_edges);
    for (int e = 0; e < num_layout_elements; ++e) {
        const auto& tet = mesh.tets[static_cast<std::size_t>(e)];
        for (int a = 0; a < 4; ++a) {
            for (int b = a + 1; b < 4; ++b) {
                const int na = tet[static_cast<std::size_t>(a)], nb = tet[static_cast<std::size_t>(b)];
                const bool both = na < d.num_nodes && nb < d.num_nodes && na != nb;
                const int edge = both ? edge_of(na, nb) : -1;
                if (e < d.num_elements) {
                    stencil_edges(e, pair_slot(a, b)) = edge;
                }
            }
        }
    }
    Kokkos::deep_copy(d.stencil_edges, stencil_edges);
    d.edge_nodes = decltype(d.edge_nodes)("intact::solver::stencil_edge_nodes", edges.size());
    auto edge_nodes = Kokkos::create_mirror_view(d.edge_nodes);
    for (std::size_t k = 0; k < edges.size(); ++k) {
        edge_nodes(k, 0) = edges[k][0];
        edge_nodes(k, 1) = edges[k][1];
    }
    Kokkos::deep_copy(d.edge_nodes, edge_nodes);
    d.edge_block = decltype(d.edge_block)("intact::solver::stencil_edge_block", edges.size());
    d.pair_edges = decltype(d.pair_edges)("intact::solver::stencil_pair_edges", 0);

    // Colors of the element stencils, and the rest of the fields.
    d.color = decltype(d.color)("intact::solver::stencil_color", m_coloring.schemes, d.num_elements);
    auto color = Kokkos::create_mirror_view(d.color);
    for (int s = 0; s < m_coloring.schemes; ++s) {
        for (int e = 0; e < d.num_elements; ++e) {
            color(s, e) = m_coloring.of(s, e);
        }
    }
    Kokkos::deep_copy(d.color, color);
    const int rows = mesh.num_local_nodes();
    d.free = StencilData::RealView("intact::solver::stencil_free", rows);
    d.x = NodeField("intact::solver::stencil_x", rows);
    d.x_hat = NodeField("intact::solver::stencil_x_hat", rows);
    d.force = NodeField("intact::solver::stencil_force", rows);
    m_layout_scratch = NodeField("intact::solver::stencil_layout_scratch", rows);
    if (m_has_codim) {
        d.codim_sums = decltype(d.codim_sums)("intact::solver::stencil_codim_sums", rows);
    }
    d.gradient = NodeField("intact::solver::stencil_gradient", d.num_nodes);
    d.diagonal = decltype(d.diagonal)("intact::solver::stencil_diagonal", d.num_nodes);
    d.step_sum = NodeField("intact::solver::stencil_step_sum", d.num_owned);
    d.pair_offsets = StencilData::IntView("intact::solver::stencil_pair_offsets", d.num_nodes + 1);
    d.pair_entries = decltype(d.pair_entries)("intact::solver::stencil_pair_entries", 0);
    d.pair_nodes = decltype(d.pair_nodes)("intact::solver::stencil_pair_nodes", 0);
    d.pair_s_hat = StencilData::RealView("intact::solver::stencil_pair_s_hat", 0);
    d.pair_kappa = StencilData::RealView("intact::solver::stencil_pair_kappa", 0);
    d.pairs.kind = Kokkos::View<int*, MemSpace>("intact::solver::stencil_pair_kind", 0);
    d.pairs.rows =
        Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>("intact::solver::stencil_pair_rows", 0);
    d.pair_friction = StencilData::IntView("intact::solver::stencil_pair_friction", 0);
    d.num_pairs = 0;
    d.pairs.count = 0;
    d.pair_derivatives.resize(0, true);

    // Contact surface rows ↔ layout nodes, by global node id.
    if (m_contact) {
        const auto& surface = m_contact->surface();
        std::unordered_map<GlobalId, int> node_of;
        for (int n = 0; n < rows; ++n) {
            node_of[mesh.node_global_id[static_cast<std::size_t>(n)]] = n;
        }
        m_row_node.assign(static_cast<std::size_t>(surface.num_vertices()), -1);
        m_layout_gids.clear();
        m_layout_gids.insert(mesh.node_global_id.begin(), mesh.node_global_id.end());
        m_node_row = Kokkos::View<int*, MemSpace>("intact::solver::stencil_node_row", rows);
        auto node_row = Kokkos::create_mirror_view(m_node_row);
        Kokkos::deep_copy(node_row, -1);
        for (int r = 0; r < surface.num_body_vertices(); ++r) {
            const auto it = node_of.find(surface.vertex_gid()[static_cast<std::size_t>(r)]);
            if (it != node_of.end()) {
                m_row_node[static_cast<std::size_t>(r)] = it->second;
                node_row(it->second) = r;
            }
        }
        Kokkos::deep_copy(m_node_row, node_row);
    }
}

void StencilDescent::rebuild_layout(const std::vector<RemoteNode>& rings,
                                    const std::vector<RemoteNode>& points) {
    m_layout = build_stencil_layout(m_parts.comm, m_local, m_parts.scene.halo_transport, rings, points);
    release_static_data();
    build_elastic();
    build_static_data();
    if (m_problem) {
        load_state(m_x, *m_problem);
    }
}

void StencilDescent::to_layout(const NodeField& field, const NodeField& rows) {
    // The owned rows from `field`, every other layout row from its owner.
    const NodeField out = rows;
    Kokkos::parallel_for(
        "intact::solver::stencil_to_layout", Kokkos::RangePolicy<ExecSpace>(0, m_data.num_owned),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                out(v, i) = field(v, i);
            }
        });
    m_layout.halo->gather(out);
}

NodeField StencilDescent::on_layout(const NodeField& field) {
    to_layout(field, m_layout_scratch);
    return m_layout_scratch;
}

void StencilDescent::fill_surface(const NodeField& field,
                                  const contact::ConstSurfaceField& obstacles,
                                  const contact::SurfaceField& out) const {
    const auto node_row = m_node_row;
    Kokkos::parallel_for(
        "intact::solver::stencil_fill_surface",
        Kokkos::RangePolicy<ExecSpace>(0, static_cast<int>(node_row.extent(0))), KOKKOS_LAMBDA(const int n) {
            const int r = node_row(n);
            for (int i = 0; r >= 0 && i < 3; ++i) {
                out(r, i) = field(n, i);
            }
        });
    const auto& surface = m_contact->surface();
    const int first = surface.num_body_vertices();
    Kokkos::parallel_for(
        "intact::solver::stencil_fill_obstacles",
        Kokkos::RangePolicy<ExecSpace>(first, surface.num_vertices()), KOKKOS_LAMBDA(const int r) {
            for (int i = 0; i < 3; ++i) {
                out(r, i) = obstacles(r, i);
            }
        });
}

void StencilDescent::load_positions(const NodeField& x) {
    to_layout(x, m_data.x);
    if (m_contact) {
        fill_surface(m_data.x, m_parts.boundary.obstacle_positions(), m_xs);
    }
}

void StencilDescent::load_state(const NodeField& x, const StepProblem& problem) {
    // Owned rows from the solver's fields, every other layout row from its owner.
    const StencilData d = m_data;
    const NodeField x_hat = problem.x_hat;
    const NodeField force = problem.force;
    const auto free = m_parts.boundary.free_mask();
    const bool has_force = force.extent(0) > 0;
    Kokkos::parallel_for(
        "intact::solver::stencil_load_state", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            d.free(v) = free(v);
            for (int i = 0; i < 3; ++i) {
                d.x_hat(v, i) = x_hat(v, i);
                d.force(v, i) = has_force ? force(v, i) : 0.0;
            }
        });
    m_layout.halo->gather(d.x_hat);
    m_layout.halo->gather(d.force);
    m_layout.halo->gather(d.free);
    load_positions(x);
    m_data.h2c = problem.weight * problem.h * problem.h;
    for (int i = 0; i < 3; ++i) {
        m_data.gravity[i] = problem.gravity[static_cast<std::size_t>(i)];
    }
}

} // namespace intact::solver
