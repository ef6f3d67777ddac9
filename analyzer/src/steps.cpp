// Step finding (spec "Analysis definitions", "Step"; docs/analysis.md "Steps"): markers, then NVTX ranges, then the
// repeating kernel sequence, then the whole trace. Every rule looks at each distinct string once, never per row.
#include "fp8scope/analyzer/steps.hpp"

#include "device_activity.hpp"
#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <tuple>

namespace fp8scope::analyzer {
namespace {

int64_t median_of(std::vector<int64_t> values)
{
    if (values.empty())
        return 0;
    auto middle = values.begin() + values.size() / 2;
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

// Steps from their start times (sorted, distinct): each runs to the next start. The last one has no next
// start: it ends at the trace's last activity, but at most two median step lengths after it began, so that a
// long tail (evaluation, checkpointing, teardown) is not counted as a step.
std::vector<StepInterval> steps_from_starts(
    const std::vector<int64_t>& starts, const std::vector<int64_t>& indices, int64_t trace_end_ns)
{
    std::vector<StepInterval> steps;
    std::vector<int64_t> lengths;
    for (size_t i = 0; i + 1 < starts.size(); ++i) {
        steps.push_back({ indices[i], starts[i], starts[i + 1] });
        lengths.push_back(starts[i + 1] - starts[i]);
    }
    if (!starts.empty()) {
        int64_t end_ns = trace_end_ns;
        if (!lengths.empty())
            end_ns = std::min(end_ns, starts.back() + 2 * median_of(lengths));
        if (end_ns > starts.back())
            steps.push_back({ indices.back(), starts.back(), end_ns });
    }
    return steps;
}

std::optional<StepSet> steps_from_markers(const TraceModel& model, int64_t trace_end_ns)
{
    if (model.step_markers.empty())
        return std::nullopt;
    // Several threads may mark steps (one per rank's worker, a helper thread): use the thread that marked most.
    std::map<int64_t, size_t> per_thread;
    for (const auto& marker : model.step_markers)
        ++per_thread[marker.global_tid];
    const int64_t tid = std::max_element(per_thread.begin(), per_thread.end(), [](auto& l, auto& r) {
        return l.second < r.second;
    })->first;
    std::vector<StepMarker> markers;
    for (const auto& marker : model.step_markers)
        if (marker.global_tid == tid)
            markers.push_back(marker);
    std::stable_sort(
        markers.begin(), markers.end(), [](const auto& l, const auto& r) { return l.timestamp_ns < r.timestamp_ns; });
    std::vector<int64_t> starts, indices;
    for (const auto& marker : markers) {
        if (!starts.empty() && starts.back() == marker.timestamp_ns)
            continue; // a repeated marker would make an empty step
        starts.push_back(marker.timestamp_ns);
        indices.push_back(marker.step);
    }
    StepSet set { .source = StepSource::Markers,
        .detail = fmt::format("{} step markers on thread {}", starts.size(), tid),
        .steps = steps_from_starts(starts, indices, trace_end_ns) };
    if (set.steps.empty())
        return std::nullopt;
    return set;
}

// "ProfilerStep#12" -> ("ProfilerStep#", 12): ranges of one family differ only by their trailing number.
std::pair<std::string_view, std::optional<int64_t>> split_trailing_number(std::string_view text)
{
    size_t digits = 0;
    while (
        digits < text.size() && digits < 18 && std::isdigit(static_cast<unsigned char>(text[text.size() - 1 - digits])))
        ++digits;
    if (digits == 0)
        return { text, std::nullopt };
    int64_t number = 0;
    for (char c : text.substr(text.size() - digits))
        number = number * 10 + (c - '0');
    return { text.substr(0, text.size() - digits), number };
}

std::optional<StepSet> steps_from_nvtx(const TraceModel& model, const std::string& pattern)
{
    std::regex regex;
    try {
        regex = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error&) {
        return std::nullopt;
    }
    const NvtxTable& nvtx = model.nvtx;
    std::vector<int8_t> matches(model.strings.size(), -1); // -1: not checked yet
    // Rows per (family, thread), in start order.
    std::map<std::pair<std::string_view, int64_t>, std::vector<size_t>> groups;
    for (size_t row = 0; row < nvtx.size(); ++row) {
        if (nvtx.end_ns[row] == NvtxTable::kNoEnd || nvtx.event_type[row] == int32_t(schema::NvtxEventType::Mark))
            continue;
        int8_t& match = matches[nvtx.text[row].index];
        if (match < 0) {
            const std::string& text = model.strings.values[nvtx.text[row].index];
            match = std::regex_match(text, regex) ? 1 : 0;
        }
        if (match == 1)
            groups[{ split_trailing_number(model.strings[nvtx.text[row]]).first, nvtx.global_tid[row] }].push_back(row);
    }
    if (groups.empty())
        return std::nullopt;
    // The family with most ranges; on a tie the one that starts first.
    auto best = groups.begin();
    for (auto it = groups.begin(); it != groups.end(); ++it)
        if (it->second.size() > best->second.size()
            || (it->second.size() == best->second.size()
                && nvtx.start_ns[it->second.front()] < nvtx.start_ns[best->second.front()]))
            best = it;

    // Nested ranges of the same family (a step inside a step) are not steps of their own.
    std::vector<size_t> rows;
    for (size_t row : best->second)
        if (rows.empty() || nvtx.start_ns[row] >= nvtx.end_ns[rows.back()])
            rows.push_back(row);
    bool all_numbered = true;
    for (size_t row : rows)
        all_numbered = all_numbered && split_trailing_number(model.strings[nvtx.text[row]]).second.has_value();

    StepSet set;
    set.source = StepSource::Nvtx;
    set.detail = fmt::format(
        "{} NVTX ranges '{}' on thread {}", rows.size(), model.strings[nvtx.text[rows.front()]], best->first.second);
    for (size_t i = 0; i < rows.size(); ++i) {
        const size_t row = rows[i];
        const int64_t index = all_numbered ? *split_trailing_number(model.strings[nvtx.text[row]]).second : int64_t(i);
        // A step runs to the next range's start, so the host's time between two ranges (data loading) and the
        // GPU's tail of the step count in it; but a pause longer than the range itself (evaluation,
        // checkpointing) is left out, and the last step ends with its range.
        int64_t end_ns = nvtx.end_ns[row];
        if (i + 1 < rows.size()) {
            const int64_t next_start_ns = nvtx.start_ns[rows[i + 1]];
            if (next_start_ns - end_ns <= end_ns - nvtx.start_ns[row])
                end_ns = next_start_ns;
        }
        if (end_ns > nvtx.start_ns[row])
            set.steps.push_back({ index, nvtx.start_ns[row], end_ns });
    }
    if (set.steps.empty())
        return std::nullopt;
    return set;
}

struct Period {
    std::vector<int64_t> step_starts_ns;
    std::string description;
};

// The repeating activity sequence of the busiest device (docs/analysis.md "Steps", automatic detection).
// Each activity is a token (kernel name, copy kind, memset). A loop of S steps makes each periodic token occur
// about a multiple of S times, so S is the largest number that the counts of (nearly) all tokens seen at least
// three times are compatible with. The steps then begin at the occurrences of an anchor token that occurs a few times
// per step: the one after the longest typical device idle time, which is where a training loop's host work (data
// loading, logging, the optimizer's bookkeeping) sits. O(n), two passes, no per-activity allocation.
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

std::optional<StepSet> steps_automatic(const TraceModel& model, int64_t trace_end_ns)
{
    const auto period = find_step_period(model);
    if (!period)
        return std::nullopt;
    std::vector<int64_t> indices(period->step_starts_ns.size());
    for (size_t i = 0; i < indices.size(); ++i)
        indices[i] = int64_t(i);
    StepSet set { .source = StepSource::Automatic,
        .detail = period->description,
        .steps = steps_from_starts(period->step_starts_ns, indices, trace_end_ns) };
    if (set.steps.empty())
        return std::nullopt;
    return set;
}

} // namespace

std::optional<std::string> check_nvtx_step_pattern(const std::string& pattern)
{
    try {
        std::regex regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
        return fmt::format("invalid NVTX step pattern '{}': {}", pattern, error.what());
    }
    return std::nullopt;
}

const char* step_source_name(StepSource source)
{
    switch (source) {
    case StepSource::Markers:
        return "markers";
    case StepSource::Nvtx:
        return "nvtx";
    case StepSource::Automatic:
        return "automatic";
    case StepSource::WholeTrace:
        return "whole trace";
    }
    return "unknown";
}

StepSet find_steps(const TraceModel& model, const StepOptions& options)
{
    const auto span = model.time_span_ns();
    if (!span)
        return StepSet { StepSource::WholeTrace, "the trace has no activity", {}, 0 };

    std::optional<StepSet> found;
    if (!options.ignore_markers)
        found = steps_from_markers(model, span->second);
    if (!found && !options.ignore_nvtx)
        found = steps_from_nvtx(model, options.nvtx_pattern.value_or(kDefaultNvtxStepPattern));
    if (!found)
        found = steps_automatic(model, span->second);
    if (!found)
        found = StepSet { .source = StepSource::WholeTrace,
            .detail = "no step markers, NVTX steps or repeating kernel sequence",
            .steps = { { 0, span->first, std::max(span->second, span->first + 1) } } };

    // Warm-up: drop the first steps, but never all of them.
    const int64_t drop = std::clamp<int64_t>(options.warmup, 0, int64_t(found->steps.size()) - 1);
    found->steps.erase(found->steps.begin(), found->steps.begin() + drop);
    found->warmup_excluded = drop;
    return *found;
}

} // namespace fp8scope::analyzer
