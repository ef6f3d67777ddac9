// The timeline's layout pieces (timeline_build.cpp): packing items into non-overlapping lanes, and grouping a table's
// rows by stream or thread.
#pragma once

#include "fp8scope/analyzer/views/timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer::detail {

// Puts each item on the first lane whose last item ends at or before the item's start (first fit). Items come sorted
// by start, and among equal starts the longer first, so a range nested in another lands one lane below it: for
// properly nested ranges (NVTX push/pop, a driver call inside a runtime call) the lane is the nesting depth. A
// segment tree over the lanes' last ends finds that lane in O(log lanes), so a hostile trace with thousands of
// nested ranges still lays out in O(n log n).
class LanePacker {
public:
    LanePacker(TimelineTrack& track, size_t expected_items)
        : track_(track)
    {
        track_.lanes.resize(1);
        reserve(track_.lanes[0], expected_items);
    }

    void add(int64_t start_ns, int64_t end_ns, ItemKind kind, uint32_t row, uint8_t category)
    {
        size_t lane = find_free(start_ns);
        if (lane == kNone) {
            grow();
            lane = find_free(start_ns);
        }
        if (lane >= track_.lanes.size())
            track_.lanes.resize(lane + 1);
        TimelineLane& l = track_.lanes[lane];
        l.start_ns.push_back(start_ns);
        l.end_ns.push_back(end_ns);
        l.row.push_back(row);
        l.kind.push_back(kind);
        l.category.push_back(category);
        set_last_end(lane, end_ns);
    }

    // Labels the lanes, counts the items and sums each lane's time per category in blocks.
    void finish()
    {
        track_.items = 0;
        for (size_t i = 0; i < track_.lanes.size(); ++i) {
            TimelineLane& lane = track_.lanes[i];
            if (track_.lanes.size() > 1)
                lane.label = fmt::format("depth {}", i);
            // Lane 0 was reserved for every item of the track: give back what the lanes below it took.
            const auto trim = [](auto& column) {
                if (column.capacity() - column.size() > column.size() / 8)
                    column.shrink_to_fit();
            };
            trim(lane.start_ns);
            trim(lane.end_ns);
            trim(lane.row);
            trim(lane.kind);
            trim(lane.category);
            std::array<int64_t, kTimelineCategoryCount> sum {};
            lane.block_time_ns.reserve(lane.size() / kLaneBlockItems + 1);
            for (size_t item = 0; item < lane.size(); ++item) {
                if (item % kLaneBlockItems == 0)
                    lane.block_time_ns.push_back(sum);
                sum[lane.category[item]] += lane.end_ns[item] - lane.start_ns[item];
            }
            if (lane.size() % kLaneBlockItems == 0)
                lane.block_time_ns.push_back(sum);
            track_.items += lane.size();
        }
    }

private:
    static constexpr size_t kNone = std::numeric_limits<size_t>::max();
    static constexpr int64_t kFree = std::numeric_limits<int64_t>::min(); // a lane not made yet fits anything

    static void reserve(TimelineLane& lane, size_t items)
    {
        lane.start_ns.reserve(items);
        lane.end_ns.reserve(items);
        lane.row.reserve(items);
        lane.kind.reserve(items);
        lane.category.reserve(items);
    }

    // The leftmost lane whose last end is <= start_ns, or kNone when every lane of the tree is busy.
    size_t find_free(int64_t start_ns) const
    {
        if (tree_[1] > start_ns)
            return kNone;
        size_t node = 1;
        while (node < capacity_)
            node = tree_[2 * node] <= start_ns ? 2 * node : 2 * node + 1;
        return node - capacity_;
    }

    void set_last_end(size_t lane, int64_t end_ns)
    {
        size_t node = lane + capacity_;
        tree_[node] = end_ns;
        for (node /= 2; node > 0; node /= 2)
            tree_[node] = std::min(tree_[2 * node], tree_[2 * node + 1]);
    }

    void grow()
    {
        std::vector<int64_t> leaves(tree_.begin() + static_cast<ptrdiff_t>(capacity_), tree_.end());
        capacity_ *= 2;
        tree_.assign(2 * capacity_, kFree);
        std::ranges::copy(leaves, tree_.begin() + static_cast<ptrdiff_t>(capacity_));
        for (size_t node = capacity_ - 1; node > 0; --node)
            tree_[node] = std::min(tree_[2 * node], tree_[2 * node + 1]);
    }

    TimelineTrack& track_;
    size_t capacity_ = 1;
    std::vector<int64_t> tree_ = std::vector<int64_t>(2, kFree);
};

// Rows of a table grouped by a key (stream, thread), each group in row order: a counting sort, O(rows).
template <class Key> struct Groups {
    std::map<Key, uint32_t> index; // key -> group
    std::vector<uint32_t> offsets; // group g: rows[offsets[g], offsets[g + 1])
    std::vector<uint32_t> rows;

    template <class KeyOf> Groups(size_t n, KeyOf key_of)
    {
        std::vector<uint32_t> group_of(n);
        std::unordered_map<Key, uint32_t> groups;
        std::vector<uint32_t> counts;
        // Keys repeat in runs (one stream, one thread): remember the last one before hashing.
        std::optional<Key> last_key;
        uint32_t last_group = 0;
        for (size_t row = 0; row < n; ++row) {
            const Key key = key_of(row);
            if (!last_key || key != *last_key) {
                const auto [it, fresh] = groups.try_emplace(key, static_cast<uint32_t>(counts.size()));
                if (fresh)
                    counts.push_back(0);
                last_key = key;
                last_group = it->second;
            }
            group_of[row] = last_group;
            ++counts[last_group];
        }
        // Groups numbered in key order.
        for (const auto& [key, g] : groups)
            index.emplace(key, g);
        std::vector<uint32_t> renumber(counts.size());
        uint32_t next = 0;
        for (auto& [key, g] : index) {
            renumber[g] = next;
            g = next++;
        }
        offsets.assign(counts.size() + 1, 0);
        for (size_t g = 0; g < counts.size(); ++g)
            offsets[renumber[g] + 1] = counts[g];
        for (size_t g = 0; g < counts.size(); ++g)
            offsets[g + 1] += offsets[g];
        rows.resize(n);
        std::vector<uint32_t> fill(offsets.begin(), offsets.end() - 1);
        for (size_t row = 0; row < n; ++row)
            rows[fill[renumber[group_of[row]]]++] = static_cast<uint32_t>(row);
    }

    std::span<uint32_t> of(const Key& key)
    {
        const auto it = index.find(key);
        if (it == index.end())
            return {};
        return std::span(rows).subspan(offsets[it->second], offsets[it->second + 1] - offsets[it->second]);
    }
};

} // namespace fp8scope::analyzer::detail
