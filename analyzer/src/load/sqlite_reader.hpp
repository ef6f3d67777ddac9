// The loader's only door to SQLite: a hardened read-only connection to an untrusted file, prepared statements
// whose every step is checked, and validated column access that turns each bad value into one error naming the
// file, table, column and row.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/common/error.hpp"
#include "fp8scope/format/schema_table.hpp"
#include "model/progress_monitor.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

// Control characters escaped, so that a path or an SQLite message cannot break the one-line error rule.
std::string one_line(std::string_view text);

class Statement;

// A read-only connection to one trace file, opened in SQLite's defensive mode (docs/security.md "The reader").
class TraceFile {
public:
    // `path` has already been checked to be a non-empty regular file.
    static Expected<TraceFile> open(const std::string& path);
    TraceFile(TraceFile&& other) noexcept;
    TraceFile& operator=(TraceFile&&) = delete;
    TraceFile(const TraceFile&) = delete;
    ~TraceFile();

    sqlite3* db() const { return db_; }
    const std::string& path() const { return path_; }

    // "trace 'P': <detail>" as ErrorCode::InvalidTrace.
    Error invalid(std::string_view detail) const;
    // An SQLite failure while doing `doing` ("reading FP8SCOPE_KERNEL"), mapped to the right ErrorCode.
    Error sqlite_error(int rc, std::string_view doing) const;

    Expected<Statement> prepare(std::string_view sql, std::string_view doing) const;

    // Names and types ('table', 'view', 'index', 'trigger') of the objects in sqlite_schema, read once.
    Expected<void> load_catalog();
    bool has_table(std::string_view name) const;
    bool has_object(std::string_view name) const;
    bool has_table_with_prefix(std::string_view prefix) const;
    // PRAGMA quick_check(1): the b-trees' structure, every page's cells and free space. A leaf page whose cell count
    // was damaged makes a full-table SELECT skip rows without any error; this finds it (InvalidTrace, "corrupt").
    Expected<void> quick_check() const;
    // Column names of a table, by PRAGMA table_info.
    Expected<std::vector<std::string>> columns_of(std::string_view table) const;
    Expected<int64_t> count_rows(std::string_view table) const;

    // Progress and cancel for this connection (nullptr: none): for_each_row counts its rows into the monitor, and
    // SQLite's progress handler interrupts any statement (quick_check included) soon after a cancel.
    void set_monitor(ProgressMonitor* monitor);
    ProgressMonitor* monitor() const { return monitor_; }

private:
    TraceFile(sqlite3* db, std::string path);
    sqlite3* db_ = nullptr;
    std::string path_;
    std::unordered_map<std::string, std::string> catalog_; // name -> type
    ProgressMonitor* monitor_ = nullptr;
};

class Statement {
public:
    Statement(const TraceFile& file, sqlite3_stmt* stmt, std::string doing);
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&&) = delete;
    Statement(const Statement&) = delete;
    ~Statement();

    // true: a row is ready; false: done. Every other result code (SQLITE_CORRUPT in mid-table included) is
    // an error, never the end of the data.
    Expected<bool> step();
    void bind_text(int index, std::string_view text);
    sqlite3_stmt* get() const { return stmt_; }

private:
    const TraceFile* file_;
    sqlite3_stmt* stmt_;
    std::string doing_;
};

// Validated access to the columns of the current row of one SELECT. A bad value records the first problem and
// returns a harmless default; the row loop checks failed() once per row, which keeps the per-value cost at a
// type check and a compare. Index -1 stands for a column the file lacks (optional nsys columns).
class Columns {
public:
    Columns(sqlite3_stmt* stmt, std::string_view table, std::span<const std::string_view> names)
        : stmt_(stmt)
        , table_(table)
        , names_(names)
    {
    }

    void next_row() { ++row_; }
    int64_t row() const { return row_; }
    std::string_view table() const { return table_; }
    bool failed() const { return !problem_.empty(); }
    const std::string& problem() const { return problem_; }
    // Records a problem about column `index` of the current row: "<what> in TABLE.column (row N)".
    void fail(int index, std::string_view what);
    // Records a problem about the whole row: "<what> in TABLE row N".
    void fail_row(std::string_view what);

    bool is_null(int index) const { return index < 0 || sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
    // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
    int type(int index) const { return index < 0 ? SQLITE_NULL : sqlite3_column_type(stmt_, index); }
    // Any non-NULL value as text, converted by SQLite (for FP8SCOPE_META's untyped values).
    std::string_view as_text(int index);

    // One sqlite3_column_value() per value, then the cheap sqlite3_value_* accessors: every sqlite3_column_*
    // call is an API entry and exit, and calling two per value (type, then content) was the largest cost of
    // loading after SQLite's own row decoding.
    int64_t integer(int index)
    {
        sqlite3_value* value = sqlite3_column_value(stmt_, index);
        if (sqlite3_value_type(value) == SQLITE_INTEGER) [[likely]]
            return sqlite3_value_int64(value);
        bad_type(index, "an integer");
        return 0;
    }
    // NULL or a missing column give `fallback`.
    int64_t integer_or(int index, int64_t fallback)
    {
        if (index < 0)
            return fallback;
        sqlite3_value* value = sqlite3_column_value(stmt_, index);
        const int type = sqlite3_value_type(value);
        if (type == SQLITE_INTEGER) [[likely]]
            return sqlite3_value_int64(value);
        if (type == SQLITE_NULL)
            return fallback;
        bad_type(index, "an integer");
        return 0;
    }
    std::optional<int64_t> optional_integer(int index)
    {
        if (is_null(index))
            return std::nullopt;
        return integer(index);
    }
    // An id or count that must lie in [low, high].
    int64_t in_range(int index, int64_t value, int64_t low, int64_t high)
    {
        if (value < low || value > high) [[unlikely]] {
            out_of_range(index, value);
            return low;
        }
        return value;
    }
    uint32_t id32(int index) { return static_cast<uint32_t>(in_range(index, integer(index), 0, kMaxU32)); }
    uint32_t id32_or(int index, uint32_t fallback)
    {
        return static_cast<uint32_t>(in_range(index, integer_or(index, fallback), 0, kMaxU32));
    }
    std::optional<uint32_t> optional_id32(int index)
    {
        if (is_null(index))
            return std::nullopt;
        return id32(index);
    }
    int32_t int32(int index) { return static_cast<int32_t>(in_range(index, integer(index), kMinI32, kMaxI32)); }
    int32_t int32_or(int index, int32_t fallback)
    {
        return static_cast<int32_t>(in_range(index, integer_or(index, fallback), kMinI32, kMaxI32));
    }
    int64_t count(int index) { return in_range(index, integer(index), 0, std::numeric_limits<int64_t>::max()); }
    // A time in ns relative to the session start: within +-kMaxTraceTimeNs (trace_model.hpp).
    int64_t time(int index) { return checked_time(index, integer(index)); }
    int64_t checked_time(int index, int64_t value)
    {
        if (value < -kMaxTraceTimeNs || value > kMaxTraceTimeNs) [[unlikely]] {
            time_out_of_range(index, value);
            return 0;
        }
        return value;
    }

    double real(int index);
    std::optional<double> optional_real(int index)
    {
        if (is_null(index))
            return std::nullopt;
        return real(index);
    }
    std::string_view text(int index);
    std::optional<std::string_view> optional_text(int index)
    {
        if (is_null(index))
            return std::nullopt;
        return text(index);
    }
    std::span<const std::byte> blob(int index);

    static constexpr int64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
    static constexpr int64_t kMinI32 = std::numeric_limits<int32_t>::min();
    static constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();

private:
    void bad_type(int index, std::string_view wanted);
    void out_of_range(int index, int64_t value);
    void time_out_of_range(int index, int64_t value);
    std::string_view name(int index) const;

    sqlite3_stmt* stmt_;
    std::string_view table_;
    std::span<const std::string_view> names_;
    int64_t row_ = 0;
    std::string problem_;
};

// "name" with embedded quotes doubled: an SQL identifier.
std::string quoted_identifier(std::string_view identifier);

// SELECT "c1", "c2", ... FROM "table". Names come from the loader's constants or from the file's own catalogue
// (checked against the constants), never from row data.
std::string select_sql(std::string_view table, std::span<const std::string_view> columns);

// Rows between two progress reports of for_each_row (a power of two).
inline constexpr int64_t kProgressRows = 4096;

// Runs one SELECT over `table` and calls on_row(Columns&) for each row; stops at the first problem, or at a cancel
// of the file's monitor (ErrorCode::Cancelled). Returns the number of rows read.
template <class OnRow>
Expected<int64_t> for_each_row(
    const TraceFile& file, std::string_view table, std::span<const std::string_view> columns, OnRow&& on_row)
{
    const std::string doing = "reading " + std::string(table);
    auto statement = file.prepare(select_sql(table, columns), doing);
    if (!statement)
        return std::unexpected(statement.error());
    Columns row(statement->get(), table, columns);
    for (;;) {
        auto has_row = statement->step();
        if (!has_row)
            return std::unexpected(has_row.error());
        if (!*has_row) {
            if (ProgressMonitor* monitor = file.monitor())
                monitor->rows_read(row.row() % kProgressRows);
            return row.row();
        }
        row.next_row();
        on_row(row);
        if (row.failed()) [[unlikely]]
            return std::unexpected(file.invalid(row.problem()));
        if (row.row() % kProgressRows == 0) [[unlikely]]
            if (ProgressMonitor* monitor = file.monitor(); monitor && !monitor->rows_read(kProgressRows))
                return std::unexpected(ProgressMonitor::cancelled_error("cancelled"));
    }
}

// Checks that `table` has every column of `required`: "trace 'P': TABLE lacks column C".
Expected<void> require_columns(
    const TraceFile& file, std::string_view table, std::span<const std::string_view> required);

// How a reader learns which columns a table of the schema has.
enum class ColumnsFrom {
    // From the table's declaration: every column read is in the file, as check_tables has checked for our traces.
    // Only for columns there since 1.0: one added later (since_minor) may be missing from an older trace.
    Declaration,
    // From the file (PRAGMA table_info), an fp8scope trace: it must have every column read that its declaration has
    // had since 1.0; one added later (since_minor) reads as absent (-1) from an older trace.
    OurTrace,
    // From the file, an Nsight Systems export: it must have the columns TableColumns names as needed; others may be
    // absent (-1).
    NsightExport,
};

// The columns one reader SELECTs from a table, and where each lands in the row: TableColumns below names them.
class ColumnSelection {
public:
    // The first problem: the file's columns could not be read, or it lacks a column the reader must have
    // ("trace 'P': TABLE lacks column C", for the first such column in the order they were asked for).
    Expected<void> check() const;
    std::string_view table() const { return table_; }
    std::span<const std::string_view> select() const { return select_; }

protected:
    ColumnSelection(const TraceFile& file, std::string_view table, ColumnsFrom from);
    // Adds the column to the SELECT and returns its position in the row, or -1 when the file lacks it. `needed`: the
    // file must have it, whatever `from` says.
    int add(const schema::Column& column, bool needed);

private:
    const TraceFile* file_;
    std::string_view table_;
    ColumnsFrom from_;
    std::vector<std::string> present_; // the file's columns, unless from_ is Declaration
    std::optional<Error> error_;
    std::string_view missing_; // the first column the file must have and lacks
    std::vector<std::string_view> select_;
};

// TableColumns: read every column the table declares.
struct EveryColumn { };

// The columns a reader reads from the declared table T, and where each lands in the row, by the name the declaration
// gives it (schema::ColumnOf: a name T lacks does not compile) instead of by a position in a hand-written list:
//   TableColumns<schema::tables::kMemset> c(file, ColumnsFrom::OurTrace, { "start", "bytes", "memKind" });
//   if (auto ok = c.check(); !ok) ...
//   for_each_row(file, c, [&](Columns& row) { ... row.count(c["bytes"]) ... });
template <const schema::Table& T> class TableColumns : public ColumnSelection {
public:
    using Column = schema::ColumnOf<T>;

    // The columns `read`, in that order; `needed`, some of them, must be in the file whatever `from` says (the columns
    // an Nsight Systems export must have).
    TableColumns(const TraceFile& file, ColumnsFrom from, std::initializer_list<Column> read,
        std::initializer_list<Column> needed = {})
        : ColumnSelection(file, T.name, from)
    {
        position_.fill(kNotRead);
        for (const Column column : read)
            position_[column.index] = add(column.column(), contains(needed, column));
    }
    // Every column T declares, in its order.
    TableColumns(const TraceFile& file, ColumnsFrom from, EveryColumn, std::initializer_list<Column> needed = {})
        : ColumnSelection(file, T.name, from)
    {
        for (size_t i = 0; i < T.columns.size(); ++i)
            position_[i] = add(T.columns[i], contains(needed, Column::at(i)));
    }

    // The column's position in the row (Columns' index), or -1 when the file lacks it.
    int operator[](Column column) const
    {
        assert(position_[column.index] != kNotRead); // a column the reader did not ask for
        return position_[column.index];
    }

private:
    static constexpr int kNotRead = -2;
    static bool contains(std::initializer_list<Column> columns, Column column)
    {
        return std::ranges::any_of(columns, [&](Column c) { return c.index == column.index; });
    }
    std::array<int, T.columns.size()> position_ {};
};

// for_each_row over the selected columns of their table.
template <class OnRow>
Expected<int64_t> for_each_row(const TraceFile& file, const ColumnSelection& columns, OnRow&& on_row)
{
    return for_each_row(file, columns.table(), columns.select(), std::forward<OnRow>(on_row));
}

} // namespace fp8scope::analyzer::detail
