// query(): the level-of-detail walk over one lane (timeline.hpp; docs/analysis.md "Queries for the viewer"). Every
// step either returns a wide item or jumps, by binary search, over a run of narrow ones, so the work per call is
// bounded by the pixels, never by the items in the window.
#include "fp8scope/analyzer/views/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fp8scope::analyzer {

namespace {

using CategoryTimes = std::array<int64_t, kTimelineCategoryCount>;

void add_items(const TimelineLane& lane, size_t first, size_t last, CategoryTimes& times)
{
    for (size_t i = first; i < last; ++i)
        times[lane.category[i]] += lane.end_ns[i] - lane.start_ns[i];
}

// Time per category of the items [0, item): one block's running sum and the items after it.
CategoryTimes times_before(const TimelineLane& lane, size_t item)
{
    const size_t block = item / kLaneBlockItems;
    CategoryTimes times = lane.block_time_ns[block];
    add_items(lane, block * kLaneBlockItems, item, times);
    return times;
}

// The category with the most time among the items [first, last); ties go to the first item's category when it is
// among them, else to the lowest.
uint8_t dominant_category(const TimelineLane& lane, size_t first, size_t last)
{
    CategoryTimes times {};
    if (last - first <= 2 * kLaneBlockItems) {
        add_items(lane, first, last, times);
    } else {
        const CategoryTimes upto_last = times_before(lane, last);
        const CategoryTimes upto_first = times_before(lane, first);
        for (size_t c = 0; c < kTimelineCategoryCount; ++c)
            times[c] = upto_last[c] - upto_first[c];
    }
    uint8_t best = lane.category[first];
    for (size_t c = 0; c < kTimelineCategoryCount; ++c)
        if (times[c] > times[best])
            best = static_cast<uint8_t>(c);
    return best;
}

} // namespace

void query(const TimelineIndex& index, LaneRef lane_ref, int64_t t0_ns, int64_t t1_ns, int width_px, double min_px,
    std::vector<TimelineEntry>& out)
{
    out.clear();
    if (width_px <= 0 || t1_ns <= t0_ns || lane_ref.track >= index.tracks.size()
        || lane_ref.lane >= index.tracks[lane_ref.track].lanes.size())
        return;
    const TimelineLane& lane = index.lane(lane_ref);
    const auto& start = lane.start_ns;
    const auto& end = lane.end_ns;
    // The folding width in ns, w, as a double (a window of a few ns over many pixels makes it a fraction of a ns),
    // and the jump: an item starts at least w after s exactly when it starts at least ceil(w) after it (times are
    // integers). Differences of caller-given times are taken in double so that no window overflows.
    const double fold_ns
        = std::max(0.0, min_px) * ((static_cast<double>(t1_ns) - static_cast<double>(t0_ns)) / width_px);
    constexpr double kMaxJump = 0x1p62;
    const int64_t jump_ns = static_cast<int64_t>(std::ceil(std::min(fold_ns, kMaxJump)));

    // The first visible item: ends after t0, or is an instant at t0 (ends are sorted: lanes do not overlap).
    size_t i = static_cast<size_t>(std::ranges::lower_bound(end, t0_ns) - end.begin());
    while (i < end.size() && end[i] == t0_ns && start[i] < t0_ns)
        ++i;
    // One past the last visible item: the first that starts at or after t1.
    const size_t stop = static_cast<size_t>(
        std::lower_bound(start.begin() + static_cast<ptrdiff_t>(i), start.end(), t1_ns) - start.begin());
    const auto narrow
        = [&](size_t k) { return static_cast<double>(std::min(end[k], t1_ns) - std::max(start[k], t0_ns)) < fold_ns; };
    const auto single = [&](size_t k) {
        out.push_back({ start[k], end[k], static_cast<uint32_t>(k), 1, lane.category[k], lane.ref(k) });
    };
    while (i < stop) {
        if (!narrow(i)) {
            single(i++);
            continue;
        }
        const int64_t fold_start = std::max(start[i], t0_ns);
        const int64_t limit = fold_start > std::numeric_limits<int64_t>::max() - jump_ns
            ? std::numeric_limits<int64_t>::max()
            : fold_start + jump_ns;
        size_t j = static_cast<size_t>(std::lower_bound(start.begin() + static_cast<ptrdiff_t>(i + 1),
                                           start.begin() + static_cast<ptrdiff_t>(stop), limit)
            - start.begin());
        // Only the last item of the run can reach past the fold's width; a wide one is drawn on its own.
        if (j - i > 1 && !narrow(j - 1))
            --j;
        if (j - i == 1) {
            single(i++);
            continue;
        }
        out.push_back({ start[i], end[j - 1], static_cast<uint32_t>(i), static_cast<uint32_t>(j - i),
            dominant_category(lane, i, j), lane.ref(i) });
        i = j;
    }
}

std::vector<TimelineEntry> query(
    const TimelineIndex& index, LaneRef lane, int64_t t0_ns, int64_t t1_ns, int width_px, double min_px)
{
    std::vector<TimelineEntry> out;
    query(index, lane, t0_ns, t1_ns, width_px, min_px, out);
    return out;
}

} // namespace fp8scope::analyzer
