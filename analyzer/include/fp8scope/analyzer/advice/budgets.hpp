// CI budgets (`fp8scope check`): limits on a Report's figures. A budget holds when its figure over all analysed
// steps is within the limit; every result also names the worst step and its figure, so that a failure points at
// a place in the trace (docs/analysis.md "Budgets").
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// One analysed step's bubble totals, summed over the devices the report's totals cover (every device, or the one
// --device names). The budgets' worst steps, the recommendations' worst steps and the reports' per-step charts all
// read these, so that they agree on what "the step" is.
struct StepBubbleTotals {
    int64_t step_index = 0; // StepInterval::index
    BubbleTotals totals; // bubble_ratio recomputed from the sums
};

// One entry per step of report.steps, in that order; a step in which no counted device has a row is all zeros.
std::vector<StepBubbleTotals> bubbles_per_step(const Report& report);

struct Budgets {
    std::optional<double> max_bubble_ratio; // idle / step time, all devices
    std::optional<double> max_syncs_per_step; // host-blocking calls per step (mean over the steps)
    std::optional<double> max_launch_bound_ratio; // idle time caused by `launch` / step time
    // The mean step time in ns (each step's interval, end - start), the worst step the longest
    // (docs/analysis.md "Budgets").
    std::optional<double> max_step_time_ns;
    // Tensor health (docs/analysis.md "Tensor health"): the worst single sample in the analysed steps, not a mean,
    // since one clipping tensor is the problem however many healthy ones surround it.
    std::optional<double> max_saturation; // max(saturated, overflows) / numel, 0 to 1
    std::optional<double> max_underflow; // underflows / numel, 0 to 1 (high-precision samples only)
    bool no_nonfinite = false; // no NaN/Inf in any sample of the whole trace, warm-up included
};

struct BudgetResult {
    std::string name; // "max-bubble-ratio", as the flag
    double limit = 0;
    double value = 0; // over all analysed steps
    bool passed = true;
    std::optional<int64_t> worst_step; // StepInterval::index of the step with the highest figure
    double worst_value = 0;
    // Tensor budgets: the site of the worst (for no-nonfinite: the first) sample, as tensor_site_label() names it.
    std::string where;
    // Budgets over the ranks of one job (rank_budgets.hpp): the rank the figure is from (for max-straggler-wait, the
    // rank that waited), and for max-straggler-wait the rank it waited for: the straggler, the worst step's slowest
    // rank (StepAcrossRanks::slowest_rank), the one `report` names.
    std::optional<int32_t> rank;
    std::optional<int32_t> straggler_rank;
    // Non-empty when the figure could not be computed, e.g. "the trace has no tensor statistics": the budget then
    // fails, since a gate that passes without data would claim a health it never checked.
    std::string unavailable;
};

std::vector<BudgetResult> evaluate_budgets(const Report& report, const Budgets& budgets);

} // namespace fp8scope::analyzer
