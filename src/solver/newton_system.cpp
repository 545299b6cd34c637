#include "src/solver/newton_system.hpp"

#include "src/core/error.hpp"

#include <algorithm>

namespace intact::solver {

NewtonSystem::NewtonSystem(IncrementalPotential& potential,
                           comm::HaloExchange& halo,
                           const std::string& preconditioner,
                           const std::vector<int>* node_body)
    : m_potential(potential),
      m_pcg(potential.num_owned(), potential.matrix().num_cols(), halo, potential.free_mask()),
      m_jacobi(potential.matrix(), potential.free_mask()), m_preconditioner(&m_jacobi) {
    INTACT_REQUIRE(std::find(preconditioner_names().begin(), preconditioner_names().end(), preconditioner) !=
                       preconditioner_names().end(),
                   "unknown preconditioner '" << preconditioner << "' (the scene reader checks this)");
    if (preconditioner == "decade_warm_start") {
        m_warm = std::make_unique<DecadeWarmStart>(potential, halo);
    }
    if (preconditioner == "rigid_coarse") {
        INTACT_REQUIRE(node_body, "rigid_coarse needs the body of every local node");
        int bodies = 0;
        for (const int b : *node_body) {
            bodies = std::max(bodies, b + 1);
        }
        INTACT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &bodies, 1, MPI_INT, MPI_MAX, halo.plan().comm()));
        m_coarse = std::make_unique<RigidCoarse>(potential, m_jacobi, *node_body, bodies, halo.plan().comm());
        m_preconditioner = m_coarse.get();
    }
}

LinearSolveResult NewtonSystem::solve(
    const NodeField& x, const NodeField& rhs, const NodeField& p, const PcgSettings& settings, double ch2) {
    const LinearOperator hessian = [this](const NodeField& x, const NodeField& y) {
        m_potential.apply(x, y);
    };
    LinearSolveResult result;
    PcgSettings global = settings;
    if (m_warm) {
        m_jacobi.setup();
        m_warm->setup(ch2);
        result.warm_start_iterations = m_warm->solve(m_jacobi, rhs, p);
        global.warm_start = true;
    }
    if (m_coarse) {
        m_coarse->set_positions(x);
    }
    result.pcg = m_pcg.solve(hessian, *m_preconditioner, rhs, p, global);
    m_last_residual = result.pcg.relative_residual;
    return result;
}

PcgResult
NewtonSystem::refine(const NodeField& rhs, const NodeField& p, const PcgSettings& settings, int extra) {
    const LinearOperator hessian = [this](const NodeField& x, const NodeField& y) {
        m_potential.apply(x, y);
    };
    PcgSettings more = settings;
    more.warm_start = true;
    more.stall_window = 0;
    more.max_iterations = extra;
    more.tolerance = std::min(settings.tolerance, 1e-2 * m_last_residual);
    const PcgResult result = m_pcg.solve(hessian, *m_preconditioner, rhs, p, more);
    m_last_residual = result.relative_residual;
    return result;
}

} // namespace intact::solver
