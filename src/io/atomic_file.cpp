#include "src/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace intact::io {

namespace {

namespace fs = std::filesystem;

std::string os_error(const fs::path& path, int error) {
    return path.string() + ": " + std::strerror(error);
}

// write(2) until every byte is out (it may write less than asked).
bool write_all(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// fsync of the folder makes the rename durable; file systems that cannot sync a folder (EINVAL) are
// accepted.
void sync_folder(const fs::path& folder) {
    const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

} // namespace

std::string write_file_atomically(const fs::path& path, const std::string& bytes) {
    const fs::path temporary = path.string() + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return os_error(temporary, errno);
    }
    if (!write_all(fd, bytes) || ::fsync(fd) != 0) {
        const int error = errno != 0 ? errno : EIO;
        ::close(fd);
        ::unlink(temporary.c_str());
        return os_error(temporary, error);
    }
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        return os_error(temporary, error);
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        return "renaming " + temporary.string() + " to " + os_error(path, error);
    }
    sync_folder(path.parent_path());
    return {};
}

std::string read_file(const fs::path& path, std::string& bytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return os_error(path, errno != 0 ? errno : ENOENT);
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return os_error(path, errno != 0 ? errno : EIO);
    }
    bytes = text.str();
    return {};
}

} // namespace intact::io
