#include "fp8scope/present/figures.hpp"

#include "fp8scope/present/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fp8scope::present {

using namespace analyzer;

std::string count_of(int64_t count, std::string_view singular, std::string_view plural)
{
    return fmt::format("{} {}", count, count == 1 ? singular : plural);
}

std::string per_step_rate(int64_t count, size_t steps, int decimals)
{
    if (steps == 0 || count == 0)
        return "0";
    const double rate = static_cast<double>(count) / static_cast<double>(steps);
    if (rate < std::pow(10.0, -decimals)) // below one unit of the last decimal: "0.5", not "0" or "1"
        return fmt::format("{:.2g}", rate);
    return fmt::format("{:.{}f}", rate, decimals);
}

std::string steps_sentence(const StepSet& steps)
{
    std::string line = fmt::format("{} from {}", count_of(static_cast<int64_t>(steps.steps.size()), "step", "steps"),
        steps.source == StepSource::Optimizer ? "the optimizer" : step_source_name(steps.source));
    if (!steps.detail.empty())
        line += fmt::format(" ({})", steps.detail);
    if (steps.warmup_excluded > 0)
        line += fmt::format(", {} excluded", count_of(steps.warmup_excluded, "warm-up step", "warm-up steps"));
    if (steps.outside_windows_excluded > 0)
        line += fmt::format(
            ", {} outside the capture windows excluded", count_of(steps.outside_windows_excluded, "step", "steps"));
    if (steps.window_edge_excluded > 0)
        line += fmt::format(
            ", {} cut by a capture window's edge excluded", count_of(steps.window_edge_excluded, "step", "steps"));
    return line;
}

std::vector<std::string> recording_warnings(const RecordingStatus& recording)
{
    std::vector<std::string> warnings;
    if (!recording.finished)
        warnings.push_back(finish_status_text(false, {}));
    if (recording.dropped_records > 0)
        warnings.push_back(fmt::format("{} dropped while recording: the figures miss them",
            count_of(recording.dropped_records, "record", "records")));
    if (const ClippedKernels& clipped = recording.clipped_kernels; clipped.count > 0)
        warnings.push_back(fmt::format("{} started before the previous kernel of {} stream ended and {} clipped by {} "
                                       "in all (docs/analysis.md)",
            count_of(clipped.count, "kernel", "kernels"), clipped.count == 1 ? "its" : "their",
            clipped.count == 1 ? "was" : "were", format_duration_ns(clipped.clipped_ns)));
    return warnings;
}

std::string recording_sentence(const RecordingStatus& recording)
{
    const std::vector<std::string> warnings = recording_warnings(recording);
    if (warnings.empty())
        return finish_status_text(true, recording.finish_reason) + ", no records dropped";
    std::string sentence;
    for (const std::string& w : warnings)
        sentence += (sentence.empty() ? "" : "; ") + w;
    return sentence;
}

std::string nan_scalars_sentence(const std::vector<NanScalar>& scalars)
{
    std::string sentence;
    for (const NanScalar& s : scalars) {
        const std::string from = s.first_step ? fmt::format("step {}", *s.first_step) : format_duration_ns(s.first_ns);
        sentence += fmt::format(
            "{}{}: NaN from {} ({} of {} values)", sentence.empty() ? "" : "; ", s.name, from, s.nan_values, s.values);
    }
    return sentence;
}

std::vector<const SyncApiSummary*> syncs_by_idle_caused(const SyncReport& syncs)
{
    std::vector<const SyncApiSummary*> apis;
    for (const SyncApiSummary& a : syncs.by_api)
        if (a.count > 0)
            apis.push_back(&a);
    std::ranges::stable_sort(apis, [](auto* a, auto* b) { return a->idle_caused_ns > b->idle_caused_ns; });
    return apis;
}

std::string sync_idle_text(const Report& report)
{
    const int64_t cause = report.totals.cause_ns[static_cast<size_t>(BubbleCause::Sync)];
    const int64_t caused = report.syncs.total.idle_caused_ns;
    if (cause == 0 && caused == 0)
        return "no sync idle";
    if (caused == cause)
        return fmt::format("sync idle {}, all caused by the calls in the steps", format_duration_ns(cause));
    return fmt::format("sync idle {}, of which the calls in the steps caused {} (a call just before a step can cause "
                       "idle in it)",
        format_duration_ns(cause), format_duration_ns(caused));
}

std::string empty_kernel_classes(const KernelClassReport& classes)
{
    std::string names;
    for (size_t c = 0; c < kKernelClassCount; ++c)
        if (classes.by_class[c].count == 0)
            names += (names.empty() ? "" : ", ") + std::string(kernel_class_label(static_cast<KernelClass>(c)));
    return names;
}

std::string fused_bookkeeping_attribution(const KernelClassReport& classes, size_t steps)
{
    const ClassTotals& fused = classes.of(KernelClass::FusedBookkeeping);
    if (fused.count == 0)
        return {};
    const int64_t only_ns = classes.fused_only_bookkeeping.time_ns;
    return fmt::format("of which {} in kernels that do only FP8 bookkeeping (amax, scale, cast, layout); {} in kernels "
                       "that also do the model's own work, which one trace cannot split (compare with the BF16 run "
                       "prices it)",
        format_duration_ns(per_step(only_ns, steps)), format_duration_ns(per_step(fused.time_ns - only_ns, steps)));
}

BubbleCause top_cause(const BubbleTotals& totals)
{
    size_t best = 0;
    for (size_t c = 1; c < kBubbleCauseCount; ++c)
        if (totals.cause_ns[c] > totals.cause_ns[best])
            best = c;
    return static_cast<BubbleCause>(best);
}

std::vector<BubbleCause> causes_to_show(const Report& report)
{
    std::vector<BubbleCause> causes { BubbleCause::Sync, BubbleCause::Dependency, BubbleCause::Launch,
        BubbleCause::Host };
    if (report.bubbles.multi_rank || report.totals.cause_ns[static_cast<size_t>(BubbleCause::Comm)] > 0)
        causes.push_back(BubbleCause::Comm);
    return causes;
}

std::string epsilon_sentence(const BubbleAnalysis& b)
{
    if (b.epsilon_from_idle_launches)
        return fmt::format("{} (median activity start − launch call end over {} launches onto an idle device)",
            format_duration_ns(b.epsilon_ns), b.epsilon_samples);
    return fmt::format("{} (median activity start − launch call end over all {} launched activities: only {} found "
                       "the device idle, fewer than {}, so it includes queueing behind earlier work)",
        format_duration_ns(b.epsilon_ns), b.epsilon_samples, b.idle_launches, kMinIdleLaunchSamples);
}

std::string launch_rule_sentence(const BubbleAnalysis& b)
{
    return fmt::format("a gap is host when the launching thread made no CUDA call for over {} (max({}, {} × its "
                       "median silence of {})), else launch; a CUDA graph leaves {} between kernels ({})",
        format_duration_ns(b.host_stall_threshold_ns), format_duration_ns(kHostStallMinNs), kHostStallMedianMultiple,
        format_duration_ns(b.host_stall_median_silence_ns), format_duration_ns(b.graph_gap_ns),
        b.graph_gap_samples > 0 ? fmt::format("measured on {} graph kernels", b.graph_gap_samples)
                                : std::string("the H100 default; no graph kernels to measure"));
}

std::string collector_work_sentence(const CollectorWorkSummary& w)
{
    if (w.kernels + w.memcpys + w.memsets == 0)
        return "Collector GPU time per step: none (fp8scope launched no GPU work)";
    std::string what = fmt::format("{} kernel{}", w.kernels, w.kernels == 1 ? "" : "s");
    if (w.memsets > 0)
        what += fmt::format(", {} memset{}", w.memsets, w.memsets == 1 ? "" : "s");
    if (w.memcpys > 0)
        what += fmt::format(", {} cop{}", w.memcpys, w.memcpys == 1 ? "y" : "ies");
    return fmt::format("Collector GPU time per step: {} ({:.2f}% of the step; fp8scope's own {} in the trace, "
                       "left out of every other figure)",
        format_duration_ns(int64_t(w.time_per_step_ns())), 100.0 * w.share(), what);
}

std::string worst_step_text(const std::optional<RecommendationStep>& worst, RecommendationKind kind)
{
    if (!worst)
        return "no worst step";
    return fmt::format(
        "worst step {}: {} {:.1f}% of the step", worst->step_index, recommendation_figure(kind), 100.0 * worst->share);
}

std::string no_recommendation_sentence(bool capitalised)
{
    return fmt::format("{}o change would save {:g}% of a step or more", capitalised ? 'N' : 'n',
        100.0 * kMinRecommendationSavingShare);
}

std::string graphs_what_if(const analyzer::WhatIf& w)
{
    if (w.graph_kernel_share >= analyzer::kGraphedStepShare)
        return fmt::format(
            "the steps already run from CUDA graphs ({:.0f}% of their kernels)", 100.0 * w.graph_kernel_share);
    return "without launch overhead (CUDA Graphs) " + format_duration_ns(w.without_launch_overhead_ns);
}

std::string finish_status_text(bool finished, std::string_view finish_reason)
{
    if (!finished)
        return std::string(kUnfinishedText);
    if (finish_reason.empty())
        return "finished";
    return fmt::format("finished ({})", printable(finish_reason));
}

} // namespace fp8scope::present
