// CI budgets over the ranks of one job (`fp8scope check A.sqlite B.sqlite ...`; docs/analysis.md "Budgets" and
// "Across ranks"): each result names the rank its figure comes from, so that a failure points at a trace.
#pragma once

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8scope::analyzer {

struct RankBudgets {
    // The worst rank's bubble ratio over its analysed steps; the result names that rank and its worst step.
    std::optional<double> max_bubble_ratio;
    // The largest wait of any rank in one step's matched collectives (StepAcrossRanks::wait_ns), in ns; the result
    // names the rank and the step. No matched collective: the budget fails, unavailable.
    std::optional<int64_t> max_straggler_wait_ns;
};

// In the order of RankBudgets' fields, one result per budget given. BudgetResult::rank is set.
std::vector<BudgetResult> evaluate_rank_budgets(const RankSetReport& set, const RankBudgets& budgets);

} // namespace fp8scope::analyzer
