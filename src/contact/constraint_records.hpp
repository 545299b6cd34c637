#pragma once
/// @file constraint_records.hpp
/// @brief A ConstraintSet keyed by global ids, so that it survives a restart on any number of ranks.
///
/// Surface rows are numbered by owner rank, then global id (contact_surface.hpp), so they change with
/// the partition; global ids do not (obstacle rows have ids above every body node, the same in every
/// run of the scene). A record is one constraint: its kind, its rows as global ids (point–plane:
/// {point, plane index, plane row, 0}, the plane index kept as it is), and its state (λ, γ, slack,
/// distance, ∇d). Within a pair the rows keep their order, which comes from the partition-independent
/// triangles and edges of the scene mesh (the smaller edge index first), so mapping the ids back to
/// rows gives the pair the broad phase would build on the new partition.
///
/// `encode_constraints` writes the constraints this rank counts (owns_pair), so the shares of all ranks
/// hold every constraint once. `decode_constraints` reads every old rank's share and keeps the
/// constraints this rank holds (it owns one of their body rows, the rule by which the AL solver holds a
/// pair), sorted by (kind, rows) as PairList requires. Records are in native byte order (the checkpoint
/// rejects files of the other one).

#include "src/contact/constraint_set.hpp"
#include "src/contact/contact_surface.hpp"

#include <string>
#include <vector>

namespace intact::contact {

/// The constraints of `set` this rank counts, as records. Device to host copy. Local.
std::string encode_constraints(const ConstraintSet& set, const ContactSurface& surface);

/// `set` becomes the constraints of `shares` (every old rank's records) that this rank holds, with their
/// state. Host work, then one copy to the device. Local.
void decode_constraints(const std::vector<std::string>& shares,
                        const ContactSurface& surface,
                        ConstraintSet& set);

} // namespace intact::contact
