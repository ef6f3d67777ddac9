// `fp8scope report` as text for a terminal or a log. Colour (ANSI SGR, text_paint.hpp) only when the caller asks for
// it (a terminal, or --color always): with colour off every piece is the plain text, byte for byte.
#include "report/report_render.hpp"
#include "report/report_summary.hpp"
#include "report/report_tables.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/text_paint.hpp"
#include "report/report_tensor.hpp"
#include "trace_info/capture_render.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

// The per-step rows of one device: every one with --all-steps or up to kStepRowsShown, else the slowest, the median
// and the fastest step by step time.
void step_rows_text(std::string& out, const std::vector<const DeviceStepBubbles*>& rows, bool all, const Paint& paint)
{
    const auto row_text = [&](const DeviceStepBubbles& d, std::string_view label) {
        const std::string cause = d.totals.idle_ns > 0 ? bubble_cause_name(top_cause(d.totals)) : "-";
        out += fmt::format("  {:>3} {:>6} {:>12} {}  {}\n", d.device_id, d.step_index,
            format_duration_ns(d.totals.step_ns),
            paint.ratio(fmt::format("{:>8.3f}", d.totals.bubble_ratio), d.totals.bubble_ratio),
            label.empty() ? cause : fmt::format("{:<10} {}", cause, label));
    };
    if (all || rows.size() <= kStepRowsShown) {
        for (const DeviceStepBubbles* d : rows)
            row_text(*d, "");
        return;
    }
    std::vector<const DeviceStepBubbles*> by_time = rows;
    std::ranges::stable_sort(by_time,
        [](const DeviceStepBubbles* a, const DeviceStepBubbles* b) { return a->totals.step_ns > b->totals.step_ns; });
    row_text(*by_time.front(), "slowest");
    row_text(*by_time[by_time.size() / 2], "median");
    row_text(*by_time.back(), "fastest");
    out += fmt::format(
        "  ({} steps on device {}; --all-steps lists every one)\n", rows.size(), rows.front()->device_id);
}

void bubbles_text(std::string& out, const Report& r, const Paint& paint, bool all_steps)
{
    const BubbleTotals& t = r.totals;
    heading_line(
        out, paint, fmt::format("GPU time{}", r.device ? fmt::format(" (device {})", *r.device) : std::string()));
    out += fmt::format("  step time        {} in all, {} per step\n", format_duration_ns(t.step_ns),
        format_duration_ns(per_step(t.step_ns, r.steps.steps.size())));
    out += fmt::format(
        "  busy             {} ({:.1f}%)\n", format_duration_ns(t.busy_ns), percent(t.busy_ns, t.step_ns));
    out += fmt::format("  bubble ratio     {} ({} idle in {})\n",
        paint.ratio(fmt::format("{:.3f}", t.bubble_ratio), t.bubble_ratio), format_duration_ns(t.idle_ns),
        count_of(t.bubble_count, "bubble", "bubbles"));
    // Shares of step time, as in every other format, so that they read against the bubble ratio.
    out += "  idle by cause   ";
    const std::vector<BubbleCause> causes = causes_to_show(r);
    for (size_t i = 0; i < causes.size(); ++i) {
        const int64_t ns = t.cause_ns[static_cast<size_t>(causes[i])];
        out += fmt::format("{} {} {} ({:.1f}%)", i == 0 ? "" : ",", bubble_cause_name(causes[i]),
            format_duration_ns(ns), percent(ns, t.step_ns));
    }
    out += "; shares of step time\n";
    out += fmt::format("  gap sizes        <10 µs {}, 10-100 µs {}, 100 µs-1 ms {}, >=1 ms {}\n", t.gap_counts[0],
        t.gap_counts[1], t.gap_counts[2], t.gap_counts[3]);

    heading_line(out, paint, "Per step (device, step, time, bubble ratio, top cause)");
    std::vector<const DeviceStepBubbles*> device_rows;
    for (size_t i = 0; i < r.bubbles.per_device_step.size(); ++i) {
        const DeviceStepBubbles& d = r.bubbles.per_device_step[i];
        if (r.device && d.device_id != *r.device)
            continue;
        if (!device_rows.empty() && device_rows.back()->device_id != d.device_id) {
            step_rows_text(out, device_rows, all_steps, paint);
            device_rows.clear();
        }
        device_rows.push_back(&d);
    }
    if (!device_rows.empty())
        step_rows_text(out, device_rows, all_steps, paint);
}

void syncs_text(std::string& out, const Report& r, const Paint& paint)
{
    const size_t steps = r.steps.steps.size();
    const int64_t outside = r.syncs.outside_steps.count;
    heading_line(out, paint,
        fmt::format("Host-blocking syncs: {} in the steps, {:.1f} per step; {}{}", r.syncs.total.count,
            steps ? static_cast<double>(r.syncs.total.count) / static_cast<double>(steps) : 0.0, sync_idle_text(r),
            outside > 0 ? fmt::format(" ({} outside the steps)", outside) : std::string()));
    // Only the APIs called in the steps: a row of zeros says nothing.
    for (const SyncApiSummary* a : syncs_by_idle_caused(r.syncs))
        out += fmt::format("  {:<36} {:>7} {:<5} {:>6}/step  blocked {:>10}  GPU idle caused {:>10}\n",
            printable(a->name), a->count, a->count == 1 ? "call" : "calls", per_step_rate(a->count, steps, 1),
            format_duration_ns(a->duration_ns), format_duration_ns(a->idle_caused_ns));
}

void launch_text(std::string& out, const Report& r, const Paint& paint)
{
    const LaunchStats& l = r.launch;
    const size_t steps = r.steps.steps.size();
    heading_line(out, paint, "Launches");
    out += fmt::format("  kernels          {} ({} per step), {} launches/s of step time\n", l.kernels,
        per_step(l.kernels, steps), static_cast<int64_t>(l.launches_per_s));
    out += fmt::format("  launch delay     median {}, p90 {}, p99 {}, max {} ({} kernels)\n",
        format_duration_ns(l.launch_delay.median_ns), format_duration_ns(l.launch_delay.p90_ns),
        format_duration_ns(l.launch_delay.p99_ns), format_duration_ns(l.launch_delay.max_ns), l.launch_delay.count);
    out += fmt::format("  short kernels    {} ({:.1f}%) ran for less time than their launch call\n", l.short_kernels,
        100.0 * l.short_share);
    for (const StreamQueueDepth& q : l.streams)
        out += fmt::format("  queue depth      device {} stream {}: max {}, mean {:.1f}\n", q.device_id, q.stream_id,
            q.max_depth, q.mean_depth);
}

void classes_text(std::string& out, const TraceModel& model, const Report& r, const Paint& paint)
{
    const KernelClassReport& k = r.kernel_classes;
    const size_t steps = r.steps.steps.size();
    heading_line(out, paint, "Kernel classes (time is summed kernel time; share of the steps' kernel time)");
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        const ClassTotals& t = k.by_class[c];
        if (t.count == 0)
            continue; // listed below, in one line
        out += fmt::format("  {:<28} {:>10}/step {:>6.1f}%  {:>6} kernels/step\n", kernel_class_label(cls),
            format_duration_ns(per_step(t.time_ns, steps)), 100.0 * k.share_of_kernel_time(cls),
            per_step_rate(t.count, steps, 0));
        if (!k.top[c].empty())
            out += fmt::format("      top: {}\n", printable(shortened(model.strings[k.top[c].front().name], 100)));
        if (cls == KernelClass::FusedBookkeeping)
            out += fmt::format("      {}\n", fused_bookkeeping_attribution(k, steps));
    }
    if (const std::string empty = empty_kernel_classes(k); !empty.empty())
        out += fmt::format("  no kernels: {}\n", empty);
}

void what_if_text(std::string& out, const WhatIf& w, const Paint& paint)
{
    heading_line(
        out, paint, "What if (estimated savings per step are upper bounds: the idle time each change could give back)");
    out += fmt::format("  step time {}; {}; without sync stalls {}\n", format_duration_ns(w.mean_step_ns),
        graphs_what_if(w), format_duration_ns(w.without_syncs_ns));
    if (w.recommendations.empty())
        out += "  " + no_recommendation_sentence(false) + "\n";
    for (const Recommendation& r : w.recommendations)
        out += fmt::format("  - {}: saves up to {} per step ({:.1f}%), because {}\n", paint.highlight(r.title),
            format_duration_ns(r.saving_per_step_ns), 100.0 * r.saving_share, r.reason);
}

} // namespace

std::string wrapped(std::string_view text, size_t width, std::string_view indent)
{
    std::string out;
    size_t line_length = 0;
    while (!text.empty()) {
        const size_t space = text.find(' ');
        const std::string_view word = text.substr(0, space);
        text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
        if (line_length > 0 && line_length + 1 + word.size() > width) {
            out += '\n';
            out += indent;
            line_length = indent.size();
        } else if (line_length > 0) {
            out += ' ';
            ++line_length;
        }
        out += word;
        line_length += word.size();
    }
    return out;
}

size_t kernel_name_bytes_for(const char* columns)
{
    // The figures before the name: "  " time% total count mean min max "  " class " " (report_tables.cpp).
    constexpr size_t kFiguresWidth = 81;
    constexpr size_t kNarrowest = 30;
    if (columns == nullptr || *columns == '\0')
        return kKernelNameBytes;
    char* end = nullptr;
    errno = 0;
    const long long width = std::strtoll(columns, &end, 10);
    if (errno != 0 || end == columns || *end != '\0' || width <= 0)
        return kKernelNameBytes;
    return std::max(
        kNarrowest, static_cast<size_t>(width) > kFiguresWidth ? static_cast<size_t>(width) - kFiguresWidth : 0);
}

std::string render_report_text(const TraceModel& model, const Report& report, ReportTextStyle style)
{
    const Paint paint(style.color);
    std::string out = paint.heading(fmt::format("fp8scope report: {}", printable(model.path))) + "\n";
    if (!report.steps.steps.empty()) {
        out += paint.heading("Summary") + "\n";
        for (const SummaryLine& line : report_summary(model, report, printable))
            out += fmt::format("  {:<10} {}\n", line.label,
                line.warning ? paint.warning(wrapped(line.text, kTextWidth - 13, "             "))
                             : wrapped(line.text, kTextWidth - 13, "             "));
        out += "\n";
    }
    const bool recording_ok = recording_warnings(report.recording).empty();
    out += fmt::format("Recording: {}\n",
        recording_ok ? recording_sentence(report.recording) : paint.warning(recording_sentence(report.recording)));
    if (model.capture.windowed)
        out += fmt::format("Captured: {}\n", capture_sentence(model.capture));
    if (!report.nan_scalars.empty())
        out += fmt::format("NaN scalars: {}\n", paint.warning(printable(nan_scalars_sentence(report.nan_scalars))));
    out += fmt::format("Steps: {}\n", printable(steps_sentence(report.steps)));
    out += wrapped(fmt::format("Thresholds: launch latency ε = {}; {}; gap size buckets 10 µs, 100 µs, 1 ms "
                               "(docs/analysis.md)",
                       epsilon_sentence(report.bubbles), launch_rule_sentence(report.bubbles)),
               kTextWidth, "  ")
        + "\n";
    out += collector_work_sentence(report.collector_work) + "\n";
    if (report.bubbles.multi_rank)
        out += fmt::format("Multi-rank run (rule 4): communication kernels wait for the other ranks, so they are not "
                           "busy time; a gap is `comm` when they cover over {:.0f}% of it\n",
            100.0 * kCommShare);
    if (report.steps.steps.empty()) {
        out += model.capture.windowed && model.time_span_ns()
            ? "\nNo steps: no whole step lies inside a capture window.\n"
            : "\nNo steps: the trace has no activity to analyse.\n";
        return out;
    }
    bubbles_text(out, report, paint, style.all_steps);
    syncs_text(out, report, paint);
    launch_text(out, report, paint);
    classes_text(out, model, report, paint);
    top_kernels_text(out, model, report, style.top, paint.heading("Top kernels"), style.kernel_name_bytes);
    top_api_text(out, model, report, style.top, paint.heading("Top CUDA API calls"));
    tensor_health_text(out, report.tensor_health, [&](std::string_view text) { return paint.heading(text); });
    what_if_text(out, estimate_what_if(report), paint);
    return out;
}

} // namespace fp8scope::cli
