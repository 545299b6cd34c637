#include "src/contact/constraint_records.hpp"

#include "src/contact/pair_geometry.hpp"
#include "src/core/error.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace intact::contact {

namespace {

struct Record {
    std::int64_t kind = 0;
    std::array<std::int64_t, 4> ids{};
    double lambda = 0.0;
    double gamma = 0.0;
    double slack = 0.0;
    double distance = 0.0;
    std::array<double, 12> gradient{};
};

// Which entries of a pair's rows are surface rows (point–plane: the point and the plane row).
bool is_row(int kind, int k) {
    return kind != k_point_plane || k == 0 || k == 2;
}

// flags(j) = 1 when this rank counts constraint j (owns_pair). Device work.
Kokkos::View<int*, MemSpace>::HostMirror counted_flags(const PairList& pairs,
                                                       const SurfaceTopology& topology) {
    Kokkos::View<int*, MemSpace> flags("intact::contact::counted_constraints", pairs.count);
    const auto kind = pairs.kind;
    const auto rows = pairs.rows;
    Kokkos::parallel_for(
        "intact::contact::counted_constraints", Kokkos::RangePolicy<ExecSpace>(0, pairs.count),
        KOKKOS_LAMBDA(const int j) {
            const int r[4] = {rows(j, 0), rows(j, 1), rows(j, 2), rows(j, 3)};
            flags(j) = owns_pair(kind(j), r, topology) ? 1 : 0;
        });
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flags);
}

} // namespace

std::string encode_constraints(const ConstraintSet& set, const ContactSurface& surface) {
    const PairList& pairs = set.pairs();
    const ConstraintState& state = set.state();
    const auto counted = counted_flags(pairs, surface.topology());
    const auto kind = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pairs.kind);
    const auto rows = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), pairs.rows);
    const auto lambda = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.lambda);
    const auto gamma = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.gamma);
    const auto slack = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.slack);
    const auto distance = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.distance);
    const auto gradient = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.gradient);
    const std::vector<GlobalId>& gid = surface.vertex_gid();
    std::string bytes;
    for (int j = 0; j < pairs.count; ++j) {
        if (counted(j) == 0) {
            continue;
        }
        Record record;
        record.kind = kind(j);
        for (int k = 0; k < 4; ++k) {
            record.ids[static_cast<std::size_t>(k)] =
                is_row(kind(j), k) ? gid[static_cast<std::size_t>(rows(j, k))] : rows(j, k);
        }
        record.lambda = lambda(j);
        record.gamma = gamma(j);
        record.slack = slack(j);
        record.distance = distance(j);
        for (int k = 0; k < 12; ++k) {
            record.gradient[static_cast<std::size_t>(k)] = gradient(j, k);
        }
        bytes.append(reinterpret_cast<const char*>(&record), sizeof(Record));
    }
    return bytes;
}

void decode_constraints(const std::vector<std::string>& shares,
                        const ContactSurface& surface,
                        ConstraintSet& set) {
    // 1. Global id → surface row (body and obstacle rows; the same map on every rank).
    const std::vector<GlobalId>& gid = surface.vertex_gid();
    std::unordered_map<GlobalId, int> row_of;
    row_of.reserve(gid.size());
    for (std::size_t s = 0; s < gid.size(); ++s) {
        row_of.emplace(gid[s], static_cast<int>(s));
    }

    // 2. The records this rank holds, with their rows on this partition.
    struct Held {
        int kind;
        std::array<int, 4> rows;
        Record record;
    };
    std::vector<Held> held;
    for (const std::string& share : shares) {
        INTACT_REQUIRE(share.size() % sizeof(Record) == 0, "an AL constraint section of "
                                                               << share.size()
                                                               << " bytes is not a whole number of records");
        for (std::size_t offset = 0; offset < share.size(); offset += sizeof(Record)) {
            Held item{};
            std::memcpy(&item.record, share.data() + offset, sizeof(Record));
            item.kind = static_cast<int>(item.record.kind);
            bool holds = false;
            for (int k = 0; k < 4; ++k) {
                const std::int64_t id = item.record.ids[static_cast<std::size_t>(k)];
                if (!is_row(item.kind, k)) {
                    item.rows[static_cast<std::size_t>(k)] = static_cast<int>(id);
                    continue;
                }
                const auto it = row_of.find(static_cast<GlobalId>(id));
                INTACT_REQUIRE(it != row_of.end(),
                               "an AL constraint names node " << id << ", which is on no contact surface");
                item.rows[static_cast<std::size_t>(k)] = it->second;
                holds = holds || (!surface.is_obstacle(it->second) && surface.owns(it->second));
            }
            if (holds) {
                held.push_back(item);
            }
        }
    }
    std::sort(held.begin(), held.end(), [](const Held& a, const Held& b) {
        return std::make_pair(a.kind, a.rows) < std::make_pair(b.kind, b.rows);
    });

    // 3. To the device, then into the set.
    const int count = static_cast<int>(held.size());
    PairList pairs;
    pairs.kind = Kokkos::View<int*, MemSpace>("intact::contact::restored_kind", count);
    pairs.rows =
        Kokkos::View<int* [4], Kokkos::LayoutRight, MemSpace>("intact::contact::restored_rows", count);
    pairs.count = count;
    ConstraintState state;
    state.lambda = Kokkos::View<double*, MemSpace>("intact::contact::restored_lambda", count);
    state.gamma = Kokkos::View<double*, MemSpace>("intact::contact::restored_gamma", count);
    state.slack = Kokkos::View<double*, MemSpace>("intact::contact::restored_slack", count);
    state.distance = Kokkos::View<double*, MemSpace>("intact::contact::restored_distance", count);
    state.gradient = Kokkos::View<double* [12], Kokkos::LayoutRight, MemSpace>(
        "intact::contact::restored_gradient", count);
    const auto kind = Kokkos::create_mirror_view(pairs.kind);
    const auto rows = Kokkos::create_mirror_view(pairs.rows);
    const auto lambda = Kokkos::create_mirror_view(state.lambda);
    const auto gamma = Kokkos::create_mirror_view(state.gamma);
    const auto slack = Kokkos::create_mirror_view(state.slack);
    const auto distance = Kokkos::create_mirror_view(state.distance);
    const auto gradient = Kokkos::create_mirror_view(state.gradient);
    for (int j = 0; j < count; ++j) {
        const Held& item = held[static_cast<std::size_t>(j)];
        kind(j) = item.kind;
        for (int k = 0; k < 4; ++k) {
            rows(j, k) = item.rows[static_cast<std::size_t>(k)];
        }
        lambda(j) = item.record.lambda;
        gamma(j) = item.record.gamma;
        slack(j) = item.record.slack;
        distance(j) = item.record.distance;
        for (int k = 0; k < 12; ++k) {
            gradient(j, k) = item.record.gradient[static_cast<std::size_t>(k)];
        }
    }
    Kokkos::deep_copy(pairs.kind, kind);
    Kokkos::deep_copy(pairs.rows, rows);
    Kokkos::deep_copy(state.lambda, lambda);
    Kokkos::deep_copy(state.gamma, gamma);
    Kokkos::deep_copy(state.slack, slack);
    Kokkos::deep_copy(state.distance, distance);
    Kokkos::deep_copy(state.gradient, gradient);
    set.assign(pairs, state);
}

} // namespace intact::contact
