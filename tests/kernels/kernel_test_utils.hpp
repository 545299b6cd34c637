#pragma once
// Shared helpers of the kernel tests: moving fixed-size Eigen values to and from device Views (one row
// per test case) and comparing matrices with a relative tolerance.
#include "kernels/small_matrix.hpp"
#include "src/core/types.hpp"

#include <Eigen/Core>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace intact::kernels::test {

/// One row of doubles per test case, contiguous (Eigen::Map works on a row in device code).
using Table = Kokkos::View<double**, Kokkos::LayoutRight, MemSpace>;

/// A device table holding rows[c] (each rows[c] a fixed-size Eigen object) in row c.
template <class EigenType> Table to_device(const std::string& label, const std::vector<EigenType>& rows) {
    constexpr int width = EigenType::SizeAtCompileTime;
    Table table(label, rows.size(), width);
    auto host = Kokkos::create_mirror_view(table);
    for (std::size_t c = 0; c < rows.size(); ++c) {
        for (int k = 0; k < width; ++k) {
            host(c, k) = rows[c].data()[k];
        }
    }
    Kokkos::deep_copy(table, host);
    return table;
}

/// The rows of a device table as Eigen objects (column-major data order, as written with Eigen::Map).
template <class EigenType> std::vector<EigenType> from_device(const Table& table) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), table);
    std::vector<EigenType> rows(table.extent(0));
    for (std::size_t c = 0; c < rows.size(); ++c) {
        for (int k = 0; k < EigenType::SizeAtCompileTime; ++k) {
            rows[c].data()[k] = host(c, k);
        }
    }
    return rows;
}

/// The 12 coordinates of a 4-vertex stencil (tet corners, point-triangle or edge-edge), vertex-major.
inline Vec12 pack(const std::array<Vec3, 4>& x) {
    Vec12 v;
    for (int a = 0; a < 4; ++a) {
        v.segment<3>(3 * a) = x[static_cast<std::size_t>(a)];
    }
    return v;
}

/// Row c of a table written by to_device from packed stencils, back as 4 points (device-callable).
KOKKOS_INLINE_FUNCTION void unpack_row(const Table& t, int c, Vec3 x[4]) {
    for (int a = 0; a < 4; ++a) {
        x[a] = Vec3(t(c, 3 * a), t(c, 3 * a + 1), t(c, 3 * a + 2));
    }
}

/// max |actual - expected| <= rtol * max |expected| + atol, with a message naming the case.
template <class A, class B>
::testing::AssertionResult near(const A& actual, const B& expected, double rtol, double atol) {
    const double scale = expected.cwiseAbs().maxCoeff();
    const double error = (actual - expected).cwiseAbs().maxCoeff();
    if (error <= rtol * scale + atol && std::isfinite(error)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "max error " << error << " > " << rtol << " * " << scale << " + "
                                         << atol << " (relative " << error / scale << ")";
}

} // namespace intact::kernels::test
