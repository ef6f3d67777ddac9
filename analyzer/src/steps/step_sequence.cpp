// The kernel-sequence period of automatic step detection (docs/analysis.md "Steps", automatic detection): the step
// count that the repeated tokens' counts agree with, the anchor token where the steps begin, and its offset to the
// launching thread's longest pause. step_period.cpp weighs it against the optimizer's kernels and the syncs.
#include "steps/step_period.hpp"

#include "model/device_activity.hpp"
#include "model/median.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace fp8scope::analyzer::detail {

namespace {

// The optimizer groups' last kernels as step landmarks: of groups less than half the median spacing apart (a first
// step's update that runs twice, lazy state initialisation) only the later, which ends the step, is kept.
std::vector<uint32_t> spaced_update_ends(const std::vector<uint32_t>& ends)
{
    std::vector<int64_t> spacings;
    for (size_t i = 0; i + 1 < ends.size(); ++i)
        spacings.push_back(int64_t(ends[i + 1]) - int64_t(ends[i]));
    const int64_t median = median_of(spacings);
    std::vector<uint32_t> kept;
    for (size_t i = ends.size(); i-- > 0;)
        if (kept.empty() || 2 * (int64_t(kept.back()) - int64_t(ends[i])) >= median)
            kept.push_back(ends[i]);
    std::reverse(kept.begin(), kept.end());
    return kept;
}

struct LoopOffset {
    int64_t offset = 0;
    size_t support = 0; // boundaries at exactly this offset from their landmark
};

// The offset from a landmark (the anchor's occurrences, or the optimizer groups' last kernels) to the boundary after
// it that at least half the landmarks share, with the longest median pause.
std::optional<LoopOffset> loop_offset(
    const Sequence& s, const std::vector<uint32_t>& boundaries, const std::vector<uint32_t>& anchor_positions)
{
    std::map<int64_t, std::vector<int64_t>> pauses_by_offset;
    for (uint32_t best : boundaries) {
        const auto anchor = std::upper_bound(anchor_positions.begin(), anchor_positions.end(), best);
        if (anchor == anchor_positions.begin())
            continue;
        pauses_by_offset[int64_t(best) - int64_t(*(anchor - 1))].push_back(s.host_gap_ns[best]);
    }
    std::optional<LoopOffset> chosen;
    int64_t chosen_pause = -1;
    for (auto& [offset, pauses] : pauses_by_offset) {
        if (pauses.size() * 2 < anchor_positions.size())
            continue;
        const int64_t pause = median_of(pauses);
        if (pause > chosen_pause) {
            chosen = LoopOffset { offset, pauses.size() };
            chosen_pause = pause;
        }
    }
    return chosen;
}

} // namespace

std::optional<Period> sequence_period(const TraceModel& model, uint32_t device, const Sequence& sequence,
    const std::vector<uint32_t>& boundaries, const std::vector<uint32_t>& group_ends)
{
    const uint32_t base = uint32_t(model.strings.size());
    auto token_of = [&](const detail::Activity& a) -> uint32_t {
        switch (a.kind) {
        case detail::ActivityKind::Kernel:
            return model.kernels.name[a.row].index;
        case detail::ActivityKind::Memcpy:
            return base + uint32_t(std::clamp(model.memcpys.copy_kind[a.row], 0, 15));
        case detail::ActivityKind::Memset:
            break;
        }
        return base + 16;
    };

    std::vector<uint32_t> counts(size_t(base) + 17, 0);
    detail::Activity activity;
    size_t activities = 0;
    for (detail::ActivityCursor cursor(model, device); cursor.next(activity); ++activities)
        ++counts[token_of(activity)];

    // A token occurring k times per step in S whole steps occurs k*S times, up to k more when the trace ends
    // inside a step or the first step ran extra work: its count is compatible with S when count = k*S + j,
    // 0 <= j <= k.
    constexpr uint32_t kMaxPerStep = 8;
    auto compatible = [](uint32_t count, uint32_t steps) { return count >= steps && count % steps <= count / steps; };
    std::map<uint32_t, size_t> tokens_per_count;
    for (uint32_t count : counts)
        if (count >= kMinSteps)
            ++tokens_per_count[count];
    std::map<uint32_t, size_t> score; // candidate step count -> tokens whose count is compatible with it
    for (const auto& [count, tokens] : tokens_per_count)
        for (uint32_t per_step = 1; per_step <= kMaxPerStep; ++per_step)
            for (uint32_t steps : { count / per_step, count / per_step - 1 })
                if (steps >= kMinSteps && compatible(count, steps) && count / steps == per_step)
                    score.emplace(steps, 0);
    size_t best_score = 0;
    for (auto& [steps, tokens] : score) {
        for (const auto& [count, with_count] : tokens_per_count)
            if (compatible(count, steps))
                tokens += with_count;
        best_score = std::max(best_score, tokens);
    }
    // Every smaller step count is compatible with more tokens, so the step count is the largest that (nearly) all
    // repeated tokens agree with and that has a regular anchor; a few candidates are tried, largest first.
    std::vector<uint32_t> candidates;
    for (const auto& [candidate, tokens] : score)
        if (tokens * 10 >= best_score * 9 && candidate >= kMinSteps)
            candidates.push_back(candidate);
    std::sort(candidates.rbegin(), candidates.rend());
    if (candidates.size() > 6)
        candidates.resize(6); // each try is a pass over the activities
    auto try_steps = [&](uint32_t steps) -> std::optional<Period> {
        // Anchor candidates: tokens occurring k = 1..8 times per step, fewest first.
        struct Anchor {
            uint32_t token = 0, per_step = 0, seen = 0;
            std::vector<int64_t> starts_ns, idle_before_ns;
            std::vector<uint32_t> positions; // in the device's activity sequence
        };
        std::vector<Anchor> anchors;
        for (uint32_t per_step = 1; per_step <= kMaxPerStep; ++per_step)
            for (uint32_t token = 0; token < counts.size() && anchors.size() < 64; ++token)
                if (compatible(counts[token], steps) && counts[token] / steps == per_step)
                    anchors.push_back({ token, per_step, 0, {}, {}, {} });
        if (anchors.empty())
            return std::nullopt;
        std::vector<int16_t> slot(counts.size(), -1);
        for (size_t i = 0; i < anchors.size(); ++i)
            slot[anchors[i].token] = int16_t(i);
        int64_t busy_until_ns = INT64_MIN;
        uint32_t position = 0;
        for (detail::ActivityCursor cursor(model, device); cursor.next(activity); ++position) {
            const int16_t s = slot[token_of(activity)];
            if (s >= 0) {
                Anchor& anchor = anchors[size_t(s)];
                if (anchor.seen++ % anchor.per_step == 0) {
                    anchor.starts_ns.push_back(activity.start_ns);
                    anchor.positions.push_back(position);
                    anchor.idle_before_ns.push_back(
                        busy_until_ns == INT64_MIN ? 0 : std::max<int64_t>(0, activity.start_ns - busy_until_ns));
                }
            }
            busy_until_ns = std::max(busy_until_ns, activity.end_ns);
        }
        // A loop's steps hold about the same number of activities: at least 70% of an anchor's steps must be within
        // 10% of its median (rounded down: exactly the median for steps under 10 activities), else the anchor is
        // not a step boundary.
        auto regular = [](const Anchor& anchor) {
            std::vector<int64_t> lengths;
            for (size_t i = 0; i + 1 < anchor.positions.size(); ++i)
                lengths.push_back(int64_t(anchor.positions[i + 1]) - int64_t(anchor.positions[i]));
            const int64_t median = median_of(lengths);
            const int64_t tolerance = median / 10;
            const auto close = std::count_if(
                lengths.begin(), lengths.end(), [&](int64_t length) { return std::abs(length - median) <= tolerance; });
            return close * 10 >= int64_t(lengths.size()) * 7;
        };
        // The first occurrence follows the prologue, not a step boundary: leave it out of the typical idle time.
        const Anchor* best = nullptr;
        int64_t best_idle_ns = -1;
        for (const Anchor& anchor : anchors) {
            if (anchor.starts_ns.size() < kMinSteps || !regular(anchor))
                continue;
            const int64_t idle_ns = median_of({ anchor.idle_before_ns.begin() + 1, anchor.idle_before_ns.end() });
            if (idle_ns > best_idle_ns
                || (idle_ns == best_idle_ns && anchor.starts_ns.front() < best->starts_ns.front())) {
                best = &anchor;
                best_idle_ns = idle_ns;
            }
        }
        if (!best)
            return std::nullopt;
        Period period;
        // The landmark whose distance to the optimizer's boundary varies least: the anchor, or, when more steps
        // share one distance from it, the end of the optimizer's kernels (work that a step gains midway, a planted
        // drift's extra kernels, moves the anchor's distance but not that one).
        const auto offset = loop_offset(sequence, boundaries, best->positions);
        const std::vector<uint32_t> update_ends = spaced_update_ends(group_ends);
        const auto from_update = loop_offset(sequence, boundaries, update_ends);
        const bool by_update = from_update && from_update->offset > 0
            && from_update->support > (offset ? offset->support : 0) && update_ends.size() + 1 >= best->positions.size()
            && update_ends.size() <= best->positions.size() + 1;
        const int64_t shift = by_update ? from_update->offset : offset ? offset->offset : 0;
        period.step_starts_ns = aligned_starts(sequence, by_update ? update_ends : best->positions, shift, shift > 0);
        if (by_update)
            drop_after_last_update(sequence, period.step_starts_ns);
        if (period.step_starts_ns.size() < kMinSteps)
            return std::nullopt;
        std::string anchor_name = best->token < base ? std::string(model.strings.values[best->token])
            : best->token == base + 16               ? std::string("memset")
                                                     : fmt::format("memcpy (copy kind {})", best->token - base);
        if (anchor_name.size() > 80)
            anchor_name = anchor_name.substr(0, 77) + "...";
        period.description = fmt::format("{} repetitions of a {}-activity sequence on device {}, anchored at '{}' "
                                         "(occurs {}x per step, median idle before it {} ns){}",
            period.step_starts_ns.size(), activities / steps, device, anchor_name, best->per_step, best_idle_ns,
            by_update ? fmt::format("; steps begin {} activities after the optimizer's last kernel, at the launching "
                                    "thread's longest pause after it (a fixed distance in more steps than from the "
                                    "anchor)",
                shift)
                : shift != 0
                ? fmt::format("; steps begin {} activities after it, at the launching thread's longest pause "
                              "after the optimizer",
                    shift)
                : std::string());
        return period;
    };
    std::optional<Period> found;
    for (uint32_t steps : candidates)
        if ((found = try_steps(steps)))
            break;
    return found;
}

} // namespace fp8scope::analyzer::detail
