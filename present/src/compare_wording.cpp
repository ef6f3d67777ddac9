#include "fp8scope/present/compare_wording.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/units.hpp"

#include "fp8scope/analyzer/steps/steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fp8scope::present {

using namespace analyzer;

namespace {

constexpr size_t kListedSteps = 10; // step numbers named in the alignment sentence

// "30, 31", "none", or the first kListedSteps and how many there are.
std::string step_list(const std::vector<int64_t>& steps)
{
    if (steps.empty())
        return "none";
    std::string out;
    for (size_t i = 0; i < steps.size() && i < kListedSteps; ++i)
        out += fmt::format("{}{}", i == 0 ? "" : ", ", steps[i]);
    return steps.size() > kListedSteps ? fmt::format("{}, … ({} in all)", out, steps.size()) : out;
}

std::string loss_thresholds()
{
    return fmt::format("threshold {:g}%, strict {:g}%", 100.0 * kLossDeltaThreshold, 100.0 * kLossDeltaStrict);
}

// Why there is no loss delta, in the analyzer's words.
std::string loss_unavailable(const LossComparison& loss, const BudgetResult& budget)
{
    if (!loss.unavailable.empty())
        return loss.unavailable;
    return budget.unavailable.empty() ? std::string("the analyzer gave no loss delta") : budget.unavailable;
}

} // namespace

std::string delta_percent(double relative_delta)
{
    const double percent = 100.0 * relative_delta;
    return std::abs(percent) >= 0.01 || percent == 0 ? fmt::format("{:.2f}%", percent)
                                                     : fmt::format("{:.2g}%", percent);
}

std::string onset_text(const std::optional<int64_t>& onset_step)
{
    return onset_step ? fmt::format("from step {}", *onset_step) : std::string("no onset");
}

std::string evidence_text(const DriftEvidence& e)
{
    if (e.shortfall_bits && e.amax_rise_bits)
        return fmt::format("{}: the reference's amax beyond the run's scale in {:.0f}% of {} steps from step {} (by "
                           "{:.2g} bits on average; {:.0f}% of {} before), as it grows {:.2g} bits (floor {:.0f}%)",
            e.series, 100.0 * e.mean_after, e.steps_after, e.onset_step, *e.shortfall_bits, 100.0 * e.mean_before,
            e.steps_before, *e.amax_rise_bits, 100.0 * e.floor);
    // A series without step-to-step noise makes any shift infinitely many noise units: say so instead of "inf".
    const std::string statistic
        = std::isfinite(e.statistic) ? fmt::format("{:.1f} noise units", e.statistic) : std::string("no noise before");
    return fmt::format("{} {:.3g} → {:.3g} from step {} ({}, floor {:g}; {} steps before, {} after)", e.series,
        e.mean_before, e.mean_after, e.onset_step, statistic, e.floor, e.steps_before, e.steps_after);
}

std::string site_evidence_text(const CompareSite& site)
{
    std::string out;
    for (const DriftEvidence& e : site.drift) {
        if (!out.empty())
            out += "; ";
        out += evidence_text(e);
    }
    return out;
}

std::string as_is(std::string_view text)
{
    return std::string(text);
}

std::string drift_sentence(const CompareResult& result, Escape escape)
{
    if (!result.numerics_compared())
        return "not compared: " + escape(result.numerics_not_compared);
    const size_t flagged = result.flagged.size();
    if (flagged == 0)
        return "no site drifts";
    std::string out = fmt::format(
        "{} {}", count_of(static_cast<int64_t>(flagged), "tensor", "tensors"), flagged == 1 ? "drifts" : "drift");
    if (result.first_divergent && *result.first_divergent < result.sites.size()) {
        const CompareSite& first = result.sites[*result.first_divergent];
        out += fmt::format("; first divergent: {} {} ({})", escape(first.label), onset_text(first.onset_step),
            escape(site_evidence_text(first)));
    }
    return out;
}

std::string drifting_tensor(const CompareSite& site, Escape escape)
{
    if (site.module.empty())
        return escape(site.label);
    const std::string module = escape(site.module);
    if (site.logical_role == "activation")
        return module + "'s input";
    if (site.logical_role == "weight")
        return module + "'s weight";
    if (site.logical_role == "gradient")
        return module + "'s output gradient";
    return fmt::format("{} · {}", module, escape(site.role));
}

std::string drift_headline(const CompareResult& result, Escape escape)
{
    if (!result.first_divergent || *result.first_divergent >= result.sites.size())
        return "DRIFT";
    const CompareSite& first = result.sites[*result.first_divergent];
    // What happened, from the evidence with the earliest onset.
    const DriftEvidence* lead = nullptr;
    for (const DriftEvidence& e : first.drift)
        if (lead == nullptr || e.onset_step < lead->onset_step)
            lead = &e;
    const std::string series = lead != nullptr ? lead->series : std::string();
    const char* what = series == "outgrown_scale"   ? "outgrows its scale"
        : series == "stale_scale_bursts"            ? "outgrows its scale in bursts"
        : series == "log2_amax_ratio"               ? "leaves the reference's amax"
        : series == "run_saturation"                ? "clips more values"
        : series == "ref_underflow_under_run_scale" ? "flushes more values to zero"
        : series == "run_dynamic_range_bits"        ? "has its amax climb away from its bulk"
        : series == "block_amax_spread_bits"        ? "has one block's amax climb away from the rest"
        : series == "subnormal_block_share"         ? "sinks into subnormal codes"
                                                    : "drifts";
    std::string out
        = fmt::format("DRIFT: {} {} {}", drifting_tensor(first, escape), what, onset_text(first.onset_step));
    if (result.flagged.size() > 1)
        out += fmt::format(" (+{} more tensor{})", result.flagged.size() - 1, result.flagged.size() == 2 ? "" : "s");
    const LossComparison& loss = result.loss;
    if (loss.onset_step && loss.delta_after_onset)
        out += fmt::format("; loss off by {} from step {}", delta_percent(*loss.delta_after_onset), *loss.onset_step);
    else if (loss.final_relative_delta)
        out += fmt::format("; loss delta {}", delta_percent(*loss.final_relative_delta));
    return out;
}

std::string verdict_sentence(const CompareResult& result, Escape escape)
{
    if (!result.numerics_compared())
        return escape(numerics_not_compared_sentence(result))
            + (result.loss.final_relative_delta ? "; " + loss_sentence(result.loss, escape) : std::string());
    const CompareVerdict verdict = default_compare_verdict(result);
    if (!result.flagged.empty())
        return drift_headline(result, escape);
    const LossComparison& loss = result.loss;
    if (!loss.final_relative_delta)
        return fmt::format("NO LOSS DELTA: no site drifts, but the loss cannot be compared: {}",
            escape(loss_unavailable(loss, verdict.loss)));
    if (!verdict.loss.passed)
        return fmt::format("LOSS DELTA: no site drifts, but the loss delta {} is above the threshold ({})",
            delta_percent(*loss.final_relative_delta), loss_thresholds());
    return fmt::format("FP8 run healthy against its reference: no site drifts; loss delta {} ({})",
        delta_percent(*loss.final_relative_delta), loss_thresholds());
}

std::string loss_sentence(const LossComparison& loss, Escape escape)
{
    if (!loss.final_relative_delta)
        return "no loss delta: "
            + escape(loss.unavailable.empty() ? std::string("the analyzer gave no loss delta") : loss.unavailable);
    std::string out = fmt::format("loss delta {} (scalar '{}', means over the last {}; {})",
        delta_percent(*loss.final_relative_delta), escape(loss.scalar),
        count_of(loss.window, "common step", "common steps"), loss_thresholds());
    if (loss.max_step_relative_delta && loss.max_step)
        out += fmt::format(
            "; largest per-step delta {} at step {}", delta_percent(*loss.max_step_relative_delta), *loss.max_step);
    return out;
}

std::string alignment_sentence(const StepAlignment& a)
{
    const std::string common = a.common.empty()
        ? std::string("no common step")
        : fmt::format("{}, {} to {}", count_of(static_cast<int64_t>(a.common.size()), "common step", "common steps"),
            a.common.front(), a.common.back());
    return fmt::format("{} (steps from {} in the run, {} in the reference); only in the run: {}; only in the "
                       "reference: {}",
        common, step_source_name(a.run_source), step_source_name(a.ref_source), step_list(a.run_only),
        step_list(a.ref_only));
}

std::string matching_sentence(const CompareResult& result)
{
    return fmt::format("{} matched; {} of the run and {} of the reference unmatched",
        count_of(static_cast<int64_t>(result.sites.size()), "site", "sites"), result.run_unmatched.size(),
        result.ref_unmatched.size());
}

std::vector<UnmatchedGroup> unmatched_groups(const std::vector<UnmatchedSite>& sites)
{
    std::vector<UnmatchedGroup> groups;
    for (const UnmatchedSite& site : sites) {
        auto group = std::ranges::find(groups, site.reason, &UnmatchedGroup::reason);
        if (group == groups.end())
            group = groups.insert(groups.end(), UnmatchedGroup { site.reason, {} });
        group->labels.push_back(site.label);
    }
    return groups;
}

std::string unmatched_group_text(const UnmatchedGroup& group, const std::function<std::string(std::string_view)>& label,
    const std::function<std::string(std::string_view)>& text)
{
    if (group.labels.size() == 1)
        return fmt::format("{}: {}", label(group.labels.front()), text(group.reason));
    std::string named;
    const size_t shown = std::min(group.labels.size(), kLabelsPerUnmatchedGroup);
    for (size_t i = 0; i < shown; ++i)
        named += (i == 0 ? "" : ", ") + label(group.labels[i]);
    if (group.labels.size() > shown)
        named += fmt::format(" and {} more", group.labels.size() - shown);
    return fmt::format("{} sites ({}): {}", group.labels.size(), text(group.reason), named);
}

std::string role_normalisation_sentence(const CompareResult& result)
{
    const auto swapped = std::ranges::count_if(result.sites, [](const CompareSite& s) { return s.role_swapped; });
    const auto ambiguous
        = std::ranges::count_if(result.sites, [](const CompareSite& s) { return s.orientation_ambiguous; });
    return fmt::format("sites are matched by GEMM site with the dtype ignored and cuBLAS's operands A and B put in "
                       "one orientation: swapped at {}, kept as cuBLAS ordered them at {} (m == n)",
        count_of(swapped, "site", "sites"), count_of(ambiguous, "site", "sites"));
}

std::string recipe_text(const CompareSite& site)
{
    const std::string name = scaling_recipe_name(site.recipe);
    return site.recipe_evidence.empty() ? name : fmt::format("{} ({})", name, site.recipe_evidence);
}

std::string recipe_sentence(const CompareResult& result)
{
    // The price: the run's cast and amax/scale kernel time per step, over the reference's (the analyzer's figures).
    std::string per_block;
    if (result.per_block_sites > 0)
        per_block = fmt::format(", {} per row or block", result.per_block_sites);
    if (result.outside_gemm_sites > 0)
        per_block += fmt::format(", {} scaled outside the GEMM (with their outputs, {} sites left out of drift)",
            result.outside_gemm_sites, result.unscaled_gemm_sites);
    std::string by_scale;
    for (const auto& [recipe, n] : result.scale_recipe_sites)
        by_scale += fmt::format("{}{} {}", by_scale.empty() ? "; scaled " : ", ", recipe, n);
    return fmt::format("{} delayed, {} current, {} static, {} current or static (a constant amax cannot tell){}, {} "
                       "unknown{}; the bookkeeping they cost: {} of cast, amax/scale and fused bookkeeping kernels per "
                       "step ({} more than the reference)",
        result.delayed_sites, result.current_sites, result.static_sites, result.current_or_static_sites, per_block,
        result.unknown_recipe_sites, by_scale, format_duration_ns(std::llround(result.performance.run.bookkeeping_ns)),
        format_duration_ns(std::llround(result.performance.bookkeeping_added_ns)));
}

std::string amax_ratio_event_title()
{
    return fmt::format("amax ratio beyond {:g}x", std::exp2(kAmaxRatioEventLog2));
}

std::string compare_events_text(int64_t total, const std::vector<CompareEvent>& first, Escape escape)
{
    if (total == 0)
        return "none";
    const std::string count = count_of(total, "event", "events");
    if (first.empty())
        return count;
    return fmt::format("{}; first at step {} in {} ({:.2f} bits)", count, first.front().step,
        escape(first.front().site), first.front().value);
}

std::string compare_thresholds_sentence()
{
    return fmt::format(
        "amax-ratio event: |log2(amax run / amax reference)| above {:g}; drift: a shift of at least {:g} "
        "noise units and at least the floor ({:g} bits for the amax ratio, {:g} of the elements and 8 elements for "
        "saturation, {:g} of the reference's nonzero elements and a doubling for underflow, a share of {:g} of the "
        "steps with a stale-scale burst (the run's delayed or static scale {:g} bits or more short of the reference's "
        "amax) and at least {} bursts, {:g} bits for the run's dynamic range log2(amax / median), whose onset is the "
        "knee of its climb), with at least {} before the onset and {} from it on; baseline: the median of the first "
        "{}; loss delta: means over the last {} common steps, {} (docs/analysis.md \"Compare\")",
        kAmaxRatioEventLog2, kDriftSigmas, kDriftFloorLog2, kDriftFloorSaturation, kDriftFloorUnderflow,
        kDriftFloorBurstShare, kStaleBurstBits, kDriftMinBursts, kDriftFloorRangeBits,
        count_of(kDriftMinStepsBefore, "step", "steps"), count_of(kDriftMinStepsAfter, "step", "steps"),
        count_of(kBaselineSteps, "step", "steps"), kLossWindowSteps, loss_thresholds());
}

std::string trace_sentence(const TraceModel& model, const Report& report, Escape escape)
{
    return fmt::format("{}, written by {}; {}", escape(model.path),
        escape(model.meta.producer.empty() ? std::string("an unknown producer") : model.meta.producer),
        escape(steps_sentence(report.steps)));
}

std::vector<PerformanceRow> performance_rows(const PerformanceComparison& p, bool fp8_pair)
{
    const auto ratio = [](double value) { return fmt::format("{:.3f}", value); };
    const auto rate = [](double value) { return fmt::format("{:.1f}", value); };
    const std::string faster = p.step_change_ns < 0 ? " (the run is faster)"
        : p.step_change_ns > 0                      ? " (the run is slower)"
                                                    : "";
    std::vector<PerformanceRow> rows {
        { "steps compared", fmt::to_string(p.run.steps), fmt::to_string(p.ref.steps), "" },
        { "step time", ns_text(p.run.step_ns), ns_text(p.ref.step_ns), "" },
        { "bubble ratio", ratio(p.run.bubble_ratio), ratio(p.ref.bubble_ratio), "" },
        { "kernels per step", rate(p.run.kernels_per_step), rate(p.ref.kernels_per_step), "" },
        { "GEMM time per step", ns_text(p.run.gemm_ns), ns_text(p.ref.gemm_ns),
            fp8_pair ? "saved " + ns_text(p.gemm_saved_ns) : signed_ns_text(-p.gemm_saved_ns) },
        { "of which FP8 GEMM", ns_text(p.run.fp8_gemm_ns), ns_text(p.ref.fp8_gemm_ns), "" },
        { "FP8 bookkeeping per step", ns_text(p.run.bookkeeping_ns), ns_text(p.ref.bookkeeping_ns),
            fp8_pair ? "added " + ns_text(p.bookkeeping_added_ns) : signed_ns_text(p.bookkeeping_added_ns) },
    };
    if (std::llround(p.run.fused_bookkeeping_ns) != 0 || std::llround(p.ref.fused_bookkeeping_ns) != 0) {
        rows.push_back({ "of which fused (torch.compile)", ns_text(p.run.fused_bookkeeping_ns),
            ns_text(p.ref.fused_bookkeeping_ns), "" });
        rows.push_back({ "model work they absorbed", "", "",
            ns_text(p.fused_absorbed_ns) + " (the other kernels' fall, not FP8's price)" });
    }
    std::vector<PerformanceRow> tail {
        { "other kernel time per step", ns_text(p.run.other_kernel_ns), ns_text(p.ref.other_kernel_ns),
            "added " + ns_text(p.other_kernels_added_ns) },
        { "kernel time added per step", "", "",
            signed_ns_text(p.kernel_time_added_ns) + " (GEMM, bookkeeping and other kernels)" },
        { "queued kernel gap", ns_text(p.run.queued_gap_ns), ns_text(p.ref.queued_gap_ns), "" },
        { "GPU-bound step change", "", "",
            fmt::format(
                "{} (kernel time added, plus {:+.0f} kernels x the reference's queued gap: the change of a step "
                "the GPU paces, as compiled jobs untraced)",
                signed_ns_text(p.gpu_bound_change_ns), p.kernels_added_per_step) },
        { "launch + host-in-launch idle", ns_text(p.run.launch_idle_ns), ns_text(p.ref.launch_idle_ns),
            "added " + ns_text(p.launch_idle_added_ns) },
        { "recording's idle per step", ns_text(p.run.recording_idle_ns), ns_text(p.ref.recording_idle_ns),
            "added " + ns_text(p.recording_idle_added_ns) },
        { "net gain per step", "", "", ns_text(p.net_gain_ns) + " (GEMM saved - bookkeeping added)" },
        { "measured step change", "", "", ns_text(p.step_change_ns) + faster },
    };
    if (!fp8_pair)
        std::erase_if(tail, [](const PerformanceRow& row) { return row.what == "net gain per step"; });
    rows.insert(rows.end(), tail.begin(), tail.end());
    return rows;
}

std::string ns_text(double ns)
{
    return format_duration_ns(std::llround(ns));
}

std::string signed_ns_text(double ns)
{
    const std::string text = ns_text(ns);
    return std::llround(ns) > 0 ? "+" + text : text;
}

namespace {

std::string share_text(double part_ns, double change_ns)
{
    if (change_ns == 0)
        return {};
    const double percent = std::round(100.0 * part_ns / change_ns);
    return fmt::format("{:.0f}%", percent == 0 ? 0.0 : percent); // never "-0%"
}

} // namespace

std::vector<PriceRow> fp8_price_rows(const PerformanceComparison& p)
{
    const double change = p.step_change_ns;
    const double other_idle = p.rest_ns - p.other_kernels_added_ns;
    const std::string per_kernel = p.kernels_added_per_step >= 1
        ? fmt::format("{:.0f} more kernels per step, {} of idle each", p.kernels_added_per_step,
            ns_text(p.launch_idle_added_ns / p.kernels_added_per_step))
        : fmt::format("{:+.0f} kernels per step", p.kernels_added_per_step);
    return {
        { "GEMM time", signed_ns_text(-p.gemm_saved_ns), share_text(-p.gemm_saved_ns, change),
            "FP8 GEMMs against the reference's" },
        { "FP8 bookkeeping", signed_ns_text(p.bookkeeping_added_ns), share_text(p.bookkeeping_added_ns, change),
            p.fused_absorbed_ns > 0
                ? fmt::format("the cast, amax/scale and fused bookkeeping kernels' time, less {} of the model's own "
                              "work the fused kernels absorbed",
                    ns_text(p.fused_absorbed_ns))
                : std::string("the cast, amax/scale and fused bookkeeping kernels' time") },
        { "launch + host-in-launch idle", signed_ns_text(p.launch_idle_added_ns),
            share_text(p.launch_idle_added_ns, change), per_kernel },
        { "rest", signed_ns_text(p.rest_ns), share_text(p.rest_ns, change),
            fmt::format("other kernels {}, other idle and overlap {}", signed_ns_text(p.other_kernels_added_ns),
                signed_ns_text(other_idle)) },
        { "traced step change", signed_ns_text(change), share_text(change, change), "the sum of the four" },
    };
}

std::string fp8_price_sentence(const PerformanceComparison& p)
{
    if (!p.explained_share)
        return "the run's step takes as long as the reference's: no step change to explain";
    return fmt::format("GEMM time, FP8 bookkeeping and launch + host-in-launch idle explain {:.0f}% of the traced step "
                       "change ({} per step); the rest is {}",
        100.0 * *p.explained_share, signed_ns_text(p.step_change_ns), signed_ns_text(p.rest_ns));
}

std::string recording_cost_sentence(const PerformanceComparison& p)
{
    return fmt::format("recording itself cost the run {} more idle per step than the reference (the bubbles in which "
                       "the collector's statistics work ran); the change without it, an estimate of the untraced "
                       "change: {}",
        signed_ns_text(p.recording_idle_added_ns), signed_ns_text(p.untraced_change_estimate_ns));
}

std::vector<RecoveryRow> fp8_recovery_rows(const PerformanceComparison& p)
{
    return {
        { "CUDA graphs", "up to " + ns_text(p.graphs_recover_ns),
            "the launch idle added, less the graph's own kernel-to-kernel gaps (the CUDA-graphs what-if)" },
        { "fused casts", "up to " + ns_text(p.fused_casts_recover_ns),
            "the cast and amax/scale kernel time added, in one fused kernel per tensor (TransformerEngine); the "
            "trace cannot tell the fused kernel's time" },
        { "torch.compile", "up to " + ns_text(p.compile_recovers_up_to_ns),
            "the launch idle, cast and amax/scale and other kernel time added: Inductor fuses the casts into their "
            "neighbours, mode=\"reduce-overhead\" also graphs the step; the trace cannot tell what fusion leaves" },
    };
}

std::string fp8_recovery_sentence(const PerformanceComparison& p)
{
    std::string out;
    for (const RecoveryRow& row : fp8_recovery_rows(p))
        out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", row.fix, row.recovers);
    return out;
}

} // namespace fp8scope::present
