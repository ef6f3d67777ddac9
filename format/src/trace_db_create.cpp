// Creating a trace: the file (never clobbering, never following a symlink), its schema, ENUM tables, meta and
// session start, and the prepared statements. The first commit leaves a valid, unfinished trace.
#include "trace_db_impl.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

#ifndef FP8SCOPE_VERSION
#define FP8SCOPE_VERSION "unknown"
#endif

namespace fp8scope {

namespace {

// Measured against 65536 (docs/benchmarks.md): the same insert rate, 3% fewer bytes per kernel and a faster
// final checkpoint. 4096 is also SQLite's default.
constexpr int kPageSizeBytes = 4096;
// Negative cache_size is in KiB (sqlite.org/pragma.html#pragma_cache_size): 32 MiB holds a whole commit
// interval of rows at 1 M rows/s, so a transaction rarely spills to the WAL before its commit.
constexpr const char* kCacheSizePragma = "PRAGMA cache_size = -32768";

// "2026-11-21T10:20:30.123456789Z" or, local, "...+01:00" (ISO 8601).
std::string iso8601(int64_t epoch_ns, bool local)
{
    const time_t seconds = static_cast<time_t>(epoch_ns / 1'000'000'000);
    const long nanoseconds = static_cast<long>(epoch_ns % 1'000'000'000);
    std::tm tm {};
    if ((local ? localtime_r(&seconds, &tm) : gmtime_r(&seconds, &tm)) == nullptr)
        return {};
    char text[80];
    const size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    std::string out(text, length);
    std::snprintf(text, sizeof text, ".%09ld", nanoseconds < 0 ? 0 : nanoseconds);
    out += text;
    if (!local) {
        out += 'Z';
    } else {
        const long offset_min = tm.tm_gmtoff / 60;
        std::snprintf(text, sizeof text, "%c%02ld:%02ld", offset_min < 0 ? '-' : '+', std::labs(offset_min) / 60,
            std::labs(offset_min) % 60);
        out += text;
    }
    return out;
}

void remove_trace_files(const std::string& path)
{
    ::unlink(path.c_str());
    ::unlink((path + "-wal").c_str());
    ::unlink((path + "-shm").c_str());
    ::unlink((path + "-journal").c_str());
}

} // namespace

Expected<void> TraceDb::Impl::write_schema(const SessionInfo& session)
{
    const std::string pragmas = "PRAGMA page_size = " + std::to_string(kPageSizeBytes)
        + "; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY; " + kCacheSizePragma
        + "; PRAGMA user_version = "
        + std::to_string(schema::encode_user_version(schema::kMajorVersion, schema::kMinorVersion));
    if (auto ok = exec(pragmas.c_str(), "cannot set up the database"); !ok)
        return ok;
    if (auto ok = begin(); !ok)
        return ok;
    for (const schema::Table& table : schema::kTables) {
        if (auto ok = exec(schema::create_sql(table).c_str(), "cannot create " + std::string(table.name)); !ok)
            return ok;
    }
    sqlite3_stmt* enum_insert = nullptr;
    for (const schema::Enum& e : schema::enums()) {
        const std::string what = "cannot fill " + std::string(e.table);
        if (auto ok = exec(schema::create_enum_sql(e).c_str(), what); !ok)
            return ok;
        schema::Table table = schema::tables::kEnum;
        table.name = e.table;
        if (sqlite3_prepare_v2(db, writer_detail::insert_sql(table).c_str(), -1, &enum_insert, nullptr) != SQLITE_OK)
            return std::unexpected(sqlite_error(what));
        for (const schema::EnumValue& value : e.values) {
            writer_detail::bind_row<schema::tables::kEnum>(enum_insert, value.id, value.name, value.label);
            const int rc = sqlite3_step(enum_insert);
            sqlite3_reset(enum_insert);
            if (rc != SQLITE_DONE) {
                auto error = sqlite_error(what);
                sqlite3_finalize(enum_insert);
                return std::unexpected(std::move(error));
            }
        }
        sqlite3_finalize(enum_insert);
    }
    // One INSERT per table, at the table's position in kTables.
    for (size_t which = 0; which < std::size(schema::kTables); ++which) {
        const schema::Table& table = schema::kTables[which];
        if (table.kind == schema::TableKind::View)
            continue;
        const std::string sql = writer_detail::insert_sql(table);
        if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &inserts[which], nullptr) != SQLITE_OK)
            return std::unexpected(sqlite_error("cannot prepare an insert into " + std::string(table.name)));
    }
    if (auto ok = prepare_batch(kernel_batch, kernel_batch.kTable, true); !ok)
        return ok;
    if (auto ok = prepare_batch(api_batch, api_batch.kTable, false); !ok)
        return ok;

    const auto meta_text
        = [&](std::string_view key, std::string_view value) { return write<schema::tables::kMeta>(key, value); };
    const auto meta_integer
        = [&](std::string_view key, int64_t value) { return write<schema::tables::kMeta>(key, value); };
    const std::string schema_version
        = std::to_string(schema::kMajorVersion) + "." + std::to_string(schema::kMinorVersion);
    for (auto ok : {
             meta_text(schema::meta::kSchemaVersion, schema_version),
             meta_text(schema::meta::kProducer, session.producer),
             meta_text(schema::meta::kToolVersion, FP8SCOPE_VERSION),
             meta_text(schema::meta::kCommandLine, session.command_line),
             meta_text(schema::meta::kHost, session.host),
             meta_integer(schema::meta::kPid, session.pid),
             meta_integer(schema::meta::kGlobalPid, schema::global_pid(session.pid)),
             meta_integer(schema::meta::kRank, session.rank),
             meta_integer(schema::meta::kWorldSize, session.world_size),
             meta_integer(schema::meta::kCudaRuntimeVersion, session.cuda_runtime_version),
             meta_integer(schema::meta::kCudaDriverVersion, session.cuda_driver_version),
             meta_integer(schema::meta::kCuptiVersion, session.cupti_version),
             meta_integer(schema::meta::kSessionStartUtcNs, session.utc_epoch_ns),
             meta_integer(schema::meta::kFinished, 0),
             meta_integer(schema::meta::kTensorStatsSkipped, 0),
             meta_text(schema::meta::kCaptureMode, session.capture_mode),
             meta_text(schema::meta::kCaptureOptions, session.capture_options),
         }) {
        if (!ok)
            return ok;
    }
    if (!session.kernel_timestamps.empty()) {
        if (auto ok = meta_text(schema::meta::kKernelTimestamps, session.kernel_timestamps); !ok)
            return ok;
    }
    const std::string utc = iso8601(session.utc_epoch_ns, false);
    const std::string local = iso8601(session.utc_epoch_ns, true);
    if (auto ok = write<schema::tables::kSessionStart>(session.utc_epoch_ns, utc, local); !ok)
        return ok;
    // Commit the schema and meta at once: from here on the file is a valid, unfinished trace.
    return commit_and_begin(true);
}

Expected<std::unique_ptr<TraceDb>> TraceDb::create(
    const std::string& path, const SessionInfo& session, const TraceDbOptions& options)
{
    // O_EXCL|O_NOFOLLOW: an existing file or a symlink at `path` fails here instead of being replaced or
    // followed (docs/security.md "The writer and the collector"). SQLite then opens the empty file we own, with
    // NOFOLLOW too.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return make_error(ErrorCode::Io, path + ": cannot create the trace: " + std::strerror(errno));
    ::close(fd);

    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->options = options;
    impl->global_pid = schema::global_pid(session.pid);
    // NOMUTEX: the connection is used by one thread only (TraceDb's contract), so SQLite's per-call mutex
    // would be pure cost.
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path.c_str(), &impl->db, flags, nullptr) != SQLITE_OK) {
        Error error = impl->sqlite_error("cannot open the trace");
        impl->close_connection();
        remove_trace_files(path);
        return std::unexpected(std::move(error));
    }
    sqlite3_extended_result_codes(impl->db, 1);
    if (auto ok = impl->write_schema(session); !ok) {
        impl->close_connection();
        remove_trace_files(path); // ours: O_EXCL guaranteed nobody else's file was there
        return std::unexpected(std::move(ok.error()));
    }
    // Space for the closing transaction after a full disk, and the file size limit that stops rows before the WAL
    // reaches it (trace_db_storage.hpp).
    impl->reserve = writer_detail::SpaceReserve::hold(path, writer_detail::kReserveBytes);
    impl->file_size_limit = writer_detail::file_size_limit();
    return std::unique_ptr<TraceDb>(new TraceDb(std::move(impl)));
}

} // namespace fp8scope
