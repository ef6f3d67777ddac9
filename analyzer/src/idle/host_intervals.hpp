// The host side of bubble classification (bubbles.cpp; docs/analysis.md "Causes of bubbles"): unions of intervals
// with prefix sums, one host thread's API calls as such a union, and its host-blocking calls by end time. Each
// lookup is a binary search over arrays built once.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "model/median.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::bubbles_detail {

// A union of intervals added in start order (overlapping ones merged), with prefix sums to measure how much of
// any interval it covers in O(log n).
struct IntervalUnion {
    std::vector<int64_t> start_ns, end_ns, covered_before_ns;

    void add(int64_t start, int64_t end)
    {
        if (!end_ns.empty() && start <= end_ns.back()) {
            end_ns.back() = std::max(end_ns.back(), end);
        } else {
            start_ns.push_back(start);
            end_ns.push_back(end);
        }
    }

    void finish()
    {
        covered_before_ns.assign(start_ns.size() + 1, 0);
        for (size_t i = 0; i < start_ns.size(); ++i)
            covered_before_ns[i + 1] = covered_before_ns[i] + end_ns[i] - start_ns[i];
    }

    int64_t covered(int64_t a, int64_t b) const
    {
        // Merged intervals are disjoint and sorted, so their ends are sorted too.
        const size_t first = size_t(std::upper_bound(end_ns.begin(), end_ns.end(), a) - end_ns.begin());
        const size_t last = size_t(std::lower_bound(start_ns.begin(), start_ns.end(), b) - start_ns.begin());
        if (first >= last)
            return 0;
        int64_t result = covered_before_ns[last] - covered_before_ns[first];
        result -= std::max<int64_t>(0, a - start_ns[first]);
        result -= std::max<int64_t>(0, end_ns[last - 1] - b);
        return result;
    }

    // Calls `on_covered(start, end)` for each covered stretch of [a, b), clipped to it, in time order.
    template <typename OnCovered> void for_each_within(int64_t a, int64_t b, OnCovered on_covered) const
    {
        for (size_t i = size_t(std::upper_bound(end_ns.begin(), end_ns.end(), a) - end_ns.begin());
             i < start_ns.size() && start_ns[i] < b; ++i)
            on_covered(std::max(a, start_ns[i]), std::min(b, end_ns[i]));
    }
};

// The union of one thread's API calls (nested runtime/driver calls merged), added in start order. A merged interval
// is stored as the API row that begins it: its end is that call's end, except for the few intervals that a later call
// outlasts (calls that overlap without nesting), which keep the row of that later call in `longer_end_`. 4 bytes an
// interval instead of the 16 of two times (160 MB on 10 M calls;
// docs/benchmarks.md "The analyzer at the speed of its storage"). API rows fit uint32, as in CorrelationIndex.
class CallUnion {
public:
    explicit CallUnion(const ApiTable& api)
        : api_(&api)
    {
    }

    void reserve(size_t rows) { first_row_.reserve(rows); }

    void add(size_t row)
    {
        if (first_row_.empty() || api_->start_ns[row] > end_ns(first_row_.size() - 1)) {
            first_row_.push_back(uint32_t(row));
            return;
        }
        const uint32_t last = uint32_t(first_row_.size() - 1);
        if (api_->end_ns[row] <= end_ns(last))
            return;
        if (!longer_end_.empty() && longer_end_.back().first == last)
            longer_end_.back().second = uint32_t(row);
        else
            longer_end_.emplace_back(last, uint32_t(row));
    }

    // The longest stretch of [a, b) that no interval covers.
    int64_t longest_hole(int64_t a, int64_t b) const
    {
        int64_t longest = 0, from = a;
        for (size_t i = first_ending_after(a); i < first_row_.size() && start_ns(i) < b; ++i) {
            longest = std::max(longest, start_ns(i) - from);
            from = std::max(from, end_ns(i));
        }
        return std::max(longest, b - from);
    }

    // Calls `on_hole(start, end)` for each stretch of [a, b) that no interval covers and that is longer than
    // `min_ns`, in time order.
    template <typename OnHole> void for_each_hole(int64_t a, int64_t b, int64_t min_ns, OnHole on_hole) const
    {
        int64_t from = a;
        for (size_t i = first_ending_after(a); i < first_row_.size() && start_ns(i) < b; ++i) {
            if (start_ns(i) - from > min_ns)
                on_hole(from, start_ns(i));
            from = std::max(from, end_ns(i));
        }
        if (b - from > min_ns)
            on_hole(from, b);
    }

    // The median hole between consecutive intervals (0 with fewer than two).
    int64_t median_hole() const
    {
        detail::SampleValues holes;
        holes.reserve(first_row_.size());
        for (size_t i = 1; i < first_row_.size(); ++i)
            holes.push_back(start_ns(i) - end_ns(i - 1));
        return holes.median();
    }

private:
    // The first interval that ends after `a`. Merged intervals are disjoint and sorted, so their ends are sorted too.
    size_t first_ending_after(int64_t a) const
    {
        size_t lo = 0, hi = first_row_.size();
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (end_ns(mid) <= a)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }

    int64_t start_ns(size_t i) const { return api_->start_ns[first_row_[i]]; }

    int64_t end_ns(size_t i) const
    {
        if (longer_end_.empty()) [[likely]]
            return api_->end_ns[first_row_[i]];
        const auto it = std::lower_bound(longer_end_.begin(), longer_end_.end(), std::pair<uint32_t, uint32_t>(i, 0));
        return api_->end_ns[it != longer_end_.end() && it->first == i ? it->second : first_row_[i]];
    }

    const ApiTable* api_;
    std::vector<uint32_t> first_row_;
    std::vector<std::pair<uint32_t, uint32_t>> longer_end_; // (interval, row whose end ends it), by interval
};

// What one host thread did: the union of its API calls and its host-blocking calls by end time.
struct ThreadActivity {
    explicit ThreadActivity(const ApiTable& calls)
        : api(calls)
    {
    }

    CallUnion api;
    int64_t stall_threshold_ns = kHostStallMinNs; // rule 3
    int64_t median_silence_ns = 0;
    std::vector<std::pair<int64_t, size_t>> blocking_by_end; // (end_ns, index into the blocking list)
};

// The first host-blocking call in `by_end` (sorted) that ended inside [a, b] and passes `accept`.
template <typename Accept>
std::optional<size_t> blocking_ended_in(
    const std::vector<std::pair<int64_t, size_t>>& by_end, int64_t a, int64_t b, Accept accept)
{
    auto it = std::lower_bound(by_end.begin(), by_end.end(), std::pair<int64_t, size_t>(a, 0));
    for (; it != by_end.end() && it->first <= b; ++it)
        if (accept(it->second))
            return it->second;
    return std::nullopt;
}

} // namespace fp8scope::analyzer::bubbles_detail
