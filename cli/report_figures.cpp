#include "report_figures.hpp"

#include "human_units.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {

using namespace analyzer;

std::string steps_sentence(const StepSet& steps)
{
    std::string line = fmt::format("{} steps from {}", steps.steps.size(), step_source_name(steps.source));
    if (!steps.detail.empty())
        line += fmt::format(" ({})", steps.detail);
    if (steps.warmup_excluded > 0)
        line += fmt::format(
            ", {} warm-up step{} excluded", steps.warmup_excluded, steps.warmup_excluded == 1 ? "" : "s");
    return line;
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
        return "collector GPU time per step: none (fp8scope launched no GPU work)";
    std::string what = fmt::format("{} kernel{}", w.kernels, w.kernels == 1 ? "" : "s");
    if (w.memsets > 0)
        what += fmt::format(", {} memset{}", w.memsets, w.memsets == 1 ? "" : "s");
    if (w.memcpys > 0)
        what += fmt::format(", {} cop{}", w.memcpys, w.memcpys == 1 ? "y" : "ies");
    return fmt::format("collector GPU time per step: {} ({:.2f}% of the step; fp8scope's own {} in the trace, "
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

} // namespace fp8scope::cli
