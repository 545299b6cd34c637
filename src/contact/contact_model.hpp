#pragma once
/// @file contact_model.hpp
/// @brief The contact side of a step, on the device, shared by every contact term and by the step bound:
/// the contact surface gathered at the current iterate (with its candidate and active pairs), along a
/// step (with the swept candidates), at a trial point and along a search direction.
///
/// Surface rows at x are gathered once per refresh and read by every term (barrier, friction, later the
/// augmented-Lagrangian terms), so a Newton iteration refreshes the contact ghost plan twice (at x for
/// assembly, and for the segment x → x + d for the CCD bound), as DESIGN.md's halo rules ask. Fields and
/// pair lists are device Views kept between calls; the host holds counts. Obstacle rows come from the
/// caller (BoundaryMotion) as full-size surface fields whose obstacle rows are meaningful. Collective
/// calls are marked; every rank must make them in the same order.

#include "src/contact/candidate_search.hpp"
#include "src/contact/contact_surface.hpp"
#include "src/contact/pair_list.hpp"

#include <string>

namespace intact::contact {

class ContactModel {
public:
    /// @param dhat contact distance d̂ (m)
    ContactModel(MPI_Comm comm, ContactSurface& surface, double dhat);

    ContactSurface& surface() { return m_surface; }
    const ContactSurface& surface() const { return m_surface; }
    const SurfaceTopology& topology() const { return m_surface.topology(); }
    double dhat() const { return m_dhat; }
    double s_hat() const { return m_dhat * m_dhat; }
    /// How far apart two primitives may be and still pair: d̂ plus twice the largest contact offset (the
    /// largest pair offset ξ), the inflation of the broad phase and of the ghost boxes (m). d̂ itself when
    /// no body has an offset.
    double reach() const { return m_reach; }

    /// Refresh the ghost plan for x and gather the surface at x (obstacle rows from `obstacles`) into
    /// positions(), with its candidates() and active() pairs. Collective.
    void update(const NodeField& x, const ConstSurfaceField& obstacles);
    /// Gather x with the current plan into positions() (candidates and active pairs too). Collective.
    void gather(const NodeField& x, const ConstSurfaceField& obstacles);
    /// Refresh the ghost plan for the segment x → x + d, gather positions() at x and step() = d
    /// (obstacle rows from `obstacle_step`), and find the swept candidates of the segment. Collective.
    void update_segment(const NodeField& x,
                        const ConstSurfaceField& obstacles,
                        const NodeField& d,
                        const ConstSurfaceField& obstacle_step);
    /// Gather a trial point with the current plan into trial(). Collective.
    void gather_trial(const NodeField& trial, const ConstSurfaceField& obstacles);
    /// As gather_trial, for a trial on the segment of the last update_segment: every row (obstacle rows
    /// too) between its two ends, as a line-search point x + α d with 0 ≤ α ≤ 1 is. candidates_at(trial())
    /// then selects the segment's swept pairs that overlap at the trial (select_overlapping: the same pairs
    /// a broad phase there finds) instead of running the broad phase again. After an accept_trial or a new
    /// gather of positions() there is no segment until the next update_segment, and this is gather_trial.
    /// Collective.
    void gather_segment_trial(const NodeField& trial, const ConstSurfaceField& obstacles);
    /// The last trial point became the iterate: it is positions() from now on, with the candidates the
    /// barrier found there (its last candidates_at) and their active subset. Call it after an accepted
    /// line-search trial whose energy was the last one evaluated; no communication. Local.
    void accept_trial();
    /// Gather a search direction with the current plan into direction(), obstacle rows zero. Collective.
    void gather_direction(const NodeField& p);
    /// Gather a step with the current plan into step(), obstacle rows from `obstacle_step`. Collective.
    void gather_step(const NodeField& d, const ConstSurfaceField& obstacle_step);
    /// Gather x with the current plan into positions() alone: candidates() and active() keep what they
    /// held (for methods that evaluate their own pairs, such as AL's constraints). Collective.
    void gather_positions(const NodeField& x, const ConstSurfaceField& obstacles);
    /// out := `field` on the known body rows (through the ghost plan) and `obstacle_rows` on the obstacle
    /// rows. Collective.
    void fill(const NodeField& field, const ConstSurfaceField& obstacle_rows, const SurfaceField& out);

    SurfaceField positions() const { return m_xs; }
    SurfaceField step() const { return m_ps; }
    SurfaceField trial() const { return m_ts; }
    SurfaceField direction() const { return m_ds; }
    /// Pairs within reach() at positions() that touch an owned row, and the active ones (squared gap
    /// s < ŝ: within d̂ of their offset surfaces).
    const PairList& candidates() const { return m_candidates; }
    const PairList& active() const { return m_active; }
    /// The swept candidates of the last update_segment (pairs within reach() somewhere on the segment).
    const PairList& swept() const { return m_swept; }
    /// Candidates within d̂ at surface field xs: candidates() when xs is positions(), the segment's swept
    /// pairs that overlap there when xs is a trial() gathered on the segment (gather_segment_trial), else a
    /// search; both into a scratch list (valid until the next call). Local.
    const PairList& candidates_at(const ConstSurfaceField& xs);

    /// Largest α in (0, 1] along positions() + α step() that closes no pair by more than 80% of its gap,
    /// on this rank's swept candidates (the caller reduces with MIN). Local.
    double local_max_step() const;
    /// local_max_step, also leaving each swept candidate's own bound in toi (grown to swept().count), for
    /// methods that use them (the AL set update). Local.
    double local_max_step(Kokkos::View<double*, MemSpace>& toi) const;
    /// Smallest squared pair gap at positions() (pair_squared_distance: the squared distance of the offset
    /// surfaces), MIN over ranks. Collective.
    double min_squared_distance() const;
    /// Active pairs at positions() counted once over all ranks. Collective.
    long long count_active_pairs() const;
    /// The closest active pair at positions() over all ranks (ties: the lowest rank, then the first in the
    /// pair order), for the start-up check: its gap (m, the distance less the pair's contact offsets; +inf
    /// without active pairs; 0 for a vertex on or behind a plane, or offset surfaces that touch) and a
    /// description ("body B node G ... is at distance d m"), the same on every rank. Collective.
    struct PairReport {
        double distance = 0.0;
        std::string text;
    };
    PairReport closest_pair() const;

private:
    std::string describe_row(int s) const;

    MPI_Comm m_comm;
    ContactSurface& m_surface;
    double m_dhat;
    double m_reach;
    CandidateSearch m_search;
    SurfaceField m_xs, m_ps, m_ts, m_ds;
    PairList m_candidates, m_active, m_swept, m_scratch;
    bool m_segment = false;          ///< m_swept is the segment from positions() (update_segment)
    bool m_trial_on_segment = false; ///< trial() was gathered on that segment (gather_segment_trial)
};

} // namespace intact::contact
