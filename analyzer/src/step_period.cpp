#include "step_period.hpp"

#include "device_activity.hpp"
#include "median.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace fp8scope::analyzer::detail {

std::optional<Period> find_step_period(const TraceModel& model)
{
    std::vector<std::pair<uint32_t, size_t>> per_device;
    auto count_device = [&](uint32_t device) {
        for (auto& [id, count] : per_device)
            if (id == device) {
                ++count;
                return;
            }
        per_device.emplace_back(device, 1);
    };
    for (uint32_t device : model.kernels.device_id)
        count_device(device);
    for (uint32_t device : model.memcpys.device_id)
        count_device(device);
    for (uint32_t device : model.memsets.device_id)
        count_device(device);
    if (per_device.empty())
        return std::nullopt;
    const uint32_t device = std::max_element(per_device.begin(), per_device.end(), [](auto& l, auto& r) {
        return l.second < r.second;
    })->first;

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
    constexpr uint32_t kMinSteps = 3;
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
        for (int64_t start_ns : best->starts_ns)
            if (period.step_starts_ns.empty() || start_ns > period.step_starts_ns.back())
                period.step_starts_ns.push_back(start_ns);
        std::string anchor_name = best->token < base ? std::string(model.strings.values[best->token])
            : best->token == base + 16               ? std::string("memset")
                                                     : fmt::format("memcpy (copy kind {})", best->token - base);
        if (anchor_name.size() > 80)
            anchor_name = anchor_name.substr(0, 77) + "...";
        period.description = fmt::format("{} repetitions of a {}-activity sequence on device {}, each starting at "
                                         "'{}' (occurs {}x per step, median idle before it {} ns)",
            steps, activities / steps, device, anchor_name, best->per_step, best_idle_ns);
        return period;
    };
    for (uint32_t steps : candidates)
        if (auto period = try_steps(steps))
            return period;
    return std::nullopt;
}

} // namespace fp8scope::analyzer::detail
