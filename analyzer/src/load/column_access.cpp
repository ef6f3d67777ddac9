// Validated column access (Columns) and the helpers that build one SELECT per table (ColumnSelection).
#include "load/sqlite_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace fp8scope::analyzer::detail {

namespace {

std::string_view type_name(int type)
{
    switch (type) {
    case SQLITE_INTEGER:
        return "an integer";
    case SQLITE_FLOAT:
        return "a real";
    case SQLITE_TEXT:
        return "text";
    case SQLITE_BLOB:
        return "a blob";
    default:
        return "NULL";
    }
}

} // namespace

std::string_view Columns::name(int index) const
{
    return index >= 0 && static_cast<size_t>(index) < names_.size() ? names_[static_cast<size_t>(index)] : "?";
}

void Columns::fail(int index, std::string_view what)
{
    if (problem_.empty())
        problem_ = fmt::format("{} in {}.{} (row {})", what, table_, name(index), row_);
}

void Columns::fail_row(std::string_view what)
{
    if (problem_.empty())
        problem_ = fmt::format("{} in {} row {}", what, table_, row_);
}

void Columns::bad_type(int index, std::string_view wanted)
{
    const int type = sqlite3_column_type(stmt_, index);
    if (type == SQLITE_NULL)
        fail(index, "NULL");
    else
        fail(index, fmt::format("{} where {} belongs", type_name(type), wanted));
}

void Columns::out_of_range(int index, int64_t value)
{
    fail(index, fmt::format("value {} out of range", value));
}

void Columns::time_out_of_range(int index, int64_t value)
{
    fail(index,
        fmt::format("time {} ns out of range (more than 2^53 ns, about 104 days, from the session start)", value));
}

double Columns::real(int index)
{
    const int type = sqlite3_column_type(stmt_, index);
    if (type == SQLITE_FLOAT || type == SQLITE_INTEGER)
        return sqlite3_column_double(stmt_, index);
    bad_type(index, "a number");
    return 0;
}

std::string_view Columns::text(int index)
{
    if (sqlite3_column_type(stmt_, index) != SQLITE_TEXT) {
        bad_type(index, "text");
        return {};
    }
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
    const int bytes = sqlite3_column_bytes(stmt_, index);
    return data ? std::string_view(data, static_cast<size_t>(bytes)) : std::string_view {};
}

std::string_view Columns::as_text(int index)
{
    if (index < 0)
        return {};
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
    const int bytes = sqlite3_column_bytes(stmt_, index);
    return data ? std::string_view(data, static_cast<size_t>(bytes)) : std::string_view {};
}

std::span<const std::byte> Columns::blob(int index)
{
    if (sqlite3_column_type(stmt_, index) != SQLITE_BLOB) {
        bad_type(index, "a blob");
        return {};
    }
    const auto* data = static_cast<const std::byte*>(sqlite3_column_blob(stmt_, index));
    const int bytes = sqlite3_column_bytes(stmt_, index);
    return data ? std::span<const std::byte>(data, static_cast<size_t>(bytes)) : std::span<const std::byte> {};
}

std::string quoted_identifier(std::string_view identifier)
{
    std::string out = "\"";
    for (char c : identifier) {
        if (c == '"')
            out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string select_sql(std::string_view table, std::span<const std::string_view> columns)
{
    std::string sql = "SELECT ";
    for (size_t i = 0; i < columns.size(); ++i) {
        if (i > 0)
            sql += ", ";
        sql += quoted_identifier(columns[i]);
    }
    sql += " FROM ";
    sql += quoted_identifier(table);
    return sql;
}

Expected<void> require_columns(
    const TraceFile& file, std::string_view table, std::span<const std::string_view> required)
{
    auto present = file.columns_of(table);
    if (!present)
        return std::unexpected(present.error());
    for (std::string_view column : required) {
        if (std::ranges::find(*present, column) == present->end())
            return std::unexpected(file.invalid(fmt::format("{} lacks column {}", table, column)));
    }
    return {};
}

ColumnSelection::ColumnSelection(const TraceFile& file, std::string_view table, ColumnsFrom from)
    : file_(&file)
    , table_(table)
    , from_(from)
{
    if (from_ == ColumnsFrom::Declaration)
        return;
    if (auto present = file.columns_of(table))
        present_ = std::move(*present);
    else
        error_ = std::move(present.error());
}

int ColumnSelection::add(const schema::Column& column, bool needed)
{
    // A column added after 1.0 cannot be taken from the declaration: an older trace lacks it.
    assert(from_ != ColumnsFrom::Declaration || column.since_minor == 0);
    if (from_ != ColumnsFrom::Declaration && std::ranges::find(present_, column.name) == present_.end()) {
        const bool promised = from_ == ColumnsFrom::OurTrace && column.since_minor == 0;
        if ((needed || promised) && missing_.empty())
            missing_ = column.name;
        return -1;
    }
    select_.push_back(column.name);
    return static_cast<int>(select_.size()) - 1;
}

Expected<void> ColumnSelection::check() const
{
    if (error_)
        return std::unexpected(*error_);
    if (!missing_.empty())
        return std::unexpected(file_->invalid(fmt::format("{} lacks column {}", table_, missing_)));
    return {};
}

} // namespace fp8scope::analyzer::detail
