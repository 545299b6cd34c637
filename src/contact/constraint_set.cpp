#include "src/contact/constraint_set.hpp"

#include "src/core/grow.hpp"

#include <utility>

namespace intact::contact {

namespace {

// Lexicographic (kind, rows) comparison of entry i of `a` with entry j of `b`: −1, 0 or 1.
KOKKOS_INLINE_FUNCTION int compare(const PairList& a, int i, const PairList& b, int j) {
    if (a.kind(i) != b.kind(j)) {
        return a.kind(i) < b.kind(j) ? -1 : 1;
    }
    for (int k = 0; k < 4; ++k) {
        if (a.rows(i, k) != b.rows(j, k)) {
            return a.rows(i, k) < b.rows(j, k) ? -1 : 1;
        }
    }
    return 0;
}

// Number of entries of sorted `b` (first `count`) smaller than entry i of `a`; `found` tells whether one
// equals it (then the result is its index).
KOKKOS_INLINE_FUNCTION int lower_bound(const PairList& b, int count, const PairList& a, int i, bool& found) {
    int lo = 0, hi = count;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (compare(b, mid, a, i) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    found = lo < count && compare(b, lo, a, i) == 0;
    return lo;
}

void reserve(PairList& pairs, ConstraintState& state, int n) {
    grow(pairs.kind, n, "intact::contact::constraint_kind");
    grow(pairs.rows, n, "intact::contact::constraint_rows");
    grow(state.lambda, n, "intact::contact::constraint_lambda");
    grow(state.gamma, n, "intact::contact::constraint_gamma");
    grow(state.slack, n, "intact::contact::constraint_slack");
    grow(state.distance, n, "intact::contact::constraint_distance");
    grow(state.gradient, n, "intact::contact::constraint_gradient");
}

// Entry `to` of (pairs, state) := entry `from` of (pairs_in, state_in), or its pair with the state of a
// new pair (zero, γ = new_gamma).
KOKKOS_INLINE_FUNCTION void copy_entry(const PairList& out,
                                       const ConstraintState& out_state,
                                       int to,
                                       const PairList& in,
                                       int from,
                                       const ConstraintState* in_state,
                                       int state_from,
                                       double new_gamma) {
    out.kind(to) = in.kind(from);
    for (int k = 0; k < 4; ++k) {
        out.rows(to, k) = in.rows(from, k);
    }
    const bool keep = in_state != nullptr;
    out_state.lambda(to) = keep ? in_state->lambda(state_from) : 0.0;
    out_state.gamma(to) = keep ? in_state->gamma(state_from) : new_gamma;
    out_state.slack(to) = keep ? in_state->slack(state_from) : 0.0;
    out_state.distance(to) = keep ? in_state->distance(state_from) : 0.0;
    for (int k = 0; k < 12; ++k) {
        out_state.gradient(to, k) = keep ? in_state->gradient(state_from, k) : 0.0;
    }
}

} // namespace

void ConstraintSet::carry(const PairList& next, int count) {
    // Entry k of the new set is next's entry k, with the state of the same pair in the current set.
    reserve(m_next, m_next_state, count);
    const PairList old = m_pairs, out = m_next;
    const ConstraintState old_state = m_state, out_state = m_next_state;
    const int old_count = m_pairs.count;
    const double new_gamma = m_new_gamma;
    Kokkos::parallel_for(
        "intact::contact::constraint_carry", Kokkos::RangePolicy<ExecSpace>(0, count),
        KOKKOS_LAMBDA(const int k) {
            bool found = false;
            const int at = old_count > 0 ? lower_bound(old, old_count, next, k, found) : 0;
            copy_entry(out, out_state, k, next, k, found ? &old_state : nullptr, at, new_gamma);
        });
    m_next.count = count;
    std::swap(m_pairs, m_next);
    std::swap(m_state, m_next_state);
}

void ConstraintSet::assign(const PairList& pairs) {
    carry(pairs, pairs.count);
}

void ConstraintSet::assign(const PairList& pairs, const ConstraintState& state) {
    carry(pairs, pairs.count);
    const auto head = std::make_pair(0, pairs.count);
    Kokkos::deep_copy(Kokkos::subview(m_state.lambda, head), Kokkos::subview(state.lambda, head));
    Kokkos::deep_copy(Kokkos::subview(m_state.gamma, head), Kokkos::subview(state.gamma, head));
    Kokkos::deep_copy(Kokkos::subview(m_state.slack, head), Kokkos::subview(state.slack, head));
    Kokkos::deep_copy(Kokkos::subview(m_state.distance, head), Kokkos::subview(state.distance, head));
    Kokkos::deep_copy(Kokkos::subview(m_state.gradient, head, Kokkos::ALL),
                      Kokkos::subview(state.gradient, head, Kokkos::ALL));
}

void ConstraintSet::merge(const PairList& more) {
    // 1. new_before(j): how many entries of `more` before j are not in the set yet (j = more.count: all).
    grow(m_flags, more.count + 1, "intact::contact::constraint_new_before");
    const PairList current = m_pairs;
    const int current_count = m_pairs.count;
    const auto new_before = m_flags;
    int added = 0;
    Kokkos::parallel_scan(
        "intact::contact::constraint_new_pairs", Kokkos::RangePolicy<ExecSpace>(0, more.count + 1),
        KOKKOS_LAMBDA(const int j, int& offset, const bool final) {
            bool found = true;
            if (j < more.count) {
                found = false;
                if (current_count > 0) {
                    lower_bound(current, current_count, more, j, found);
                }
            }
            if (final) {
                new_before(j) = offset;
            }
            offset += found ? 0 : 1;
        },
        added);
    // 2. Every entry's place in the merged list: its index among its own kind (kept or new) plus the
    //    number of smaller entries of the other list.
    const int total = current_count + added;
    reserve(m_next, m_next_state, total);
    const PairList out = m_next;
    const ConstraintState state = m_state, out_state = m_next_state;
    const double new_gamma = m_new_gamma;
    Kokkos::parallel_for(
        "intact::contact::constraint_merge_current", Kokkos::RangePolicy<ExecSpace>(0, current_count),
        KOKKOS_LAMBDA(const int i) {
            bool found = false;
            const int j = lower_bound(more, more.count, current, i, found);
            copy_entry(out, out_state, i + new_before(j), current, i, &state, i, new_gamma);
        });
    Kokkos::parallel_for(
        "intact::contact::constraint_merge_new", Kokkos::RangePolicy<ExecSpace>(0, more.count),
        KOKKOS_LAMBDA(const int j) {
            if (new_before(j + 1) == new_before(j)) {
                return; // already in the set
            }
            bool found = false;
            const int below = current_count > 0 ? lower_bound(current, current_count, more, j, found) : 0;
            copy_entry(out, out_state, new_before(j) + below, more, j, nullptr, 0, new_gamma);
        });
    m_next.count = total;
    std::swap(m_pairs, m_next);
    std::swap(m_state, m_next_state);
}

void ConstraintSet::insert(const PairList& more) {
    merge(more);
}

void ConstraintSet::contains(const PairList& pairs, const Kokkos::View<int*, MemSpace>& flags) const {
    const PairList current = m_pairs;
    const int current_count = m_pairs.count;
    Kokkos::parallel_for(
        "intact::contact::constraint_contains", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int j) {
            bool found = false;
            if (current_count > 0) {
                lower_bound(current, current_count, pairs, j, found);
            }
            flags(j) = found ? 1 : 0;
        });
}

void ConstraintSet::remove(const Kokkos::View<const int*, MemSpace>& drop) {
    const PairList current = m_pairs;
    const int current_count = m_pairs.count;
    reserve(m_next, m_next_state, current_count);
    const PairList out = m_next;
    const ConstraintState state = m_state, out_state = m_next_state;
    int kept = 0;
    Kokkos::parallel_scan(
        "intact::contact::constraint_remove", Kokkos::RangePolicy<ExecSpace>(0, current_count),
        KOKKOS_LAMBDA(const int i, int& offset, const bool final) {
            if (drop(i) != 0) {
                return;
            }
            if (final) {
                copy_entry(out, out_state, offset, current, i, &state, i, 0.0);
            }
            ++offset;
        },
        kept);
    m_next.count = kept;
    std::swap(m_pairs, m_next);
    std::swap(m_state, m_next_state);
}

} // namespace intact::contact
