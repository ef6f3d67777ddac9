#include "report_figures.hpp"

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
