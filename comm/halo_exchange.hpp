#pragma once
/// @file halo_exchange.hpp
/// @brief Forward halo exchange (owner -> ghost copies) of node fields, over a pluggable transport.

#include "comm/halo_plan.hpp"
#include "comm/halo_transport.hpp"

#include <memory>

namespace intact::comm {

/// Copies owned values to the ghost copies on other ranks, for fields laid out as in the plan (owned
/// rows first, then ghosts). The pack and unpack kernels run on the default execution space; the
/// transport moves the packed buffers (MpiTransport, or NcclTransport on CUDA builds). Buffers are
/// allocated on first use and grown when a wider field arrives, never per call.
class HaloExchange {
public:
    using buffer_type = Kokkos::View<double*, MemSpace>;

    HaloExchange(std::shared_ptr<const HaloPlan> plan, std::unique_ptr<HaloTransport> transport)
        : m_plan(std::move(plan)), m_transport(std::move(transport)) {}

    const HaloPlan& plan() const { return *m_plan; }
    const char* transport_name() const { return m_transport->name(); }

    /// Owner -> ghosts for a rank-1 View (one value per entry) or a rank-2 View (row per entry,
    /// `extent(1)` values), of doubles in MemSpace with at least num_local rows. Collective among
    /// neighbours; on return every ghost row holds its owner's value. Without neighbours it returns at
    /// once (no kernel, no fence: PCG gathers every iteration, and on one rank the empty launches cost
    /// more than the iteration's vector updates).
    template <class FieldView> void gather(const FieldView& field) {
        static_assert(static_cast<int>(FieldView::rank) == 1 || static_cast<int>(FieldView::rank) == 2,
                      "gather takes rank-1 or rank-2 Views");
        if (!m_plan->has_neighbours()) {
            return;
        }
        const int width = static_cast<int>(FieldView::rank) == 1 ? 1 : static_cast<int>(field.extent(1));
        Kokkos::Timer timer;
        reserve(width);
        const auto send_ids = m_plan->send_ids();
        const auto recv_ids = m_plan->recv_ids();
        const auto send = m_send;
        const auto recv = m_recv;
        Kokkos::parallel_for(
            "intact::comm::halo_pack", Kokkos::RangePolicy<ExecSpace>(0, m_plan->num_send()),
            KOKKOS_LAMBDA(const int i) {
                for (int c = 0; c < width; ++c) {
                    send(i * width + c) = access(field, send_ids(i), c);
                }
            });
        Kokkos::fence();
        m_transport->exchange(*m_plan, m_send, m_recv, width);
        Kokkos::parallel_for(
            "intact::comm::halo_unpack", Kokkos::RangePolicy<ExecSpace>(0, m_plan->num_recv()),
            KOKKOS_LAMBDA(const int i) {
                for (int c = 0; c < width; ++c) {
                    access(field, recv_ids(i), c) = recv(i * width + c);
                }
            });
        Kokkos::fence();
        m_seconds += timer.seconds();
    }

    /// Wall seconds spent in `gather` on this rank since construction (pack, transport, unpack).
    double seconds() const { return m_seconds; }

    /// Element c of row i of a rank-1 or rank-2 View.
    template <class FieldView>
    KOKKOS_INLINE_FUNCTION static auto& access(const FieldView& field, int i, int c) {
        if constexpr (static_cast<int>(FieldView::rank) == 1) {
            (void)c;
            return field(i);
        } else {
            return field(i, c);
        }
    }

private:
    void reserve(int width) {
        const auto send_size = static_cast<std::size_t>(m_plan->num_send()) * static_cast<std::size_t>(width);
        const auto recv_size = static_cast<std::size_t>(m_plan->num_recv()) * static_cast<std::size_t>(width);
        if (m_send.extent(0) < send_size) {
            m_send = buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "intact::comm::halo_send"),
                                 send_size);
        }
        if (m_recv.extent(0) < recv_size) {
            m_recv = buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, "intact::comm::halo_recv"),
                                 recv_size);
        }
    }

    std::shared_ptr<const HaloPlan> m_plan;
    std::unique_ptr<HaloTransport> m_transport;
    buffer_type m_send, m_recv;
    double m_seconds = 0.0;
};

} // namespace intact::comm
