// TraceDb lifecycle: the long write transaction and its commits, string interning, and finishing into one
// self-contained file. Creation is in trace_db_create.cpp, the add_* inserts in trace_db_rows.cpp and
// trace_db_tensor_rows.cpp.
#include "trace_db_impl.hpp"

#include <sys/stat.h>

#include <algorithm>

namespace fp8scope {

namespace {

// How long finish() waits for other connections to let go of the file before giving up on leaving WAL mode.
constexpr int kFinishBusyTimeoutMs = 2000;

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
    for (writer_detail::IntegerRowBatch* batch :
        std::initializer_list<writer_detail::IntegerRowBatch*> { &kernel_batch, &api_batch }) {
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

Expected<int64_t> TraceDb::Impl::query_integer(const std::string& sql, std::string_view what)
{
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        return std::unexpected(sqlite_error(what));
    const int rc = sqlite3_step(stmt);
    const int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW)
        return std::unexpected(sqlite_error(what));
    return value;
}

Expected<int64_t> TraceDb::Impl::count_rows(std::string_view table)
{
    return query_integer(
        "SELECT count(*) FROM \"" + std::string(table) + "\"", "cannot count the rows of " + std::string(table));
}

Expected<void> TraceDb::Impl::insert(size_t which)
{
    if (rows_refused()) {
        note_lost(1, *stopped);
        return std::unexpected(*stopped);
    }
    sqlite3_stmt* stmt = inserts[which];
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) {
        Error error = sqlite_error(writer_detail::insert_failure(schema::kTables[which]));
        note_lost(1, error);
        return std::unexpected(std::move(error));
    }
    count_pending_row();
    return {};
}

void TraceDb::Impl::note_lost(int64_t rows, const Error& error)
{
    counters.rows_lost += rows;
    if (write_error_reported || !options.on_write_error)
        return;
    write_error_reported = true;
    try {
        options.on_write_error(error);
    } catch (...) {
        // A report that fails must not take the writer (or the job) with it.
    }
}

void TraceDb::Impl::stop_recording(const Error& error)
{
    if (stopped)
        return;
    stopped = error;
    note_lost(0, error); // the report, if no row was lost yet (the file size limit stops rows before any fails)
    // The open transaction is dropped: committing it would spend the space the closing transaction needs.
    kernel_batch.rows = 0;
    api_batch.rows = 0;
    if (in_transaction && !sqlite3_get_autocommit(db))
        (void)exec("ROLLBACK", "cannot roll back");
    if (sqlite3_get_autocommit(db))
        in_transaction = false;
    note_lost(pending_rows, error);
    pending_rows = pending_kernels = pending_syncs = 0;
}

void TraceDb::Impl::check_file_room()
{
    if (stopped || file_size_limit == std::numeric_limits<int64_t>::max())
        return;
    struct stat wal { };
    if (::stat((path + "-wal").c_str(), &wal) != 0)
        return;
    // A checkpoint that restarted the WAL leaves it smaller: no growth then.
    largest_wal_growth = std::max(largest_wal_growth, static_cast<int64_t>(wal.st_size) - wal_bytes);
    wal_bytes = wal.st_size;
    if (wal.st_size + largest_wal_growth + writer_detail::kReserveBytes <= file_size_limit)
        return;
    stop_recording(Error { ErrorCode::Io,
        path + ": the trace's WAL (" + std::to_string(wal.st_size) + " bytes) is near the file size limit "
            + std::to_string(file_size_limit) + " (RLIMIT_FSIZE): no more rows are written" });
}

Expected<void> TraceDb::Impl::open_closing_transaction()
{
    reserve.release();
    closing = true;
    if (in_transaction)
        return {};
    return begin();
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
    if (rows_refused())
        return std::unexpected(*stopped);
    // Buffered rows first. If that fails, those rows are lost (and reported), but the others still commit.
    Expected<void> flushed = flush_batches();
    Expected<void> result;
    if (in_transaction) {
        result = exec("COMMIT", "cannot commit");
        if (result) {
            in_transaction = false;
            counters.rows_committed += pending_rows;
            counters.kernels_committed += pending_kernels;
            counters.syncs_committed += pending_syncs;
            ++counters.commits;
            pending_rows = pending_kernels = pending_syncs = 0;
            first_uncommitted_string = static_cast<int64_t>(strings_by_id.size()) + 1;
            first_uncommitted_config = static_cast<int64_t>(configs_by_id.size()) + 1;
            check_file_room();
            if (rows_refused())
                return std::unexpected(*stopped);
        } else {
            // A failed COMMIT can leave the transaction open (an I/O error while writing the WAL, a full disk):
            // roll it back, or every later commit would retry an ever larger transaction and fail again.
            if (!sqlite3_get_autocommit(db))
                (void)exec("ROLLBACK", "cannot roll back");
            if (sqlite3_get_autocommit(db)) {
                // Rolled back: these rows are lost.
                in_transaction = false;
                note_lost(pending_rows, result.error());
                pending_rows = pending_kernels = pending_syncs = 0;
            }
            // Recording goes on: a later, smaller commit may fit (the space held in reserve keeps room for the
            // closing transaction whatever they take).
        }
    }
    if (begin_again && !in_transaction) {
        if (auto ok = begin(); !ok)
            return ok;
        // A rolled-back transaction took interned strings and configs with it; later rows still use their ids.
        if (!stopped) {
            if (auto ok = reinsert_uncommitted(); !ok)
                return ok;
        }
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
    return write<schema::tables::kStringIds>(id, text);
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

Expected<std::optional<std::pair<int64_t, int64_t>>> TraceDb::Impl::activity_span()
{
    // The loader's rules (analyzer separate_collector_work, TraceModel::time_span_ns): kernels, copies, memsets and
    // API calls with a correlation id of FP8SCOPE_COLLECTOR_WORK (0 is no id) are the collector's, and so is every
    // kernel named in its namespace; syncs and NVTX events are the job's; a mark or an unclosed range ends at its
    // start.
    namespace t = schema::table;
    const auto q = [](std::string_view name) { return "\"" + std::string(name) + "\""; };
    const std::string own = " WHERE correlationId NOT IN own";
    const std::string sql = "WITH own(id) AS (SELECT correlationId FROM " + q(t::kCollectorWork)
        + " WHERE correlationId <> 0), probes(id) AS (SELECT c.id FROM " + q(t::kKernelConfig) + " c JOIN "
        + q(t::kStringIds) + " s ON s.id = c.demangledName WHERE instr(s.value, '"
        + std::string(schema::meta::kCollectorKernelNamespace) + "') > 0) SELECT min(first), max(last) FROM ("
        + "SELECT min(start) AS first, max(start + duration) AS last FROM " + q(t::kFp8Kernel) + own
        + " AND configId NOT IN probes UNION ALL SELECT min(start), max(\"end\") FROM " + q(t::kRuntime) + own
        + " UNION ALL SELECT min(start), max(\"end\") FROM " + q(t::kSynchronization)
        + " UNION ALL SELECT min(start), max(\"end\") FROM " + q(t::kMemcpy) + own
        + " UNION ALL SELECT min(start), max(\"end\") FROM " + q(t::kMemset)
        + own
        // The loader's NVTX rule: no end, or nsys's -1 after a start that is not, is a mark or an unclosed range.
        + " UNION ALL SELECT min(start), max(CASE WHEN \"end\" IS NULL OR (\"end\" = -1 AND start > -1) THEN start "
          "ELSE \"end\" END) FROM "
        + q(t::kNvtxEvents) + ")";
    const std::string what = "cannot find the activity's time span";
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
        return std::unexpected(sqlite_error(what));
    const int rc = sqlite3_step(stmt);
    std::optional<std::pair<int64_t, int64_t>> span;
    if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) == SQLITE_INTEGER
        && sqlite3_column_type(stmt, 1) == SQLITE_INTEGER)
        span.emplace(sqlite3_column_int64(stmt, 0), sqlite3_column_int64(stmt, 1));
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW)
        return std::unexpected(sqlite_error(what));
    return span;
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
        // A failed commit here lost its rows (counted in rows_lost) and began a new transaction: go on, so that
        // the small closing transaction below can still record the loss on a full disk. Only a failure to begin
        // again stops here.
        if (auto ok = impl.commit_and_begin(true); !ok && !impl.in_transaction && !impl.stopped)
            return ok;
        // The last rows are in; the space held in reserve goes to this closing transaction (trace_db_storage.hpp),
        // which records any loss even on a full disk.
        if (auto ok = impl.open_closing_transaction(); !ok)
            return ok;
        if (impl.counters.rows_lost > 0) {
            // Counted into dropped_records by add_dropped() even if this insert fails.
            (void)add_dropped(DroppedRow {
                info.session_end_ns, schema::DropSource::WriterError, impl.counters.rows_lost, std::nullopt });
        }
        const auto meta_integer
            = [&](std::string_view key, int64_t value) { return impl.write<schema::tables::kMeta>(key, value); };
        if (auto ok = impl.write<schema::tables::kMeta>(schema::meta::kFinishReason, info.reason); !ok)
            return ok;
        for (auto ok : { meta_integer(schema::meta::kSessionEndNs, info.session_end_ns),
                 meta_integer(schema::meta::kDroppedRecords, impl.counters.dropped_records),
                 meta_integer(schema::meta::kFinished, 1) }) {
            if (!ok)
                return ok;
        }
        // Every table's rows as they are now, in the same commit as `finished` (schema 1.2): the reader checks the
        // rows it reads against them instead of running PRAGMA quick_check over the whole file.
        for (const schema::Table& table : schema::kTables) {
            if (!schema::meta::counts_rows(table))
                continue;
            auto rows = impl.count_rows(table.name);
            if (!rows)
                return std::unexpected(rows.error());
            if (auto ok = meta_integer(schema::meta::row_count_key(table.name), *rows); !ok)
                return ok;
        }
        // The activity's span, so that `fp8scope info` reads the meta and not the rows (issue 47). Without it
        // (a failed query) info reads the rows, as for an older trace: no reason to fail the finish.
        if (const auto span = impl.activity_span(); span && *span) {
            for (auto ok : { meta_integer(schema::meta::kActivityFirstNs, (*span)->first),
                     meta_integer(schema::meta::kActivityLastNs, (*span)->second) }) {
                if (!ok)
                    return ok;
            }
        }
        // The closing meta is committed on its own, so that a failed index build cannot take it along.
        if (auto ok = impl.commit_and_begin(true); !ok)
            return ok;
        // Indexes last: built once over sorted data instead of updated on every insert while recording. The
        // sort spills to a temporary file beyond the page cache's size: with temp_store=MEMORY it would hold
        // every key in memory (about 440 MB more RSS at exit for 10 M API rows, docs/benchmarks.md).
        // Once the file size limit stopped recording the indexes are not built: they would take the room the
        // checkpoint below needs, and the trace reads without them.
        Expected<void> indexed = impl.stopped ? Expected<void>(std::unexpected(*impl.stopped))
                                              : impl.exec("PRAGMA temp_store = FILE", "cannot set temp_store");
        for (const schema::Index& index : schema::kIndexes) {
            if (!indexed)
                break;
            const std::string sql = "CREATE INDEX IF NOT EXISTS \"" + std::string(index.name) + "\" ON \""
                + std::string(index.table) + "\" (" + std::string(index.columns) + ")";
            indexed = impl.exec(sql.c_str(), "cannot create index " + std::string(index.name));
        }
        // Without its indexes a trace is slower to query but complete: go on to leave a single file, also when
        // their commit fails (a full disk) and was rolled back.
        if (auto ok = impl.commit_and_begin(false); !ok) {
            if (impl.in_transaction)
                return ok;
            if (indexed)
                indexed = ok;
        }
        impl.close_statements();
        // One self-contained file: move the WAL into the database, then leave WAL mode so that no -wal or
        // -shm file is needed (or created) by readers. Both need the other connections gone; a reader that
        // looks at the trace briefly (fp8scope info during the run) is waited for, up to a limit.
        sqlite3_busy_timeout(impl.db, kFinishBusyTimeoutMs);
        if (auto ok = impl.exec("PRAGMA wal_checkpoint(TRUNCATE)", "cannot checkpoint the WAL"); !ok)
            return ok;
        if (auto ok = impl.exec("PRAGMA journal_mode = DELETE", "cannot leave WAL mode"); !ok)
            return ok;
        return indexed;
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
