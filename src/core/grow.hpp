#pragma once
/// @file grow.hpp
/// @brief Capacity-kept device buffers: the one growth rule every per-call buffer uses (pair lists,
/// stencils, send lists, scratch).

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>

namespace intact {

/// Make `view` hold at least `n` entries along its first extent. Keeps the View (and its contents) when
/// it is large enough; otherwise releases it first (so the old and the new buffer are never held
/// together) and allocates n + n/4 + 16 entries, uninitialised (contents are not kept), so sizes that
/// creep up allocate rarely. Host.
///
/// `fixed`: leading entries whose number does not change (stencil descent's element stencils before its
/// pair stencils): the spare quarter is taken of the other n − fixed entries only.
template <class View, class Count> void grow(View& view, Count n, const char* label, Count fixed = 0) {
    const auto size = static_cast<std::size_t>(n);
    if (view.extent(0) < size || view.data() == nullptr) {
        const std::size_t creeping = size - std::min(size, static_cast<std::size_t>(fixed));
        view = View();
        view = View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                    size + creeping / 4 + 16);
    }
}

} // namespace intact
