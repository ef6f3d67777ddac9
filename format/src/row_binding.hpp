// Binding one row of a declared table (schema_table.hpp) to its prepared INSERT: one value per column, in the order the
// declaration lists them. The count, and each value's type against its column's SQL type and nullability, are checked
// when the code is compiled, so a column added to a table's declaration fails to compile every writer that does not
// bind it, and a value cannot land in the wrong kind of column.
#pragma once

#include "fp8scope/format/rows.hpp"

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace fp8scope::writer_detail {

// NULL bound to a table's INTEGER PRIMARY KEY: SQLite assigns the next rowid (sqlite.org/autoinc.html).
struct NextRowid { };

// A BLOB cell: `bytes` bytes at `data`, which outlive the insert.
struct Blob {
    const void* data = nullptr;
    size_t bytes = 0;
};

template <class T> inline constexpr bool kIsOptional = false;
template <class T> inline constexpr bool kIsOptional<std::optional<T>> = true;

// Whether a value of type V may be bound to `column`: integers, enums and StringIds to INTEGER, double to REAL, text to
// TEXT, a Blob to BLOB, integers and text to ANY; an optional or NULL only where the column is nullable.
template <class V> consteval bool fits(const schema::Column& column)
{
    using T = std::remove_cvref_t<V>;
    const std::string_view type = column.sql_type;
    if constexpr (std::is_same_v<T, std::nullopt_t>)
        return column.nullable;
    else if constexpr (kIsOptional<T>)
        return column.nullable && fits<typename T::value_type>(column);
    else if constexpr (std::is_same_v<T, NextRowid>)
        return type == "INTEGER";
    else if constexpr (std::is_same_v<T, double>)
        return type == "REAL";
    else if constexpr (std::is_same_v<T, Blob>)
        return type == "BLOB";
    else if constexpr (std::is_convertible_v<const T&, std::string_view>)
        return type == "TEXT" || type == "ANY";
    else if constexpr (std::is_integral_v<T> || std::is_enum_v<T> || std::is_same_v<T, StringId>)
        return type == "INTEGER" || type == "ANY";
    else
        return false;
}

// The value as SQLite's 64-bit integer: enums by their number, StringIds by their id, unsigned values by their bits
// (a uint64 byte count above INT64_MAX is stored negative, as the writer always has).
template <class T> constexpr int64_t integer_value(const T& value)
{
    if constexpr (std::is_same_v<T, StringId>)
        return value.value;
    else
        return static_cast<int64_t>(value);
}

// Binds one value at `index` (from 1). A bind can only fail on a wrong index or type, which fits() rules out, so the
// result is not checked here; sqlite3_step reports any misuse. Text and blobs are bound SQLITE_STATIC: the caller's
// values outlive the sqlite3_step that follows, and TraceDb resets the statement right after it.
template <class V> void bind_value(sqlite3_stmt* stmt, int index, const V& value)
{
    if constexpr (std::is_same_v<V, std::nullopt_t> || std::is_same_v<V, NextRowid>) {
        sqlite3_bind_null(stmt, index);
    } else if constexpr (kIsOptional<V>) {
        if (value)
            bind_value(stmt, index, *value);
        else
            sqlite3_bind_null(stmt, index);
    } else if constexpr (std::is_same_v<V, double>) {
        sqlite3_bind_double(stmt, index, value);
    } else if constexpr (std::is_same_v<V, Blob>) {
        sqlite3_bind_blob64(stmt, index, value.bytes == 0 ? "" : value.data, value.bytes, SQLITE_STATIC);
    } else if constexpr (std::is_convertible_v<const V&, std::string_view>) {
        const std::string_view text = value;
        sqlite3_bind_text64(stmt, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
    } else {
        sqlite3_bind_int64(stmt, index, integer_value(value));
    }
}

// Fails to compile, naming column I of T and the value's type, where the value does not fit the column.
template <const schema::Table& T, size_t I, class V> consteval void check_value()
{
    static_assert(fits<V>(T.columns[I]), "the value's type does not fit the column's SQL type or nullability");
}

// Binds one row of T: one value per declared column, in declaration order (count and types checked at compile time).
template <const schema::Table& T, class... Values> void bind_row(sqlite3_stmt* stmt, const Values&... values)
{
    static_assert(T.kind == schema::TableKind::Table, "rows are written to tables, not views");
    static_assert(sizeof...(Values) == T.columns.size(), "bind one value per column the table declares, in its order");
    if constexpr (sizeof...(Values) == T.columns.size()) {
        [&]<size_t... I>(std::index_sequence<I...>)
        {
            (check_value<T, I, Values>(), ...);
            (bind_value(stmt, static_cast<int>(I) + 1, values), ...);
        }
        (std::index_sequence_for<Values...> {});
    }
}

} // namespace fp8scope::writer_detail
