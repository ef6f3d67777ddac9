// The file's StringIds ids mapped to the model's dense StringRef, and the interning of strings that arrive as
// plain text (nsys NVTX `text`, empty names).
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"
#include "load/id_index.hpp"
#include "load/sqlite_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fp8scope::analyzer::detail {

// Invalid UTF-8 sequences replaced by U+FFFD: strings come from an untrusted file and end up in JSON, HTML and
// Qt, which all expect UTF-8.
std::string valid_utf8(std::string_view text);

class StringIdMap {
public:
    // Reads StringIds (when the file has it) into `strings`. Ids may be any int64 (see IdIndex).
    Expected<void> load(const TraceFile& file, StringTable& strings);

    std::optional<StringRef> find(int64_t id) const
    {
        if (const auto index = index_.find(id)) [[likely]]
            return StringRef { first_ + *index };
        return std::nullopt;
    }

    // A string that has no id in the file, added once.
    StringRef intern(StringTable& strings, std::string_view text);

private:
    IdIndex index_;
    uint32_t first_ = 0; // StringRef of the first StringIds row
    std::unordered_map<std::string, uint32_t> interned_;
};

// The StringRef behind a StringIds reference in column `index`; a dangling id is an error of the row:
// "dangling string id 99 in FP8SCOPE_KERNEL_CONFIG.demangledName (row 3)".
inline StringRef string_ref(Columns& row, int index, const StringIdMap& strings)
{
    const int64_t id = row.integer(index);
    if (const auto ref = strings.find(id)) [[likely]]
        return *ref;
    if (!row.failed())
        row.fail(index, "dangling string id " + std::to_string(id));
    return {};
}

} // namespace fp8scope::analyzer::detail
