#pragma once
/// @file constraint_set.hpp
/// @brief Contact constraints with per-pair state that a method keeps from one update to the next (the
/// augmented-Lagrangian multiplier λ, decay γ, slack, and the linearisation d₀ + ∇dᵀ(x − x₀) of the
/// distance at the safe state; BAL's μᵢ; stencil descent's d̂ᵢ, κᵢ).
///
/// Pairs are keyed by kind and global surface rows (PairList order), so a pair found again keeps its state
/// on whichever call finds it, and a constraint stays on the rank that owns its smallest global row
/// (ownership of rows never changes). Every operation is a device kernel over sorted lists: `assign` and
/// `insert` find each pair's old state by binary search, `insert` merges two sorted lists by computing
/// each entry's output position (its index plus the number of smaller entries of the other list), and
/// `remove` compacts with a scan. Orders and results are the same for any thread count. Views keep their
/// capacity between calls.

#include "src/contact/pair_list.hpp"

namespace intact::contact {

/// Per-constraint state, one entry per pair of ConstraintSet::pairs(). New pairs start at zero, except γ,
/// which starts at the set's `new_gamma` (the AL method's γ = 1).
struct ConstraintState {
    Kokkos::View<double*, MemSpace> lambda;   ///< multiplier λ ≥ 0
    Kokkos::View<double*, MemSpace> gamma;    ///< decay γ
    Kokkos::View<double*, MemSpace> slack;    ///< slack s
    Kokkos::View<double*, MemSpace> distance; ///< d(x₀) at the linearisation point (m)
    Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace> gradient; ///< ∇d(x₀), stencil-ordered
};

class ConstraintSet {
public:
    explicit ConstraintSet(double new_gamma = 0.0) : m_new_gamma(new_gamma) {}

    const PairList& pairs() const { return m_pairs; }
    const ConstraintState& state() const { return m_state; }
    int size() const { return m_pairs.count; }

    /// The set becomes exactly `pairs` (sorted as a PairList); pairs already present keep their state, the
    /// others start at zero. Device work. Local.
    void assign(const PairList& pairs);
    /// The set becomes exactly `pairs` (sorted) with `state` (one entry per pair, e.g. read back from a
    /// checkpoint). Device work. Local.
    void assign(const PairList& pairs, const ConstraintState& state);
    /// Add the pairs of `more` (sorted) that are not present yet, at zero state; the others keep theirs.
    /// Device work. Local.
    void insert(const PairList& more);
    /// flags(j) = 1 when pair j of `pairs` (sorted) is in the set, else 0; `flags` needs pairs.count
    /// entries. Device work. Local.
    void contains(const PairList& pairs, const Kokkos::View<int*, MemSpace>& flags) const;
    /// Remove the pairs whose `drop` entry is non-zero (one per pair), keeping the order. Device work.
    /// Local.
    void remove(const Kokkos::View<const int*, MemSpace>& drop);

    /// Public for CUDA lambdas: the steps of assign / insert / remove.
    void carry(const PairList& next, int count);
    void merge(const PairList& more);

private:
    double m_new_gamma;
    PairList m_pairs, m_next;
    ConstraintState m_state, m_next_state;
    Kokkos::View<int*, MemSpace> m_flags;
};

} // namespace intact::contact
