// ChromeTraceFile: the temporary file, the writer thread, gzip, the rename (trace_event_writer.hpp).
#include "export/trace_event_writer.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

bool ends_with(std::string_view text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// zlib level 1 compresses the 10 M-kernel export 12x with about 22 s of CPU, level 6 (zlib's default) 16x with
// about 52 s: the writer thread would then keep the formatting thread waiting (docs/benchmarks.md, "Export").
constexpr const char* kGzipMode = "wb1";

} // namespace

ChromeTraceFile::ChromeTraceFile(std::string path)
    : path_(std::move(path))
    , temp_path_(fmt::format("{}.{}.tmp", path_, getpid()))
{
    // A directory under the name would only be found at the rename, after the whole load and export.
    struct stat existing { };
    if (::stat(path_.c_str(), &existing) == 0 && S_ISDIR(existing.st_mode)) {
        fail("cannot write", EISDIR);
        return;
    }
    // O_EXCL: never write through a link or over a file someone else made under the temporary name.
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) {
        fail("cannot write", errno);
        return;
    }
    if (ends_with(path_, ".gz")) {
        gzip_ = true;
        gz_ = gzdopen(fd_, kGzipMode);
        if (gz_ == nullptr) {
            fail("cannot compress", errno != 0 ? errno : ENOMEM);
            return;
        }
        gzbuffer(static_cast<gzFile>(gz_), 1 << 18);
    }
}

ChromeTraceFile::~ChromeTraceFile()
{
    stop_writer();
    if (gz_ != nullptr)
        gzclose(static_cast<gzFile>(gz_)); // closes fd_ too
    else if (fd_ >= 0)
        ::close(fd_);
    if (!committed_ && fd_ >= 0)
        ::unlink(temp_path_.c_str());
}

void ChromeTraceFile::fail(std::string_view what, int error_number)
{
    if (!error_)
        error_ = fmt::format("{} '{}': {}", what, path_, std::strerror(error_number));
}

void ChromeTraceFile::flush()
{
    if (fd_ < 0 || error_) {
        buffer_.clear();
        return;
    }
    if (!writer_.joinable())
        writer_ = std::thread([this] { writer_loop(); });
    {
        std::unique_lock lock(mutex_);
        block_changed_.wait(lock, [this] { return !block_ready_; });
        std::swap(buffer_, block_);
        block_ready_ = true;
    }
    block_changed_.notify_all();
    buffer_.clear();
}

void ChromeTraceFile::writer_loop()
{
    for (;;) {
        std::unique_lock lock(mutex_);
        block_changed_.wait(lock, [this] { return block_ready_ || stopping_; });
        if (!block_ready_)
            return; // stopping, and every block is written
        lock.unlock();
        if (write_errno_ == 0)
            write_block();
        block_.clear();
        lock.lock();
        block_ready_ = false;
        lock.unlock();
        block_changed_.notify_all();
    }
}

void ChromeTraceFile::write_block()
{
    const char* data = block_.data();
    size_t left = block_.size();
    if (gz_ != nullptr) {
        const int written = gzwrite(static_cast<gzFile>(gz_), data, static_cast<unsigned>(left));
        if (written <= 0 || static_cast<size_t>(written) != left) {
            int zerr = Z_OK;
            gzerror(static_cast<gzFile>(gz_), &zerr);
            write_errno_ = zerr == Z_ERRNO && errno != 0 ? errno : EIO;
        }
        return;
    }
    while (left > 0) {
        const ssize_t n = ::write(fd_, data, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            write_errno_ = n < 0 ? errno : EIO;
            return;
        }
        data += n;
        left -= static_cast<size_t>(n);
    }
}

void ChromeTraceFile::stop_writer()
{
    if (!writer_.joinable())
        return;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    block_changed_.notify_all();
    writer_.join();
}

bool ChromeTraceFile::commit()
{
    flush();
    stop_writer();
    if (write_errno_ != 0)
        fail("cannot write", write_errno_);
    if (error_)
        return false;
    int closed = 0;
    if (gz_ != nullptr) {
        closed = gzclose(static_cast<gzFile>(gz_)) == Z_OK ? 0 : -1;
        gz_ = nullptr;
    } else {
        closed = ::close(fd_);
    }
    const int close_errno = errno;
    fd_ = -1;
    if (closed != 0) {
        fail("cannot write", close_errno != 0 ? close_errno : EIO);
        ::unlink(temp_path_.c_str());
        return false;
    }
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        fail("cannot write", errno);
        ::unlink(temp_path_.c_str());
        return false;
    }
    committed_ = true;
    return true;
}

} // namespace fp8scope::cli
