// The tracks of `fp8scope export` that show the analysis and the counters (kineto_trace_layout.hpp).
#include "export/kineto_trace_layout.hpp"

#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace fp8scope::cli {

namespace {

void write_steps(
    ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events, const analyzer::Report& report)
{
    const int64_t pid = layout.main_host_pid();
    const int64_t tid = tracks.synthetic_tid();
    tracks.name_track(pid, tid, "steps", 0);
    for (const analyzer::StepInterval& step : report.steps.steps) {
        if (!layout.in_window(step.start_ns, step.end_ns))
            continue;
        const int64_t lane = tracks.place(pid, tid, step.start_ns, step.end_ns);
        events.begin_complete(
            "user_annotation", fmt::format("ProfilerStep#{}", step.index), pid, lane, step.start_ns, step.end_ns);
        events.arg("step", step.index);
        events.arg("step_source", analyzer::step_source_name(report.steps.source));
        events.end();
    }
}

void write_bubbles(ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events,
    const analyzer::TraceModel& model, const analyzer::Report& report)
{
    std::map<uint32_t, int64_t> bubble_tids; // device -> its bubbles track
    for (const analyzer::Bubble& bubble : report.bubbles.bubbles) {
        if (!layout.device_wanted(bubble.device_id) || !layout.in_window(bubble.start_ns, bubble.end_ns))
            continue;
        const int64_t pid = layout.gpu_process(tracks, bubble.device_id);
        auto [it, added] = bubble_tids.try_emplace(bubble.device_id, 0);
        if (added) {
            it->second = tracks.synthetic_tid();
            tracks.name_track(pid, it->second, "bubbles", 0);
        }
        const int64_t lane = tracks.place(pid, it->second, bubble.start_ns, bubble.end_ns);
        const std::string_view cause = analyzer::bubble_cause_name(bubble.cause);
        events.begin_complete(
            "fp8scope_bubble", fmt::format("{} bubble", cause), pid, lane, bubble.start_ns, bubble.end_ns);
        events.arg("cause", cause);
        events.arg("step", bubble.step_index);
        events.arg("device", int64_t { bubble.device_id });
        if (bubble.sync_call && *bubble.sync_call < report.blocking_calls.size()) {
            const size_t api_row = report.blocking_calls[*bubble.sync_call].api_index;
            events.arg("sync_call", analyzer::api_base_name(model.strings[model.api_calls.name[api_row]]));
            events.arg("sync_call_correlation", int64_t { model.api_calls.correlation_id[api_row] });
        }
        if (bubble.next_api_index && *bubble.next_api_index < model.api_calls.size())
            events.arg("next_launch_correlation", int64_t { model.api_calls.correlation_id[*bubble.next_api_index] });
        events.end();
    }
}

void write_collector_work(
    ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events, const analyzer::TraceModel& model)
{
    const auto& work = model.collector_work;
    // The table holds the collector's kernels, copies and memsets as the loader moved them out, not in one order.
    std::vector<uint32_t> order(work.size());
    std::iota(order.begin(), order.end(), 0u);
    std::ranges::sort(order, [&](uint32_t l, uint32_t r) {
        return work.start_ns[l] != work.start_ns[r] ? work.start_ns[l] < work.start_ns[r]
                                                    : work.end_ns[l] > work.end_ns[r];
    });
    std::map<uint32_t, int64_t> work_tids;
    for (uint32_t r : order) {
        const uint32_t device = work.device_id[r];
        if (!layout.device_wanted(device) || !layout.in_window(work.start_ns[r], work.end_ns[r]))
            continue;
        const int64_t pid = layout.gpu_process(tracks, device);
        auto [it, added] = work_tids.try_emplace(device, 0);
        if (added) {
            it->second = tracks.synthetic_tid();
            tracks.name_track(pid, it->second, "fp8scope statistics (not counted)", int64_t { 1 } << 33);
        }
        const int64_t lane = tracks.place(pid, it->second, work.start_ns[r], work.end_ns[r]);
        using Kind = analyzer::CollectorWorkTable::Kind;
        const std::string_view name = work.kind[r] == Kind::Kernel ? "fp8scope statistics kernel"
            : work.kind[r] == Kind::Memcpy                         ? "fp8scope statistics memcpy"
                                                                   : "fp8scope statistics memset";
        events.begin_complete("fp8scope_collector", name, pid, lane, work.start_ns[r], work.end_ns[r]);
        // Not `stream`: HTA's temporal breakdown counts every event with args.stream as GPU work
        // (breakdown_analysis.py, get_temporal_breakdown), and no figure counts this work.
        events.arg("collector stream", int64_t { work.stream_id[r] });
        events.end();
    }
}

void counter(ChromeTraceEvents& events, PerfettoExportCounts& counts, std::string_view name, int64_t pid, int64_t at_ns,
    double value)
{
    if (events.counter(name, pid, at_ns, value))
        ++counts.counter_values;
    else
        ++counts.nonfinite_values;
}

} // namespace

void write_analysis_tracks(ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events,
    const analyzer::TraceModel& model, const analyzer::Report& report)
{
    layout.name_host_process(tracks, layout.main_host_pid());
    write_steps(layout, tracks, events, report);
    write_bubbles(layout, tracks, events, model, report);
    write_collector_work(layout, tracks, events, model);
}

void write_counters(ExportLayout& layout, ChromeTraceTracks& tracks, ChromeTraceEvents& events,
    const analyzer::TraceModel& model, PerfettoExportCounts& counts)
{
    for (const analyzer::Scalar& scalar : model.scalars) {
        if (!layout.in_window(scalar.timestamp_ns, scalar.timestamp_ns))
            continue;
        if (std::isnan(scalar.value)) {
            // JSON has no NaN, and a counter without the value would hide the first sign of a diverging run: an
            // instant "<name> = NaN" on the thread that logged it instead (docs/export.md).
            const HostTrack host = layout.host_track(tracks, scalar.global_tid);
            tracks.use(host.pid, host.tid);
            events.begin_instant(
                "scalar", fmt::format("{} = NaN", model.strings[scalar.name]), host.pid, host.tid, scalar.timestamp_ns);
            events.arg("value", "NaN");
            events.end();
            ++counts.nan_scalars;
            continue;
        }
        const int64_t pid = layout.host_pid(scalar.global_tid);
        layout.name_host_process(tracks, pid);
        counter(events, counts, model.strings[scalar.name], pid, scalar.timestamp_ns, scalar.value);
    }
    std::map<int64_t, std::string> labels; // site id -> tensor_site_label()
    for (const analyzer::TensorSite& site : model.tensor_sites)
        labels.emplace(site.id, analyzer::tensor_site_label(model, site));
    for (const analyzer::TensorStats& sample : model.tensor_stats) {
        if (!layout.device_wanted(sample.device_id) || !layout.in_window(sample.timestamp_ns, sample.timestamp_ns))
            continue;
        const int64_t pid = layout.gpu_process(tracks, sample.device_id);
        const auto label = labels.find(sample.site_id);
        const std::string site = label == labels.end() ? fmt::format("site {}", sample.site_id) : label->second;
        const int64_t at = sample.timestamp_ns;
        counter(events, counts, fmt::format("{} · amax", site), pid, at, sample.amax);
        if (const auto scale_inv = analyzer::tensor_scale_inv(sample))
            counter(events, counts, fmt::format("{} · scale_inv", site), pid, at, *scale_inv);
        const analyzer::TensorSampleFigures figures = analyzer::tensor_sample_figures(sample);
        if (figures.headroom_bits)
            counter(events, counts, fmt::format("{} · headroom bits", site), pid, at, *figures.headroom_bits);
        if (figures.saturation_ratio)
            counter(events, counts, fmt::format("{} · saturation ratio", site), pid, at, *figures.saturation_ratio);
        if (figures.underflow_ratio)
            counter(events, counts, fmt::format("{} · underflow ratio", site), pid, at, *figures.underflow_ratio);
    }
}

} // namespace fp8scope::cli
