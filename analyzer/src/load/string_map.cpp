#include "load/string_map.hpp"

#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

namespace fp8scope::analyzer::detail {

namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0 (RFC 3629 §4: no overlong forms, no
// surrogates, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i)
{
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80)
        return 1;
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0)
            low = 0xA0;
        else if (lead == 0xED)
            high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0)
            low = 0x90;
        else if (lead == 0xF4)
            high = 0x8F;
    } else {
        return 0;
    }
    if (i + length > text.size())
        return 0;
    if (byte(i + 1) < low || byte(i + 1) > high)
        return 0;
    for (size_t k = 2; k < length; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
            return 0;
    }
    return length;
}

} // namespace

std::string valid_utf8(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t length = utf8_sequence_length(text, i);
        if (length == 0) {
            out += "\xEF\xBF\xBD"; // U+FFFD REPLACEMENT CHARACTER
            ++i;
        } else {
            out.append(text.substr(i, length));
            i += length;
        }
    }
    return out;
}

Expected<void> StringIdMap::load(const TraceFile& file, StringTable& strings)
{
    constexpr const schema::Table& kTable = schema::tables::kStringIds;
    if (!file.has_table(kTable.name))
        return {};
    // Both columns, in every file: an nsys export's too.
    const TableColumns<kTable> columns(file, ColumnsFrom::NsightExport, EveryColumn {}, { "id", "value" });
    const int id = columns["id"], value = columns["value"];
    if (auto ok = columns.check(); !ok)
        return ok;
    auto rows = file.count_rows(kTable.name);
    if (!rows)
        return std::unexpected(rows.error());
    std::vector<int64_t> ids;
    ids.reserve(static_cast<size_t>(*rows));
    strings.values.reserve(strings.values.size() + static_cast<size_t>(*rows));
    const size_t first = strings.values.size();
    auto read = for_each_row(file, columns, [&](Columns& row) {
        ids.push_back(row.integer(id));
        strings.values.push_back(valid_utf8(row.text(value)));
    });
    if (!read)
        return std::unexpected(read.error());
    first_ = static_cast<uint32_t>(first);
    if (const auto duplicate = index_.build(ids))
        return std::unexpected(file.invalid(fmt::format("duplicate string id {} in StringIds", *duplicate)));
    return {};
}

StringRef StringIdMap::intern(StringTable& strings, std::string_view text)
{
    std::string value = valid_utf8(text);
    if (const auto it = interned_.find(value); it != interned_.end())
        return StringRef { it->second };
    const auto ref = static_cast<uint32_t>(strings.values.size());
    strings.values.push_back(value);
    interned_.emplace(std::move(value), ref);
    return StringRef { ref };
}

} // namespace fp8scope::analyzer::detail
