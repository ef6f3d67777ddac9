// CI budgets (`fp8scope check`): limits on a Report's figures. A budget holds when its figure over all analysed
// steps is within the limit; every result also names the worst step and its figure, so that a failure points at
// a place in the trace (docs/analysis.md "Budgets").
#pragma once

#include "fp8scope/analyzer/report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

struct Budgets {
    std::optional<double> max_bubble_ratio; // idle / step time, all devices
    std::optional<double> max_syncs_per_step; // host-blocking calls per step (mean over the steps)
    std::optional<double> max_launch_bound_ratio; // idle time caused by `launch` / step time
};

struct BudgetResult {
    std::string name; // "max-bubble-ratio", as the flag
    double limit = 0;
    double value = 0; // over all analysed steps
    bool passed = true;
    std::optional<int64_t> worst_step; // StepInterval::index of the step with the highest figure
    double worst_value = 0;
};

std::vector<BudgetResult> evaluate_budgets(const Report& report, const Budgets& budgets);

} // namespace fp8scope::analyzer
