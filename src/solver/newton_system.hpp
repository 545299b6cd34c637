#pragma once
/// @file newton_system.hpp
/// @brief The linear solve of a Newton iteration, H p = rhs on the free owned rows, for every Newton-type
/// method: distributed block-Jacobi PCG (pcg.hpp), started from zero (`block_jacobi`) or from the
/// stiffness-decade warm start (`decade_warm_start`, decade_warm_start.hpp), as `solver.preconditioner`
/// picks.

#include "src/solver/decade_warm_start.hpp"
#include "src/solver/incremental_potential.hpp"
#include "src/solver/pcg.hpp"

#include <memory>
#include <string>

namespace intact::solver {

/// Names accepted by `solver.preconditioner`.
inline const std::vector<std::string>& preconditioner_names() {
    static const std::vector<std::string> names{"block_jacobi", "decade_warm_start"};
    return names;
}

struct LinearSolveResult {
    PcgResult pcg;
    int warm_start_iterations = 0; ///< iterations of the group CG (0 without the warm start)
};

class NewtonSystem {
public:
    /// `preconditioner`: one of preconditioner_names().
    NewtonSystem(IncrementalPotential& potential,
                 comm::HaloExchange& halo,
                 const std::string& preconditioner);

    /// Solve H p = rhs with the potential's last assembly (its elastic weight c h² = `ch2`). Ghost rows of
    /// p current on return. Collective.
    LinearSolveResult
    solve(const NodeField& rhs, const NodeField& p, const PcgSettings& settings, double ch2);
    /// Continue from the p of the last solve with at most `extra` more PCG iterations (warm restart,
    /// stall window off), stopping at 1e-2 of the relative residual it starts from. Collective.
    PcgResult refine(const NodeField& rhs, const NodeField& p, const PcgSettings& settings, int extra);

private:
    IncrementalPotential& m_potential;
    Pcg m_pcg;
    BlockJacobi m_jacobi;
    std::unique_ptr<DecadeWarmStart> m_warm;
    double m_last_residual = 1.0;
};

} // namespace intact::solver
