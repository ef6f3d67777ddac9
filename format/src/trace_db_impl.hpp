// TraceDb's state, shared by its implementation files: trace_db.cpp (transactions, interning, finish),
// trace_db_create.cpp (file and schema), trace_db_rows.cpp and trace_db_tensor_rows.cpp (add_*),
// trace_db_batches.cpp (multi-row inserts) and trace_db_storage.cpp (the reserve kept for a full disk).
#pragma once

#include "fp8scope/format/trace_db.hpp"
#include "trace_db_storage.hpp"

#include <sqlite3.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fp8scope {

namespace writer_detail {

// One prepared INSERT per table, indexed by this enum.
enum class Insert : size_t {
    StringIds,
    Meta,
    SessionStart,
    Gpu,
    ThreadNames,
    KernelConfig,
    Kernel,
    KernelLatency,
    Runtime,
    Synchronization,
    Memcpy,
    Memset,
    Nvtx,
    TensorSite,
    TensorStats,
    Scalar,
    StepMarker,
    Overhead,
    Dropped,
    CollectorWork,
    CaptureWindow,
    ScalarNan,
    BlockStats,
    Count,
};

// Binds positional parameters left to right. A bind can only fail on a wrong index or type, which the
// column lists rule out, so the result is not checked here; sqlite3_step reports any misuse.
class Binder {
public:
    explicit Binder(sqlite3_stmt* stmt)
        : stmt_(stmt)
    {
    }
    Binder& integer(int64_t value)
    {
        sqlite3_bind_int64(stmt_, ++index_, value);
        return *this;
    }
    Binder& real(double value)
    {
        sqlite3_bind_double(stmt_, ++index_, value);
        return *this;
    }
    Binder& text(std::string_view value)
    {
        // SQLITE_STATIC: the text outlives the sqlite3_step that follows; TraceDb resets right after it.
        sqlite3_bind_text64(stmt_, ++index_, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8);
        return *this;
    }
    Binder& blob(const void* data, size_t bytes)
    {
        sqlite3_bind_blob64(stmt_, ++index_, bytes == 0 ? "" : data, bytes, SQLITE_STATIC);
        return *this;
    }
    Binder& null()
    {
        sqlite3_bind_null(stmt_, ++index_);
        return *this;
    }
    template <class T> Binder& integer(const std::optional<T>& value)
    {
        return value ? integer(static_cast<int64_t>(*value)) : null();
    }
    Binder& real(const std::optional<double>& value) { return value ? real(*value) : null(); }

private:
    sqlite3_stmt* stmt_;
    int index_ = 0;
};

// Rows of an all-INTEGER table, buffered and inserted kRowsPerStatement at a time by one multi-row
// INSERT ... VALUES (...), (...). SQLite's per-statement work (opening a cursor, seeking to the table's end,
// halting, resetting) is then paid once per batch instead of once per row; that was about 40% of a kernel
// insert (callgrind, docs/benchmarks.md). Used for the two tables written once per launch.
struct IntegerRowBatch {
    static constexpr int kRowsPerStatement = 64;
    static constexpr int kMaxColumns = 10;
    Insert which = Insert::Count; // its single-row statement, used for a partial batch
    sqlite3_stmt* multi = nullptr; // kRowsPerStatement rows
    int columns = 0;
    int rows = 0;
    bool kernels = false; // rows count as kernels in WriterCounters
    std::array<int64_t, kRowsPerStatement * kMaxColumns> values {};

    int64_t* next_row() { return values.data() + static_cast<size_t>(rows) * static_cast<size_t>(columns); }
};

// INSERT text for `rows` rows from the constant column list; every column is bound, in schema order. Meta
// keys are written again when the trace finishes, hence OR REPLACE there.
std::string insert_sql(const schema::Table& table, int rows = 1);

// Heterogeneous lookup: intern(string_view) finds an existing string without allocating.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view> {}(text); }
};

struct KernelConfigHash {
    size_t operator()(const KernelConfig& c) const noexcept;
};

// A config as stored: the caller's fields plus the derived name ids.
struct StoredConfig {
    KernelConfig config;
    int64_t demangled_name = 0;
    int64_t short_name = 0;
};

struct DerivedNames {
    int64_t demangled = 0;
    int64_t short_name = 0;
};

} // namespace writer_detail

struct TraceDb::Impl {
    std::string path;
    sqlite3* db = nullptr;
    TraceDbOptions options;
    int64_t global_pid = 0;
    WriterCounters counters;
    bool closed = false;
    bool write_error_reported = false; // options.on_write_error has been called
    std::optional<Error> finish_error; // the result of the first finish(), returned again by later calls

    // Storage (trace_db_storage.hpp). A failed commit is rolled back and its rows counted lost; recording goes on.
    // Once the WAL comes within the reserve (plus the largest commit so far) of RLIMIT_FSIZE no row goes to SQLite any
    // more: each is counted lost.
    // finish() releases the reserve for its closing transaction, which records the loss.
    writer_detail::SpaceReserve reserve;
    int64_t file_size_limit = std::numeric_limits<int64_t>::max();
    // The WAL's size after the last commit, and the most one commit grew it: check_file_room stops recording while
    // the next commit, as large as the largest so far, would still leave the reserve for the closing transaction.
    int64_t wal_bytes = 0, largest_wal_growth = 0;
    std::optional<Error> stopped; // set when the file size limit stopped recording: why, as reported
    bool closing = false; // finish()'s closing transaction: its rows go to SQLite even when stopped

    // The open transaction: rows inserted since the last commit, by kind, and when the first of them came.
    bool in_transaction = false;
    int64_t pending_rows = 0;
    int64_t pending_kernels = 0;
    int64_t pending_syncs = 0;
    std::chrono::steady_clock::time_point first_pending_time;

    std::array<sqlite3_stmt*, static_cast<size_t>(writer_detail::Insert::Count)> inserts {};
    writer_detail::IntegerRowBatch kernel_batch;
    writer_detail::IntegerRowBatch api_batch;

    // Interned strings: id i is strings_by_id[i - 1], pointing at the key in `strings` (node keys never move).
    std::unordered_map<std::string, int64_t, writer_detail::StringHash, std::equal_to<>> strings;
    std::vector<const std::string*> strings_by_id;
    std::unordered_map<KernelConfig, int64_t, writer_detail::KernelConfigHash> configs;
    std::vector<writer_detail::StoredConfig> configs_by_id; // id i is configs_by_id[i - 1]
    std::unordered_map<int64_t, writer_detail::DerivedNames> derived_names; // by mangled-name id
    // Strings and configs with ids from these on are not yet committed. If SQLite rolls a transaction back
    // (disk full), they are inserted again so that no committed row refers to a missing id.
    int64_t first_uncommitted_string = 1;
    int64_t first_uncommitted_config = 1;
    int64_t next_kernel_id = 1;

    ~Impl();

    sqlite3_stmt* statement(writer_detail::Insert which) const { return inserts[static_cast<size_t>(which)]; }
    Error sqlite_error(std::string_view what) const;
    Expected<void> exec(const char* sql, std::string_view what);
    // SELECT count(*) of one table.
    Expected<int64_t> count_rows(std::string_view table);
    // Steps and resets an INSERT, counting the row as pending.
    Expected<void> insert(writer_detail::Insert which, std::string_view what);
    // Counts a row as written and pending (the transaction's age starts with its first row).
    void count_pending_row();
    // Counts rows an SQLite error lost, and reports the first such error (options.on_write_error).
    void note_lost(int64_t rows, const Error& error);
    // Whether rows are refused (counted lost, not written) because the file size limit stopped recording.
    bool rows_refused() const { return stopped && !closing; }
    // Stops writing rows (the file size limit): rolls the open transaction back and counts its rows lost.
    void stop_recording(const Error& error);
    // After a commit: stops writing rows once the WAL is within the reserve of the file size limit.
    void check_file_room();
    // Releases the reserve and begins the transaction that records the loss and finishes the trace.
    Expected<void> open_closing_transaction();
    Expected<void> prepare_batch(writer_detail::IntegerRowBatch& batch, writer_detail::Insert which, bool kernels);
    // Call after filling batch.next_row(): queues the row and inserts the batch when it is full.
    Expected<void> push_batched(writer_detail::IntegerRowBatch& batch);
    Expected<void> flush_batch(writer_detail::IntegerRowBatch& batch);
    Expected<void> flush_batches();
    void close_statements();
    Expected<void> begin();
    Expected<void> commit_and_begin(bool begin_again);
    Expected<void> reinsert_uncommitted();
    int64_t intern(std::string_view text);
    Expected<void> insert_string(int64_t id, std::string_view text);
    Expected<void> insert_config(int64_t id, const writer_detail::StoredConfig& stored);
    Expected<int64_t> config_id(const KernelConfig& config);
    void close_connection();
    Expected<void> write_schema(const SessionInfo& session);
    Expected<void> finished_error() const
    {
        return make_error(ErrorCode::Usage, path + ": the trace is already finished");
    }
};

} // namespace fp8scope
