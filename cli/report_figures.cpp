#include "report_figures.hpp"

#include <fmt/format.h>

#include <unordered_map>

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

std::vector<BubbleCause> causes_to_show(const BubbleTotals& totals)
{
    std::vector<BubbleCause> causes(std::begin(kShownCauses), std::end(kShownCauses));
    if (totals.cause_ns[static_cast<size_t>(BubbleCause::Comm)] > 0)
        causes.push_back(BubbleCause::Comm);
    return causes;
}

std::vector<StepBubbles> per_step_bubbles(const Report& report)
{
    std::vector<StepBubbles> steps;
    std::unordered_map<int64_t, size_t> position; // StepInterval::index -> position in StepSet::steps
    for (const StepInterval& s : report.steps.steps) {
        position.emplace(s.index, steps.size());
        steps.push_back({ .step_index = s.index, .totals = {} });
    }
    for (const DeviceStepBubbles& d : report.bubbles.per_device_step) {
        const auto found = position.find(d.step_index);
        if ((report.device && d.device_id != *report.device) || found == position.end())
            continue;
        BubbleTotals& t = steps[found->second].totals;
        t.step_ns += d.totals.step_ns;
        t.busy_ns += d.totals.busy_ns;
        t.idle_ns += d.totals.idle_ns;
        t.bubble_count += d.totals.bubble_count;
        for (size_t c = 0; c < kBubbleCauseCount; ++c)
            t.cause_ns[c] += d.totals.cause_ns[c];
        for (size_t g = 0; g < kGapBucketCount; ++g)
            t.gap_counts[g] += d.totals.gap_counts[g];
    }
    for (StepBubbles& s : steps)
        s.totals.bubble_ratio = s.totals.step_ns > 0
            ? static_cast<double>(s.totals.idle_ns) / static_cast<double>(s.totals.step_ns)
            : 0.0;
    return steps;
}

namespace {

double share(int64_t part, int64_t whole)
{
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::optional<WorstStep> worst_cause_step(const Report& report, BubbleCause cause)
{
    std::optional<WorstStep> worst;
    for (const StepBubbles& s : per_step_bubbles(report)) {
        const double value = share(s.totals.cause_ns[static_cast<size_t>(cause)], s.totals.step_ns);
        if (!worst || value > worst->share)
            worst = WorstStep { s.step_index, value, fmt::format("idle caused by {}", bubble_cause_name(cause)) };
    }
    return worst;
}

} // namespace

std::optional<WorstStep> worst_step(const Report& report, RecommendationKind kind)
{
    switch (kind) {
    case RecommendationKind::CudaGraphs:
        return worst_cause_step(report, BubbleCause::Launch);
    case RecommendationKind::RemoveSync:
        return worst_cause_step(report, BubbleCause::Sync);
    case RecommendationKind::ReduceHostWork:
        return worst_cause_step(report, BubbleCause::Host);
    case RecommendationKind::FuseFp8Bookkeeping: {
        std::optional<WorstStep> worst;
        for (const StepKernelClasses& s : report.kernel_classes.steps) {
            const int64_t bookkeeping_ns = s.by_class[static_cast<size_t>(KernelClass::Cast)].time_ns
                + s.by_class[static_cast<size_t>(KernelClass::AmaxScale)].time_ns;
            const double value = share(bookkeeping_ns, s.step_ns);
            if (!worst || value > worst->share)
                worst = WorstStep { s.step_index, value, "cast and amax/scale kernel time" };
        }
        return worst;
    }
    }
    return std::nullopt;
}

} // namespace fp8scope::cli
