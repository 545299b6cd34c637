#pragma once
/// @file newton_system.hpp
/// @brief The linear solve of a Newton iteration, H p = rhs on the free owned rows, for every Newton-type
/// method: distributed PCG (pcg.hpp) as `solver.preconditioner` picks: block Jacobi from zero
/// (`block_jacobi`), block Jacobi from the stiffness-decade warm start (`decade_warm_start`,
/// decade_warm_start.hpp), or block Jacobi plus a coarse correction on every body's rigid modes
/// (`rigid_coarse`, rigid_coarse.hpp).

#include "src/solver/decade_warm_start.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/pcg.hpp"
#include "src/solver/rigid_coarse.hpp"

#include <memory>
#include <string>

namespace intact::solver {

/// Names accepted by `solver.preconditioner`.
inline const std::vector<std::string>& preconditioner_names() {
    static const std::vector<std::string> names{"block_jacobi", "decade_warm_start", "rigid_coarse"};
    return names;
}

struct LinearSolveResult {
    PcgResult pcg;
    int warm_start_iterations = 0; ///< iterations of the group CG (0 without the warm start)
};

class NewtonSystem {
public:
    /// `preconditioner`: one of preconditioner_names(); `rigid_coarse` needs `node_body` (the LocalMesh's
    /// body index per local node). Collective.
    NewtonSystem(IncrementalPotential& potential,
                 comm::HaloExchange& halo,
                 const std::string& preconditioner,
                 const std::vector<int>* node_body = nullptr);

    /// Solve H p = rhs with the potential's last assembly, made at positions x (ghost rows current; its
    /// elastic weight c h² = `ch2`). Ghost rows of p current on return. Collective.
    LinearSolveResult solve(const NodeField& x,
                            const NodeField& rhs,
                            const NodeField& p,
                            const PcgSettings& settings,
                            double ch2);
    /// Continue from the p of the last solve with at most `extra` more PCG iterations (warm restart,
    /// stall window off), stopping at 1e-2 of the relative residual it starts from. Collective.
    PcgResult refine(const NodeField& rhs, const NodeField& p, const PcgSettings& settings, int extra);

private:
    IncrementalPotential& m_potential;
    Pcg m_pcg;
    BlockJacobi m_jacobi;
    std::unique_ptr<DecadeWarmStart> m_warm;
    std::unique_ptr<RigidCoarse> m_coarse;
    Preconditioner* m_preconditioner; ///< m_jacobi, or m_coarse
    double m_last_residual = 1.0;
};

} // namespace intact::solver
