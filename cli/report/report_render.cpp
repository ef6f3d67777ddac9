#include "report/report_render.hpp"
#include "report/report_summary.hpp"
#include "report/report_tables.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/numerics_wording.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/xml_escape.hpp"
#include "report/report_tensor.hpp"
#include "trace_info/capture_render.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {

using namespace analyzer;

namespace {
nlohmann::ordered_json what_if_json(const WhatIf& w)
{
    nlohmann::ordered_json recs = nlohmann::ordered_json::array();
    for (const Recommendation& r : w.recommendations) {
        nlohmann::ordered_json worst = nullptr;
        if (r.worst_step)
            worst = { { "step", r.worst_step->step_index }, { "share", r.worst_step->share },
                { "figure", recommendation_figure(r.kind) } };
        recs.push_back({ { "kind", recommendation_kind_name(r.kind) }, { "title", r.title }, { "reason", r.reason },
            { "saving_per_step_ns", r.saving_per_step_ns }, { "saving_share", r.saving_share },
            { "worst_step", std::move(worst) } });
    }
    return { { "mean_step_ns", w.mean_step_ns }, { "without_launch_overhead_ns", w.without_launch_overhead_ns },
        { "without_syncs_ns", w.without_syncs_ns }, { "graph_kernel_share", w.graph_kernel_share },
        { "recommendations", recs } };
}
// summary.numerics: the verdict of the FP8 tensors judged alone and its evidence, each finding with its sentence and
// fix in words (docs/cli.md "JSON").
nlohmann::ordered_json numerics_json(const NumericsJudgement& n)
{
    using json = nlohmann::ordered_json;
    json evidence = json::array();
    for (const NumericsFinding& f : n.findings) {
        const char* scale = f.scale == ScaleKind::Current ? "current"
            : f.scale == ScaleKind::Lagging               ? "lagging"
                                                          : "unknown";
        evidence.push_back({ { "rule", numerics_rule_name(f.rule) }, { "severity", numerics_verdict_name(f.severity) },
            { "tensor", f.tensor }, { "site_id", f.site_id }, { "module", f.module }, { "role", f.role },
            { "read_by", f.read_by }, { "scale", scale }, { "onset_step", f.onset_step },
            { "worst_step", f.worst_step }, { "value", f.value }, { "steps", f.steps },
            { "sentence", present::finding_sentence(f, present::as_is) }, { "fix", present::finding_fix(f) } });
    }
    return { { "verdict", numerics_verdict_name(n.verdict) },
        { "sentence", present::numerics_summary(n, present::as_is) },
        { "no_data", n.no_data.empty() ? json(nullptr) : json(n.no_data) }, { "tensors", n.tensors },
        { "sites", n.sites }, { "sampled_steps", n.sampled_steps }, { "evidence", evidence },
        { "thresholds",
            { { "broken_clip_share", kBrokenClipShare }, { "at_risk_clip_share", kAtRiskClipShare },
                { "at_risk_clip_steps", kAtRiskClipSteps }, { "broken_flush_share", kBrokenFlushShare },
                { "at_risk_flush_share", kAtRiskFlushShare }, { "pile_up_share", kPileUpShare },
                { "outgrown_steps", kOutgrownSteps }, { "climb_bits", kClimbBits },
                { "climb_min_steps", kClimbMinSteps } } } };
}
} // namespace

nlohmann::ordered_json bubble_totals_json(const BubbleTotals& t)
{
    using json = nlohmann::ordered_json;
    json causes = json::object(); // all five, comm 0 outside multi-rank runs, so that the keys never change
    for (size_t c = 0; c < kBubbleCauseCount; ++c)
        causes[bubble_cause_name(static_cast<BubbleCause>(c))] = t.cause_ns[c];
    json gaps = json::object();
    for (size_t b = 0; b < kGapBucketCount; ++b)
        gaps[kGapCountKeys[b]] = t.gap_counts[b];
    return json { { "step_ns", t.step_ns }, { "busy_ns", t.busy_ns }, { "idle_ns", t.idle_ns },
        { "bubble_ratio", t.bubble_ratio }, { "bubbles", t.bubble_count }, { "idle_by_cause_ns", causes },
        { "gap_counts", gaps } };
}

nlohmann::ordered_json render_report_json(const TraceModel& model, const Report& r, size_t top)
{
    using json = nlohmann::ordered_json;
    const auto totals_json = bubble_totals_json;
    json steps = json::array();
    for (const StepInterval& s : r.steps.steps)
        steps.push_back({ { "index", s.index }, { "start_ns", s.start_ns }, { "end_ns", s.end_ns } });
    json per_step = json::array();
    for (const DeviceStepBubbles& d : r.bubbles.per_device_step)
        per_step.push_back(
            { { "device", d.device_id }, { "step", d.step_index }, { "totals", totals_json(d.totals) } });
    json syncs = json::array();
    for (const SyncApiSummary& a : r.syncs.by_api)
        syncs.push_back({ { "api", a.name }, { "count", a.count }, { "duration_ns", a.duration_ns },
            { "idle_caused_ns", a.idle_caused_ns }, { "outside_steps", a.outside_steps } });
    json classes = json::object();
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        classes[std::string(kernel_class_id(cls))] = { { "time_ns", r.kernel_classes.by_class[c].time_ns },
            { "count", r.kernel_classes.by_class[c].count }, { "share_of_step", r.kernel_classes.share(cls) },
            { "share_of_kernel_time", r.kernel_classes.share_of_kernel_time(cls) } };
    }
    // The fused bookkeeping class's split (docs/cli.md "JSON"): kernels that do only bookkeeping, and the others.
    classes[std::string(kernel_class_id(KernelClass::FusedBookkeeping))]["only_bookkeeping"]
        = { { "time_ns", r.kernel_classes.fused_only_bookkeeping.time_ns },
              { "count", r.kernel_classes.fused_only_bookkeeping.count } };
    // JSON has no NaN: a count and where the first one was, never the value.
    json nan_scalars = json::array();
    for (const NanScalar& s : r.nan_scalars)
        nan_scalars.push_back({ { "name", s.name }, { "nan_values", s.nan_values }, { "values", s.values },
            { "first_step", s.first_step ? json(*s.first_step) : json(nullptr) }, { "first_ns", s.first_ns } });
    const LaunchStats& l = r.launch;
    return json {
        { "schema", kReportJsonSchema },
        { "trace", model.path },
        { "recording",
            { { "finished", r.recording.finished },
                { "finish_reason",
                    r.recording.finish_reason.empty() ? json(nullptr) : json(r.recording.finish_reason) },
                { "dropped_records", r.recording.dropped_records },
                { "clipped_kernels",
                    { { "count", r.recording.clipped_kernels.count },
                        { "clipped_ns", r.recording.clipped_kernels.clipped_ns } } } } },
        { "summary", { { "numerics", numerics_json(r.numerics) } } },
        { "steps",
            { { "source", step_source_name(r.steps.source) }, { "detail", r.steps.detail },
                { "warmup_excluded", r.steps.warmup_excluded },
                { "outside_windows_excluded", r.steps.outside_windows_excluded },
                { "window_edge_excluded", r.steps.window_edge_excluded }, { "steps", steps } } },
        { "capture", capture_json(model.capture) },
        { "thresholds",
            { { "launch_latency_epsilon_ns", r.bubbles.epsilon_ns }, { "epsilon_samples", r.bubbles.epsilon_samples },
                { "epsilon_basis", r.bubbles.epsilon_from_idle_launches ? "idle_launches" : "all_launches" },
                { "idle_launches", r.bubbles.idle_launches }, { "min_idle_launches", kMinIdleLaunchSamples },
                { "host_stall_threshold_ns", r.bubbles.host_stall_threshold_ns },
                { "host_stall_min_ns", kHostStallMinNs }, { "host_stall_median_multiple", kHostStallMedianMultiple },
                { "host_stall_median_silence_ns", r.bubbles.host_stall_median_silence_ns },
                { "graph_gap_ns", r.bubbles.graph_gap_ns }, { "graph_gap_samples", r.bubbles.graph_gap_samples },
                { "gap_bucket_bounds_ns", kGapBucketBoundsNs }, { "comm_share", kCommShare },
                { "min_recommendation_saving_share", kMinRecommendationSavingShare } } },
        { "device", r.device ? json(*r.device) : json(nullptr) },
        { "multi_rank", r.bubbles.multi_rank },
        { "totals", totals_json(r.totals) },
        { "per_device_step", per_step },
        { "syncs",
            { { "count", r.syncs.total.count }, { "idle_caused_ns", r.syncs.total.idle_caused_ns },
                { "by_api", syncs } } },
        { "launch",
            { { "kernels", l.kernels }, { "launches", l.launches }, { "launches_per_s", l.launches_per_s },
                { "short_kernels", l.short_kernels }, { "short_share", l.short_share },
                { "launch_delay_ns",
                    { { "count", l.launch_delay.count }, { "median", l.launch_delay.median_ns },
                        { "p90", l.launch_delay.p90_ns }, { "p99", l.launch_delay.p99_ns },
                        { "max", l.launch_delay.max_ns } } } } },
        { "kernel_classes", classes },
        { "top_kernels", top_kernels_json(model, r, top) },
        { "top_api_calls", top_api_json(model, r, top) },
        { "collector_work",
            { { "time_per_step_ns", int64_t(r.collector_work.time_per_step_ns()) },
                { "share_of_step", r.collector_work.share() }, { "kernels", r.collector_work.kernels },
                { "memcpys", r.collector_work.memcpys }, { "memsets", r.collector_work.memsets },
                { "api_calls", r.collector_work.api_calls } } },
        { "what_if", what_if_json(estimate_what_if(r)) },
        { "tensor_health", tensor_health_json(r.tensor_health) },
        { "nan_scalars", nan_scalars },
    };
}

} // namespace fp8scope::cli

namespace fp8scope::cli {

std::string render_report_markdown(const TraceModel& model, const Report& r, size_t top)
{
    const size_t steps = r.steps.steps.size();
    const BubbleTotals& t = r.totals;
    std::string out = fmt::format("## fp8scope report: {}\n\n", markdown_code(model.path, MarkdownPlace::Text));
    if (steps > 0) {
        for (const SummaryLine& line : report_summary(model, r, markdown_escaped))
            out += fmt::format("- {}**{}**: {}\n", line.warning ? "⚠ " : "", line.label, line.text);
        out += "\n";
    }
    const bool recording_ok = recording_warnings(r.recording).empty();
    out += fmt::format(
        "{}Recording: {}.\n\n", recording_ok ? "" : "**Warning:** ", markdown_escaped(recording_sentence(r.recording)));
    if (!r.nan_scalars.empty())
        out += fmt::format("**Warning:** NaN scalars: {}.\n\n", markdown_escaped(nan_scalars_sentence(r.nan_scalars)));
    out += fmt::format("{}. Launch latency ε = {}; {}{}; recommendations need a saving of at least {:g}% of a step "
                       "(docs/analysis.md). {}.\n\n",
        markdown_escaped(steps_sentence(r.steps)), markdown_escaped(epsilon_sentence(r.bubbles)),
        markdown_escaped(launch_rule_sentence(r.bubbles)),
        r.bubbles.multi_rank ? fmt::format("; multi-rank run: communication kernels are not busy time, and a gap is "
                                           "`comm` when they cover over {:.0f}% of it",
            100.0 * kCommShare)
                             : std::string(),
        100.0 * kMinRecommendationSavingShare, markdown_escaped(collector_work_sentence(r.collector_work)));
    if (steps == 0)
        return out + "No steps: the trace has no activity to analyse.\n";
    const std::vector<BubbleCause> causes = causes_to_show(r);
    out += "| step time | busy | bubble ratio |";
    for (BubbleCause c : causes)
        out += fmt::format(" {} |", bubble_cause_name(c));
    out += "\n|---|---|---|";
    for (size_t i = 0; i < causes.size(); ++i)
        out += "---|";
    out += "\n";
    out += fmt::format("| {} | {:.1f}% | **{:.3f}** |", format_duration_ns(per_step(t.step_ns, steps)),
        percent(t.busy_ns, t.step_ns), t.bubble_ratio);
    for (BubbleCause c : causes)
        out += fmt::format(" {:.1f}% |", percent(t.cause_ns[static_cast<size_t>(c)], t.step_ns));
    out += "\n\nIdle time by cause is given as a share of step time.\n\n";

    out += "### Host-blocking syncs\n\n";
    if (r.syncs.total.count == 0)
        out += "None in the analysed steps.\n";
    else
        out += "Over the steps: " + sync_idle_text(r)
            + ".\n\n| API | calls per step | GPU idle caused |\n|---|---|---|\n";
    for (const SyncApiSummary* a : syncs_by_idle_caused(r.syncs))
        out += fmt::format("| {} | {} | {} |\n", markdown_code(a->name, MarkdownPlace::TableCell),
            per_step_rate(a->count, steps, 1), format_duration_ns(a->idle_caused_ns));
    out += "\n### Kernel classes\n\n| class | time per step | share of kernel time | kernels per step |\n"
           "|---|---|---|---|\n";
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        const ClassTotals& k = r.kernel_classes.by_class[c];
        if (k.count > 0)
            out += fmt::format("| {} | {} | {:.1f}% | {} |\n", kernel_class_label(cls),
                format_duration_ns(per_step(k.time_ns, steps)), 100.0 * r.kernel_classes.share_of_kernel_time(cls),
                per_step_rate(k.count, steps, 0));
    }
    if (const std::string fused = fused_bookkeeping_attribution(r.kernel_classes, steps); !fused.empty())
        out += fmt::format("\nFused bookkeeping: {}.\n", fused);
    if (const std::string empty = empty_kernel_classes(r.kernel_classes); !empty.empty())
        out += fmt::format("\nNo kernels in the steps: {}.\n", empty);
    out += top_tables_markdown(model, r, top);
    out += tensor_health_markdown(r.tensor_health);
    const WhatIf w = estimate_what_if(r);
    out += "\n### Recommendations\n\n";
    if (w.recommendations.empty())
        out += no_recommendation_sentence(true) + ".\n";
    for (const Recommendation& rec : w.recommendations)
        out += fmt::format("- **{}**: saves up to {} per step ({:.1f}%), because {}; {}.\n",
            markdown_escaped(rec.title), format_duration_ns(rec.saving_per_step_ns), 100.0 * rec.saving_share,
            markdown_escaped(rec.reason), worst_step_text(rec.worst_step, rec.kind));
    return out;
}

} // namespace fp8scope::cli
