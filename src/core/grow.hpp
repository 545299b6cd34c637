#pragma once
/// @file grow.hpp
/// @brief Capacity-kept device buffers: the one growth rule every per-call buffer uses (pair lists,
/// stencils, send lists, scratch).

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace intact {

/// Make `view` hold at least `n` entries along its first extent. Keeps the View (and its contents) when
/// it is large enough; otherwise releases it first (so the old and the new buffer are never held
/// together) and allocates n + n/4 + 16 entries, uninitialised (contents are not kept), so sizes that
/// creep up allocate rarely. Host.
template <class View, class Count> void grow(View& view, Count n, const char* label) {
    const auto size = static_cast<std::size_t>(n);
    if (view.extent(0) < size || view.data() == nullptr) {
        view = View();
        view =
            View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), size + size / 4 + 16);
    }
}

} // namespace intact
