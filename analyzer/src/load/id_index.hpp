// Maps the arbitrary int64 ids a file uses (StringIds.id, FP8SCOPE_KERNEL_CONFIG.id, ...) to dense positions
// 0..n-1: a vector indexed by id - min when the ids are dense enough, a hash map otherwise, so that a hostile
// file with ids 0 and 2^62 costs no more memory than one with ids 0 and 1.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer::detail {

class IdIndex {
public:
    // Position i of `ids` becomes index i. Returns the first duplicated id, if any.
    std::optional<int64_t> build(std::span<const int64_t> ids);

    std::optional<uint32_t> find(int64_t id) const
    {
        if (dense_) {
            const uint64_t offset = static_cast<uint64_t>(id) - static_cast<uint64_t>(min_id_);
            if (offset < by_offset_.size() && by_offset_[offset] != kAbsent) [[likely]]
                return by_offset_[offset];
            return std::nullopt;
        }
        const auto it = by_id_.find(id);
        return it == by_id_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
    }

    bool dense() const { return dense_; }

private:
    static constexpr uint32_t kAbsent = UINT32_MAX;
    bool dense_ = true;
    int64_t min_id_ = 0;
    std::vector<uint32_t> by_offset_;
    std::unordered_map<int64_t, uint32_t> by_id_;
};

} // namespace fp8scope::analyzer::detail
