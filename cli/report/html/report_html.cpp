// `fp8scope report --format html`: one self-contained page (inline CSS and SVG, no script, no external resource)
// to keep as a CI artifact. The markup is also well-formed XML (void elements closed with "/>"), so XML tools can
// check it. Every string from the trace goes through xml_escaped().
#include "report/report_render.hpp"
#include "report/report_tables.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/numerics_wording.hpp"
#include "fp8scope/present/units.hpp"
#include "output/html_page.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"
#include "report/html/report_html_charts.hpp"
#include "report/report_tensor.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

constexpr size_t kMaxStepRows = 500; // the per-step table; the JSON output has every step
constexpr size_t kMaxKernelNameBytes = 100; // in the table; the cell's tooltip has the whole name

// In a table of class "n" every cell is numeric already: the per-step table can have hundreds of rows.
std::string ratio_cell(double ratio, bool in_numeric_table = false)
{
    const char* severity = "ok";
    if (bubble_ratio_severity(ratio) == Severity::Bad)
        severity = "bad";
    else if (bubble_ratio_severity(ratio) == Severity::Warn)
        severity = "warn";
    return fmt::format("<td class=\"{}{}\">{:.3f}</td>", in_numeric_table ? "" : "n ", severity, ratio);
}

std::string duration(int64_t ns)
{
    return html_num(format_duration_ns(ns));
}

std::string headline(const Report& r)
{
    const size_t steps = r.steps.steps.size();
    const BubbleTotals& t = r.totals;
    std::string out = "<h2>Summary</h2>\n<table>\n<tr><th>step time</th><th>busy</th><th>bubble ratio</th>";
    for (BubbleCause c : causes_to_show(r))
        out += fmt::format("<th>{} idle</th>", bubble_cause_name(c));
    out += "<th>bubbles</th></tr>\n<tr>" + duration(per_step(t.step_ns, steps))
        + html_num(fmt::format("{:.1f}%", percent(t.busy_ns, t.step_ns))) + ratio_cell(t.bubble_ratio);
    for (BubbleCause c : causes_to_show(r))
        out += html_num(fmt::format("{:.1f}%", percent(t.cause_ns[static_cast<size_t>(c)], t.step_ns)));
    out += html_num(fmt::to_string(t.bubble_count)) + "</tr>\n</table>\n";
    return out
        + fmt::format("<p class=\"note\">Step time is per step{}; idle time by cause is a share of step time. Gap "
                      "sizes: &lt;10 µs {}, 10-100 µs {}, 100 µs-1 ms {}, ≥1 ms {}.</p>\n",
            r.device                           ? fmt::format(" (device {})", *r.device)
                : r.bubbles.devices.size() > 1 ? std::string(" (summed over the devices)")
                                               : std::string(),
            t.gap_counts[0], t.gap_counts[1], t.gap_counts[2], t.gap_counts[3]);
}

std::string thresholds(const Report& r)
{
    std::string out = "<h2>How it was measured</h2>\n<table>\n";
    out += "<tr><th>steps</th>" + html_cell(steps_sentence(r.steps)) + "</tr>\n";
    out += "<tr><th>recording</th>" + html_cell(recording_sentence(r.recording)) + "</tr>\n";
    out += "<tr><th>launch latency ε</th>" + html_cell(epsilon_sentence(r.bubbles)) + "</tr>\n";
    out += "<tr><th>launch rule</th>" + html_cell(launch_rule_sentence(r.bubbles)) + "</tr>\n";
    out += "<tr><th>collector</th>" + html_cell(collector_work_sentence(r.collector_work)) + "</tr>\n";
    if (r.bubbles.multi_rank)
        out += "<tr><th>comm rule</th>"
            + html_cell(fmt::format("multi-rank run: communication kernels are not busy time; a gap is comm when they "
                                    "cover over {:.0f}% of it",
                100.0 * kCommShare))
            + "</tr>\n";
    out += "<tr><th>gap size buckets</th>" + html_cell("10 µs, 100 µs, 1 ms") + "</tr>\n";
    out += "<tr><th>recommendations</th>"
        + html_cell(fmt::format("made when they save at least {:g}% of a step", 100.0 * kMinRecommendationSavingShare))
        + "</tr>\n";
    return out + "</table>\n<p class=\"note\">Every figure and rule is defined in docs/analysis.md.</p>\n";
}

std::string per_step_table(const Report& r)
{
    std::vector<const DeviceStepBubbles*> rows;
    for (const DeviceStepBubbles& d : r.bubbles.per_device_step)
        if (!r.device || d.device_id == *r.device)
            rows.push_back(&d);
    std::string out = fmt::format("<details>\n<summary>Per step and device ({} rows{})</summary>\n<table class=\"n\">\n"
                                  "<tr><th>device</th><th>step</th><th>time</th><th>bubble ratio</th>",
        rows.size(), rows.size() > kMaxStepRows ? fmt::format(", the first {} shown", kMaxStepRows) : "");
    for (BubbleCause c : causes_to_show(r))
        out += fmt::format("<th>{}</th>", bubble_cause_name(c));
    out += "<th>top cause</th></tr>\n";
    for (size_t i = 0; i < rows.size() && i < kMaxStepRows; ++i) {
        const BubbleTotals& t = rows[i]->totals;
        out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>{}", rows[i]->device_id, rows[i]->step_index,
            format_duration_ns(t.step_ns), ratio_cell(t.bubble_ratio, true));
        for (BubbleCause c : causes_to_show(r))
            out += fmt::format("<td>{}</td>", format_duration_ns(t.cause_ns[static_cast<size_t>(c)]));
        out += fmt::format("<td>{}</td></tr>\n", t.idle_ns > 0 ? bubble_cause_name(top_cause(t)) : "-");
    }
    return out + "</table>\n</details>\n";
}

std::string syncs_table(const Report& r)
{
    const auto steps = static_cast<double>(r.steps.steps.size());
    const int64_t outside = r.syncs.outside_steps.count;
    std::string out = fmt::format("<h2>Host-blocking syncs</h2>\n<p>{} in the steps, {:.1f} per step; {}{}.</p>\n",
        r.syncs.total.count, static_cast<double>(r.syncs.total.count) / steps, sync_idle_text(r),
        outside > 0 ? fmt::format("; {} outside the steps", outside) : std::string());
    const std::vector<const SyncApiSummary*> apis = syncs_by_idle_caused(r.syncs);
    if (!apis.empty())
        out += "<table>\n<tr><th>API</th><th>calls</th><th>per step</th><th>blocked</th><th>GPU idle caused</th>"
               "<th>outside the steps</th></tr>\n";
    for (const SyncApiSummary* a : apis)
        out += "<tr><td><code>" + xml_escaped(a->name) + "</code></td>" + html_num(fmt::to_string(a->count))
            + html_num(per_step_rate(a->count, r.steps.steps.size(), 1)) + duration(a->duration_ns)
            + duration(a->idle_caused_ns) + html_num(fmt::to_string(a->outside_steps)) + "</tr>\n";
    return apis.empty() ? out : out + "</table>\n";
}

std::string launch_table(const Report& r)
{
    const LaunchStats& l = r.launch;
    const size_t steps = r.steps.steps.size();
    const DelayDistribution& d = l.launch_delay;
    std::string out = "<h2>Launches</h2>\n<table>\n";
    const auto row = [&](std::string_view name, const std::string& value) {
        out += "<tr><th>" + std::string(name) + "</th>" + html_cell(value) + "</tr>\n";
    };
    row("kernels",
        fmt::format("{} ({} per step; {} from CUDA graphs, {} without a launch call)", l.kernels,
            per_step(l.kernels, steps), l.graph_kernels, l.unmatched_kernels));
    row("launches", fmt::format("{} ({} per second of step time)", l.launches, static_cast<int64_t>(l.launches_per_s)));
    row("launch delay",
        fmt::format("median {}, p90 {}, p99 {}, max {} ({} kernels)", format_duration_ns(d.median_ns),
            format_duration_ns(d.p90_ns), format_duration_ns(d.p99_ns), format_duration_ns(d.max_ns), d.count));
    row("short kernels",
        fmt::format("{} ({:.1f}%) ran for less time than their launch call", l.short_kernels, 100.0 * l.short_share));
    for (const StreamQueueDepth& q : l.streams)
        row("queue depth",
            fmt::format(
                "device {} stream {}: max {}, mean {:.1f}", q.device_id, q.stream_id, q.max_depth, q.mean_depth));
    return out + "</table>\n";
}

std::string classes_table(const TraceModel& model, const Report& r)
{
    const KernelClassReport& k = r.kernel_classes;
    const size_t steps = r.steps.steps.size();
    std::string out
        = "<h2>FP8 overhead: kernel classes</h2>\n<table>\n<tr><th>class</th><th>time per step</th>"
          "<th>share of kernel time</th><th>kernels per step</th><th>distinct names</th><th>top kernel</th></tr>\n";
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        const ClassTotals& t = k.by_class[c];
        if (t.count == 0)
            continue; // named in the note below
        std::string top = "<td></td>";
        if (!k.top[c].empty()) {
            const std::string_view name = model.strings[k.top[c].front().name];
            top = fmt::format("<td title=\"{}\"><code>{}</code></td>", xml_escaped(name),
                xml_escaped(shortened(name, kMaxKernelNameBytes)));
        }
        out += "<tr>" + html_cell(kernel_class_label(cls)) + duration(per_step(t.time_ns, steps))
            + html_num(fmt::format("{:.1f}%", 100.0 * k.share_of_kernel_time(cls)))
            + html_num(per_step_rate(t.count, steps, 0)) + html_num(fmt::to_string(k.distinct_names[c])) + top
            + "</tr>\n";
    }
    out += "</table>\n";
    if (const std::string fused = fused_bookkeeping_attribution(k, steps); !fused.empty())
        out += "<p class=\"note\">Fused bookkeeping: " + xml_escaped(fused) + ".</p>\n";
    if (const std::string empty = empty_kernel_classes(k); !empty.empty())
        out += "<p class=\"note\">No kernels in the steps: " + xml_escaped(empty) + ".</p>\n";
    return out;
}

std::string recommendations(const Report& r)
{
    const WhatIf w = estimate_what_if(r);
    std::string out = fmt::format("<h2>What if</h2>\n<p>Step time {}; {}; without sync stalls {}. Savings are upper "
                                  "bounds: the idle (or kernel) time each change could give back.</p>\n",
        format_duration_ns(w.mean_step_ns), graphs_what_if(w), format_duration_ns(w.without_syncs_ns));
    if (w.recommendations.empty())
        return out + "<p>" + no_recommendation_sentence(true) + ".</p>\n";
    out += "<table>\n<tr><th>recommendation</th><th>saving per step</th><th>share</th><th>because</th>"
           "<th>worst step</th></tr>\n";
    for (const Recommendation& rec : w.recommendations) {
        const auto& worst = rec.worst_step;
        out += "<tr><td><strong>" + xml_escaped(rec.title) + "</strong></td>" + duration(rec.saving_per_step_ns)
            + html_num(fmt::format("{:.1f}%", 100.0 * rec.saving_share)) + html_cell(rec.reason)
            + html_cell(worst ? fmt::format("step {}: {} {:.1f}% of the step", worst->step_index,
                            recommendation_figure(rec.kind), 100.0 * worst->share)
                              : "-")
            + "</tr>\n";
    }
    return out + "</table>\n";
}

// The numerics verdict of the FP8 tensors judged alone, before the speed figures (docs/analysis.md "Numerics
// verdict"): the verdict with its lead finding, and each finding with its fix.
std::string numerics_html(const NumericsJudgement& n)
{
    if (n.verdict == NumericsVerdict::NoData)
        return {};
    const char* css = n.verdict == NumericsVerdict::Healthy ? "ok"
        : n.verdict == NumericsVerdict::AtRisk              ? "warn"
                                                            : "bad";
    std::string out = fmt::format(
        "<h2>Numerics</h2>\n<p class=\"{}\">{}</p>\n", css, xml_escaped(present::numerics_summary(n, present::as_is)));
    if (n.findings.empty())
        return out;
    out += "<table>\n<tr><th>verdict</th><th>finding</th><th>what to do</th><th>read by</th></tr>\n";
    for (const NumericsFinding& f : n.findings)
        out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            present::numerics_verdict_word(f.severity), present::finding_sentence(f, xml_escaped),
            xml_escaped(present::finding_fix(f)), present::read_by_text(f, xml_escaped));
    return out + "</table>\n<p class=\"note\">" + xml_escaped(present::numerics_thresholds_sentence()) + "</p>\n";
}

} // namespace

std::string render_report_html(const TraceModel& model, const Report& r, size_t top)
{
    std::string out = html_page_start("fp8scope report: " + model.path);
    out += "<h1>fp8scope report</h1>\n<p>Trace <code>" + xml_escaped(model.path) + "</code></p>\n";
    if (!recording_warnings(r.recording).empty())
        out += "<p class=\"bad\">Warning: " + xml_escaped(recording_sentence(r.recording)) + ".</p>\n";
    if (!r.nan_scalars.empty())
        out += "<p class=\"bad\">Warning: NaN scalars: " + xml_escaped(nan_scalars_sentence(r.nan_scalars)) + ".</p>\n";
    if (r.steps.steps.empty())
        return out + thresholds(r) + "<p>No steps to analyse: the trace has no activity.</p>\n"
            + std::string(kHtmlPageEnd);
    out += numerics_html(r.numerics) + headline(r) + thresholds(r);
    out += "<h2>Bubbles</h2>\n" + bubble_ratio_chart(r) + idle_by_cause_chart(r) + per_step_table(r);
    out += syncs_table(r) + top_syncs_chart(model, r);
    out += launch_table(r);
    out += classes_table(model, r) + kernel_class_chart(r);
    out += top_tables_html(model, r, top);
    out += tensor_health_html(r.tensor_health);
    out += recommendations(r);
    return out + "<p class=\"note\">Written by fp8scope report --format html.</p>\n" + std::string(kHtmlPageEnd);
}

} // namespace fp8scope::cli
