// Figures that several `report` formats show (text, Markdown, HTML, JUnit), picked out of the analyzer's Report:
// sums over devices, the step with the highest figure, the sentence naming the step source. Selection and
// summing only; every quantity is the analyzer's (docs/analysis.md).
#pragma once

#include "fp8scope/analyzer/recommendations.hpp"
#include "fp8scope/analyzer/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::cli {

// The causes the text, Markdown and JSON reports list (fp8scope.report/1 has these four keys). The HTML and JUnit
// reports use causes_to_show(), which adds comm (multi-rank runs, rule 4) when it occurred.
inline constexpr analyzer::BubbleCause kShownCauses[] = { analyzer::BubbleCause::Sync,
    analyzer::BubbleCause::Dependency, analyzer::BubbleCause::Launch, analyzer::BubbleCause::Host };

// kShownCauses, then comm when `totals` has idle time caused by it.
std::vector<analyzer::BubbleCause> causes_to_show(const analyzer::BubbleTotals& totals);

// 100 * part / whole, 0 when whole is 0.
inline double percent(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// value / steps (integer division), 0 without steps.
inline int64_t per_step(int64_t value, size_t steps)
{
    return steps > 0 ? value / static_cast<int64_t>(steps) : 0;
}

// Display only: how a bubble ratio is shown (text colour, HTML class): under 0.1 fine, under 0.3 a warning, above
// bad (docs/cli.md). The CI gate's limits are the user's own (`check --max-bubble-ratio`).
enum class Severity { Ok, Warn, Bad };
inline Severity bubble_ratio_severity(double ratio)
{
    return ratio >= 0.3 ? Severity::Bad : ratio >= 0.1 ? Severity::Warn : Severity::Ok;
}

// "28 steps from nvtx (train_step), 2 warm-up steps excluded".
std::string steps_sentence(const analyzer::StepSet& steps);

// The cause with the most idle time among sync, dependency, launch, host and comm (ties: the earlier one).
analyzer::BubbleCause top_cause(const analyzer::BubbleTotals& totals);

// One entry per step of the report, in StepSet order: the bubble totals summed over the devices the report's
// totals cover (every device, or the one --device names), as `check`'s budgets sum them.
struct StepBubbles {
    int64_t step_index = 0; // StepInterval::index
    analyzer::BubbleTotals totals;
};
std::vector<StepBubbles> per_step_bubbles(const analyzer::Report& report);

// The analysis area a recommendation belongs to: "bubbles", "syncs", "launch" or "fp8_overhead". Every area has
// exactly one kind of recommendation (kFindingAreas), so a JUnit report has a stable set of testcases.
struct FindingArea {
    const char* area;
    analyzer::RecommendationKind kind;
};
inline constexpr FindingArea kFindingAreas[] = {
    { "bubbles", analyzer::RecommendationKind::ReduceHostWork },
    { "syncs", analyzer::RecommendationKind::RemoveSync },
    { "launch", analyzer::RecommendationKind::CudaGraphs },
    { "fp8_overhead", analyzer::RecommendationKind::FuseFp8Bookkeeping },
};

// The step where the figure behind a recommendation is highest, as a share of that step's time: idle time caused
// by launch (cuda_graphs), by sync (remove_sync) or by host (reduce_host_work), or the cast and amax/scale kernel
// time (fuse_fp8_bookkeeping). nullopt without steps.
struct WorstStep {
    int64_t step_index = 0;
    double share = 0; // of that step's time
    std::string figure; // what the share is of, e.g. "idle caused by launch"
};
std::optional<WorstStep> worst_step(const analyzer::Report& report, analyzer::RecommendationKind kind);

} // namespace fp8scope::cli
