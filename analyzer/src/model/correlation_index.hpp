// Maps a CUPTI correlation id to the row of a table that carries it (API call, sync, copy, ...). Correlation ids
// are usually dense and increasing, so a direct-address vector is used when it stays small; otherwise sorted
// (id, row) pairs and a binary search. Id 0 means "no correlation" (CUPTI could not correlate) and never matches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

class CorrelationIndex {
public:
    // `ids[row]` is the correlation id of each row; the first row wins when an id repeats, except that a row with
    // `second_choice[row]` set loses to one without (a driver call made inside the runtime call that carries the
    // same id: the runtime call is the one the program made).
    explicit CorrelationIndex(const std::vector<uint32_t>& ids, const std::vector<uint8_t>* second_choice = nullptr)
    {
        auto is_second = [&](size_t row) { return second_choice != nullptr && (*second_choice)[row] != 0; };
        uint32_t max_id = 0;
        for (uint32_t id : ids)
            max_id = std::max(max_id, id);
        // A direct table costs 4 bytes per possible id; allow it while it is at most ~4x the row count.
        if (max_id <= 4 * ids.size() + 1024) {
            direct_.assign(size_t(max_id) + 1, kNone);
            // Second choices first, then first choices over them; each pass in reverse so the first row wins.
            for (const bool second_pass : { true, false })
                for (size_t row = ids.size(); row-- > 0;)
                    if (ids[row] != 0 && is_second(row) == second_pass)
                        direct_[ids[row]] = uint32_t(row);
            return;
        }
        sorted_.reserve(ids.size());
        for (size_t row = 0; row < ids.size(); ++row)
            if (ids[row] != 0)
                sorted_.emplace_back(ids[row], uint32_t(row));
        std::stable_sort(sorted_.begin(), sorted_.end(), [&](auto& l, auto& r) {
            if (l.first != r.first)
                return l.first < r.first;
            return !is_second(l.second) && is_second(r.second);
        });
    }

    std::optional<size_t> find(uint32_t id) const
    {
        if (id == 0)
            return std::nullopt;
        if (!direct_.empty() || sorted_.empty()) {
            if (id >= direct_.size() || direct_[id] == kNone)
                return std::nullopt;
            return direct_[id];
        }
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), id,
            [](const std::pair<uint32_t, uint32_t>& p, uint32_t v) { return p.first < v; });
        if (it == sorted_.end() || it->first != id)
            return std::nullopt;
        return it->second;
    }

private:
    static constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> direct_;
    std::vector<std::pair<uint32_t, uint32_t>> sorted_;
};

} // namespace fp8scope::analyzer::detail
