#pragma once
/// @file candidate_search.hpp
/// @brief Contact candidates on the device: the pairs of known primitives whose boxes (inflated, and swept
/// over a step when one is given) overlap, filtered and sorted on the device into a PairList.
///
/// The pair set is exactly the host BarrierPotential's candidate set: boxes are inflated by half the
/// inflation on each side, so two primitives pair when their boxes come within `inflation`; the queries
/// are owned points × known triangles, other known points × triangles with an owned corner, edges with an
/// owned row among themselves and against the other known edges, and every owned free row × every plane;
/// a pair is kept when it shares no row, has an owned row and not all its rows are prescribed.
///
/// Order. The hash reports pairs in an order that depends on thread scheduling; the result is sorted by
/// (kind, rows) with a counting sort on (kind, first row) and a rank sort inside each bucket (keys are
/// unique per pair, so the result is the same run to run and for any thread count or backend).

#include "src/contact/broad_phase.hpp"
#include "src/contact/contact_surface.hpp"
#include "src/contact/pair_list.hpp"

namespace intact::contact {

/// out := the pairs of `pairs` whose primitives' boxes at xs overlap, each box inflated by half of
/// `inflation` with the broad phase's arithmetic (point–plane pairs are all kept, as find keeps every owned
/// free row against every plane), in their order. For the swept candidates of a segment and an xs on it
/// (every row between its two ends) this is the list find gives at xs: each box at xs lies inside its swept
/// box, so no pair is missed, and the test is the broad phase's own. One exception, harmless: a row snapped
/// onto its target at α = 1 may lie one rounding beyond the swept end x + (target − x); a pair missed so
/// has boxes just touching, a gap of about the inflation, and is not active. Device work. Local.
void select_overlapping(const PairList& pairs, const ConstSurfaceField& xs, double inflation, PairList& out);

class CandidateSearch {
public:
    /// `surface` must outlive the search. The hash cell is the mean rest length of the bodies' boundary
    /// edges, at least 2 d̂ (m); it changes the speed, never the result.
    CandidateSearch(const ContactSurface& surface, double dhat);

    /// Candidate pairs at surface positions `xs` (known rows meaningful) within `inflation` (m, usually
    /// d̂), swept over the step `ps` when it is not an empty View. `out` is sorted by (kind, rows) and
    /// keeps its capacity between calls. Call after the surface's update_ghosts for the same xs (and ps).
    /// Device work; only counts reach the host. Local (no MPI).
    void find(const ConstSurfaceField& xs, const ConstSurfaceField& ps, double inflation, PairList& out);

private:
    const ContactSurface& m_surface;
    SpatialHash m_hash;
    BoxList m_owned_point_boxes, m_other_point_boxes, m_triangle_boxes, m_owned_triangle_boxes;
    BoxList m_owned_edge_boxes, m_other_edge_boxes;
    // Unsorted pairs as found, bucketed by (kind, first row), sorted (with any duplicates).
    PairList m_found, m_bucketed;
    Kokkos::View<int*, MemSpace> m_bucket_offset, m_bucket_cursor;
};

} // namespace intact::contact
