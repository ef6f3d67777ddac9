// A view's SELECT, made when compiled from the view's declared columns and its source tables' declarations (part of
// schema.hpp, which declares the one view, CUPTI_ACTIVITY_KIND_KERNEL). Each column of the view is either computed by
// an expression of its own or read, under its own name, from the first source table that declares a column of that
// name. The view's columns and its SELECT therefore cannot drift apart: a view column that no source declares and no
// expression computes, or an expression naming `alias.column` that its source does not declare, does not compile.
#pragma once

#include "fp8scope/format/schema_table.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace fp8scope::schema::view {

// A table the view reads, under an alias; every source after the first is joined ON `join_on`.
struct Source {
    std::string_view table;
    std::string_view alias;
    std::span<const Column> columns;
    std::string_view join_on;
};

// A view column computed by an SQL expression instead of read from a source.
struct Computed {
    std::string_view column;
    std::string_view expression;
};

struct Definition {
    std::span<const Column> columns; // the view's, in its order
    std::span<const Source> sources;
    std::span<const Computed> computed;
};

namespace detail {

constexpr bool is_identifier_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

constexpr bool declares(std::span<const Column> columns, std::string_view name)
{
    for (const Column& column : columns)
        if (column.name == name)
            return true;
    return false;
}

// Every `alias.column` in `expression` whose alias is a source's names a column that source declares.
constexpr bool references_declared_columns(const Definition& view, std::string_view expression)
{
    for (size_t i = 0; i < expression.size(); ++i) {
        if (i > 0 && is_identifier_char(expression[i - 1]))
            continue;
        for (const Source& source : view.sources) {
            const size_t prefix = source.alias.size() + 1;
            if (expression.substr(i, source.alias.size()) != source.alias || i + prefix > expression.size()
                || expression[i + source.alias.size()] != '.')
                continue;
            size_t end = i + prefix;
            while (end < expression.size() && is_identifier_char(expression[end]))
                ++end;
            if (!declares(source.columns, expression.substr(i + prefix, end - i - prefix)))
                return false;
        }
    }
    return true;
}

} // namespace detail

// SELECT <expression or alias.column> AS <column>, ... FROM <first source> AS <alias> JOIN <next> AS <alias> ON ...
constexpr std::string select_sql(const Definition& view)
{
    std::string sql = "SELECT ";
    for (size_t i = 0; i < view.columns.size(); ++i) {
        const std::string_view name = view.columns[i].name;
        if (i > 0)
            sql += ", ";
        // Indices, not pointers: under UBSan g++ 12 does not treat a pointer into a constant array compared with
        // null as a constant expression, and the sanitized build would not compile.
        constexpr size_t kNone = static_cast<size_t>(-1);
        size_t computed_index = kNone;
        for (size_t c = 0; c < view.computed.size(); ++c)
            if (view.computed[c].column == name)
                computed_index = c;
        size_t source_index = kNone;
        for (size_t s = 0; s < view.sources.size() && source_index == kNone; ++s)
            if (detail::declares(view.sources[s].columns, name))
                source_index = s;
        if (computed_index != kNone) {
            const std::string_view expression = view.computed[computed_index].expression;
            if (!detail::references_declared_columns(view, expression))
                throw "a computed column names a column its source does not declare"; // does not compile
            sql += expression;
        } else if (source_index != kNone) {
            sql += view.sources[source_index].alias;
            sql += '.';
            sql += name;
        } else {
            throw "no source declares the view's column and no expression computes it"; // does not compile
        }
        sql += " AS ";
        sql += name;
    }
    for (size_t i = 0; i < view.sources.size(); ++i) {
        const Source& source = view.sources[i];
        sql += i == 0 ? " FROM " : " JOIN ";
        sql += source.table;
        sql += " AS ";
        sql += source.alias;
        if (i > 0) {
            if (!detail::references_declared_columns(view, source.join_on))
                throw "the join names a column its source does not declare"; // does not compile
            sql += " ON ";
            sql += source.join_on;
        }
    }
    return sql;
}

// select_sql(V) as a constant: the text lives in a static array, so a Table's `extra` can point at it.
template <const Definition& V> struct SelectText {
    static constexpr size_t kSize = select_sql(V).size();
    static constexpr std::array<char, kSize> kChars = [] {
        std::array<char, kSize> chars {};
        const std::string sql = select_sql(V);
        for (size_t i = 0; i < kSize; ++i)
            chars[i] = sql[i];
        return chars;
    }();
    static constexpr std::string_view kText { kChars.data(), kSize };
};

} // namespace fp8scope::schema::view
