#pragma once
/// @file atomic_file.hpp
/// @brief Replacing a file so that a crash at any moment leaves either the old or the new file whole.
///
/// The text goes to `<path>.tmp`, is flushed to the disk (fsync), and is renamed over `path`; the folder
/// is then synced so the rename itself survives a power loss. Readers therefore never see a partial
/// file, and a crash during the write leaves the previous file in place (plus, at worst, a stale
/// `.tmp`, which the next write replaces). Host, serial.

#include <filesystem>
#include <string>

namespace intact::io {

/// Write `bytes` to `path` atomically and durably. Returns an empty string on success, otherwise the
/// path and the OS error (e.g. "out/x.tmp: No space left on device"); the old `path` is then untouched.
std::string write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

/// Read a whole file into `bytes`. Returns an empty string, or the path and the OS error.
std::string read_file(const std::filesystem::path& path, std::string& bytes);

} // namespace intact::io
