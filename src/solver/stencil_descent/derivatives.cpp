// K1 of a sweep: elasticity's sums per stencil vertex and edge (batch by batch in global element order),
// the barrier pairs' weighted derivatives, g_v and D_v per stencil vertex, and ‖g‖₂².

#include "src/solver/stencil_descent.hpp"

#include "comm/collectives.hpp"
#include "src/solver/stencil_descent/stencil_terms.hpp"

#include <algorithm>

namespace intact::solver {

using namespace stencil_detail;

void StencilDescent::elastic_derivatives(bool hessians) {
    const StencilData d = m_data;
    const int num_elements = static_cast<int>(d.element_order.extent(0));
    Kokkos::deep_copy(d.elastic_gradient, 0.0);
    if (hessians) {
        Kokkos::deep_copy(d.elastic_diagonal, 0.0);
        Kokkos::deep_copy(d.edge_block, 0.0);
    }
    for (int lo = 0; lo < num_elements; lo += d.batch) {
        const int hi = std::min(num_elements, lo + d.batch);
        // 1. The batch's elements, each into its slot.
        Kokkos::parallel_for(
            "intact::solver::stencil_batch_derivatives", Kokkos::RangePolicy<ExecSpace>(lo, hi),
            KOKKOS_LAMBDA(const int k) {
                const int e = d.element_order(k);
                KVec3 q[4];
                for (int a = 0; a < 4; ++a) {
                    q[a] = row3(d.x, d.tets(e, a));
                }
                Vec12 g;
                Mat12 H;
                element_derivatives(d, e, q, g, hessians ? &H : nullptr);
                for (int i = 0; i < 12; ++i) {
                    d.batch_gradient(k - lo, i) = g(i);
                    if (hessians) {
                        for (int j = i; j < 12; ++j) {
                            d.batch_hessian(k - lo, packed_upper(i, j)) = H(i, j);
                        }
                    }
                }
            });
        // 2. Per stencil vertex, its elements of the batch in global id order (its entries' order).
        Kokkos::parallel_for(
            "intact::solver::stencil_vertex_sums", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
            KOKKOS_LAMBDA(const int v) {
                for (int k = d.element_offsets(v); k < d.element_offsets(v + 1); ++k) {
                    const int slot = d.element_position(d.entry_element(k)) - lo;
                    if (slot < 0) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    const int s = d.entry_corner(k);
                    for (int i = 0; i < 3; ++i) {
                        d.elastic_gradient(v, i) += d.batch_gradient(slot, 3 * s + i);
                        if (hessians) {
                            for (int j = 0; j < 3; ++j) {
                                d.elastic_diagonal(v, i, j) +=
                                    d.batch_hessian(slot, packed_upper(3 * s + i, 3 * s + j));
                            }
                        }
                    }
                }
            });
        if (!hessians) {
            continue;
        }
        // 3. Per edge (u, w), the batch's elements around u that contain w, in global id order.
        Kokkos::parallel_for(
            "intact::solver::stencil_edge_sums", Kokkos::RangePolicy<ExecSpace>(0, d.edge_nodes.extent(0)),
            KOKKOS_LAMBDA(const int edge) {
                const int u = d.edge_nodes(edge, 0);
                const int w = d.edge_nodes(edge, 1);
                for (int k = d.element_offsets(u); k < d.element_offsets(u + 1); ++k) {
                    const int e = d.entry_element(k);
                    const int slot = d.element_position(e) - lo;
                    if (slot < 0) {
                        continue;
                    }
                    if (slot >= hi - lo) {
                        break;
                    }
                    const int su = d.entry_corner(k);
                    for (int sw = 0; sw < 4; ++sw) {
                        if (d.tets(e, sw) != w) {
                            continue;
                        }
                        for (int i = 0; i < 3; ++i) {
                            for (int j = 0; j < 3; ++j) {
                                d.edge_block(edge, i, j) +=
                                    d.batch_hessian(slot, packed_upper(3 * su + i, 3 * sw + j));
                            }
                        }
                    }
                }
            });
    }
    codim_derivatives(hessians);
}

void StencilDescent::codim_derivatives(bool hessians) {
    if (!m_has_codim) {
        return;
    }
    CodimTerm& codim = m_parts.potential.codim();
    if (m_data.num_codim > 0) {
        codim.evaluate(m_data.x, hessians); // the layout's first rows are the LocalMesh's
        m_data.codim_gradient = codim.gradients();
        if (hessians) {
            m_data.codim_hessian = codim.hessians();
        }
    }
    // 1. Per owned vertex, its stencils' gradient and diagonal block, in its entries' order.
    const StencilData d = m_data;
    const auto sums = d.codim_sums;
    Kokkos::parallel_for(
        "intact::solver::stencil_codim_vertex_sums", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v) {
            double row[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
            for (int k = d.codim_offsets(v); k < d.codim_offsets(v + 1); ++k) {
                const int c = d.codim_entries(k, 0);
                const int s = d.codim_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    row[i] += d.codim_gradient(c, 3 * s + i);
                    for (int j = 0; hessians && j < 3; ++j) {
                        row[3 + 3 * i + j] += d.codim_hessian(c, 3 * s + i, 3 * s + j);
                    }
                }
            }
            for (int i = 0; i < 12; ++i) {
                sums(v, i) = row[i];
            }
        });
    // 2. Every other layout row from its owner, then into elasticity's sums.
    m_layout.halo->gather(sums);
    Kokkos::parallel_for(
        "intact::solver::stencil_codim_add", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
        KOKKOS_LAMBDA(const int v) {
            for (int i = 0; i < 3; ++i) {
                d.elastic_gradient(v, i) += sums(v, i);
                for (int j = 0; hessians && j < 3; ++j) {
                    d.elastic_diagonal(v, i, j) += sums(v, 3 + 3 * i + j);
                }
            }
        });
}

void StencilDescent::vertex_derivatives() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_vertex_derivatives", Kokkos::RangePolicy<ExecSpace>(0, d.num_nodes),
        KOKKOS_LAMBDA(const int v) {
            // g_v = m (x − x̂) − c h² (m g + f) + c h² Σ_e ∇_v(V ψ) + Σ_i κ_i ∇_v b_i; D_v likewise.
            double g[3];
            double D[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
            for (int i = 0; i < 3; ++i) {
                g[i] = d.mass(v) * (d.x(v, i) - d.x_hat(v, i)) -
                       d.h2c * (d.mass(v) * d.gravity[i] + d.force(v, i));
                D[i][i] = d.mass(v);
            }
            for (int i = 0; i < 3; ++i) {
                g[i] += d.elastic * d.h2c * d.elastic_gradient(v, i);
                for (int j = 0; j < 3; ++j) {
                    D[i][j] += d.elastic * d.h2c * d.elastic_diagonal(v, i, j);
                }
            }
            for (int k = d.pair_offsets(v); k < d.pair_offsets(v + 1); ++k) {
                const int p = d.pair_entries(k, 0);
                const int s = d.pair_entries(k, 1);
                for (int i = 0; i < 3; ++i) {
                    g[i] += d.pair_derivatives.gradient(p, 3 * s + i);
                    for (int j = 0; j < 3; ++j) {
                        D[i][j] += d.pair_derivatives.hessian(p, 3 * s + i, 3 * s + j);
                    }
                }
            }
            for (int i = 0; i < 3; ++i) {
                d.gradient(v, i) = d.free(v) * g[i];
                for (int j = 0; j < 3; ++j) {
                    d.diagonal(v, i, j) = D[i][j];
                }
            }
        });
}

void StencilDescent::pair_derivatives() {
    const StencilData d = m_data;
    Kokkos::parallel_for(
        "intact::solver::stencil_pair_derivatives", Kokkos::RangePolicy<ExecSpace>(0, d.num_pairs),
        KOKKOS_LAMBDA(const int p) {
            const int rows[4] = {d.pairs.rows(p, 0), d.pairs.rows(p, 1), d.pairs.rows(p, 2),
                                 d.pairs.rows(p, 3)};
            KVec3 x[4];
            contact::pair_positions(d.pairs.kind(p), rows, d.xs, x);
            Vec12 g;
            Mat12 H;
            pair_term(d, p, x, contact::k_hessian, g, H);
            for (int i = 0; i < 12; ++i) {
                d.pair_derivatives.gradient(p, i) = g(i);
                for (int j = 0; j < 12; ++j) {
                    d.pair_derivatives.hessian(p, i, j) = H(i, j);
                }
            }
        });
}

double StencilDescent::gradient_norm_squared() const {
    const StencilData d = m_data;
    double sum = 0.0;
    Kokkos::parallel_reduce(
        "intact::solver::stencil_gradient_norm", Kokkos::RangePolicy<ExecSpace>(0, d.num_owned),
        KOKKOS_LAMBDA(const int v, double& total) {
            for (int i = 0; i < 3; ++i) {
                total += d.free(v) * d.gradient(v, i) * d.gradient(v, i);
            }
        },
        sum);
    return comm::allreduce_sum(m_parts.comm, sum);
}

} // namespace intact::solver
