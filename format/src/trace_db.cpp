// TraceDb lifecycle: creating the file and its schema, the long write transaction and its commits, string
// interning, and finishing into one self-contained file. The add_* inserts are in trace_db_rows.cpp.
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

using writer_detail::Binder;
using writer_detail::Insert;

namespace {

// 4096 and 65536 give the same bytes per kernel row within 1% and 65536 is not faster (docs/benchmarks.md);
// 4096 is SQLite's default and keeps each commit's partly filled last page small.
constexpr int kPageSizeBytes = 4096;
// Negative cache_size is in KiB (sqlite.org/pragma.html#pragma_cache_size): 32 MiB holds a whole commit
// interval of rows at 1 M rows/s, so a transaction rarely spills to the WAL before its commit.
constexpr const char* kCacheSizePragma = "PRAGMA cache_size = -32768";

// How long finish() waits for other connections to let go of the file before giving up on leaving WAL mode.
constexpr int kFinishBusyTimeoutMs = 2000;

struct TableStatement {
    Insert which;
    std::string_view table;
};
constexpr TableStatement kTableStatements[] = {
    { Insert::StringIds, schema::table::kStringIds },
    { Insert::Meta, schema::table::kMeta },
    { Insert::SessionStart, schema::table::kSessionStart },
    { Insert::Gpu, schema::table::kTargetInfoGpu },
    { Insert::ThreadNames, schema::table::kThreadNames },
    { Insert::KernelConfig, schema::table::kKernelConfig },
    { Insert::Kernel, schema::table::kFp8Kernel },
    { Insert::KernelLatency, schema::table::kKernelLatency },
    { Insert::Runtime, schema::table::kRuntime },
    { Insert::Synchronization, schema::table::kSynchronization },
    { Insert::Memcpy, schema::table::kMemcpy },
    { Insert::Memset, schema::table::kMemset },
    { Insert::Nvtx, schema::table::kNvtxEvents },
    { Insert::TensorSite, schema::table::kTensorSite },
    { Insert::TensorStats, schema::table::kTensorStats },
    { Insert::Scalar, schema::table::kScalar },
    { Insert::StepMarker, schema::table::kStepMarker },
    { Insert::Overhead, schema::table::kOverhead },
    { Insert::Dropped, schema::table::kDropped },
};
static_assert(std::size(kTableStatements) == static_cast<size_t>(Insert::Count));

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

// --- Impl ---------------------------------------------------------------------------------------------------

TraceDb::Impl::~Impl()
{
    close_connection();
}

void TraceDb::Impl::close_connection()
{
    close_statements();
    if (db) {
        sqlite3_close_v2(db);
        db = nullptr;
    }
    closed = true;
}

void TraceDb::Impl::close_statements()
{
    for (auto& stmt : inserts) {
        sqlite3_finalize(stmt);
        stmt = nullptr;
    }
    for (auto* batch : { &kernel_batch, &api_batch }) {
        sqlite3_finalize(batch->multi);
        batch->multi = nullptr;
    }
}

Error TraceDb::Impl::sqlite_error(std::string_view what) const
{
    std::string message = path;
    message += ": ";
    message += what;
    message += ": ";
    message += db ? sqlite3_errmsg(db) : "no database connection";
    return Error { ErrorCode::Io, std::move(message) };
}

Expected<void> TraceDb::Impl::exec(const char* sql, std::string_view what)
{
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
        return std::unexpected(sqlite_error(what));
    return {};
}

Expected<void> TraceDb::Impl::insert(Insert which, std::string_view what)
{
    sqlite3_stmt* stmt = statement(which);
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE)
        return std::unexpected(sqlite_error(what));
    count_pending_row();
    return {};
}

void TraceDb::Impl::count_pending_row()
{
    if (pending_rows == 0)
        first_pending_time = std::chrono::steady_clock::now();
    ++pending_rows;
    ++counters.rows_written;
}

Expected<void> TraceDb::Impl::begin()
{
    if (auto ok = exec("BEGIN", "cannot begin a transaction"); !ok)
        return ok;
    in_transaction = true;
    return {};
}

Expected<void> TraceDb::Impl::commit_and_begin(bool begin_again)
{
    if (closed)
        return make_error(ErrorCode::Usage, path + ": the trace is already finished");
    // Buffered rows first. If that fails, those rows are lost (and reported), but the others still commit.
    Expected<void> flushed = flush_batches();
    Expected<void> result;
    if (in_transaction) {
        result = exec("COMMIT", "cannot commit");
        if (result || sqlite3_get_autocommit(db)) {
            in_transaction = false;
        }
        if (result) {
            counters.rows_committed += pending_rows;
            counters.kernels_committed += pending_kernels;
            counters.syncs_committed += pending_syncs;
            ++counters.commits;
            first_uncommitted_string = static_cast<int64_t>(strings_by_id.size()) + 1;
            first_uncommitted_config = static_cast<int64_t>(configs_by_id.size()) + 1;
        }
        if (result || !in_transaction) {
            // Committed, or rolled back by SQLite after the error: either way these rows are no longer pending.
            pending_rows = pending_kernels = pending_syncs = 0;
        }
    }
    if (begin_again && !in_transaction) {
        if (auto ok = begin(); !ok)
            return ok;
        // A rolled-back transaction took interned strings and configs with it; later rows still use their ids.
        if (auto ok = reinsert_uncommitted(); !ok)
            return ok;
    }
    return result ? flushed : result;
}

Expected<void> TraceDb::Impl::reinsert_uncommitted()
{
    const auto string_count = static_cast<int64_t>(strings_by_id.size());
    const auto config_count = static_cast<int64_t>(configs_by_id.size());
    for (int64_t id = first_uncommitted_string; id <= string_count; ++id) {
        if (auto ok = insert_string(id, *strings_by_id[static_cast<size_t>(id - 1)]); !ok)
            return ok;
    }
    for (int64_t id = first_uncommitted_config; id <= config_count; ++id) {
        if (auto ok = insert_config(id, configs_by_id[static_cast<size_t>(id - 1)]); !ok)
            return ok;
    }
    return {};
}

Expected<void> TraceDb::Impl::insert_string(int64_t id, std::string_view text)
{
    Binder(statement(Insert::StringIds)).integer(id).text(text);
    return insert(Insert::StringIds, "cannot insert into StringIds");
}

// --- create -------------------------------------------------------------------------------------------------

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
        const std::string sql = "INSERT INTO \"" + std::string(e.table) + "\" (id, name, label) VALUES (?, ?, ?)";
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &enum_insert, nullptr) != SQLITE_OK)
            return std::unexpected(sqlite_error(what));
        for (const schema::EnumValue& value : e.values) {
            Binder(enum_insert).integer(value.id).text(value.name).text(value.label);
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
    for (const auto& [which, table_name] : kTableStatements) {
        const std::string sql = writer_detail::insert_sql(*schema::find_table(table_name));
        if (sqlite3_prepare_v3(
                db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &inserts[static_cast<size_t>(which)], nullptr)
            != SQLITE_OK)
            return std::unexpected(sqlite_error("cannot prepare an insert into " + std::string(table_name)));
    }
    if (auto ok = prepare_batch(kernel_batch, Insert::Kernel, true); !ok)
        return ok;
    if (auto ok = prepare_batch(api_batch, Insert::Runtime, false); !ok)
        return ok;

    const auto meta_text = [&](std::string_view key, std::string_view value) {
        Binder(statement(Insert::Meta)).text(key).text(value);
        return insert(Insert::Meta, "cannot write FP8SCOPE_META");
    };
    const auto meta_integer = [&](std::string_view key, int64_t value) {
        Binder(statement(Insert::Meta)).text(key).integer(value);
        return insert(Insert::Meta, "cannot write FP8SCOPE_META");
    };
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
         }) {
        if (!ok)
            return ok;
    }
    const std::string utc = iso8601(session.utc_epoch_ns, false);
    const std::string local = iso8601(session.utc_epoch_ns, true);
    Binder(statement(Insert::SessionStart)).integer(session.utc_epoch_ns).text(utc).text(local);
    if (auto ok = insert(Insert::SessionStart, "cannot write TARGET_INFO_SESSION_START_TIME"); !ok)
        return ok;
    // Commit the schema and meta at once: from here on the file is a valid, unfinished trace.
    return commit_and_begin(true);
}

Expected<std::unique_ptr<TraceDb>> TraceDb::create(
    const std::string& path, const SessionInfo& session, const TraceDbOptions& options)
{
    // O_EXCL|O_NOFOLLOW: an existing file or a symlink at `path` fails here instead of being replaced or
    // followed (spec "Reliability and security"). SQLite then opens the empty file we own, with NOFOLLOW too.
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
    return std::unique_ptr<TraceDb>(new TraceDb(std::move(impl)));
}

TraceDb::TraceDb(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl))
{
}

TraceDb::~TraceDb()
{
    // Not finished: keep what was written (commit), leave finished=0, so the trace reads as interrupted.
    if (impl_ && !impl_->closed)
        (void)impl_->commit_and_begin(false);
}

// --- interning ----------------------------------------------------------------------------------------------

int64_t TraceDb::Impl::intern(std::string_view text)
{
    if (const auto it = strings.find(text); it != strings.end())
        return it->second;
    const auto id = static_cast<int64_t>(strings_by_id.size()) + 1;
    const auto [it, inserted] = strings.emplace(std::string(text), id);
    strings_by_id.push_back(&it->first);
    // On an SQLite error the id stays assigned: rows using it keep a consistent id, and the string is inserted
    // again if its transaction was rolled back (reinsert_uncommitted).
    if (!closed)
        (void)insert_string(id, it->first);
    return id;
}

StringId TraceDb::intern(std::string_view text)
{
    return StringId { impl_->intern(text) };
}

// --- transactions -------------------------------------------------------------------------------------------

Expected<void> TraceDb::commit_if_due()
{
    if (impl_->closed || impl_->pending_rows == 0)
        return {};
    if (std::chrono::steady_clock::now() - impl_->first_pending_time < impl_->options.commit_interval)
        return {};
    return impl_->commit_and_begin(true);
}

Expected<void> TraceDb::commit()
{
    return impl_->commit_and_begin(true);
}

Expected<void> TraceDb::finish(const FinishInfo& info)
{
    Impl& impl = *impl_;
    if (impl.closed) {
        if (impl.finish_error)
            return std::unexpected(*impl.finish_error);
        return {};
    }
    const auto finish_steps = [&]() -> Expected<void> {
        if (auto ok = impl.commit_and_begin(true); !ok)
            return ok;
        const auto meta_integer = [&](std::string_view key, int64_t value) {
            Binder(impl.statement(Insert::Meta)).text(key).integer(value);
            return impl.insert(Insert::Meta, "cannot write FP8SCOPE_META");
        };
        Binder(impl.statement(Insert::Meta)).text(schema::meta::kFinishReason).text(info.reason);
        if (auto ok = impl.insert(Insert::Meta, "cannot write FP8SCOPE_META"); !ok)
            return ok;
        for (auto ok : { meta_integer(schema::meta::kSessionEndNs, info.session_end_ns),
                 meta_integer(schema::meta::kDroppedRecords, impl.counters.dropped_records),
                 meta_integer(schema::meta::kFinished, 1) }) {
            if (!ok)
                return ok;
        }
        // Indexes last: built once over sorted data instead of updated on every insert while recording.
        for (const schema::Index& index : schema::kIndexes) {
            const std::string sql = "CREATE INDEX IF NOT EXISTS \"" + std::string(index.name) + "\" ON \""
                + std::string(index.table) + "\" (" + std::string(index.columns) + ")";
            if (auto ok = impl.exec(sql.c_str(), "cannot create index " + std::string(index.name)); !ok)
                return ok;
        }
        if (auto ok = impl.commit_and_begin(false); !ok)
            return ok;
        impl.close_statements();
        // One self-contained file: move the WAL into the database, then leave WAL mode so that no -wal or
        // -shm file is needed (or created) by readers. Both need the other connections gone; a reader that
        // looks at the trace briefly (fp8scope info during the run) is waited for, up to a limit.
        sqlite3_busy_timeout(impl.db, kFinishBusyTimeoutMs);
        if (auto ok = impl.exec("PRAGMA wal_checkpoint(TRUNCATE)", "cannot checkpoint the WAL"); !ok)
            return ok;
        return impl.exec("PRAGMA journal_mode = DELETE", "cannot leave WAL mode");
    };
    auto result = finish_steps();
    if (!result)
        impl.finish_error = result.error();
    impl.close_connection();
    return result;
}

const WriterCounters& TraceDb::counters() const
{
    return impl_->counters;
}

const std::string& TraceDb::path() const
{
    return impl_->path;
}

} // namespace fp8scope
