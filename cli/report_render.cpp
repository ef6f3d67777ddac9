#include "report_render.hpp"

#include "human_units.hpp"

#include "fp8scope/analyzer/recommendations.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

    constexpr std::array<BubbleCause, 4> kCauses { BubbleCause::Sync, BubbleCause::Dependency, BubbleCause::Launch,
        BubbleCause::Host };

    double percent(int64_t part, int64_t whole)
    {
        return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    }

    int64_t per_step(int64_t value, size_t steps)
    {
        return steps > 0 ? value / static_cast<int64_t>(steps) : 0;
    }

    std::string steps_line(const StepSet& steps)
    {
        std::string line = fmt::format("{} steps from {}", steps.steps.size(), step_source_name(steps.source));
        if (!steps.detail.empty())
            line += fmt::format(" ({})", steps.detail);
        if (steps.warmup_excluded > 0)
            line += fmt::format(", {} warm-up step{} excluded", steps.warmup_excluded,
                steps.warmup_excluded == 1 ? "" : "s");
        return line;
    }

    BubbleCause top_cause(const BubbleTotals& t)
    {
        BubbleCause best = BubbleCause::Host;
        int64_t best_ns = -1;
        for (BubbleCause c : kCauses) {
            if (t.cause_ns[static_cast<size_t>(c)] > best_ns) {
                best_ns = t.cause_ns[static_cast<size_t>(c)];
                best = c;
            }
        }
        return best;
    }

    void bubbles_text(std::string& out, const Report& r)
    {
        const BubbleTotals& t = r.totals;
        out += fmt::format("\nGPU time{}\n", r.device ? fmt::format(" (device {})", *r.device) : std::string());
        out += fmt::format("  step time        {} in all, {} per step\n", format_duration_ns(t.step_ns),
            format_duration_ns(per_step(t.step_ns, r.steps.steps.size())));
        out += fmt::format("  busy             {} ({:.1f}%)\n", format_duration_ns(t.busy_ns), percent(t.busy_ns, t.step_ns));
        out += fmt::format("  bubble ratio     {:.3f} ({} idle in {} bubbles)\n", t.bubble_ratio,
            format_duration_ns(t.idle_ns), t.bubble_count);
        out += "  idle by cause   ";
        for (BubbleCause c : kCauses)
            out += fmt::format(" {} {} ({:.0f}%)", bubble_cause_name(c),
                format_duration_ns(t.cause_ns[static_cast<size_t>(c)]),
                percent(t.cause_ns[static_cast<size_t>(c)], t.idle_ns));
        out += "\n";
        out += fmt::format("  gap sizes        <10 µs {}, 10-100 µs {}, 100 µs-1 ms {}, >=1 ms {}\n", t.gap_counts[0],
            t.gap_counts[1], t.gap_counts[2], t.gap_counts[3]);

        out += "\nPer step (device, step, time, bubble ratio, top cause)\n";
        for (const DeviceStepBubbles& d : r.bubbles.per_device_step) {
            if (r.device && d.device_id != *r.device)
                continue;
            out += fmt::format("  {:>3} {:>6} {:>12} {:>8.3f}  {}\n", d.device_id, d.step_index,
                format_duration_ns(d.totals.step_ns), d.totals.bubble_ratio,
                d.totals.idle_ns > 0 ? bubble_cause_name(top_cause(d.totals)) : "-");
        }
    }

    void syncs_text(std::string& out, const TraceModel& model, const Report& r)
    {
        const size_t steps = r.steps.steps.size();
        out += fmt::format("\nHost-blocking syncs: {} in the steps, {:.1f} per step, {} idle caused\n", r.syncs.total.count,
            steps ? static_cast<double>(r.syncs.total.count) / static_cast<double>(steps) : 0.0,
            format_duration_ns(r.syncs.total.idle_caused_ns));
        std::vector<const SyncApiSummary*> apis;
        for (const auto& a : r.syncs.by_api)
            apis.push_back(&a);
        std::ranges::sort(apis, [](auto* a, auto* b) { return a->idle_caused_ns > b->idle_caused_ns; });
        for (const SyncApiSummary* a : apis)
            out += fmt::format("  {:<36} {:>7} calls {:>6.1f}/step  blocked {:>10}  GPU idle caused {:>10}\n",
                model.strings[a->api_name], a->count,
                steps ? static_cast<double>(a->count) / static_cast<double>(steps) : 0.0,
                format_duration_ns(a->duration_ns), format_duration_ns(a->idle_caused_ns));
    }

    void launch_text(std::string& out, const Report& r)
    {
        const LaunchStats& l = r.launch;
        const size_t steps = r.steps.steps.size();
        out += "\nLaunches\n";
        out += fmt::format("  kernels          {} ({} per step), {} launches/s of step time\n", l.kernels,
            per_step(l.kernels, steps), static_cast<int64_t>(l.launches_per_s));
        out += fmt::format("  launch delay     median {}, p90 {}, p99 {}, max {} ({} kernels)\n",
            format_duration_ns(l.launch_delay.median_ns), format_duration_ns(l.launch_delay.p90_ns),
            format_duration_ns(l.launch_delay.p99_ns), format_duration_ns(l.launch_delay.max_ns), l.launch_delay.count);
        out += fmt::format("  short kernels    {} ({:.1f}%) ran for less time than their launch call\n", l.short_kernels,
            100.0 * l.short_share);
        for (const StreamQueueDepth& q : l.streams)
            out += fmt::format("  queue depth      device {} stream {}: max {}, mean {:.1f}\n", q.device_id,
                q.stream_id, q.max_depth, q.mean_depth);
    }

    void classes_text(std::string& out, const TraceModel& model, const Report& r)
    {
        const KernelClassReport& k = r.kernel_classes;
        const size_t steps = r.steps.steps.size();
        out += "\nKernel classes (time is summed kernel time; share of step time)\n";
        for (size_t c = 0; c < kKernelClassCount; ++c) {
            const auto cls = static_cast<KernelClass>(c);
            const ClassTotals& t = k.by_class[c];
            out += fmt::format("  {:<28} {:>10}/step {:>6.1f}%  {:>6} kernels/step\n", kernel_class_label(cls),
                format_duration_ns(per_step(t.time_ns, steps)), 100.0 * k.share(cls), per_step(t.count, steps));
            if (!k.top[c].empty() && t.count > 0)
                out += fmt::format("      top: {}\n", printable(model.strings[k.top[c].front().name]).substr(0, 100));
        }
    }

    void what_if_text(std::string& out, const WhatIf& w)
    {
        out += "\nWhat if (estimated savings per step are upper bounds: the idle time each change could give back)\n";
        out += fmt::format("  step time {}; without launch overhead (CUDA Graphs) {}; without sync stalls {}\n",
            format_duration_ns(w.mean_step_ns), format_duration_ns(w.without_launch_overhead_ns),
            format_duration_ns(w.without_syncs_ns));
        if (w.recommendations.empty())
            out += "  no change would save 1% of a step or more\n";
        for (const Recommendation& r : w.recommendations)
            out += fmt::format("  - {}: saves up to {} per step ({:.1f}%), because {}\n", r.title,
                format_duration_ns(r.saving_per_step_ns), 100.0 * r.saving_share, r.reason);
    }

} // namespace

std::string render_report_text(const TraceModel& model, const Report& report)
{
    std::string out = fmt::format("fp8scope report: {}\n", printable(model.path));
    out += fmt::format("Steps: {}\n", steps_line(report.steps));
    out += fmt::format("Thresholds: launch latency ε = {} (median kernel start - launch call end over {} kernels); "
                       "a gap is `launch` when the thread spent over {:.0f}% of it in CUDA calls; gap size buckets "
                       "10 µs, 100 µs, 1 ms (docs/analysis.md)\n",
        format_duration_ns(report.bubbles.epsilon_ns), report.bubbles.epsilon_samples, 100.0 * kLaunchApiShare);
    if (report.steps.steps.empty()) {
        out += "\nNo steps: the trace has no GPU activity to analyse.\n";
        return out;
    }
    bubbles_text(out, report);
    syncs_text(out, model, report);
    launch_text(out, report);
    classes_text(out, model, report);
    what_if_text(out, estimate_what_if(report));
    return out;
}

namespace {
    nlohmann::ordered_json what_if_json(const WhatIf& w)
    {
        nlohmann::ordered_json recs = nlohmann::ordered_json::array();
        for (const Recommendation& r : w.recommendations)
            recs.push_back({ { "kind", recommendation_kind_name(r.kind) }, { "title", r.title }, { "reason", r.reason },
                { "saving_per_step_ns", r.saving_per_step_ns }, { "saving_share", r.saving_share } });
        return { { "mean_step_ns", w.mean_step_ns }, { "without_launch_overhead_ns", w.without_launch_overhead_ns },
            { "without_syncs_ns", w.without_syncs_ns }, { "recommendations", recs } };
    }
} // namespace

nlohmann::ordered_json render_report_json(const TraceModel& model, const Report& r)
{
    using json = nlohmann::ordered_json;
    auto totals_json = [](const BubbleTotals& t) {
        json causes = json::object();
        for (BubbleCause c : kCauses)
            causes[bubble_cause_name(c)] = t.cause_ns[static_cast<size_t>(c)];
        return json { { "step_ns", t.step_ns }, { "busy_ns", t.busy_ns }, { "idle_ns", t.idle_ns },
            { "bubble_ratio", t.bubble_ratio }, { "bubbles", t.bubble_count }, { "idle_by_cause_ns", causes },
            { "gap_counts", { { "lt_10us", t.gap_counts[0] }, { "10us_100us", t.gap_counts[1] },
                                { "100us_1ms", t.gap_counts[2] }, { "ge_1ms", t.gap_counts[3] } } } };
    };
    json steps = json::array();
    for (const StepInterval& s : r.steps.steps)
        steps.push_back({ { "index", s.index }, { "start_ns", s.start_ns }, { "end_ns", s.end_ns } });
    json per_step = json::array();
    for (const DeviceStepBubbles& d : r.bubbles.per_device_step)
        per_step.push_back({ { "device", d.device_id }, { "step", d.step_index }, { "totals", totals_json(d.totals) } });
    json syncs = json::array();
    for (const SyncApiSummary& a : r.syncs.by_api)
        syncs.push_back({ { "api", model.strings[a.api_name] }, { "count", a.count }, { "duration_ns", a.duration_ns },
            { "idle_caused_ns", a.idle_caused_ns }, { "outside_steps", a.outside_steps } });
    json classes = json::object();
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        classes[std::string(kernel_class_id(cls))] = { { "time_ns", r.kernel_classes.by_class[c].time_ns },
            { "count", r.kernel_classes.by_class[c].count }, { "share_of_step", r.kernel_classes.share(cls) } };
    }
    const LaunchStats& l = r.launch;
    return json {
        { "schema", kReportJsonSchema },
        { "trace", model.path },
        { "steps", { { "source", step_source_name(r.steps.source) }, { "detail", r.steps.detail },
                       { "warmup_excluded", r.steps.warmup_excluded }, { "steps", steps } } },
        { "thresholds", { { "launch_latency_epsilon_ns", r.bubbles.epsilon_ns },
                            { "epsilon_samples", r.bubbles.epsilon_samples },
                            { "launch_api_share", kLaunchApiShare },
                            { "gap_bucket_bounds_ns", kGapBucketBoundsNs } } },
        { "device", r.device ? json(*r.device) : json(nullptr) },
        { "totals", totals_json(r.totals) },
        { "per_device_step", per_step },
        { "syncs", { { "count", r.syncs.total.count }, { "idle_caused_ns", r.syncs.total.idle_caused_ns },
                       { "by_api", syncs } } },
        { "launch", { { "kernels", l.kernels }, { "launches", l.launches }, { "launches_per_s", l.launches_per_s },
                        { "short_kernels", l.short_kernels }, { "short_share", l.short_share },
                        { "launch_delay_ns", { { "count", l.launch_delay.count }, { "median", l.launch_delay.median_ns },
                                                 { "p90", l.launch_delay.p90_ns }, { "p99", l.launch_delay.p99_ns },
                                                 { "max", l.launch_delay.max_ns } } } } },
        { "kernel_classes", classes },
        { "what_if", what_if_json(estimate_what_if(r)) },
    };
}

} // namespace fp8scope::cli

namespace fp8scope::cli {

std::string render_report_markdown(const TraceModel& model, const Report& r)
{
    const size_t steps = r.steps.steps.size();
    const BubbleTotals& t = r.totals;
    std::string out = fmt::format("## fp8scope report: `{}`\n\n", printable(model.path));
    out += fmt::format("{}. Launch latency ε = {}; a gap is `launch` when the thread spent over {:.0f}% of it in CUDA "
                       "calls (docs/analysis.md).\n\n",
        steps_line(r.steps), format_duration_ns(r.bubbles.epsilon_ns), 100.0 * kLaunchApiShare);
    if (steps == 0)
        return out + "No steps: the trace has no GPU activity to analyse.\n";
    out += "| step time | busy | bubble ratio | sync | dependency | launch | host |\n|---|---|---|---|---|---|---|\n";
    out += fmt::format("| {} | {:.1f}% | **{:.3f}** |", format_duration_ns(per_step(t.step_ns, steps)),
        percent(t.busy_ns, t.step_ns), t.bubble_ratio);
    for (BubbleCause c : kCauses)
        out += fmt::format(" {:.1f}% |", percent(t.cause_ns[static_cast<size_t>(c)], t.step_ns));
    out += "\n\nIdle time by cause is given as a share of step time.\n\n";

    out += "### Host-blocking syncs\n\n";
    if (r.syncs.total.count == 0)
        out += "None in the analysed steps.\n";
    else
        out += "| API | calls per step | GPU idle caused |\n|---|---|---|\n";
    for (const SyncApiSummary& a : r.syncs.by_api)
        if (a.count > 0)
            out += fmt::format("| `{}` | {:.1f} | {} |\n", printable(model.strings[a.api_name]),
                static_cast<double>(a.count) / static_cast<double>(steps), format_duration_ns(a.idle_caused_ns));
    out += "\n### Kernel classes\n\n| class | time per step | share of step | kernels per step |\n|---|---|---|---|\n";
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const auto cls = static_cast<KernelClass>(c);
        const ClassTotals& k = r.kernel_classes.by_class[c];
        out += fmt::format("| {} | {} | {:.1f}% | {} |\n", kernel_class_label(cls),
            format_duration_ns(per_step(k.time_ns, steps)), 100.0 * r.kernel_classes.share(cls), per_step(k.count, steps));
    }
    const WhatIf w = estimate_what_if(r);
    out += "\n### Recommendations\n\n";
    if (w.recommendations.empty())
        out += "No change would save 1% of a step or more.\n";
    for (const Recommendation& rec : w.recommendations)
        out += fmt::format("- **{}**: saves up to {} per step ({:.1f}%), because {}.\n", rec.title,
            format_duration_ns(rec.saving_per_step_ns), 100.0 * rec.saving_share, rec.reason);
    return out;
}

} // namespace fp8scope::cli
