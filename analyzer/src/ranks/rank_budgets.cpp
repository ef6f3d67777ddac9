// Budgets over the ranks of one job (rank_budgets.hpp).
#include "fp8scope/analyzer/ranks/rank_budgets.hpp"

namespace fp8scope::analyzer {

namespace {

// The rank with the highest bubble ratio (the lowest rank on a tie), its worst step and that step's ratio.
BudgetResult worst_rank_bubble_ratio(const RankSetReport& set, double limit)
{
    BudgetResult r;
    r.name = "max-bubble-ratio";
    r.limit = limit;
    const RankSummary* worst = nullptr;
    for (const RankSummary& rank : set.ranks)
        if (rank.totals.step_ns > 0 && (!worst || rank.totals.bubble_ratio > worst->totals.bubble_ratio))
            worst = &rank;
    if (!worst) {
        r.unavailable = "no rank has GPU activity in its analysed steps";
        return r;
    }
    r.rank = worst->rank;
    r.value = worst->totals.bubble_ratio;
    for (const RankStep& step : worst->steps)
        if (!r.worst_step || step.bubble_ratio > r.worst_value) {
            r.worst_step = step.index;
            r.worst_value = step.bubble_ratio;
        }
    return r;
}

// The largest per-step wait of any rank (the earliest step, then the lowest rank, on a tie).
BudgetResult largest_straggler_wait(const RankSetReport& set, int64_t limit_ns)
{
    BudgetResult r;
    r.name = "max-straggler-wait";
    r.limit = static_cast<double>(limit_ns);
    const CrossRankReport& across = set.across;
    if (across.collectives.empty()) {
        // A gate that passes without data would vouch for ranks it never compared.
        r.unavailable = "no collective is matched across the ranks (no communication kernel in a common step)";
        return r;
    }
    const std::optional<StepWait> longest = longest_step_wait(across);
    if (longest) {
        r.rank = longest->rank;
        r.worst_step = longest->step;
        for (const StepAcrossRanks& step : across.steps)
            if (step.step_index == longest->step && step.slowest_rank >= 0)
                r.straggler_rank = step.slowest_rank;
    }
    r.value = r.worst_value = static_cast<double>(longest ? longest->wait_ns : -1);
    return r;
}

} // namespace

std::vector<BudgetResult> evaluate_rank_budgets(const RankSetReport& set, const RankBudgets& budgets)
{
    std::vector<BudgetResult> results;
    if (budgets.max_bubble_ratio)
        results.push_back(worst_rank_bubble_ratio(set, *budgets.max_bubble_ratio));
    if (budgets.max_straggler_wait_ns)
        results.push_back(largest_straggler_wait(set, *budgets.max_straggler_wait_ns));
    for (BudgetResult& r : results)
        r.passed = r.unavailable.empty() && r.value <= r.limit;
    return results;
}

} // namespace fp8scope::analyzer
