// Compare a run with its reference (compare.hpp; docs/analysis.md "Compare"): refusals, step alignment, the matched
// sites with their drift and the loss delta, or why they cannot be compared, and the performance side by side
// (compare_performance.cpp).
#include "fp8scope/analyzer/compare/compare.hpp"

#include "compare/compare_detail.hpp"
#include "model/step_locator.hpp"
#include "numerics/fp8_tensors.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace fp8scope::analyzer {

const char* scaling_recipe_name(ScalingRecipe recipe)
{
    switch (recipe) {
    case ScalingRecipe::NotFp8:
        return "not FP8";
    case ScalingRecipe::Delayed:
        return "delayed";
    case ScalingRecipe::Current:
        return "current";
    case ScalingRecipe::Static:
        return "static";
    case ScalingRecipe::CurrentOrStatic:
        return "current or static";
    case ScalingRecipe::PerBlock:
        return "per row or block";
    case ScalingRecipe::OutsideGemm:
        return "scaled outside the GEMM";
    case ScalingRecipe::Unknown:
        break;
    }
    return "unknown";
}

namespace {

std::vector<int64_t> step_indices(const StepSet& steps)
{
    std::vector<int64_t> out;
    for (const StepInterval& s : steps.steps)
        out.push_back(s.index);
    std::ranges::sort(out);
    return out;
}

StepAlignment align(const Report& run, const Report& ref)
{
    StepAlignment a;
    a.run_source = run.steps.source;
    a.ref_source = ref.steps.source;
    const std::vector<int64_t> x = step_indices(run.steps), y = step_indices(ref.steps);
    std::ranges::set_intersection(x, y, std::back_inserter(a.common));
    std::ranges::set_difference(x, y, std::back_inserter(a.run_only));
    std::ranges::set_difference(y, x, std::back_inserter(a.ref_only));
    return a;
}

std::string step_range(const Report& report)
{
    const std::vector<int64_t> s = step_indices(report.steps);
    if (s.empty())
        return fmt::format("no steps ({})", step_source_name(report.steps.source));
    return fmt::format("steps {}..{} ({})", s.front(), s.back(), step_source_name(report.steps.source));
}

// Each common step's value of one scalar: the mean of the values recorded in the step (with gradient accumulation,
// `fp8scope record`'s backward hook logs the loss of each micro-batch; a job that logs once a step gives its value).
std::map<int64_t, double> scalar_by_step(
    const TraceModel& model, const StepSet& steps, const std::string& name, const std::set<int64_t>& common)
{
    const detail::StepLocator locator(steps);
    std::map<int64_t, std::pair<double, int64_t>> sums;
    for (const Scalar& s : model.scalars) {
        if (model.strings[s.name] != name)
            continue;
        if (const auto step = locator.analysed_step(s); step && common.contains(*step)) {
            auto& [sum, count] = sums[*step];
            sum += s.value;
            ++count;
        }
    }
    std::map<int64_t, double> out;
    for (const auto& [step, sum] : sums)
        out[step] = sum.first / double(sum.second);
    return out;
}

LossComparison compare_loss(const CompareInput& in, const std::string& name, const std::set<int64_t>& common)
{
    LossComparison loss;
    loss.scalar = name;
    const auto run = scalar_by_step(in.run_model, in.run_report.steps, name, common);
    const auto ref = scalar_by_step(in.ref_model, in.ref_report.steps, name, common);
    if (run.empty() || ref.empty()) {
        loss.unavailable = fmt::format("no '{}' scalar (fp8scope.log_scalar) in the compared steps of the {}", name,
            run.empty() && ref.empty() ? "run and the reference"
                : run.empty()          ? "run"
                                       : "reference");
        return loss;
    }
    for (const auto& [step, value] : run) {
        const auto other = ref.find(step);
        if (other != ref.end() && !std::isfinite(value) && std::isfinite(other->second)) {
            ++loss.run_nonfinite_steps;
            if (!loss.first_run_nonfinite_step)
                loss.first_run_nonfinite_step = step;
            continue;
        }
        if (other == ref.end() || !std::isfinite(value) || !std::isfinite(other->second) || other->second == 0)
            continue;
        const double delta = std::abs(value - other->second) / std::abs(other->second);
        loss.steps.push_back({ step, value, other->second, delta });
        if (!loss.max_step_relative_delta || delta > *loss.max_step_relative_delta) {
            loss.max_step_relative_delta = delta;
            loss.max_step = step;
        }
    }
    if (loss.steps.empty()) {
        loss.unavailable = fmt::format("no common step has a finite, nonzero '{}' in both traces", name);
        return loss;
    }
    loss.window = static_cast<int>(std::min<size_t>(kLossWindowSteps, loss.steps.size()));
    double run_sum = 0, ref_sum = 0;
    for (size_t i = loss.steps.size() - static_cast<size_t>(loss.window); i < loss.steps.size(); ++i) {
        run_sum += loss.steps[i].run;
        ref_sum += loss.steps[i].ref;
    }
    if (ref_sum != 0)
        loss.final_relative_delta = std::abs(run_sum - ref_sum) / std::abs(ref_sum);
    // Where the per-step delta shifts up and stays (the drift test's change point, floor kLossDeltaStrict): the loss
    // joins the evidence of a drift with its own onset.
    std::vector<int64_t> steps;
    std::vector<double> deltas;
    for (const LossStep& s : loss.steps) {
        steps.push_back(s.step);
        deltas.push_back(s.relative_delta);
    }
    if (const auto shift = detail::change_point("loss_relative_delta", steps, deltas, +1, kLossDeltaStrict)) {
        loss.onset_step = shift->onset_step;
        loss.delta_after_onset = shift->mean_after;
    }
    return loss;
}

std::string with_logical_role(std::string label, const std::optional<std::string>& role)
{
    if (role)
        label += fmt::format(" ({})", *role);
    return label;
}

// Why the two traces' per-step figures cannot be set side by side at all (different jobs or GPUs, no common step),
// or "".
std::string same_job_precondition(const CompareInput& in, const PairIdentity& identity, const StepAlignment& alignment)
{
    if (!identity.performance_only.empty())
        return identity.performance_only;
    if (alignment.common.empty())
        return fmt::format(
            "no common step: the run has {}, the reference {}", step_range(in.run_report), step_range(in.ref_report));
    return {};
}

// Why drift and loss cannot be compared before the sites are read, or "".
std::string numerics_precondition(const CompareInput& in, const PairIdentity& identity, const StepAlignment& alignment)
{
    const bool run_stats = !in.run_model.tensor_stats.empty(), ref_stats = !in.ref_model.tensor_stats.empty();
    if (!run_stats && !ref_stats)
        return fmt::format("neither the run '{}' nor the reference '{}' has tensor statistics: record them with "
                           "`fp8scope record` (GEMM statistics are on by default) so that sites can be compared",
            in.run_model.path, in.ref_model.path);
    if (!run_stats || !ref_stats)
        return fmt::format("the {} '{}' has no tensor statistics: record it with `fp8scope record` "
                           "(GEMM statistics are on by default) so that sites can be compared",
            run_stats ? "reference" : "run", run_stats ? in.ref_model.path : in.run_model.path);
    return same_job_precondition(in, identity, alignment);
}

// Matches the sites, tests them for drift and compares the loss, into `result`; returns why it could not, or "".
std::string compare_numerics(const CompareInput& in, const CompareOptions& options, const std::set<int64_t>& common,
    const detail::SiteSamples& run_all, const detail::SiteSamples& ref_all, CompareResult& result)
{
    auto keep_common = [&](detail::SiteSamples samples) {
        for (auto& [site, steps] : samples)
            std::erase_if(steps, [&](const auto& entry) { return !common.contains(entry.first); });
        std::erase_if(samples, [](const auto& entry) { return entry.second.empty(); });
        return samples;
    };
    const detail::SiteSamples run_samples = keep_common(run_all);
    const detail::SiteSamples ref_samples = keep_common(ref_all);
    if (run_samples.empty() || ref_samples.empty())
        return fmt::format("the {} has no tensor statistics in the common steps {}..{}",
            run_samples.empty() ? "run" : "reference", result.alignment.common.front(), result.alignment.common.back());
    detail::SiteMatching matching = detail::match_sites(in.run_model, run_samples, in.ref_model, ref_samples);
    if (matching.pairs.empty())
        return fmt::format("no tensor site in common: the run has {} site(s) with samples, the reference {}, and none "
                           "has the same NVTX path, shape and operand",
            run_samples.size(), ref_samples.size());
    result.run_unmatched = std::move(matching.run_unmatched);
    result.ref_unmatched = std::move(matching.ref_unmatched);

    const detail::LogicalRoles run_roles(in.run_model, run_samples);
    const detail::LogicalRoles ref_roles(in.ref_model, ref_samples);
    const auto site_of = [](const TraceModel& model, int64_t id) -> const TensorSite& {
        return *std::ranges::find(model.tensor_sites, id, &TensorSite::id);
    };
    const std::set<detail::GemmKey> unit_scaled = detail::unit_scale_gemms(in.run_model, run_samples);
    for (const auto& pair : matching.pairs) {
        const TensorSite& run_site = site_of(in.run_model, pair.run_site);
        const TensorSite& ref_site = site_of(in.ref_model, pair.ref_site);
        CompareSite site;
        site.logical_role = run_roles.of(run_site);
        if (!site.logical_role)
            site.logical_role = ref_roles.of(ref_site);
        site.label = with_logical_role(tensor_site_label(in.run_model, run_site), site.logical_role);
        site.module = detail::module_of(detail::text_of(in.run_model, run_site.nvtx_path));
        // A zero-code GEMM site also says where it sits in the run's step (docs/analysis.md "Tensor health", Where a
        // GEMM site sits).
        const std::vector<TensorSiteHealth>& health = in.run_report.tensor_health.sites;
        if (const auto placed = std::ranges::find(health, pair.run_site, &TensorSiteHealth::site_id);
            placed != health.end() && placed->place)
            site.label += fmt::format(" ({})", gemm_place_text(*placed->place));
        site.run_site_id = pair.run_site;
        site.ref_site_id = pair.ref_site;
        site.run_dtype = run_site.dtype;
        site.ref_dtype = ref_site.dtype;
        site.role = pair.role;
        site.role_swapped = pair.swapped;
        site.orientation_ambiguous = pair.ambiguous;
        const auto& run_steps = run_samples.at(pair.run_site);
        std::vector<double> positions;
        for (const auto& [step, s] : run_steps)
            positions.push_back(s.position);
        std::ranges::sort(positions);
        site.position_in_step = positions[positions.size() / 2];
        site.scale_recipe = run_site.scale_recipe;
        const auto twin = run_roles.twin(run_site);
        detail::decide_recipe(site, run_steps, twin && run_samples.contains(*twin) ? &run_samples.at(*twin) : nullptr);
        site.unscaled_gemm = unit_scaled.contains(detail::gemm_key(run_site));
        if (site.unscaled_gemm) {
            if (site.recipe != ScalingRecipe::NotFp8) {
                site.recipe = ScalingRecipe::OutsideGemm;
                site.recipe_evidence = "the GEMM got unit scales (scale_inv 1 in every sample) while the codes reach "
                                       "fp8_max as a scale made from their own amax puts them: the scale is applied "
                                       "outside the GEMM, so neither its codes nor its output are values to compare";
            }
        }
        // A per-block site's codes hold no amax or scale of the operand: its figures come from its per-block
        // statistics. An unscaled GEMM's codes and output are not values: no step figures, no drift (the recipe's
        // evidence says why).
        if (site.recipe == ScalingRecipe::PerBlock && !site.unscaled_gemm) {
            detail::fill_block_site_steps(site, run_steps, ref_samples.at(pair.ref_site));
            detail::detect_drift(site);
        } else if (!site.unscaled_gemm) {
            detail::fill_site_steps(site, run_steps, ref_samples.at(pair.ref_site));
            detail::detect_drift(site);
        }
        result.amax_ratio_events += site.amax_ratio_events;
        result.stale_scale_events += site.stale_scale_events;
        detail::count_recipe(site, result);
        result.sites.push_back(std::move(site));
    }
    // A GEMM operand of the run without a partner keeps its recipe, which the run's own samples decide: the recipe
    // line counts every FP8 GEMM operand of the run (a GEMM that added C in the reference alone leaves its FP8
    // operands unpaired). A probe without a partner is the cast of an operand counted already.
    for (const UnmatchedSite& unpaired : result.run_unmatched) {
        const TensorSite& run_site = site_of(in.run_model, unpaired.site_id);
        const auto source = static_cast<schema::StatsSource>(run_site.source);
        const auto role = static_cast<schema::TensorRole>(run_site.role);
        if ((source != schema::StatsSource::GemmInterception && source != schema::StatsSource::TorchScaledMm)
            || (role != schema::TensorRole::A && role != schema::TensorRole::B) || run_site.ordinal < 0)
            continue; // a GEMM sampled before its period was learned is counted under its later ordinal
        CompareSite site;
        site.scale_recipe = run_site.scale_recipe;
        const auto twin = run_roles.twin(run_site);
        detail::decide_recipe(site, run_samples.at(unpaired.site_id),
            twin && run_samples.contains(*twin) ? &run_samples.at(*twin) : nullptr);
        site.unscaled_gemm = unit_scaled.contains(detail::gemm_key(run_site));
        if (site.unscaled_gemm && site.recipe != ScalingRecipe::NotFp8)
            site.recipe = ScalingRecipe::OutsideGemm;
        detail::count_recipe(site, result);
    }

    // The run's FP8 tensors: the sites that hold one are one finding.
    {
        const std::vector<Fp8Tensor> tensors = detail::group_fp8_tensors(in.run_model, run_samples);
        std::map<int64_t, size_t> tensor_of;
        for (size_t t = 0; t < tensors.size(); ++t) {
            for (const int64_t code : tensors[t].code_sites)
                tensor_of.emplace(code, t);
            if (tensors[t].probe_site)
                tensor_of.emplace(*tensors[t].probe_site, t);
        }
        for (CompareSite& site : result.sites)
            if (const auto found = tensor_of.find(site.run_site_id); found != tensor_of.end())
                site.tensor = found->second;
    }
    // The first divergent tensor: the earliest onset, then the lowest layer (the earliest place in the step, which is
    // the forward order), then the run's site id. One entry per tensor: its earliest site.
    std::vector<size_t> drifting;
    for (size_t i = 0; i < result.sites.size(); ++i)
        if (result.sites[i].onset_step)
            drifting.push_back(i);
    const auto order = [&](size_t i) {
        const CompareSite& s = result.sites[i];
        return std::make_tuple(s.onset_step.value_or(0), s.position_in_step, s.run_site_id);
    };
    std::ranges::sort(drifting, [&](size_t a, size_t b) { return order(a) < order(b); });
    std::map<size_t, size_t> standing_for; // tensor -> its flagged site
    for (const size_t i : drifting) {
        CompareSite& site = result.sites[i];
        if (site.tensor) {
            const auto [it, fresh] = standing_for.try_emplace(*site.tensor, i);
            if (!fresh) {
                result.sites[it->second].also.push_back(site.label);
                continue;
            }
        }
        result.flagged.push_back(i);
    }
    if (!result.flagged.empty())
        result.first_divergent = result.flagged.front();

    // The earliest one-step events, by step, then place in the step, then site.
    std::vector<std::tuple<int64_t, double, int64_t, CompareEvent>> ratio_events, stale_events;
    for (const CompareSite& s : result.sites)
        for (const CompareStep& row : s.steps) {
            if (row.log2_amax_ratio && std::abs(*row.log2_amax_ratio) > kAmaxRatioEventLog2)
                ratio_events.emplace_back(row.step, s.position_in_step, s.run_site_id,
                    CompareEvent { s.label, row.step, *row.log2_amax_ratio });
            if (row.stale_scale && row.headroom_vs_ref_bits)
                stale_events.emplace_back(row.step, s.position_in_step, s.run_site_id,
                    CompareEvent { s.label, row.step, *row.headroom_vs_ref_bits });
        }
    const auto first_events = [](auto& events, std::vector<CompareEvent>& out) {
        std::ranges::sort(events, [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a))
                < std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
        });
        for (size_t i = 0; i < std::min<size_t>(events.size(), kTensorEventsListed); ++i)
            out.push_back(std::get<3>(events[i]));
    };
    first_events(ratio_events, result.first_amax_ratio_events);
    first_events(stale_events, result.first_stale_scale_events);

    result.loss = compare_loss(in, options.loss_scalar, common);
    return {};
}

std::set<int64_t> all_steps(const Report& report)
{
    std::set<int64_t> out;
    for (const StepInterval& s : report.steps.steps)
        out.insert(s.index);
    return out;
}

} // namespace

std::variant<CompareResult, CompareRefusal> compare_runs(const CompareInput& in, const CompareOptions& options)
{
    // Without a step there is no per-step figure of either kind.
    for (const auto& [model, report, which] : { std::tuple { &in.run_model, &in.run_report, "run" },
             std::tuple { &in.ref_model, &in.ref_report, "reference" } })
        if (report->steps.steps.empty())
            return CompareRefusal { fmt::format("the {} '{}' has no analysed step: {}", which, model->path,
                report->selection.empty ? empty_selection_reason(report->selection, options.report)
                                        : std::string("no GPU activity to compare")) };

    CompareResult result;
    result.alignment = align(in.run_report, in.ref_report);
    const std::set<int64_t> common(result.alignment.common.begin(), result.alignment.common.end());
    if (!common.empty())
        result.performance = detail::compare_performance(in, common, common);
    else {
        result.performance = detail::compare_performance(in, all_steps(in.run_report), all_steps(in.ref_report));
        result.performance.steps_basis = PerformanceSteps::EachOwn;
    }

    const detail::SiteSamples run_samples = detail::collect_site_samples(in.run_model, in.run_report.steps);
    const detail::SiteSamples ref_samples = detail::collect_site_samples(in.ref_model, in.ref_report.steps);
    result.identity = detail::identify_pair(in, result.performance, run_samples, ref_samples, options.swapped);
    result.numerics_not_compared = numerics_precondition(in, result.identity, result.alignment);
    if (result.numerics_compared())
        result.numerics_not_compared = compare_numerics(in, options, common, run_samples, ref_samples, result);
    if (!result.numerics_compared()) {
        // Whatever the site matching had found is dropped: drift and loss are not compared, the reason says why.
        CompareResult numerics_free;
        numerics_free.identity = std::move(result.identity);
        // The sites in common, matched over each trace's analysed steps (drift's own matching was not kept, or never
        // ran).
        if (!run_samples.empty() && !ref_samples.empty())
            numerics_free.identity.sites_in_common = static_cast<int64_t>(
                detail::match_sites(in.run_model, run_samples, in.ref_model, ref_samples).pairs.size());
        numerics_free.alignment = std::move(result.alignment);
        numerics_free.performance = std::move(result.performance);
        numerics_free.numerics_not_compared = std::move(result.numerics_not_compared);
        // The loss needs no tensor statistics: two runs of one job with common steps compare it whatever their
        // sites (a zero-code FP8 run's _scaled_mm operands and its BF16 twin's matmuls match no site; issue 42).
        if (const std::string why = same_job_precondition(in, numerics_free.identity, numerics_free.alignment);
            why.empty())
            numerics_free.loss = compare_loss(in, options.loss_scalar, common);
        else {
            numerics_free.loss.scalar = options.loss_scalar;
            numerics_free.loss.unavailable = why;
        }
        return numerics_free;
    }
    result.identity.sites_in_common = static_cast<int64_t>(result.sites.size()); // the sites compared, matched once
    return result;
}

std::vector<BudgetResult> evaluate_compare_budgets(const CompareResult& result, const CompareBudgets& budgets)
{
    std::vector<BudgetResult> out;
    if (budgets.max_loss_delta) {
        BudgetResult r;
        r.name = "max-loss-delta";
        r.limit = *budgets.max_loss_delta;
        const LossComparison& loss = result.loss;
        if (loss.run_nonfinite_steps > 0) {
            // A run whose loss went NaN or Inf diverged: its finite steps' delta does not make it pass.
            r.passed = false;
            r.worst_step = loss.first_run_nonfinite_step;
            r.unavailable = fmt::format("the run's '{}' is NaN or Inf in {} compared step(s), from step {}, where the "
                                        "reference's is finite",
                loss.scalar, loss.run_nonfinite_steps, loss.first_run_nonfinite_step.value_or(0));
        } else if (!loss.final_relative_delta) {
            r.passed = false;
            r.unavailable = loss.unavailable.empty() ? "no loss delta" : loss.unavailable;
        } else {
            r.value = *loss.final_relative_delta;
            r.passed = r.value <= r.limit;
            r.worst_step = loss.max_step;
            r.worst_value = loss.max_step_relative_delta.value_or(0);
            r.where = fmt::format("'{}': mean of the last {} common steps; the largest single-step delta is at the "
                                  "worst step",
                loss.scalar, loss.window);
        }
        out.push_back(std::move(r));
    }
    if (budgets.max_drift_sites) {
        BudgetResult r;
        r.name = "max-drift-sites";
        r.limit = static_cast<double>(*budgets.max_drift_sites);
        r.value = static_cast<double>(result.flagged.size());
        r.worst_value = r.value;
        r.passed = r.value <= r.limit;
        if (!result.numerics_compared()) {
            r.passed = false; // no site was seen, so none can be vouched for
            r.unavailable = result.numerics_not_compared;
        } else if (result.first_divergent) {
            const CompareSite& first = result.sites[*result.first_divergent];
            r.worst_step = first.onset_step;
            r.where = fmt::format("first divergent: {} from step {}", first.label, first.onset_step.value_or(0));
        }
        out.push_back(std::move(r));
    }
    return out;
}

CompareVerdict default_compare_verdict(const CompareResult& result)
{
    CompareVerdict verdict;
    for (BudgetResult& r : evaluate_compare_budgets(result, kDefaultCompareBudgets))
        (r.name == "max-loss-delta" ? verdict.loss : verdict.drift) = std::move(r);
    return verdict;
}

} // namespace fp8scope::analyzer
