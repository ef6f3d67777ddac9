// Step finding (docs/analysis.md "Steps"): markers, then NVTX ranges, then the repeating kernel sequence, then the
// whole trace. Every rule looks at each distinct string once, never per row.
#include "fp8scope/analyzer/steps/steps.hpp"

#include "fp8scope/format/schema.hpp"
#include "model/median.hpp"
#include "steps/step_clocks.hpp"
#include "steps/step_markers.hpp"
#include "steps/step_optimizer.hpp"
#include "steps/step_period.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <tuple>

namespace fp8scope::analyzer {
namespace {

using detail::median_of;

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
    // Optimizer step ends (1.7) are not step beginnings: the optimizer source reads them.
    const detail::ThreadMarkers job = detail::busiest_marker_thread(
        model, [](const StepMarker& marker) { return marker.source == StepMarkerSource::Job; });
    if (job.markers.empty())
        return std::nullopt;
    const int64_t tid = job.global_tid;
    const std::vector<StepMarker>& markers = job.markers;
    // A marker is a host time: its step begins on the device when the work launched before it is done (two
    // clocks, step_clocks.hpp). A marker whose device time equals the next one's began a step with no work.
    std::vector<int64_t> marker_ns;
    for (const auto& marker : markers)
        marker_ns.push_back(marker.timestamp_ns);
    const std::vector<int64_t> device_ns = detail::device_times(model, marker_ns);
    std::vector<int64_t> starts, indices, host_starts;
    for (size_t m = 0; m < markers.size(); ++m) {
        const StepMarker& marker = markers[m];
        const int64_t start_ns = device_ns[m];
        if (!starts.empty() && starts.back() == start_ns) {
            indices.back() = marker.step; // a repeated marker, or one with nothing launched since the last
            host_starts.back() = marker.timestamp_ns;
            continue;
        }
        starts.push_back(start_ns);
        indices.push_back(marker.step);
        host_starts.push_back(marker.timestamp_ns);
    }
    StepSet set { .source = StepSource::Markers,
        .detail = fmt::format("{} step markers on thread {}", starts.size(), schema::tid_of(tid)), // the OS tid
        .steps = steps_from_starts(starts, indices, trace_end_ns) };
    for (size_t i = 0; i < set.steps.size(); ++i)
        set.steps[i].host_start_ns = host_starts[i];
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
    set.detail = fmt::format("{} NVTX ranges '{}' on thread {}", rows.size(), model.strings[nvtx.text[rows.front()]],
        schema::tid_of(best->first.second));
    // Each range's start and end on the host: a step runs to the next range's start, so the host's time between two
    // ranges (data loading) and the GPU's tail of the step count in it; but a pause longer than the range itself
    // (evaluation, checkpointing) is left out, and the last step ends with its range. Both edges are host times,
    // mapped to the device's clock together (step_clocks.hpp).
    std::vector<int64_t> edges_ns;
    for (size_t i = 0; i < rows.size(); ++i) {
        const size_t row = rows[i];
        int64_t end_ns = nvtx.end_ns[row];
        if (i + 1 < rows.size()) {
            const int64_t next_start_ns = nvtx.start_ns[rows[i + 1]];
            if (next_start_ns - end_ns <= end_ns - nvtx.start_ns[row])
                end_ns = next_start_ns;
        }
        edges_ns.push_back(nvtx.start_ns[row]);
        edges_ns.push_back(end_ns);
    }
    const std::vector<int64_t> device_ns = detail::device_times(model, edges_ns);
    for (size_t i = 0; i < rows.size(); ++i) {
        const size_t row = rows[i];
        const int64_t index = all_numbered ? *split_trailing_number(model.strings[nvtx.text[row]]).second : int64_t(i);
        const int64_t start_ns = std::max(device_ns[2 * i], set.steps.empty() ? INT64_MIN : set.steps.back().end_ns);
        const int64_t end_ns = device_ns[2 * i + 1];
        if (end_ns > start_ns)
            set.steps.push_back({ index, start_ns, end_ns, nvtx.start_ns[row] });
    }
    if (set.steps.empty())
        return std::nullopt;
    return set;
}

std::optional<StepSet> steps_automatic(const TraceModel& model, int64_t trace_end_ns)
{
    auto period = detail::find_graph_step_period(model);
    if (!period)
        period = detail::find_step_period(model);
    if (!period)
        return std::nullopt;
    if (!period->disagreement.empty())
        return StepSet { .source = StepSource::WholeTrace,
            .detail = "automatic detection declined, the evidence disagrees: " + period->disagreement,
            .steps = { { 0, model.time_span_ns()->first, trace_end_ns } } };
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

// A capture window's edges are host times (the marker, the profiler call, the timer that opened or closed it); the
// work launched inside it may run on the device later (a GPU-bound loop runs ahead of the GPU, and kernels in flight
// at the close are recorded). Each edge is mapped to the device clock as a step's edges are (step_clocks.hpp), so a
// step whose launches all lie in the window lies in it however far the device lags.
struct DeviceWindow {
    int64_t start_ns = 0, end_ns = 0;
};

std::vector<DeviceWindow> device_windows(const TraceModel& model)
{
    const std::vector<CaptureWindow>& windows = model.capture.windows; // in start order, not overlapping (the loader)
    std::vector<int64_t> edges_ns;
    edges_ns.reserve(2 * windows.size());
    for (const CaptureWindow& w : windows) {
        edges_ns.push_back(w.start_ns);
        edges_ns.push_back(w.end_ns);
    }
    const std::vector<int64_t> device_ns = detail::device_times(model, edges_ns); // non-decreasing: still in order
    std::vector<DeviceWindow> out(windows.size());
    for (size_t i = 0; i < windows.size(); ++i)
        out[i] = { device_ns[2 * i], device_ns[2 * i + 1] };
    return out;
}

// A windowed recording holds activities only inside its capture windows: keep the steps that lie wholly inside one.
// A step that overlaps a window without lying inside it was cut by the window's edge (part of its work is missing);
// one that overlaps none was not captured. The time between windows is then in no step, so it never counts as idle.
void keep_captured_steps(StepSet& set, const std::vector<DeviceWindow>& windows)
{
    std::erase_if(set.steps, [&](const StepInterval& step) {
        // The first window that ends after the step starts: the only one that can contain it.
        const auto window = std::ranges::upper_bound(windows, step.start_ns, {}, &DeviceWindow::end_ns);
        if (window == windows.end() || window->start_ns >= step.end_ns) {
            ++set.outside_windows_excluded;
            return true;
        }
        if (step.start_ns < window->start_ns || step.end_ns > window->end_ns) {
            ++set.window_edge_excluded;
            return true;
        }
        return false;
    });
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
    case StepSource::Optimizer:
        return "optimizer";
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
    if (!found && !options.ignore_markers)
        found = detail::steps_from_optimizer(model);
    if (!found)
        found = steps_automatic(model, span->second);
    if (!found)
        found = StepSet { .source = StepSource::WholeTrace,
            .detail = "no step markers, NVTX steps or repeating kernel sequence",
            .steps = { { 0, span->first, std::max(span->second, span->first + 1) } } };

    for (StepInterval& step : found->steps)
        if (step.host_start_ns == StepInterval::kUnknownHostStart)
            step.host_start_ns = step.start_ns; // automatic steps begin at an activity: its launch is not kept here
    // Warm-up: drop the first steps, but never all of them.
    const int64_t drop = std::clamp<int64_t>(options.warmup, 0, int64_t(found->steps.size()) - 1);
    found->steps.erase(found->steps.begin(), found->steps.begin() + drop);
    found->warmup_excluded = drop;
    // Warm-up counts from the first step the trace holds: with step markers (written in and out of windows) the
    // job's first step, with NVTX ranges or automatic detection (recorded only inside windows) the first window's.
    if (model.capture.windowed) {
        // With no step structure, each window is one step (the whole trace would span the gaps between them).
        const std::vector<DeviceWindow> windows = device_windows(model);
        if (found->source == StepSource::WholeTrace && !found->steps.empty()) {
            found->steps.clear();
            for (size_t i = 0; i < windows.size(); ++i) {
                const int64_t start_ns = std::max(windows[i].start_ns, span->first);
                const int64_t end_ns = std::min(windows[i].end_ns, span->second);
                if (end_ns > start_ns)
                    found->steps.push_back(
                        { int64_t(found->steps.size()), start_ns, end_ns, model.capture.windows[i].start_ns });
            }
        }
        keep_captured_steps(*found, windows);
    }
    return *found;
}

} // namespace fp8scope::analyzer
