// TraceFile and Statement: the hardened read-only connection and checked statement steps.
#include "load/sqlite_reader.hpp"
#include "load/trace_open_mode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace fp8scope::analyzer::detail {

namespace {

// The longest string or blob the loader accepts. Real values are names of a few KiB and histograms of a few
// hundred bytes; the cap keeps a hostile file from making SQLite allocate gigabytes for one value.
constexpr int kMaxValueBytes = 64 * 1024 * 1024;

// How long to wait for a collector that holds a lock while it commits (rollback-journal files only; WAL
// readers never wait).
constexpr int kBusyTimeoutMs = 5000;

} // namespace

std::string one_line(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else if (byte < 0x20 || byte == 0x7f)
            out += fmt::format("\\x{:02x}", byte);
        else
            out += c;
    }
    return out;
}

TraceFile::TraceFile(sqlite3* db, std::string path)
    : db_(db)
    , path_(std::move(path))
{
}

TraceFile::TraceFile(TraceFile&& other) noexcept
    : db_(std::exchange(other.db_, nullptr))
    , path_(std::move(other.path_))
    , catalog_(std::move(other.catalog_))
    , monitor_(other.monitor_)
{
}

TraceFile::~TraceFile()
{
    if (db_)
        sqlite3_close_v2(db_);
}

void TraceFile::set_monitor(ProgressMonitor* monitor)
{
    monitor_ = monitor;
    // Called every kProgressOps virtual machine instructions; a non-zero return ends the statement with
    // SQLITE_INTERRUPT. The monitor outlives the connection's use: load_trace() owns both.
    constexpr int kProgressOps = 1 << 16;
    sqlite3_progress_handler(db_, monitor ? kProgressOps : 0,
        monitor ? +[](void* m) { return static_cast<ProgressMonitor*>(m)->cancelled() ? 1 : 0; } : nullptr, monitor);
}

Expected<TraceFile> TraceFile::open(const std::string& path)
{
    // This SQLite is built with SQLITE_USE_URI=1, so a name starting with "file:" would be parsed as a URI whose
    // query could switch options (mode=rwc, vfs=...); "./file:x" is the same file, taken literally.
    std::string open_name = path.starts_with("file:") ? "./" + path : path;
    // NOMUTEX: a TraceFile is used by one thread, so the per-call mutex of every sqlite3_column_* would be pure
    // cost (a fifth of the profile samples of a large load when it was on).
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX;
    const WalState state = wal_state(path);
    if (state != WalState::None) {
        open_name = file_uri(path, uri_query(state));
        flags |= SQLITE_OPEN_URI;
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(open_name.c_str(), &db, flags, nullptr);
    TraceFile file(db, path);
    if (rc != SQLITE_OK)
        return std::unexpected(file.sqlite_error(rc, "opening"));
    int ignored = 0;
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &ignored);
    // Before anything reads the file: the WAL index must never be placed in X-shm (uri_query).
    if (state == WalState::Orphaned) {
        if (const int lock_rc = sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE", nullptr, nullptr, nullptr);
            lock_rc != SQLITE_OK)
            return std::unexpected(file.sqlite_error(lock_rc, "opening"));
    }

    // Hardening for untrusted files (sqlite.org/security.html, "Untrusted SQLite Database Files"): defensive
    // mode, no trust in schema-defined functions, no extensions, no triggers or views (the loader reads tables
    // only), and a cap on value sizes.
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &ignored);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &ignored);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &ignored);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &ignored);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &ignored);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    for (const char* pragma : { "PRAGMA trusted_schema = OFF", "PRAGMA query_only = ON" }) {
        if (const int pragma_rc = sqlite3_exec(db, pragma, nullptr, nullptr, nullptr); pragma_rc != SQLITE_OK)
            return std::unexpected(file.sqlite_error(pragma_rc, "opening"));
    }
    return file;
}

Error TraceFile::invalid(std::string_view detail) const
{
    return Error { ErrorCode::InvalidTrace, one_line(fmt::format("trace '{}': {}", path_, detail)) };
}

Error TraceFile::sqlite_error(int rc, std::string_view doing) const
{
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    std::string text;
    ErrorCode code = ErrorCode::InvalidTrace;
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        text = fmt::format("'{}' is not an fp8scope trace or Nsight Systems export: not an SQLite database", path_);
        break;
    case SQLITE_CORRUPT:
        text = fmt::format("trace '{}' is corrupt or truncated: {} (while {})", path_, message, doing);
        break;
    case SQLITE_TOOBIG:
        text
            = fmt::format("trace '{}' holds a value larger than {} MiB (while {})", path_, kMaxValueBytes >> 20, doing);
        break;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
    case SQLITE_FULL:
        code = ErrorCode::Io;
        text = fmt::format("cannot read trace '{}': {} (while {})", path_, message, doing);
        break;
    default:
        text = fmt::format("cannot read trace '{}': {} (while {})", path_, message, doing);
        break;
    }
    return Error { code, one_line(text) };
}

Expected<Statement> TraceFile::prepare(std::string_view sql, std::string_view doing) const
{
    // Diagnostic (bench/report_bench.sh): FP8SCOPE_PRINT_SQL=1 prints each statement the loader prepares on stderr,
    // so that SQLite's own scan of exactly the rows and columns read can be timed beside it (bench/scan_bench.cpp).
    static const bool print_sql = [] {
        const char* value = std::getenv("FP8SCOPE_PRINT_SQL");
        return value && std::string_view(value) == "1";
    }();
    if (print_sql)
        std::fprintf(stderr, "fp8scope sql: %.*s\n", static_cast<int>(sql.size()), sql.data());
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return std::unexpected(sqlite_error(rc, doing));
    }
    return Statement(*this, stmt, std::string(doing));
}

Expected<void> TraceFile::load_catalog()
{
    // Reading sqlite_schema is the first access to the file's content, so this is where "not a database" and a
    // corrupt first page surface.
    auto statement = prepare("SELECT name, type FROM sqlite_schema", "reading the schema");
    if (!statement)
        return std::unexpected(statement.error());
    for (;;) {
        auto has_row = statement->step();
        if (!has_row)
            return std::unexpected(has_row.error());
        if (!*has_row)
            return {};
        const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), 0));
        const auto* type = reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), 1));
        if (name && type)
            catalog_.emplace(name, type);
    }
}

bool TraceFile::has_table(std::string_view name) const
{
    const auto it = catalog_.find(std::string(name));
    return it != catalog_.end() && it->second == "table";
}

bool TraceFile::has_object(std::string_view name) const
{
    return catalog_.contains(std::string(name));
}

bool TraceFile::has_table_with_prefix(std::string_view prefix) const
{
    return std::ranges::any_of(
        catalog_, [&](const auto& entry) { return entry.second == "table" && entry.first.starts_with(prefix); });
}

Expected<void> TraceFile::quick_check() const
{
    // One problem is enough to refuse the file; quick_check stops there instead of listing them all.
    auto statement = prepare("PRAGMA quick_check(1)", "checking the file (PRAGMA quick_check)");
    if (!statement)
        return std::unexpected(statement.error());
    auto has_row = statement->step();
    if (!has_row)
        return std::unexpected(has_row.error());
    const auto* text = *has_row ? reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), 0)) : nullptr;
    const std::string_view result = text ? text : "no result";
    if (result == "ok")
        return {};
    return std::unexpected(Error { ErrorCode::InvalidTrace,
        one_line(fmt::format("trace '{}' is corrupt: {} (PRAGMA quick_check)", path_, result)) });
}

Expected<std::vector<std::string>> TraceFile::columns_of(std::string_view table) const
{
    auto statement = prepare("SELECT name FROM pragma_table_info(?)", "reading the columns of " + std::string(table));
    if (!statement)
        return std::unexpected(statement.error());
    statement->bind_text(1, table);
    std::vector<std::string> names;
    for (;;) {
        auto has_row = statement->step();
        if (!has_row)
            return std::unexpected(has_row.error());
        if (!*has_row)
            return names;
        const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(statement->get(), 0));
        if (name)
            names.emplace_back(name);
    }
}

Expected<int64_t> TraceFile::count_rows(std::string_view table) const
{
    auto statement = prepare("SELECT count(*) FROM " + quoted_identifier(table), "counting " + std::string(table));
    if (!statement)
        return std::unexpected(statement.error());
    auto has_row = statement->step();
    if (!has_row)
        return std::unexpected(has_row.error());
    return *has_row ? sqlite3_column_int64(statement->get(), 0) : 0;
}

Statement::Statement(const TraceFile& file, sqlite3_stmt* stmt, std::string doing)
    : file_(&file)
    , stmt_(stmt)
    , doing_(std::move(doing))
{
}

Statement::Statement(Statement&& other) noexcept
    : file_(other.file_)
    , stmt_(std::exchange(other.stmt_, nullptr))
    , doing_(std::move(other.doing_))
{
}

Statement::~Statement()
{
    sqlite3_finalize(stmt_);
}

Expected<bool> Statement::step()
{
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) [[likely]]
        return true;
    if (rc == SQLITE_DONE)
        return false;
    return std::unexpected(file_->sqlite_error(rc, doing_));
}

void Statement::bind_text(int index, std::string_view text)
{
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

} // namespace fp8scope::analyzer::detail
