#include "chrome_trace_output.hpp"

#include <zlib.h>

#include <cerrno>
#include <cmath>
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

    // zlib level 1: on the 10 M-kernel trace it compresses 12x in 40 s of CPU, against 16x in 71 s for level 6
    // (zlib's default), which would leave the formatting core waiting for the compressing one (docs/benchmarks.md).
    constexpr const char* kGzipMode = "wb1";

} // namespace

ChromeTraceFile::ChromeTraceFile(std::string path)
    : path_(std::move(path))
    , temp_path_(fmt::format("{}.{}.tmp", path_, getpid()))
{
    // A directory under the name would only be found at the rename, after the whole load and export.
    struct stat existing {};
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

void append_json_string(fmt::memory_buffer& out, std::string_view text)
{
    out.push_back('"');
    size_t plain_from = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\') [[likely]]
            continue;
        out.append(text.substr(plain_from, i - plain_from));
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else {
            fmt::format_to(fmt::appender(out), "\\u{:04x}", c);
        }
        plain_from = i + 1;
    }
    out.append(text.substr(plain_from));
    out.push_back('"');
}

void append_microseconds(fmt::memory_buffer& out, int64_t ns)
{
    // Kineto's fmtTs: "{us}.{ns % 1000:03}". Written by hand for the sign of values between -1 and 0 us.
    if (ns < 0) {
        out.push_back('-');
        ns = -ns; // |ns| <= 2^54: the model keeps every time within +-kMaxTraceTimeNs
    }
    fmt::format_to(fmt::appender(out), "{}.{:03}", ns / 1000, ns % 1000);
}

void ChromeTraceEvents::open_event(std::string_view phase)
{
    out_.append(std::string_view(events_ == 0 ? "\n{\"ph\":\"" : ",\n{\"ph\":\""));
    out_.append(phase);
    out_.push_back('"');
    ++events_;
    first_arg_ = true;
}

void ChromeTraceEvents::key(std::string_view name)
{
    out_.append(std::string_view(",\""));
    out_.append(name);
    out_.append(std::string_view("\":"));
}

void ChromeTraceEvents::time(int64_t t_ns) { append_microseconds(out_, t_ns - base_ns_); }

void ChromeTraceEvents::begin_complete(
    std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t start_ns, int64_t end_ns)
{
    open_event("X");
    key("cat");
    append_json_string(out_, cat);
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
    time(start_ns);
    key("dur");
    append_microseconds(out_, end_ns - start_ns);
}

void ChromeTraceEvents::begin_instant(std::string_view cat, std::string_view name, int64_t pid, int64_t tid, int64_t at_ns)
{
    open_event("i");
    key("cat");
    append_json_string(out_, cat);
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"s\":\"t\",\"pid\":{},\"tid\":{},\"ts\":", pid, tid);
    time(at_ns);
}

bool ChromeTraceEvents::counter(std::string_view name, int64_t pid, int64_t at_ns, double value)
{
    if (!std::isfinite(value))
        return false;
    open_event("C");
    key("name");
    append_json_string(out_, name);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":0,\"ts\":", pid);
    time(at_ns);
    fmt::format_to(fmt::appender(out_), ",\"args\":{{\"value\":{}}}}}", value);
    file_.maybe_flush();
    return true;
}

void ChromeTraceEvents::flow(char phase, uint64_t id, int64_t pid, int64_t tid, int64_t at_ns)
{
    open_event(std::string_view(&phase, 1));
    fmt::format_to(fmt::appender(out_), ",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":", id, pid, tid);
    time(at_ns);
    out_.append(std::string_view(phase == 'f' ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}"
                                              : ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}"));
    file_.maybe_flush();
}

void ChromeTraceEvents::metadata(
    std::string_view kind, int64_t pid, int64_t tid, std::string_view key_name, std::string_view value)
{
    open_event("M");
    key("name");
    append_json_string(out_, kind);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":0.000,\"args\":{{", pid, tid);
    append_json_string(out_, key_name);
    out_.push_back(':');
    append_json_string(out_, value);
    out_.append(std::string_view("}}"));
}

void ChromeTraceEvents::metadata(std::string_view kind, int64_t pid, int64_t tid, std::string_view key_name, int64_t value)
{
    open_event("M");
    key("name");
    append_json_string(out_, kind);
    fmt::format_to(fmt::appender(out_), ",\"pid\":{},\"tid\":{},\"ts\":0.000,\"args\":{{", pid, tid);
    append_json_string(out_, key_name);
    fmt::format_to(fmt::appender(out_), ":{}}}}}", value);
}

void ChromeTraceEvents::arg(std::string_view key_name, std::string_view value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    out_.push_back(':');
    append_json_string(out_, value);
}

void ChromeTraceEvents::arg(std::string_view key_name, int64_t value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    fmt::format_to(fmt::appender(out_), ":{}", value);
}

void ChromeTraceEvents::arg_number(std::string_view key_name, double value)
{
    out_.append(std::string_view(first_arg_ ? ",\"args\":{" : ","));
    first_arg_ = false;
    append_json_string(out_, key_name);
    if (std::isfinite(value))
        fmt::format_to(fmt::appender(out_), ":{}", value);
    else
        out_.append(std::string_view(":null"));
}

void ChromeTraceEvents::end()
{
    out_.append(std::string_view(first_arg_ ? "}" : "}}"));
    file_.maybe_flush();
}

} // namespace fp8scope::cli
