#include "fp8scope/analyzer/budgets.hpp"

#include <map>

namespace fp8scope::analyzer {
namespace {

    double ratio(int64_t part, int64_t whole)
    {
        return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
    }

    // Per step, summed over the devices in the report's totals (all, or the one --device names).
    struct StepFigures {
        int64_t step_ns = 0;
        int64_t idle_ns = 0;
        int64_t launch_ns = 0;
    };

    std::map<int64_t, StepFigures> per_step(const Report& report)
    {
        std::map<int64_t, StepFigures> steps;
        for (const DeviceStepBubbles& d : report.bubbles.per_device_step) {
            if (report.device && d.device_id != *report.device)
                continue;
            StepFigures& f = steps[d.step_index];
            f.step_ns += d.totals.step_ns;
            f.idle_ns += d.totals.idle_ns;
            f.launch_ns += d.totals.cause_ns[static_cast<size_t>(BubbleCause::Launch)];
        }
        return steps;
    }

    template <class Figure>
    void worst(BudgetResult& result, const std::map<int64_t, StepFigures>& steps, Figure figure)
    {
        for (const auto& [index, f] : steps) {
            const double value = figure(f);
            if (!result.worst_step || value > result.worst_value) {
                result.worst_step = index;
                result.worst_value = value;
            }
        }
    }

    BudgetResult make_result(const char* name, double limit, double value)
    {
        BudgetResult r;
        r.name = name;
        r.limit = limit;
        r.value = value;
        return r;
    }

} // namespace

std::vector<BudgetResult> evaluate_budgets(const Report& report, const Budgets& budgets)
{
    std::vector<BudgetResult> results;
    const auto steps = per_step(report);
    const BubbleTotals& t = report.totals;
    if (budgets.max_bubble_ratio) {
        BudgetResult r = make_result("max-bubble-ratio", *budgets.max_bubble_ratio, t.bubble_ratio);
        worst(r, steps, [](const StepFigures& f) { return ratio(f.idle_ns, f.step_ns); });
        results.push_back(r);
    }
    if (budgets.max_launch_bound_ratio) {
        BudgetResult r = make_result("max-launch-bound-ratio", *budgets.max_launch_bound_ratio,
            ratio(t.cause_ns[static_cast<size_t>(BubbleCause::Launch)], t.step_ns));
        worst(r, steps, [](const StepFigures& f) { return ratio(f.launch_ns, f.step_ns); });
        results.push_back(r);
    }
    if (budgets.max_syncs_per_step) {
        const size_t n = report.steps.steps.size();
        BudgetResult r = make_result("max-syncs-per-step", *budgets.max_syncs_per_step,
            n > 0 ? static_cast<double>(report.syncs.total.count) / static_cast<double>(n) : 0.0);
        for (size_t i = 0; i < report.syncs.per_step.size() && i < n; ++i) {
            const double value = static_cast<double>(report.syncs.per_step[i].count);
            if (!r.worst_step || value > r.worst_value) {
                r.worst_step = report.steps.steps[i].index;
                r.worst_value = value;
            }
        }
        results.push_back(r);
    }
    for (BudgetResult& r : results)
        r.passed = r.value <= r.limit;
    return results;
}

} // namespace fp8scope::analyzer
