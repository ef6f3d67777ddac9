// load_trace(): checks the path, opens the file defensively, tells an fp8scope trace from an nsys export, and
// hands it to the matching reader.
#include "fp8scope/analyzer/load/trace_loader.hpp"
#include "fp8scope/analyzer/load/collector_work.hpp"
#include "fp8scope/analyzer/load/trace_summary.hpp"
#include "fp8scope/format/nsys_schema.hpp"
#include "fp8scope/format/schema.hpp"
#include "load/readers.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fp8scope::analyzer {

using detail::ProgressMonitor;

namespace {

Error io_error(const std::string& path, std::string_view reason)
{
    return Error { ErrorCode::Io, detail::one_line(fmt::format("cannot open trace '{}': {}", path, reason)) };
}

// Checks what SQLite would not: a missing path, a directory, a device or FIFO, an empty file (which SQLite
// would take for an empty database), and read permission, with the system's words for each.
Expected<void> check_path(const std::string& path)
{
    struct stat info { };
    if (::stat(path.c_str(), &info) != 0)
        return std::unexpected(io_error(path, std::strerror(errno)));
    if (S_ISDIR(info.st_mode))
        return std::unexpected(io_error(path, std::strerror(EISDIR)));
    if (!S_ISREG(info.st_mode))
        return std::unexpected(io_error(path, "not a regular file"));
    if (info.st_size == 0)
        return std::unexpected(
            Error { ErrorCode::InvalidTrace, detail::one_line(fmt::format("trace '{}' is empty", path)) });
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return std::unexpected(io_error(path, std::strerror(errno)));
    ::close(fd);
    return {};
}

Error load_cancelled(const std::string& path)
{
    return ProgressMonitor::cancelled_error(detail::one_line(fmt::format("loading trace '{}' cancelled", path)));
}

bool looks_like_nsight(const detail::TraceFile& file)
{
    return file.has_table(schema::nsys::tables::kMetaDataExport.name) || file.has_table(schema::table::kStringIds)
        || file.has_table(schema::table::kNvtxEvents) || file.has_table_with_prefix("CUPTI_ACTIVITY_KIND_");
}

// Shares of the whole load: reading the tables, then sorting them and moving the collector's work out; the rest is
// waiting for the integrity check when it is still running.
constexpr double kReadShare = 0.9;
constexpr double kSortedShare = 0.95;

Expected<TraceModel> load(const std::string& path, ProgressMonitor* monitor)
{
    if (auto ok = check_path(path); !ok)
        return std::unexpected(ok.error());
    auto file = detail::TraceFile::open(path);
    if (!file)
        return std::unexpected(file.error());
    file->set_monitor(monitor);
    if (monitor)
        monitor->set_read_share(kReadShare);
    if (auto ok = file->load_catalog(); !ok)
        return std::unexpected(ok.error());
    // A damaged b-tree can read as fewer rows without an error. A finished trace of schema 1.2 or later records
    // every table's row count, and the rows read are checked against them. Other files get PRAGMA quick_check, which
    // reads every page once, as the readers do: on a connection of its own in a second thread, so that it runs while
    // the tables are read. Either verdict is awaited before the model is returned: a file found corrupt is refused
    // even when every read succeeded.
    auto recorded = detail::recorded_row_counts(*file);
    if (!recorded)
        return std::unexpected(recorded.error());
    Expected<void> checked;
    std::jthread checker;
    if (recorded->empty())
        checker = std::jthread([&] {
            auto own = detail::TraceFile::open(path);
            if (own)
                own->set_monitor(monitor);
            checked = own ? own->quick_check() : Expected<void>(std::unexpected(own.error()));
        });

    TraceModel model;
    model.path = path;
    Expected<void> read;
    if (file->has_table(schema::table::kMeta))
        read = detail::read_fp8scope(*file, model, *recorded);
    else if (looks_like_nsight(*file))
        read = detail::read_nsight(*file, model);
    else
        read = std::unexpected(Error { ErrorCode::InvalidTrace,
            detail::one_line(
                fmt::format("'{}' is not an fp8scope trace or Nsight Systems export (no known tables)", path)) });
    if (read && !recorded->empty())
        checked = detail::check_row_counts(*file, model, *recorded);
    if (read && checked && detail::report_progress(monitor, kReadShare)) {
        detail::sort_by_time(model);
        separate_collector_work(model);
        detail::report_progress(monitor, kSortedShare);
    }
    if (checker.joinable())
        checker.join();
    // A cancel interrupts whatever was running; its own error (SQLITE_INTERRUPT) means nothing to the caller.
    if (monitor && monitor->cancelled())
        return std::unexpected(load_cancelled(path));
    // Corruption explains a failed read better than the read's own symptom (a bad value in a damaged row).
    if (!checked)
        return std::unexpected(checked.error());
    if (!read)
        return std::unexpected(read.error());
    if (!detail::report_progress(monitor, 1.0))
        return std::unexpected(load_cancelled(path));
    return model;
}

// Whether the file is shorter than its SQLite header says (bytes 28-31: the database's size in pages, valid when the
// change counter at 24 equals the version-valid-for number at 92; bytes 16-17: the page size, 1 meaning 65536). A
// full load finds a truncated file as it reads the missing pages; a summary reads too few pages to be sure to.
bool shorter_than_header(const std::string& path)
{
    unsigned char header[100] {};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const ssize_t got = ::pread(fd, header, sizeof header, 0);
    struct stat info { };
    const bool stated = ::fstat(fd, &info) == 0;
    ::close(fd);
    if (got != static_cast<ssize_t>(sizeof header) || !stated)
        return false;
    const auto be32 = [&](int at) {
        return (uint32_t(header[at]) << 24) | (uint32_t(header[at + 1]) << 16) | (uint32_t(header[at + 2]) << 8)
            | uint32_t(header[at + 3]);
    };
    const uint32_t page_field = (uint32_t(header[16]) << 8) | header[17];
    const uint64_t page_size = page_field == 1 ? 65536 : page_field;
    if (be32(24) != be32(92))
        return false; // the size field is stale (an old writer): SQLite itself goes by the file's size
    return uint64_t(be32(28)) * page_size > static_cast<uint64_t>(info.st_size);
}

} // namespace

Expected<TraceSummary> load_trace_summary(const std::string& path, const ProgressHook& progress)
{
    if (auto ok = check_path(path); !ok)
        return std::unexpected(ok.error());
    auto file = detail::TraceFile::open(path);
    if (!file)
        return std::unexpected(file.error());
    if (auto ok = file->load_catalog(); !ok)
        return std::unexpected(ok.error());
    if (file->has_table(schema::table::kMeta)) {
        auto recorded = detail::recorded_row_counts(*file);
        if (!recorded)
            return std::unexpected(recorded.error());
        // Row counts are recorded when a trace is finished, and the activity's span by writers since issue 47 (older
        // ones are loaded whole).
        if (!recorded->empty()) {
            if (shorter_than_header(path))
                return std::unexpected(Error { ErrorCode::InvalidTrace,
                    detail::one_line(
                        fmt::format("trace '{}' is truncated: shorter than its SQLite header says", path)) });
            TraceModel partial;
            partial.path = path;
            if (auto ok = detail::read_fp8scope_summary(*file, partial, *recorded); !ok)
                return std::unexpected(ok.error());
            if (auto summary = detail::summary_from_meta(partial, *recorded))
                return *std::move(summary);
        }
    }
    auto model = load_trace(path, progress);
    if (!model)
        return std::unexpected(model.error());
    return summarize(*model);
}

Expected<TraceModel> load_trace(const std::string& path)
{
    return load(path, nullptr);
}

Expected<TraceModel> load_trace(const std::string& path, const ProgressHook& progress)
{
    if (!progress)
        return load(path, nullptr);
    ProgressMonitor monitor(progress);
    return load(path, &monitor);
}

} // namespace fp8scope::analyzer
