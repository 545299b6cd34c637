#pragma once
/// @file initial_contact.hpp
/// @brief What the start-up check of contact needs beyond distances: surface triangles that meet at the
/// initial state, and plain-words names of surface rows for messages.
///
/// The start may hold pairs closer than d̂ (IPC allows it: the barrier is finite for 0 < d < d̂ and pushes
/// them apart in the first steps), but nothing may touch or cross: a pair at distance 0, a vertex on or
/// behind a plane, or two surface triangles that meet. Distances alone cannot see crossings (two coarse
/// boxes pushed into each other have all vertex and edge distances positive), so the triangles are tested
/// exactly (tools::surface_triangles_meet).

#include "src/contact/contact_surface.hpp"

#include <string>

namespace intact::contact {

/// "body B node G" for a body row, "obstacles[k] vertex i" for an obstacle row (i: its index in the
/// obstacle's mesh file, or 0 for a plane's point). Host.
std::string describe_surface_row(const ContactSurface& surface, int row);

/// The first pair (in row order of the triangle list) of surface triangles at the rest positions that
/// meet, touching included, described as "body 0 triangle (nodes 1, 2, 3) meets obstacles[1] triangle
/// (vertices 0, 1, 2)", or empty. Pairs of a body's own adjacent triangles are judged as `intact check`
/// judges them; two obstacle triangles are never a pair. Device broad phase, exact predicates on the
/// host. Local (the surface is replicated: every rank finds the same pair).
std::string first_meeting_triangles(const ContactSurface& surface);

} // namespace intact::contact
