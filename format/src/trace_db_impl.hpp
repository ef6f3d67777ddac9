// TraceDb's state, shared by its implementation files: trace_db.cpp (transactions, interning, finish),
// trace_db_create.cpp (file and schema), trace_db_rows.cpp and trace_db_tensor_rows.cpp (add_*),
// trace_db_batches.cpp (multi-row inserts) and trace_db_storage.cpp (the reserve kept for a full disk).
#pragma once

#include "fp8scope/format/trace_db.hpp"
#include "row_binding.hpp"
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

// Rows of an all-INTEGER table, buffered and inserted kRowsPerStatement at a time by one multi-row
// INSERT ... VALUES (...), (...). SQLite's per-statement work (opening a cursor, seeking to the table's end,
// halting, resetting) is then paid once per batch instead of once per row; that was about 40% of a kernel
// insert (callgrind, docs/benchmarks.md). Used for the two tables written once per launch.
struct IntegerRowBatch {
    static constexpr int kRowsPerStatement = 64;
    static constexpr int kMaxColumns = 10;
    size_t which = 0; // the table's position in schema::kTables: its single-row statement, used for a partial batch
    sqlite3_stmt* multi = nullptr; // kRowsPerStatement rows
    int columns = 0;
    int rows = 0;
    bool kernels = false; // rows count as kernels in WriterCounters
    std::array<int64_t, kRowsPerStatement * kMaxColumns> values {};

    int64_t* next_row() { return values.data() + static_cast<size_t>(rows) * static_cast<size_t>(columns); }
};

// The batch of one declared table, whose every column is a required INTEGER.
template <const schema::Table& T> struct TableBatch : IntegerRowBatch {
    static_assert(T.columns.size() <= kMaxColumns);
    static constexpr size_t kTable = schema::table_index(T);

    // Fills the next row: one value per declared column, in declaration order (checked when compiled, as bind_row).
    template <class... Values> void put(const Values&... row_values)
    {
        static_assert(sizeof...(Values) == T.columns.size(), "one value per column the table declares, in its order");
        static_assert(((std::is_integral_v<Values> || std::is_enum_v<Values>)&&...), "integers only");
        [&]<size_t... I>(std::index_sequence<I...>)
        {
            (check_value<T, I, Values>(), ...);
            int64_t* row = next_row();
            ((row[I] = integer_value(row_values)), ...);
        }
        (std::index_sequence_for<Values...> {});
    }
};

// INSERT text for `rows` rows from the table's declaration; every column is bound, in declaration order. Meta
// keys are written again when the trace finishes, hence OR REPLACE there.
std::string insert_sql(const schema::Table& table, int rows = 1);
// What a failed insert into the table says: "cannot insert into TABLE", or "cannot write TABLE" for the tables of one
// row per key or per session (meta, session start, capture windows).
std::string insert_failure(const schema::Table& table);

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

    // One prepared INSERT per table of schema::kTables, at its position there (none for the view).
    std::array<sqlite3_stmt*, std::size(schema::kTables)> inserts {};
    writer_detail::TableBatch<schema::tables::kFp8Kernel> kernel_batch;
    writer_detail::TableBatch<schema::tables::kRuntime> api_batch;

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
    // Bounded recordings (trace_db_windows.cpp): at each window's start, the last rowid of every table whose rows
    // belong to a window, in the order of that file's list; and how many windows were dropped.
    struct WindowMark {
        int64_t window_id = 0;
        std::vector<int64_t> last_rowids;
    };
    std::vector<WindowMark> window_marks;
    int64_t windows_dropped = 0;

    ~Impl();

    Error sqlite_error(std::string_view what) const;
    Expected<void> exec(const char* sql, std::string_view what);
    // The single integer a query returns (SELECT count(*), max(rowid), a PRAGMA); NULL reads as 0.
    Expected<int64_t> query_integer(const std::string& sql, std::string_view what);
    // SELECT count(*) of one table.
    Expected<int64_t> count_rows(std::string_view table);
    // The job's activity from first start to last end without the collector's own work (schema_meta.hpp,
    // kActivityFirstNs); nullopt when there is none. One scan of each activity table.
    Expected<std::optional<std::pair<int64_t, int64_t>>> activity_span();
    // Binds one row of T (writer_detail::bind_row: one value per declared column, checked when compiled) and
    // inserts it.
    template <const schema::Table& T, class... Values> Expected<void> write(const Values&... values)
    {
        constexpr size_t which = schema::table_index(T);
        writer_detail::bind_row<T>(inserts[which], values...);
        return insert(which);
    }
    // Steps and resets the INSERT of kTables[which], counting the row as pending.
    Expected<void> insert(size_t which);
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
    Expected<void> prepare_batch(writer_detail::IntegerRowBatch& batch, size_t which, bool kernels);
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
