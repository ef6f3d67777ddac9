// How a table of the trace format is declared: its columns (Column), the table (Table), and a column named at compile
// time (ColumnOf). Part of schema.hpp, which declares each table once, as a constexpr Table in schema::tables;
// everything that touches its rows starts from that declaration, the way SQLite's own column lists and Perfetto's
// table macros do:
//   - the CREATE TABLE text (schema::create_sql) and the INSERT text (the writer's insert_sql);
//   - the writer's binding, which takes one value per declared column, checked at compile time for count, type and
//     nullability (format/src/row_binding.hpp);
//   - the loader's SELECT, whose columns are named by ColumnOf (a name the table lacks does not compile), and the
//     check that a trace has every column its version promises (since_minor);
//   - the kernel view's SELECT (schema_view.hpp), and the Nsight Systems export's tables that ours share, made from
//     ours plus what the export adds (nsys_schema.hpp), which the loader's nsys reader and the scenario builder use;
//   - docs/trace-format.md, which a test checks against schema::kTables.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace fp8scope::schema {

// One column: its SQL type, whether NULL is allowed, and its unit or meaning as documented in
// docs/trace-format.md (a test checks that the document states it).
struct Column {
    std::string_view name;
    std::string_view sql_type; // INTEGER, REAL, TEXT, BLOB or ANY
    bool nullable;
    std::string_view unit; // "ns", "bytes", "StringIds.id", "ENUM_CUPTI_SYNC_TYPE", "count", ...
    // The minor version that added the column to an existing table (0: there from the table's start). A trace of
    // an earlier 1.x lacks it, and readers take it as NULL.
    int since_minor = 0;
};

enum class TableKind { Table, View };

struct Table {
    std::string_view name;
    std::span<const Column> columns;
    // Table: extra clause after the columns (e.g. a primary key). View: the SELECT body.
    std::string_view extra;
    TableKind kind = TableKind::Table;
    // The first minor version whose every trace has the table: a trace of an earlier 1.x may lack it, and readers
    // take it as empty. Usually the minor version that added it; see FP8SCOPE_CAPTURE_WINDOW for the exception.
    int since_minor = 0;
};

// A column of the table T, by name: ColumnOf<tables::kMemset>("bytes"). The name is looked up when the code is
// compiled, so a name the declaration lacks (a typo, a column of another table) does not compile.
template <const Table& T> struct ColumnOf {
    template <size_t N>
    consteval ColumnOf(const char (&column_name)[N]) // NOLINT: implicit, so that readers pass the name itself
        : index(find(std::string_view(column_name, N - 1)))
    {
    }

    size_t index; // position in T.columns
    constexpr const Column& column() const { return T.columns[index]; }
    // The column at a position of T.columns, for code that walks them all.
    static constexpr ColumnOf at(size_t position) { return ColumnOf(position); }

private:
    constexpr explicit ColumnOf(size_t position)
        : index(position)
    {
    }

    static consteval size_t find(std::string_view column_name)
    {
        for (size_t i = 0; i < T.columns.size(); ++i)
            if (T.columns[i].name == column_name)
                return i;
        throw "the table declares no column of this name"; // not a constant expression: the call does not compile
    }
};

} // namespace fp8scope::schema
