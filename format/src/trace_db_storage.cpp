// SpaceReserve and the storage-error helpers (trace_db_storage.hpp).
#include "trace_db_storage.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <limits>
#include <mutex>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fp8scope::writer_detail {

namespace {

std::string directory_of(const std::string& path)
{
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// An unnamed file in `directory`: O_TMPFILE where the file system has it, else a new name unlinked at once.
int unnamed_file(const std::string& directory)
{
    int fd = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    std::string name = directory + "/.fp8scope-reserve-XXXXXX";
    std::vector<char> buffer(name.begin(), name.end());
    buffer.push_back('\0');
    fd = ::mkostemp(buffer.data(), O_CLOEXEC); // O_EXCL: never an existing file or a symlink
    if (fd >= 0)
        ::unlink(buffer.data());
    return fd;
}

// Allocates `bytes` for real: fallocate, or zeros written where the file system has no fallocate.
bool allocate(int fd, int64_t bytes)
{
    const int rc = ::posix_fallocate(fd, 0, bytes);
    if (rc == 0)
        return true;
    if (rc != EOPNOTSUPP && rc != EINVAL)
        return false;
    static constexpr char kZeros[4096] = {};
    for (int64_t done = 0; done < bytes;) {
        const ssize_t written = ::write(fd, kZeros, sizeof kZeros);
        if (written <= 0)
            return false;
        done += written;
    }
    return ::fdatasync(fd) == 0;
}

// The descriptors of the reserves this process holds, plus one (0: a free slot), for the fork handler. A process
// holds one per trace it writes; one without a slot is only not closed in forked children.
std::array<std::atomic<int>, 16> g_reserves {};

// In a forked child (async-signal-safe): the parent's reserves are not the child's to keep.
void close_reserves_in_child()
{
    for (auto& slot : g_reserves) {
        if (const int value = slot.exchange(0); value > 0)
            ::close(value - 1);
    }
}

void register_reserve(int fd)
{
    static std::once_flag handler;
    std::call_once(handler, [] { pthread_atfork(nullptr, nullptr, close_reserves_in_child); });
    for (auto& slot : g_reserves) {
        int free_slot = 0;
        if (slot.compare_exchange_strong(free_slot, fd + 1))
            return;
    }
}

void unregister_reserve(int fd)
{
    for (auto& slot : g_reserves) {
        int mine = fd + 1;
        if (slot.compare_exchange_strong(mine, 0))
            return;
    }
}

} // namespace

SpaceReserve SpaceReserve::hold(const std::string& trace_path, int64_t bytes)
{
    SpaceReserve reserve;
    // Past RLIMIT_FSIZE the kernel would send SIGXFSZ to the calling thread, which may be the job's.
    if (bytes <= 0 || bytes > file_size_limit())
        return reserve;
    reserve.fd_ = unnamed_file(directory_of(trace_path));
    if (reserve.fd_ < 0)
        return reserve;
    reserve.owner_pid_ = ::getpid();
    register_reserve(reserve.fd_);
    if (!allocate(reserve.fd_, bytes))
        reserve.release();
    return reserve;
}

SpaceReserve::SpaceReserve(SpaceReserve&& other) noexcept
    : fd_(other.fd_)
    , owner_pid_(other.owner_pid_)
{
    other.fd_ = -1;
}

SpaceReserve& SpaceReserve::operator=(SpaceReserve&& other) noexcept
{
    if (this != &other) {
        release();
        fd_ = other.fd_;
        owner_pid_ = other.owner_pid_;
        other.fd_ = -1;
    }
    return *this;
}

int64_t SpaceReserve::allocated_bytes() const
{
    struct stat info { };
    if (fd_ < 0 || ::fstat(fd_, &info) != 0)
        return 0;
    return int64_t { info.st_blocks } * 512;
}

void SpaceReserve::release()
{
    // In a forked child the fork handler closed the descriptor already, and its number may be another file's now.
    if (fd_ >= 0 && owner_pid_ == ::getpid()) {
        unregister_reserve(fd_);
        ::close(fd_);
    }
    fd_ = -1;
}

int64_t file_size_limit()
{
    rlimit limit {};
    if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY
        || limit.rlim_cur > static_cast<rlim_t>(std::numeric_limits<int64_t>::max()))
        return std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(limit.rlim_cur);
}

} // namespace fp8scope::writer_detail
