#include "partition/partition_file.hpp"

#include "src/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace intact::partition {

void write_partition_file(const std::string& path, const std::vector<int>& parts, int num_parts) {
    const auto folder = std::filesystem::path(path).parent_path();
    if (!folder.empty()) {
        std::error_code ignored; // a failure shows up as the open error below
        std::filesystem::create_directories(folder, ignored);
    }
    std::ofstream out(path);
    if (!out) {
        throw InputError("cannot write partition file '" + path + "': " + std::strerror(errno) +
                         "; fix: choose a writable path with --output");
    }
    out << "# intact partition 1\nelements " << parts.size() << "\nparts " << num_parts << "\n";
    for (const int p : parts) {
        out << p << '\n';
    }
    if (!out) {
        throw InputError("writing partition file '" + path + "' failed; fix: check free disk space");
    }
}

std::vector<int>
read_partition_file(const std::string& path, long long expected_elements, int expected_parts) {
    std::ifstream in(path);
    if (!in) {
        throw InputError("cannot open partition file '" + path + "': " + std::strerror(errno) +
                         "; fix: create it with `intact partition SCENE.json -n P --output FILE`");
    }
    std::string magic;
    std::getline(in, magic);
    std::string word;
    long long elements = -1;
    int parts = -1;
    if (magic != "# intact partition 1" || !(in >> word) || word != "elements" || !(in >> elements) ||
        !(in >> word) || word != "parts" || !(in >> parts)) {
        throw InputError("partition file '" + path +
                         "': header is not '# intact partition 1 / elements E / parts P'; fix: write it with "
                         "`intact partition`");
    }
    if (elements != expected_elements) {
        throw InputError("partition file '" + path + "' is for " + std::to_string(elements) +
                         " elements, the scene has " + std::to_string(expected_elements) +
                         "; fix: partition this scene again with `intact partition`");
    }
    if (parts != expected_parts) {
        throw InputError("partition file '" + path + "' has " + std::to_string(parts) +
                         " parts, the job has " + std::to_string(expected_parts) + " ranks; fix: run with " +
                         std::to_string(parts) + " ranks or partition again with -n " +
                         std::to_string(expected_parts));
    }
    std::vector<int> result(static_cast<std::size_t>(elements));
    for (long long e = 0; e < elements; ++e) {
        int p = -1;
        if (!(in >> p) || p < 0 || p >= parts) {
            throw InputError("partition file '" + path + "': entry for element " + std::to_string(e) +
                             " is missing or outside [0, " + std::to_string(parts) +
                             "); fix: write the file again with `intact partition`");
        }
        result[static_cast<std::size_t>(e)] = p;
    }
    std::string extra;
    if (in >> extra) {
        throw InputError("partition file '" + path + "' has more than " + std::to_string(elements) +
                         " entries; fix: write the file again with `intact partition`");
    }
    std::vector<long long> count(static_cast<std::size_t>(parts), 0);
    for (const int p : result) {
        ++count[static_cast<std::size_t>(p)];
    }
    for (int p = 0; p < parts; ++p) {
        if (count[static_cast<std::size_t>(p)] == 0) {
            throw InputError(
                "partition file '" + path + "' gives part " + std::to_string(p) +
                " no element (every rank needs one); fix: partition again with `intact partition`");
        }
    }
    return result;
}

} // namespace intact::partition
