// `fp8scope compare --format json`: schema fp8scope.compare/1 (docs/cli.md). Every field of the analyzer's
// CompareResult, with the two traces' provenance and every threshold; an optional figure the analyzer could not
// give is null.
#include "compare/compare_render.hpp"

#include "fp8scope/present/compare_wording.hpp"
#include "output/present_names.hpp"

#include "fp8scope/analyzer/steps/steps.hpp"

namespace fp8scope::cli {

using namespace analyzer;
using json = nlohmann::ordered_json;

namespace {

template <class T> json or_null(const std::optional<T>& value)
{
    return value ? json(*value) : json(nullptr);
}

json trace_json(const TraceModel& model, const Report& report)
{
    return { { "path", model.path }, { "producer", model.meta.producer },
        { "command_line", model.meta.command_line.empty() ? json(nullptr) : json(model.meta.command_line) },
        { "recording",
            { { "finished", report.recording.finished }, { "dropped_records", report.recording.dropped_records } } },
        { "steps",
            { { "source", step_source_name(report.steps.source) }, { "detail", report.steps.detail },
                { "warmup_excluded", report.steps.warmup_excluded }, { "analysed", report.steps.steps.size() } } } };
}

json thresholds_json()
{
    return { { "amax_ratio_event_log2", kAmaxRatioEventLog2 }, { "loss_delta_threshold", kLossDeltaThreshold },
        { "loss_delta_strict", kLossDeltaStrict }, { "loss_window_steps", kLossWindowSteps },
        { "drift_sigmas", kDriftSigmas }, { "drift_min_steps_before", kDriftMinStepsBefore },
        { "drift_min_steps_after", kDriftMinStepsAfter }, { "drift_floor_log2", kDriftFloorLog2 },
        { "drift_floor_saturation", kDriftFloorSaturation }, { "drift_floor_underflow", kDriftFloorUnderflow },
        { "stale_burst_bits", kStaleBurstBits }, { "drift_floor_burst_share", kDriftFloorBurstShare },
        { "drift_min_bursts", kDriftMinBursts }, { "drift_floor_range_bits", kDriftFloorRangeBits },
        { "baseline_steps", kBaselineSteps } };
}

json alignment_json(const StepAlignment& a)
{
    return { { "common",
                 { { "first", a.common.empty() ? json(nullptr) : json(a.common.front()) },
                     { "last", a.common.empty() ? json(nullptr) : json(a.common.back()) },
                     { "count", a.common.size() } } },
        { "run_only", a.run_only }, { "ref_only", a.ref_only }, { "run_step_source", step_source_name(a.run_source) },
        { "ref_step_source", step_source_name(a.ref_source) } };
}

json unmatched_json(const std::vector<UnmatchedSite>& sites)
{
    json out = json::array();
    for (const UnmatchedSite& s : sites)
        out.push_back({ { "site_id", s.site_id }, { "site", s.label }, { "reason", s.reason } });
    return out;
}

// A non-finite statistic (no noise before the onset) is null, as nlohmann writes any NaN or infinity.
json evidence_json(const std::vector<DriftEvidence>& drift)
{
    json out = json::array();
    for (const DriftEvidence& e : drift)
        out.push_back({ { "series", e.series }, { "onset_step", e.onset_step }, { "mean_before", e.mean_before },
            { "mean_after", e.mean_after }, { "noise", e.noise }, { "statistic", e.statistic }, { "floor", e.floor },
            { "steps_before", e.steps_before }, { "steps_after", e.steps_after },
            { "shortfall_bits", or_null(e.shortfall_bits) }, { "amax_rise_bits", or_null(e.amax_rise_bits) } });
    return out;
}

json step_json(const CompareStep& s)
{
    return { { "step", s.step }, { "amax_run", or_null(s.amax_run) }, { "amax_ref", or_null(s.amax_ref) },
        { "log2_amax_ratio", or_null(s.log2_amax_ratio) }, { "run_saturation", or_null(s.run_saturation) },
        { "run_underflow", or_null(s.run_underflow) },
        { "ref_saturation_under_run_scale", or_null(s.ref_saturation_under_run_scale) },
        { "ref_underflow_under_run_scale", or_null(s.ref_underflow_under_run_scale) },
        { "run_headroom_bits", or_null(s.run_headroom_bits) },
        { "headroom_vs_ref_bits", or_null(s.headroom_vs_ref_bits) }, { "stale_scale", s.stale_scale },
        { "run_dynamic_range_bits", or_null(s.run_dynamic_range_bits) },
        { "block_amax_spread_bits", or_null(s.block_amax_spread_bits) },
        { "subnormal_block_share", or_null(s.subnormal_block_share) },
        { "baseline_delta_log2_ratio", or_null(s.baseline_delta_log2_ratio) },
        { "baseline_delta_saturation", or_null(s.baseline_delta_saturation) } };
}

json site_json(const CompareSite& s)
{
    json steps = json::array();
    for (const CompareStep& step : s.steps)
        steps.push_back(step_json(step));
    return { { "site", s.label }, { "run_site_id", s.run_site_id }, { "ref_site_id", s.ref_site_id },
        { "run_dtype", s.run_dtype }, { "ref_dtype", s.ref_dtype }, { "role", s.role },
        { "logical_role", or_null(s.logical_role) }, { "role_swapped", s.role_swapped },
        { "orientation_ambiguous", s.orientation_ambiguous }, { "recipe", scaling_recipe_name(s.recipe) },
        { "recipe_evidence", s.recipe_evidence }, { "position_in_step", s.position_in_step },
        { "min_numel", s.min_numel }, { "baseline_log2_ratio", or_null(s.baseline_log2_ratio) },
        { "baseline_saturation", or_null(s.baseline_saturation) }, { "onset_step", or_null(s.onset_step) },
        { "drift", evidence_json(s.drift) }, { "amax_ratio_events", s.amax_ratio_events },
        { "stale_scale_events", s.stale_scale_events }, { "tensor", s.tensor ? json(*s.tensor) : json(nullptr) },
        { "also", s.also }, { "steps", std::move(steps) } };
}

json flagged_json(const CompareSite& s)
{
    return { { "site", s.label }, { "run_site_id", s.run_site_id }, { "onset_step", or_null(s.onset_step) },
        { "also", s.also }, { "evidence", evidence_json(s.drift) } };
}

json events_json(int64_t total, const std::vector<CompareEvent>& first)
{
    json list = json::array();
    for (const CompareEvent& e : first)
        list.push_back({ { "site", e.site }, { "step", e.step }, { "value", e.value } });
    return { { "total", total }, { "first", std::move(list) } };
}

json drift_json(const CompareResult& r)
{
    json flagged = json::array();
    for (const size_t i : r.flagged)
        flagged.push_back(flagged_json(r.sites.at(i)));
    return { { "flagged_sites", std::move(flagged) },
        { "first_divergent", r.first_divergent ? flagged_json(r.sites.at(*r.first_divergent)) : json(nullptr) },
        { "amax_ratio_events", events_json(r.amax_ratio_events, r.first_amax_ratio_events) },
        { "stale_scale_events", events_json(r.stale_scale_events, r.first_stale_scale_events) } };
}

json loss_json(const LossComparison& l)
{
    json steps = json::array();
    for (const LossStep& s : l.steps)
        steps.push_back(
            { { "step", s.step }, { "run", s.run }, { "ref", s.ref }, { "relative_delta", s.relative_delta } });
    return { { "scalar", l.scalar }, { "available", l.unavailable.empty() && l.final_relative_delta.has_value() },
        { "unavailable", l.unavailable.empty() ? json(nullptr) : json(l.unavailable) }, { "steps", std::move(steps) },
        { "window", l.window }, { "final_relative_delta", or_null(l.final_relative_delta) },
        { "max_relative_delta", or_null(l.max_step_relative_delta) }, { "max_step", or_null(l.max_step) },
        { "onset_step", or_null(l.onset_step) }, { "delta_after_onset", or_null(l.delta_after_onset) },
        { "threshold", kLossDeltaThreshold }, { "strict_threshold", kLossDeltaStrict },
        { "sources", kLossThresholdSources } };
}

json side_json(const SideBySide& v)
{
    return { { "run", v.run }, { "ref", v.ref }, { "change", v.change() } };
}

json kernel_changes_json(const std::vector<KernelChange>& changes)
{
    json out = json::array();
    for (const KernelChange& k : changes)
        out.push_back({ { "name", k.name }, { "class", kernel_class_id(k.cls) }, { "time_ns", side_json(k.time_ns) },
            { "count", side_json(k.count) } });
    return out;
}

// The performance per step (compare_performance.hpp): medians, idle by cause, kernel classes, the kernel diff and
// what recording added.
void add_per_step_json(json& out, const PerformanceComparison& p)
{
    out["steps_basis"] = p.steps_basis == PerformanceSteps::Common ? "common" : "each_own";
    out["per_step"] = { { "step_ns", side_json(p.step_median_ns) }, { "busy_ns", side_json(p.busy_median_ns) },
        { "bubble_ratio", side_json(p.bubble_ratio_median) } };
    json causes = json::object();
    for (size_t c = 0; c < kBubbleCauseCount; ++c)
        causes[bubble_cause_name(static_cast<BubbleCause>(c))] = side_json(p.idle_by_cause_ns[c]);
    out["idle_by_cause_ns"] = std::move(causes);
    json classes = json::object();
    for (size_t c = 0; c < kKernelClassCount; ++c)
        classes[std::string(kernel_class_id(static_cast<KernelClass>(c)))]
            = { { "time_ns", side_json(p.class_time_ns[c]) }, { "count", side_json(p.class_count[c]) } };
    out["kernel_classes"] = std::move(classes);
    const KernelDiff& d = p.kernels;
    out["kernels"] = { { "listed", kKernelChangesListed }, { "appeared_names", d.appeared_names },
        { "vanished_names", d.vanished_names }, { "common_names", d.common_names }, { "appeared_ns", d.appeared_ns },
        { "vanished_ns", d.vanished_ns }, { "appeared", kernel_changes_json(d.appeared) },
        { "vanished", kernel_changes_json(d.vanished) }, { "changed", kernel_changes_json(d.changed) } };
    const RecordingInflation& r = p.recording;
    const std::string sentence = recording_inflation_sentence(p);
    out["recording"] = { { "collector_ns", side_json(r.collector_ns) }, { "share", side_json(r.share) },
        { "notable_share", kRecordingNotableShare }, { "notable", r.notable }, { "inflation_ns", r.inflation_ns },
        { "sentence", sentence.empty() ? json(nullptr) : json(sentence) } };
}

// What the pair is (PairIdentity), with the lines every format shows before any figure.
json pair_json(const PairIdentity& p)
{
    json lines = json::array();
    for (const PairLine& line : pair_lines(p, as_is))
        lines.push_back({ { "label", line.label }, { "text", line.text } });
    const auto side = [](const RunIdentity& s) -> json {
        return { { "gpu", s.gpu }, { "program", s.program }, { "fp8", s.fp8 }, { "sites", s.sites } };
    };
    return { { "run", side(p.run) }, { "ref", side(p.ref) }, { "swapped", p.swapped },
        { "different_gpus", p.different_gpus }, { "different_jobs", p.different_jobs },
        { "performance_only", p.performance_only.empty() ? json(nullptr) : json(p.performance_only) },
        { "run_only_arguments", p.run_only_arguments }, { "ref_only_arguments", p.ref_only_arguments },
        { "sites_in_common", p.sites_in_common ? json(*p.sites_in_common) : json(nullptr) },
        { "kernel_names_in_common", p.kernel_names_in_common }, { "run_only_kernel_names", p.run_only_kernel_names },
        { "ref_only_kernel_names", p.ref_only_kernel_names }, { "lines", std::move(lines) } };
}

json performance_json(const PerformanceComparison& p, const PairIdentity& identity)
{
    const auto run_json = [](const RunPerformance& r) -> json {
        return { { "steps", r.steps }, { "step_ns", r.step_ns }, { "bubble_ratio", r.bubble_ratio },
            { "kernels_per_step", r.kernels_per_step }, { "gemm_ns", r.gemm_ns }, { "fp8_gemm_ns", r.fp8_gemm_ns },
            { "bookkeeping_ns", r.bookkeeping_ns }, { "fused_bookkeeping_ns", r.fused_bookkeeping_ns },
            { "fused_with_model_work_ns", r.fused_with_model_work_ns }, { "other_kernel_ns", r.other_kernel_ns },
            { "launch_idle_ns", r.launch_idle_ns }, { "graph_removable_ns", r.graph_removable_ns },
            { "queued_gap_ns", r.queued_gap_ns }, { "busy_ns", r.busy_ns }, { "idle_ns", r.idle_ns },
            { "recording_idle_ns", r.recording_idle_ns } };
    };
    json out = { { "run", run_json(p.run) }, { "ref", run_json(p.ref) }, { "gemm_saved_ns", p.gemm_saved_ns },
        { "bookkeeping_added_ns", p.bookkeeping_added_ns }, { "fused_absorbed_ns", p.fused_absorbed_ns },
        { "kernel_time_added_ns", p.kernel_time_added_ns }, { "gpu_bound_change_ns", p.gpu_bound_change_ns },
        { "net_gain_ns", p.net_gain_ns }, { "step_change_ns", p.step_change_ns },
        { "launch_idle_added_ns", p.launch_idle_added_ns }, { "rest_ns", p.rest_ns },
        { "other_kernels_added_ns", p.other_kernels_added_ns }, { "kernels_added_per_step", p.kernels_added_per_step },
        { "explained_share", or_null(p.explained_share) }, { "explanation", fp8_price_sentence(p) },
        { "price_not_split",
            identity.performance_only.empty() ? json(nullptr) : json(price_not_split_sentence(identity, as_is)) },
        { "recording_idle_added_ns", p.recording_idle_added_ns },
        { "untraced_change_estimate_ns", p.untraced_change_estimate_ns },
        { "recovery",
            { { "cuda_graphs_ns", p.graphs_recover_ns }, { "fused_casts_ns", p.fused_casts_recover_ns },
                { "torch_compile_up_to_ns", p.compile_recovers_up_to_ns } } } };
    add_per_step_json(out, p);
    return out;
}

} // namespace

json render_compare_json(const CompareInput& input, const CompareResult& r)
{
    json sites = json::array();
    for (const CompareSite& s : r.sites)
        sites.push_back(site_json(s));
    return {
        { "schema", kCompareJsonSchema },
        { "pair", pair_json(r.identity) },
        { "verdict", { { "healthy", default_compare_verdict(r).healthy() }, { "text", verdict_sentence(r, as_is) } } },
        { "numerics",
            { { "compared", r.numerics_compared() },
                { "not_compared", r.numerics_compared() ? json(nullptr) : json(r.numerics_not_compared) } } },
        { "run", trace_json(input.run_model, input.run_report) },
        { "ref", trace_json(input.ref_model, input.ref_report) },
        { "thresholds", thresholds_json() },
        { "alignment", alignment_json(r.alignment) },
        { "sites",
            { { "matched", r.sites.size() }, { "run_unmatched", unmatched_json(r.run_unmatched) },
                { "ref_unmatched", unmatched_json(r.ref_unmatched) },
                { "role_normalisation", role_normalisation_sentence(r) } } },
        { "matched_sites", std::move(sites) },
        { "drift", drift_json(r) },
        { "loss", loss_json(r.loss) },
        { "performance", performance_json(r.performance, r.identity) },
        { "recipe",
            { { "delayed", r.delayed_sites }, { "current", r.current_sites }, { "static", r.static_sites },
                { "current_or_static", r.current_or_static_sites }, { "per_block", r.per_block_sites },
                { "outside_gemm", r.outside_gemm_sites }, { "unscaled_gemm_sites", r.unscaled_gemm_sites },
                { "unknown", r.unknown_recipe_sites }, { "by_scale", r.scale_recipe_sites } } },
    };
}

} // namespace fp8scope::cli
