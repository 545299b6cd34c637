#pragma once
/// @file partition_file.hpp
/// @brief Partitions saved by `intact partition` and read back by `intact run --partition`.
///
/// Text format, one value per line after a short header:
///   # intact partition 1
///   elements <E>
///   parts <P>
///   <part of element 0>
///   ...
/// Element order is the scene's (bodies in order, each body's tets in file order).

#include <string>
#include <vector>

namespace intact::partition {

/// Write `parts` (one per element) for `num_parts` parts. Throws InputError if the file can't be written.
void write_partition_file(const std::string& path, const std::vector<int>& parts, int num_parts);

/// Read a partition file and check it matches the mesh (element count) and the job (part count).
/// Throws InputError naming the file and the mismatch.
std::vector<int>
read_partition_file(const std::string& path, long long expected_elements, int expected_parts);

} // namespace intact::partition
