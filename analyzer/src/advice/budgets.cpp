#include "fp8scope/analyzer/advice/budgets.hpp"

#include <string>
#include <unordered_map>

namespace fp8scope::analyzer {
namespace {

double ratio(int64_t part, int64_t whole)
{
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The step with the highest figure; steps without device time have no figure (a trace with no GPU activity
// has no worst step).
template <class Figure> void worst(BudgetResult& result, const std::vector<StepBubbleTotals>& steps, Figure figure)
{
    for (const StepBubbleTotals& s : steps) {
        if (s.totals.step_ns <= 0)
            continue;
        const double value = figure(s.totals);
        if (!result.worst_step || value > result.worst_value) {
            result.worst_step = s.step_index;
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

// Why a timeline budget has no figure, or an empty string when it has one: no steps (a trace without activity),
// no GPU time in them, or (for figures that need the host side) no CUDA API calls to charge a gap or a sync to.
std::string missing_timeline_data(const Report& report, bool needs_gpu_time, bool needs_api_calls)
{
    if (report.steps.steps.empty())
        return "the trace has no steps (no GPU activity or NVTX ranges to analyse)";
    if (needs_gpu_time && report.totals.step_ns <= 0)
        return "no GPU activity in the analysed steps";
    if (needs_api_calls && report.recording.api_calls == 0)
        return "the trace has no CUDA API calls (no launch or sync to judge)";
    return {};
}

// Why a tensor budget has no figure, or an empty string when it has one.
std::string missing_tensor_data(const TensorHealth& health)
{
    if (health.totals.samples == 0)
        return "the trace has no tensor statistics";
    if (health.totals.samples_in_steps == 0)
        return "no tensor statistics in the analysed steps";
    return {};
}

// The worst single sample over the sites (ties: the lowest site id, as `sites` is ordered by id).
template <class Count, class Worst, class Step>
BudgetResult worst_tensor_sample(const char* name, double limit, const TensorHealth& health,
    const std::string& no_figure, Count count, Worst worst, Step step)
{
    BudgetResult r = make_result(name, limit, 0.0);
    r.unavailable = missing_tensor_data(health);
    const TensorSiteHealth* found = nullptr;
    for (const TensorSiteHealth& site : health.sites)
        if (count(site) > 0 && (!found || worst(site) > worst(*found)))
            found = &site;
    if (found) {
        r.value = r.worst_value = worst(*found);
        r.worst_step = step(*found);
        r.where = found->label;
    } else if (r.unavailable.empty()) {
        r.unavailable = no_figure;
    }
    return r;
}

BudgetResult nonfinite_result(const TensorHealth& health)
{
    // Limit 0 samples; the value counts the samples with NaN/Inf, the worst step is the first one's.
    BudgetResult r = make_result("no-nonfinite", 0.0, static_cast<double>(health.totals.nonfinite_samples));
    if (health.totals.samples == 0)
        r.unavailable = "the trace has no tensor statistics";
    if (const auto& first = health.first_nonfinite) {
        r.worst_step = first->where.step;
        r.worst_value = static_cast<double>(first->nans + first->infs);
        r.where = first->where.site_label + (first->nan_scale ? " (its scale is NaN)" : "");
    }
    return r;
}

} // namespace

std::vector<StepBubbleTotals> bubbles_per_step(const Report& report)
{
    std::vector<StepBubbleTotals> steps;
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
    for (StepBubbleTotals& s : steps)
        s.totals.bubble_ratio = ratio(s.totals.idle_ns, s.totals.step_ns);
    return steps;
}

std::vector<BudgetResult> evaluate_budgets(const Report& report, const Budgets& budgets)
{
    std::vector<BudgetResult> results;
    const auto steps = bubbles_per_step(report);
    const BubbleTotals& t = report.totals;
    if (budgets.max_bubble_ratio) {
        BudgetResult r = make_result("max-bubble-ratio", *budgets.max_bubble_ratio, t.bubble_ratio);
        r.unavailable = missing_timeline_data(report, true, false);
        worst(r, steps, [](const BubbleTotals& f) { return f.bubble_ratio; });
        results.push_back(r);
    }
    if (budgets.max_launch_bound_ratio) {
        BudgetResult r = make_result("max-launch-bound-ratio", *budgets.max_launch_bound_ratio,
            ratio(t.cause_ns[static_cast<size_t>(BubbleCause::Launch)], t.step_ns));
        r.unavailable = missing_timeline_data(report, true, true);
        worst(r, steps, [](const BubbleTotals& f) {
            return ratio(f.cause_ns[static_cast<size_t>(BubbleCause::Launch)], f.step_ns);
        });
        results.push_back(r);
    }
    if (budgets.max_step_time_ns) {
        const std::vector<StepInterval>& intervals = report.steps.steps;
        double total = 0;
        for (const StepInterval& s : intervals)
            total += static_cast<double>(s.end_ns - s.start_ns);
        BudgetResult r = make_result("max-step-time", *budgets.max_step_time_ns,
            intervals.empty() ? 0.0 : total / static_cast<double>(intervals.size()));
        if (intervals.empty())
            r.unavailable = "no step in the analysed range";
        for (const StepInterval& s : intervals)
            if (const auto value = static_cast<double>(s.end_ns - s.start_ns); !r.worst_step || value > r.worst_value) {
                r.worst_step = s.index;
                r.worst_value = value;
            }
        results.push_back(r);
    }
    if (budgets.max_syncs_per_step) {
        const size_t n = report.steps.steps.size();
        BudgetResult r = make_result("max-syncs-per-step", *budgets.max_syncs_per_step,
            n > 0 ? static_cast<double>(report.syncs.total.count) / static_cast<double>(n) : 0.0);
        // Syncs are counted per step whether or not the GPU was busy, so steps and API calls are all it needs.
        r.unavailable = missing_timeline_data(report, false, true);
        for (size_t i = 0; i < report.syncs.per_step.size() && i < n; ++i) {
            const double value = static_cast<double>(report.syncs.per_step[i].count);
            if (!r.worst_step || value > r.worst_value) {
                r.worst_step = report.steps.steps[i].index;
                r.worst_value = value;
            }
        }
        results.push_back(r);
    }
    const TensorHealth& health = report.tensor_health;
    if (budgets.max_saturation)
        results.push_back(worst_tensor_sample(
            "max-saturation", *budgets.max_saturation, health,
            "no tensor sample in the analysed steps has an FP8 format (a target format, or FP8 codes)",
            [](const TensorSiteHealth& s) { return s.saturation_samples; },
            [](const TensorSiteHealth& s) { return s.worst_saturation_ratio; },
            [](const TensorSiteHealth& s) { return s.worst_saturation_step; }));
    if (budgets.max_underflow)
        results.push_back(worst_tensor_sample(
            "max-underflow", *budgets.max_underflow, health,
            "no tensor sample in the analysed steps can show underflow (that needs a high-precision tensor with a "
            "target FP8 format; FP8 codes seen at a GEMM cannot)",
            [](const TensorSiteHealth& s) { return s.underflow_samples; },
            [](const TensorSiteHealth& s) { return s.worst_underflow_ratio; },
            [](const TensorSiteHealth& s) { return s.worst_underflow_step; }));
    if (budgets.no_nonfinite)
        results.push_back(nonfinite_result(health));
    for (BudgetResult& r : results)
        r.passed = r.unavailable.empty() && r.value <= r.limit;
    return results;
}

} // namespace fp8scope::analyzer
