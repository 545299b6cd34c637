#include "src/solver/rigid_coarse.hpp"

#include "comm/collectives.hpp"
#include "src/core/error.hpp"
#include "src/core/grow.hpp"

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace intact::solver {

namespace {

constexpr int k_modes = 6;

// A node's rows of R (before its free mask) are [I | C] with C ω = ω × arm: the columns of C are
// e_k × arm, so Cᵀ v = arm × v.
KOKKOS_INLINE_FUNCTION void rotation_rows(const double arm[3], double C[3][3]) {
    C[0][0] = 0.0;
    C[0][1] = arm[2];
    C[0][2] = -arm[1];
    C[1][0] = -arm[2];
    C[1][1] = 0.0;
    C[1][2] = arm[0];
    C[2][0] = arm[1];
    C[2][1] = -arm[0];
    C[2][2] = 0.0;
}

// S(3 × 6) += weight [B | B C_j] = weight B R_j for the 3 × 3 block B (`block(a, b)`).
template <class Block>
KOKKOS_INLINE_FUNCTION void
add_block_times_modes(const Block& block, const double arm_j[3], double weight, double S[3][6]) {
    double C[3][3];
    rotation_rows(arm_j, C);
    for (int a = 0; a < 3; ++a) {
        const double b0 = weight * block(a, 0), b1 = weight * block(a, 1), b2 = weight * block(a, 2);
        S[a][0] += b0;
        S[a][1] += b1;
        S[a][2] += b2;
        for (int k = 0; k < 3; ++k) {
            S[a][3 + k] += b0 * C[0][k] + b1 * C[1][k] + b2 * C[2][k];
        }
    }
}

// out(6 × 6, row-major) += R_iᵀ S = [S ; C_iᵀ S].
KOKKOS_INLINE_FUNCTION void add_modes_times(const double arm_i[3], const double S[3][6], double* out) {
    double C[3][3];
    rotation_rows(arm_i, C);
    for (int q = 0; q < 6; ++q) {
        for (int a = 0; a < 3; ++a) {
            out[a * 6 + q] += S[a][q];
        }
        for (int k = 0; k < 3; ++k) {
            out[(3 + k) * 6 + q] += C[0][k] * S[0][q] + C[1][k] * S[1][q] + C[2][k] * S[2][q];
        }
    }
}

} // namespace

struct RigidCoarse::Factor {
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>, Eigen::Lower> ldlt;
    bool ok = false;
};

RigidCoarse::RigidCoarse(IncrementalPotential& potential,
                         BlockJacobi& jacobi,
                         const std::vector<int>& node_body,
                         int num_bodies,
                         MPI_Comm comm)
    : m_potential(potential), m_jacobi(jacobi), m_comm(comm), m_num_bodies(num_bodies),
      m_num_owned(potential.num_owned()), m_body("intact::solver::coarse_node_body", node_body.size()),
      m_arm("intact::solver::coarse_arm", node_body.size()),
      m_mask3("intact::solver::coarse_mask", node_body.size()),
      m_center(3 * static_cast<std::size_t>(num_bodies), 0.0),
      m_radius(static_cast<std::size_t>(num_bodies), 1.0),
      m_coefficients("intact::solver::coarse_coefficients", k_modes * static_cast<std::size_t>(num_bodies)),
      m_factor(std::make_unique<Factor>()) {
    INTACT_CHECK_MPI(MPI_Comm_rank(comm, &m_rank));
    INTACT_REQUIRE(static_cast<int>(node_body.size()) == potential.num_local(),
                   "rigid_coarse: one body index per local node");
    // Owned nodes grouped by body (ascending local index within a body), cut into chunks of at most
    // k_chunk nodes of one body.
    std::vector<std::vector<int>> members(static_cast<std::size_t>(num_bodies));
    for (int i = 0; i < m_num_owned; ++i) {
        INTACT_REQUIRE(node_body[i] >= 0 && node_body[i] < num_bodies,
                       "rigid_coarse: body index out of range");
        members[static_cast<std::size_t>(node_body[i])].push_back(i);
    }
    std::vector<int> offsets{0}, nodes;
    for (int b = 0; b < num_bodies; ++b) {
        const auto& list = members[static_cast<std::size_t>(b)];
        for (std::size_t start = 0; start < list.size(); start += k_chunk) {
            const std::size_t end = std::min(list.size(), start + k_chunk);
            nodes.insert(nodes.end(), list.begin() + static_cast<long>(start),
                         list.begin() + static_cast<long>(end));
            offsets.push_back(static_cast<int>(nodes.size()));
            m_chunk_body.push_back(b);
        }
    }
    m_chunk_offsets = Kokkos::View<int*, MemSpace>("intact::solver::coarse_chunk_offsets", offsets.size());
    m_chunk_nodes = Kokkos::View<int*, MemSpace>("intact::solver::coarse_chunk_nodes", nodes.size());
    m_partial = Blocks("intact::solver::coarse_partial", m_chunk_body.size());
    m_partial_host = Kokkos::create_mirror_view(m_partial);
    m_narrow = Narrow("intact::solver::coarse_narrow", m_chunk_body.size());
    m_narrow_host = Kokkos::create_mirror_view(m_narrow);
    Kokkos::deep_copy(m_chunk_offsets,
                      Kokkos::View<const int*, Kokkos::HostSpace>(offsets.data(), offsets.size()));
    Kokkos::deep_copy(m_chunk_nodes, Kokkos::View<const int*, Kokkos::HostSpace>(nodes.data(), nodes.size()));
    Kokkos::deep_copy(m_body,
                      Kokkos::View<const int*, Kokkos::HostSpace>(node_body.data(), node_body.size()));
}

RigidCoarse::~RigidCoarse() = default;

void RigidCoarse::fill_mask() {
    const auto mask = m_potential.free_mask();
    const auto mask3 = m_mask3;
    Kokkos::parallel_for(
        "intact::solver::coarse_mask", Kokkos::RangePolicy<ExecSpace>(0, m_potential.num_local()),
        KOKKOS_LAMBDA(const int i) {
            for (int c = 0; c < 3; ++c) {
                mask3(i, c) = mask(i);
            }
        });
}

void RigidCoarse::sum_chunks(int width, std::vector<double>& per_body) const {
    const bool narrow = width <= 6;
    if (narrow) {
        Kokkos::deep_copy(m_narrow_host, m_narrow);
    } else {
        Kokkos::deep_copy(m_partial_host, m_partial);
    }
    per_body.assign(static_cast<std::size_t>(width) * m_num_bodies, 0.0);
    for (std::size_t chunk = 0; chunk < m_chunk_body.size(); ++chunk) {
        double* out = per_body.data() + static_cast<std::size_t>(width) * m_chunk_body[chunk];
        for (int k = 0; k < width; ++k) {
            out[k] += narrow ? m_narrow_host(chunk, k) : m_partial_host(chunk, k);
        }
    }
}

void RigidCoarse::body_frames() {
    // Per body: Σ x, Σ |x|² and the count over owned nodes, then over ranks.
    const auto x = m_positions;
    const auto offsets = m_chunk_offsets;
    const auto nodes = m_chunk_nodes;
    const auto partial = m_narrow;
    Kokkos::parallel_for(
        "intact::solver::coarse_frames", Kokkos::RangePolicy<ExecSpace>(0, m_chunk_body.size()),
        KOKKOS_LAMBDA(const int chunk) {
            double sum[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
            for (int k = offsets(chunk); k < offsets(chunk + 1); ++k) {
                const int i = nodes(k);
                for (int c = 0; c < 3; ++c) {
                    sum[c] += x(i, c);
                    sum[3] += x(i, c) * x(i, c);
                }
                sum[4] += 1.0;
            }
            for (int k = 0; k < 5; ++k) {
                partial(chunk, k) = sum[k];
            }
        });
    std::vector<double> sums;
    sum_chunks(5, sums);
    INTACT_CHECK_MPI(
        MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, m_comm));
    for (int b = 0; b < m_num_bodies; ++b) {
        const double* s = sums.data() + 5 * b;
        const double n = std::max(s[4], 1.0);
        double spread = s[3] / n;
        for (int c = 0; c < 3; ++c) {
            m_center[3 * b + c] = s[c] / n;
            spread -= m_center[3 * b + c] * m_center[3 * b + c];
        }
        // The radius of gyration only scales the rotation columns; guard a one-node body.
        m_radius[b] = spread > 0.0 ? std::sqrt(spread) : 1.0;
    }
}

void RigidCoarse::fill_arms() {
    std::vector<double> frame(4 * static_cast<std::size_t>(m_num_bodies));
    for (int b = 0; b < m_num_bodies; ++b) {
        for (int c = 0; c < 3; ++c) {
            frame[4 * b + c] = m_center[3 * b + c];
        }
        frame[4 * b + 3] = 1.0 / m_radius[b];
    }
    Kokkos::View<double*, MemSpace> frames("intact::solver::coarse_frames", frame.size());
    Kokkos::deep_copy(frames, Kokkos::View<const double*, Kokkos::HostSpace>(frame.data(), frame.size()));
    const auto x = m_positions;
    const auto body = m_body;
    const auto arm = m_arm;
    Kokkos::parallel_for(
        "intact::solver::coarse_arms", Kokkos::RangePolicy<ExecSpace>(0, m_arm.extent(0)),
        KOKKOS_LAMBDA(const int i) {
            const int b = body(i);
            for (int c = 0; c < 3; ++c) {
                arm(i, c) = (x(i, c) - frames(4 * b + c)) * frames(4 * b + 3);
            }
        });
}

void RigidCoarse::element_blocks() {
    // Per owned node i: Σ over its matrix row's blocks (i, j) of m_i m_j R_iᵀ H_ij R_j; every such j is
    // in i's body (elements do not cross bodies), and the row's diagonal block holds the contact
    // diagonal blocks too.
    const BlockMatrix& matrix = m_potential.matrix();
    const auto row_offsets = matrix.row_offsets();
    const auto cols = matrix.cols();
    const auto values = matrix.values();
    const auto mask = m_potential.free_mask();
    const auto arm = m_arm;
    const auto offsets = m_chunk_offsets;
    const auto nodes = m_chunk_nodes;
    const auto partial = m_partial;
    Kokkos::parallel_for(
        "intact::solver::coarse_element_blocks", Kokkos::RangePolicy<ExecSpace>(0, m_chunk_body.size()),
        KOKKOS_LAMBDA(const int chunk) {
            double sum[k_block];
            for (int k = 0; k < k_block; ++k) {
                sum[k] = 0.0;
            }
            for (int k = offsets(chunk); k < offsets(chunk + 1); ++k) {
                const int i = nodes(k);
                if (mask(i) == 0.0) {
                    continue;
                }
                double S[3][6] = {{0.0}};
                for (int e = row_offsets(i); e < row_offsets(i + 1); ++e) {
                    const int j = cols(e);
                    const double arm_j[3] = {arm(j, 0), arm(j, 1), arm(j, 2)};
                    const auto block = [&](int a, int b) { return values(e, a, b); };
                    add_block_times_modes(block, arm_j, mask(j), S);
                }
                const double arm_i[3] = {arm(i, 0), arm(i, 1), arm(i, 2)};
                add_modes_times(arm_i, S, sum);
            }
            for (int k = 0; k < k_block; ++k) {
                partial(chunk, k) = sum[k];
            }
        });
    sum_chunks(k_block, m_diagonal);
}

void RigidCoarse::contact_blocks(std::map<std::pair<int, int>, std::vector<double>>& couplings) const {
    // Every kept contact block (owned slot row r, surface column c on a body) projected to
    // m_r m_c R_rᵀ B R_c, then summed per body pair on the host in block order.
    const contact::ContactMatrix& matrix = m_potential.contact_matrix();
    const int num_blocks = matrix.num_blocks();
    if (num_blocks == 0) {
        return;
    }
    const auto slot_rows = matrix.slot_rows();
    const auto block_offsets = matrix.block_offsets();
    const auto block_cols = matrix.block_cols();
    const auto block_values = matrix.block_values();
    const auto mask = m_potential.free_mask();
    const auto arm = m_arm;
    const auto body = m_body;
    const auto surface_arm = m_surface_arm;
    const auto surface_mask = m_surface_mask;
    const auto surface_body = m_surface_body;
    grow(m_projected, num_blocks, "intact::solver::coarse_contact");
    grow(m_keys, num_blocks, "intact::solver::coarse_contact_keys");
    const auto projected = m_projected;
    const auto keys = m_keys;
    Kokkos::parallel_for(
        "intact::solver::coarse_contact_blocks", Kokkos::RangePolicy<ExecSpace>(0, matrix.num_slots()),
        KOKKOS_LAMBDA(const int s) {
            const int r = slot_rows(s);
            const double arm_r[3] = {arm(r, 0), arm(r, 1), arm(r, 2)};
            for (int k = block_offsets(s); k < block_offsets(s + 1); ++k) {
                const int c = block_cols(k);
                const int d = surface_body(c);
                const double weight = d < 0 ? 0.0 : mask(r) * surface_mask(c, 0);
                keys(k, 0) = body(r);
                keys(k, 1) = weight == 0.0 ? -1 : d;
                double sum[k_block];
                for (int q = 0; q < k_block; ++q) {
                    sum[q] = 0.0;
                }
                if (weight != 0.0) {
                    const double arm_c[3] = {surface_arm(c, 0), surface_arm(c, 1), surface_arm(c, 2)};
                    const auto block = [&](int a, int b) { return block_values(k, a, b); };
                    double S[3][6] = {{0.0}};
                    add_block_times_modes(block, arm_c, weight, S);
                    add_modes_times(arm_r, S, sum);
                }
                for (int q = 0; q < k_block; ++q) {
                    projected(k, q) = sum[q];
                }
            }
        });
    const auto host_values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), projected);
    const auto host_keys = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), keys);
    for (int k = 0; k < num_blocks; ++k) {
        if (host_keys(k, 1) < 0) {
            continue;
        }
        auto& out = couplings[{host_keys(k, 0), host_keys(k, 1)}];
        out.resize(k_block, 0.0);
        for (int q = 0; q < k_block; ++q) {
            out[static_cast<std::size_t>(q)] += host_values(k, q);
        }
    }
}

void RigidCoarse::setup() {
    INTACT_REQUIRE(static_cast<int>(m_positions.extent(0)) >= m_potential.num_local(),
                   "rigid_coarse: set_positions (every local row) before setup");
    m_jacobi.setup();
    fill_mask(); // a moving box's rows are freed when its motion ends (BoundaryMotion::release)
    body_frames();
    fill_arms();
    element_blocks();
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, m_diagonal.data(), static_cast<int>(m_diagonal.size()),
                                   MPI_DOUBLE, MPI_SUM, m_comm));

    // Contact couplings between bodies (and within one, from its off-diagonal contact blocks).
    m_couplings.clear();
    contact::ContactModel* contact = m_potential.contact();
    const bool with_contact = contact && !m_potential.terms().empty();
    if (with_contact) {
        // Made here: methods build their NewtonSystem before they give the potential its contact model.
        if (m_surface_arm.extent(0) == 0) {
            m_surface_arm = contact->surface().make_field("intact::solver::coarse_surface_arm");
            m_surface_mask = contact->surface().make_field("intact::solver::coarse_surface_mask");
            m_obstacle_zero = contact->surface().make_field("intact::solver::coarse_obstacle_zero");
            const std::vector<int>& rows = contact->surface().vertex_body();
            std::vector<int> body(rows.size());
            for (std::size_t s = 0; s < rows.size(); ++s) {
                body[s] = contact->surface().is_obstacle(static_cast<int>(s)) ? -1 : rows[s];
            }
            m_surface_body = Kokkos::View<int*, MemSpace>("intact::solver::coarse_surface_body", body.size());
            Kokkos::deep_copy(m_surface_body,
                              Kokkos::View<const int*, Kokkos::HostSpace>(body.data(), body.size()));
        }
        contact->fill(m_arm, m_obstacle_zero, m_surface_arm);
        contact->fill(m_mask3, m_obstacle_zero, m_surface_mask);
        std::map<std::pair<int, int>, std::vector<double>> local;
        contact_blocks(local);
        // Every rank's couplings to every rank, summed in rank order, then key order.
        std::vector<double> packed;
        for (const auto& [key, block] : local) {
            packed.push_back(key.first);
            packed.push_back(key.second);
            packed.insert(packed.end(), block.begin(), block.end());
        }
        int size = 0;
        INTACT_CHECK_MPI(MPI_Comm_size(m_comm, &size));
        const int count = static_cast<int>(packed.size());
        std::vector<int> counts(static_cast<std::size_t>(size)),
            displacements(static_cast<std::size_t>(size), 0);
        INTACT_CHECK_MPI(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, m_comm));
        for (int k = 1; k < size; ++k) {
            displacements[static_cast<std::size_t>(k)] =
                displacements[static_cast<std::size_t>(k - 1)] + counts[static_cast<std::size_t>(k - 1)];
        }
        std::vector<double> all(static_cast<std::size_t>(displacements.back() + counts.back()));
        INTACT_CHECK_MPI(MPI_Allgatherv(packed.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                                        displacements.data(), MPI_DOUBLE, m_comm));
        for (std::size_t k = 0; k + 2 + k_block <= all.size(); k += 2 + k_block) {
            auto& out = m_couplings[{static_cast<int>(all[k]), static_cast<int>(all[k + 1])}];
            out.resize(k_block, 0.0);
            for (int q = 0; q < k_block; ++q) {
                out[static_cast<std::size_t>(q)] += all[k + 2 + static_cast<std::size_t>(q)];
            }
        }
    }

    // The shifted A_c (lower triangle), factored.
    const int n = k_modes * m_num_bodies;
    std::vector<Eigen::Triplet<double>> triplets;
    std::vector<double> diagonal(static_cast<std::size_t>(n), 0.0);
    const auto add_block = [&](int b, int d, const double* block) {
        for (int p = 0; p < k_modes; ++p) {
            for (int q = 0; q < k_modes; ++q) {
                const int row = k_modes * b + p, col = k_modes * d + q;
                if (row == col) {
                    diagonal[static_cast<std::size_t>(row)] += block[p * k_modes + q];
                } else if (row > col) {
                    triplets.emplace_back(row, col, block[p * k_modes + q]);
                }
            }
        }
    };
    for (int b = 0; b < m_num_bodies; ++b) {
        add_block(b, b, m_diagonal.data() + static_cast<std::size_t>(k_block) * b);
    }
    for (const auto& [key, block] : m_couplings) {
        add_block(key.first, key.second, block.data());
    }
    for (int k = 0; k < n; ++k) {
        const double a = diagonal[static_cast<std::size_t>(k)];
        // A body with no free node has zero columns: a unit diagonal keeps A_c regular (Rᵀ r is 0 there).
        triplets.emplace_back(k, k, std::isfinite(a) && a > 0.0 ? a * (1.0 + k_shift) : 1.0);
    }
    Eigen::SparseMatrix<double> coarse(n, n);
    coarse.setFromTriplets(triplets.begin(), triplets.end());
    m_factor->ldlt.compute(coarse);
    // PCG needs an SPD preconditioner: every pivot positive (SimplicialLDLT fails only on a zero one).
    // The matrix is the same on every rank; the MIN keeps the ranks' decision one even so.
    int ok = m_factor->ldlt.info() == Eigen::Success && m_factor->ldlt.vectorD().minCoeff() > 0.0 ? 1 : 0;
    INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, m_comm));
    m_factor->ok = ok == 1;
    if (!m_factor->ok && !m_warned) {
        m_warned = true;
        if (m_rank == 0) {
            std::fprintf(stderr, "warning: rigid_coarse: the coarse matrix did not factor with positive "
                                 "pivots; this solve runs "
                                 "block Jacobi alone\n");
        }
    }
}

void RigidCoarse::restrict_chunks(const NodeField& v) const {
    const auto mask = m_potential.free_mask();
    const auto arm = m_arm;
    const auto offsets = m_chunk_offsets;
    const auto nodes = m_chunk_nodes;
    const auto partial = m_narrow;
    Kokkos::parallel_for(
        "intact::solver::coarse_restrict", Kokkos::RangePolicy<ExecSpace>(0, m_chunk_body.size()),
        KOKKOS_LAMBDA(const int chunk) {
            double sum[k_modes] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
            for (int k = offsets(chunk); k < offsets(chunk + 1); ++k) {
                const int i = nodes(k);
                // R_iᵀ v_i = m_i [v_i ; arm_i × v_i]
                const double m = mask(i);
                const double a0 = arm(i, 0), a1 = arm(i, 1), a2 = arm(i, 2);
                const double v0 = m * v(i, 0), v1 = m * v(i, 1), v2 = m * v(i, 2);
                sum[0] += v0;
                sum[1] += v1;
                sum[2] += v2;
                sum[3] += a1 * v2 - a2 * v1;
                sum[4] += a2 * v0 - a0 * v2;
                sum[5] += a0 * v1 - a1 * v0;
            }
            for (int q = 0; q < k_modes; ++q) {
                partial(chunk, q) = sum[q];
            }
        });
}

std::vector<double> RigidCoarse::restrict_field(const NodeField& v) const {
    restrict_chunks(v);
    std::vector<double> out;
    sum_chunks(k_modes, out);
    INTACT_CHECK_MPI(
        MPI_Allreduce(MPI_IN_PLACE, out.data(), static_cast<int>(out.size()), MPI_DOUBLE, MPI_SUM, m_comm));
    return out;
}

void RigidCoarse::add_prolongation(const NodeField& out) const {
    const auto mask = m_potential.free_mask();
    const auto arm = m_arm;
    const auto body = m_body;
    const auto coefficients = m_coefficients;
    Kokkos::parallel_for(
        "intact::solver::coarse_prolong", Kokkos::RangePolicy<ExecSpace>(0, m_num_owned),
        KOKKOS_LAMBDA(const int i) {
            // R_i c = m_i (t + ω × arm_i), c = (t, ω) of the node's body
            const int b = k_modes * body(i);
            const double a0 = arm(i, 0), a1 = arm(i, 1), a2 = arm(i, 2);
            const double w0 = coefficients(b + 3), w1 = coefficients(b + 4), w2 = coefficients(b + 5);
            const double m = mask(i);
            out(i, 0) += m * (coefficients(b) + w1 * a2 - w2 * a1);
            out(i, 1) += m * (coefficients(b + 1) + w2 * a0 - w0 * a2);
            out(i, 2) += m * (coefficients(b + 2) + w0 * a1 - w1 * a0);
        });
}

void RigidCoarse::prolong(const std::vector<double>& c, const NodeField& out) const {
    INTACT_REQUIRE(c.size() == m_coefficients.extent(0), "rigid_coarse: 6 coefficients per body");
    Kokkos::deep_copy(m_coefficients, Kokkos::View<const double*, Kokkos::HostSpace>(c.data(), c.size()));
    Kokkos::deep_copy(Kokkos::subview(out, std::make_pair(0, m_num_owned), Kokkos::ALL), 0.0);
    add_prolongation(out);
}

double RigidCoarse::add_correction(const NodeField& r, const NodeField& z) const {
    const std::vector<double> restricted = restrict_field(r);
    const Eigen::Map<const Eigen::VectorXd> rhs(restricted.data(), static_cast<long>(restricted.size()));
    const Eigen::VectorXd solution = m_factor->ldlt.solve(rhs);
    Kokkos::deep_copy(m_coefficients,
                      Kokkos::View<const double*, Kokkos::HostSpace>(solution.data(), solution.size()));
    add_prolongation(z);
    return rhs.dot(solution);
}

void RigidCoarse::apply(const NodeField& r, const NodeField& z) const {
    m_jacobi.apply(r, z);
    if (m_factor->ok) {
        add_correction(r, z);
    }
}

std::pair<double, double> RigidCoarse::update_residual(
    double alpha, const NodeField& q, const NodeField& r, const NodeField& z, int n) const {
    auto [rr, rz] = m_jacobi.update_residual(alpha, q, r, z, n);
    if (m_factor->ok) {
        const double coarse = add_correction(r, z);
        rz += m_rank == 0 ? coarse : 0.0;
    }
    return {rr, rz};
}

bool RigidCoarse::factored() const {
    return m_factor->ok;
}

std::vector<double> RigidCoarse::coarse_matrix() const {
    const int n = k_modes * m_num_bodies;
    std::vector<double> dense(static_cast<std::size_t>(n) * n, 0.0);
    const auto add_block = [&](int b, int d, const double* block) {
        for (int p = 0; p < k_modes; ++p) {
            for (int q = 0; q < k_modes; ++q) {
                dense[static_cast<std::size_t>(k_modes * b + p) * n + k_modes * d + q] +=
                    block[p * k_modes + q];
            }
        }
    };
    for (int b = 0; b < m_num_bodies; ++b) {
        add_block(b, b, m_diagonal.data() + static_cast<std::size_t>(k_block) * b);
    }
    for (const auto& [key, block] : m_couplings) {
        add_block(key.first, key.second, block.data());
    }
    return dense;
}

} // namespace intact::solver
