#include "load/id_index.hpp"

#include <algorithm>

namespace fp8scope::analyzer::detail {

namespace {
// A vector is used when it would be at most this many times larger than the id list, plus some slack.
constexpr uint64_t kDenseFactor = 4;
constexpr uint64_t kDenseSlack = 1024;
} // namespace

std::optional<int64_t> IdIndex::build(std::span<const int64_t> ids)
{
    by_offset_.clear();
    by_id_.clear();
    dense_ = true;
    min_id_ = 0;
    if (ids.empty())
        return std::nullopt;
    const auto [min_it, max_it] = std::ranges::minmax_element(ids);
    min_id_ = *min_it;
    // Unsigned arithmetic: max - min + 1 wraps to 0 only for the full int64 range, which is not dense.
    const uint64_t span = static_cast<uint64_t>(*max_it) - static_cast<uint64_t>(*min_it) + 1;
    dense_ = span != 0 && span <= kDenseFactor * ids.size() + kDenseSlack;
    if (dense_)
        by_offset_.assign(span, kAbsent);
    else
        by_id_.reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto index = static_cast<uint32_t>(i);
        if (dense_) {
            uint32_t& slot = by_offset_[static_cast<uint64_t>(ids[i]) - static_cast<uint64_t>(min_id_)];
            if (slot != kAbsent)
                return ids[i];
            slot = index;
        } else if (!by_id_.emplace(ids[i], index).second) {
            return ids[i];
        }
    }
    return std::nullopt;
}

} // namespace fp8scope::analyzer::detail
