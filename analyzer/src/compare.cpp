// Compare a run with its reference (compare.hpp; docs/analysis.md "Compare"): refusals, step alignment, the matched
// sites with their drift, the loss delta and the performance side by side.
#include "fp8scope/analyzer/compare.hpp"

#include "compare_detail.hpp"
#include "step_locator.hpp"

#include "fp8scope/analyzer/budgets.hpp"
#include "fp8scope/analyzer/kernel_classes.hpp"
#include "fp8scope/analyzer/tensor_health.hpp"

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
    case ScalingRecipe::Unknown:
        break;
    }
    return "unknown";
}

namespace {

// The program a command line runs: the script after an interpreter ("python -u train.py" -> "train.py"), the module
// after -m, else the executable; its base name. Empty when the command line is unknown.
std::string program_of(std::string_view command_line)
{
    size_t pos = 0;
    bool module_next = false;
    while (pos < command_line.size()) {
        const size_t space = command_line.find(' ', pos);
        const std::string_view token
            = command_line.substr(pos, space == std::string_view::npos ? std::string_view::npos : space - pos);
        pos = space == std::string_view::npos ? command_line.size() : space + 1;
        if (token.empty())
            continue;
        const size_t slash = token.rfind('/');
        const std::string_view base = slash == std::string_view::npos ? token : token.substr(slash + 1);
        if (module_next)
            return std::string(base);
        if (base.starts_with("python"))
            continue;
        if (token.starts_with('-')) {
            module_next = token == "-m";
            continue;
        }
        return std::string(base);
    }
    return {};
}

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

// Each common step's value of one scalar, the last one recorded in the step.
std::map<int64_t, double> scalar_by_step(
    const TraceModel& model, const StepSet& steps, const std::string& name, const std::set<int64_t>& common)
{
    const detail::StepLocator locator(steps);
    std::map<int64_t, double> out;
    for (const Scalar& s : model.scalars) {
        if (model.strings[s.name] != name)
            continue;
        if (const auto step = locator.analysed_step(s); step && common.contains(*step))
            out[*step] = s.value;
    }
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
    return loss;
}

// Idle of the common steps' bubbles in which the collector's own work started on the bubble's device.
int64_t recording_idle(const TraceModel& model, const Report& report, const std::set<int64_t>& common)
{
    std::map<uint32_t, std::vector<int64_t>> starts; // the collector's activity starts per device, ascending
    const CollectorWorkTable& work = model.collector_work;
    for (size_t i = 0; i < work.size(); ++i)
        starts[work.device_id[i]].push_back(work.start_ns[i]);
    for (auto& [device, times] : starts)
        std::ranges::sort(times);
    int64_t idle = 0;
    for (const Bubble& b : report.bubbles.bubbles) {
        const auto found = starts.find(b.device_id);
        if (found == starts.end() || !common.contains(b.step_index) || (report.device && b.device_id != *report.device))
            continue;
        const auto first = std::ranges::lower_bound(found->second, b.start_ns);
        if (first != found->second.end() && *first < b.end_ns)
            idle += b.end_ns - b.start_ns;
    }
    return idle;
}

RunPerformance performance_of(const TraceModel& model, const Report& report, const std::set<int64_t>& common)
{
    RunPerformance p;
    int64_t step_ns = 0, idle_ns = 0, bubble_step_ns = 0, kernels = 0, gemm = 0, fp8_gemm = 0, bookkeeping = 0;
    int64_t other_kernels = 0, busy = 0, launch_idle = 0, graph_removable = 0;
    for (const StepInterval& s : report.steps.steps)
        if (common.contains(s.index)) {
            ++p.steps;
            step_ns += s.end_ns - s.start_ns;
        }
    // The devices of the report's totals, as bubbles_per_step() counts them; read here per device, since the launch
    // idle needs each row's host idle inside the step's launches.
    for (const DeviceStepBubbles& d : report.bubbles.per_device_step)
        if (common.contains(d.step_index) && (!report.device || d.device_id == *report.device)) {
            const BubbleTotals& t = d.totals;
            idle_ns += t.idle_ns;
            bubble_step_ns += t.step_ns;
            busy += t.busy_ns;
            launch_idle += t.cause_ns[static_cast<size_t>(BubbleCause::Launch)] + t.host_in_launches_ns;
            graph_removable += t.graph_removable_ns + t.host_in_launches_ns;
        }
    const auto time
        = [](const StepKernelClasses& s, KernelClass c) { return s.by_class[static_cast<size_t>(c)].time_ns; };
    for (const StepKernelClasses& s : report.kernel_classes.steps)
        if (common.contains(s.step_index)) {
            kernels += s.total.count;
            fp8_gemm += time(s, KernelClass::Fp8Gemm);
            gemm += time(s, KernelClass::Fp8Gemm) + time(s, KernelClass::OtherGemm);
            bookkeeping += time(s, KernelClass::Cast) + time(s, KernelClass::AmaxScale);
            other_kernels += time(s, KernelClass::Communication) + time(s, KernelClass::Other);
        }
    if (p.steps == 0)
        return p;
    const auto per_step = [&](int64_t v) { return static_cast<double>(v) / static_cast<double>(p.steps); };
    p.step_ns = per_step(step_ns);
    p.bubble_ratio = bubble_step_ns > 0 ? static_cast<double>(idle_ns) / static_cast<double>(bubble_step_ns) : 0;
    p.kernels_per_step = per_step(kernels);
    p.gemm_ns = per_step(gemm);
    p.fp8_gemm_ns = per_step(fp8_gemm);
    p.bookkeeping_ns = per_step(bookkeeping);
    p.other_kernel_ns = per_step(other_kernels);
    p.launch_idle_ns = per_step(launch_idle);
    p.graph_removable_ns = per_step(graph_removable);
    p.busy_ns = per_step(busy);
    p.idle_ns = per_step(idle_ns);
    p.recording_idle_ns = per_step(recording_idle(model, report, common));
    return p;
}

// FP8's price (issue 25 item 4): the traced step change split into GEMM time, bookkeeping kernel time, the idle the
// extra launches add and the rest, and what would win each back. The launch part is the change in the idle the trace
// charges to launches (`launch`, and `host` inside the step's launches: the framework's dispatch between them),
// measured gap by gap, rather than kernels added x a cost per launch: a launch costs the host's dispatch of its op,
// not the launch call's few microseconds, and hides entirely behind a long kernel.
void price_fp8(PerformanceComparison& perf)
{
    const RunPerformance &run = perf.run, &ref = perf.ref;
    perf.gemm_saved_ns = ref.gemm_ns - run.gemm_ns;
    perf.bookkeeping_added_ns = run.bookkeeping_ns - ref.bookkeeping_ns;
    perf.net_gain_ns = perf.gemm_saved_ns - perf.bookkeeping_added_ns;
    perf.step_change_ns = run.step_ns - ref.step_ns;
    perf.launch_idle_added_ns = run.launch_idle_ns - ref.launch_idle_ns;
    perf.other_kernels_added_ns = run.other_kernel_ns - ref.other_kernel_ns;
    perf.kernels_added_per_step = run.kernels_per_step - ref.kernels_per_step;
    perf.recording_idle_added_ns = run.recording_idle_ns - ref.recording_idle_ns;
    perf.untraced_change_estimate_ns = perf.step_change_ns - perf.recording_idle_added_ns;
    const double explained = -perf.gemm_saved_ns + perf.bookkeeping_added_ns + perf.launch_idle_added_ns;
    perf.rest_ns = perf.step_change_ns - explained;
    if (perf.step_change_ns != 0)
        perf.explained_share = explained / perf.step_change_ns;
    perf.graphs_recover_ns = std::max(0.0, run.graph_removable_ns - ref.graph_removable_ns);
    perf.fused_casts_recover_ns = std::max(0.0, perf.bookkeeping_added_ns);
    perf.compile_recovers_up_to_ns = std::max(0.0, perf.launch_idle_added_ns) + perf.fused_casts_recover_ns
        + std::max(0.0, perf.other_kernels_added_ns);
}

std::string with_logical_role(std::string label, const std::optional<std::string>& role)
{
    if (role)
        label += fmt::format(" ({})", *role);
    return label;
}

} // namespace

std::variant<CompareResult, CompareRefusal> compare_runs(const CompareInput& in, const CompareOptions& options)
{
    for (const auto& [model, which] : { std::pair { &in.run_model, "run" }, std::pair { &in.ref_model, "reference" } })
        if (model->tensor_stats.empty())
            return CompareRefusal { fmt::format(
                "the {} '{}' has no tensor statistics: record it with `fp8scope record` "
                "(GEMM statistics are on by default) so that sites can be compared",
                which, model->path) };
    const std::string run_program = program_of(in.run_model.meta.command_line);
    const std::string ref_program = program_of(in.ref_model.meta.command_line);
    if (!run_program.empty() && !ref_program.empty() && run_program != ref_program)
        return CompareRefusal { fmt::format(
            "the traces are of different jobs: the run ran '{}', the reference '{}'", run_program, ref_program) };

    CompareResult result;
    result.alignment = align(in.run_report, in.ref_report);
    if (result.alignment.common.empty())
        return CompareRefusal { fmt::format(
            "no common step: the run has {}, the reference {}", step_range(in.run_report), step_range(in.ref_report)) };
    const std::set<int64_t> common(result.alignment.common.begin(), result.alignment.common.end());

    auto keep_common = [&](detail::SiteSamples samples) {
        for (auto& [site, steps] : samples)
            std::erase_if(steps, [&](const auto& entry) { return !common.contains(entry.first); });
        std::erase_if(samples, [](const auto& entry) { return entry.second.empty(); });
        return samples;
    };
    const detail::SiteSamples run_samples
        = keep_common(detail::collect_site_samples(in.run_model, in.run_report.steps));
    const detail::SiteSamples ref_samples
        = keep_common(detail::collect_site_samples(in.ref_model, in.ref_report.steps));
    if (run_samples.empty() || ref_samples.empty())
        return CompareRefusal { fmt::format("the {} has no tensor statistics in the common steps {}..{}",
            run_samples.empty() ? "run" : "reference", result.alignment.common.front(),
            result.alignment.common.back()) };
    detail::SiteMatching matching = detail::match_sites(in.run_model, run_samples, in.ref_model, ref_samples);
    if (matching.pairs.empty())
        return CompareRefusal { fmt::format("no tensor site in common: the run has {} site(s) with samples, the "
                                            "reference {}, and none has the same NVTX path, shape and operand",
            run_samples.size(), ref_samples.size()) };
    result.run_unmatched = std::move(matching.run_unmatched);
    result.ref_unmatched = std::move(matching.ref_unmatched);

    const detail::LogicalRoles run_roles(in.run_model, run_samples);
    const detail::LogicalRoles ref_roles(in.ref_model, ref_samples);
    const auto site_of = [](const TraceModel& model, int64_t id) -> const TensorSite& {
        return *std::ranges::find(model.tensor_sites, id, &TensorSite::id);
    };
    for (const auto& pair : matching.pairs) {
        const TensorSite& run_site = site_of(in.run_model, pair.run_site);
        const TensorSite& ref_site = site_of(in.ref_model, pair.ref_site);
        CompareSite site;
        site.logical_role = run_roles.of(run_site);
        if (!site.logical_role)
            site.logical_role = ref_roles.of(ref_site);
        site.label = with_logical_role(tensor_site_label(in.run_model, run_site), site.logical_role);
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
        detail::fill_site_steps(site, run_steps, ref_samples.at(pair.ref_site));
        const auto twin = run_roles.twin(run_site);
        detail::decide_recipe(site, run_steps, twin && run_samples.contains(*twin) ? &run_samples.at(*twin) : nullptr);
        detail::detect_drift(site);
        result.amax_ratio_events += site.amax_ratio_events;
        result.stale_scale_events += site.stale_scale_events;
        switch (site.recipe) {
        case ScalingRecipe::Delayed:
            ++result.delayed_sites;
            break;
        case ScalingRecipe::Current:
            ++result.current_sites;
            break;
        case ScalingRecipe::Static:
            ++result.static_sites;
            break;
        case ScalingRecipe::CurrentOrStatic:
            ++result.current_or_static_sites;
            break;
        case ScalingRecipe::Unknown:
            ++result.unknown_recipe_sites;
            break;
        case ScalingRecipe::NotFp8:
            break;
        }
        result.sites.push_back(std::move(site));
    }

    // The first divergent tensor: the earliest onset, then the lowest layer (the earliest place in the step, which is
    // the forward order), then the run's site id.
    for (size_t i = 0; i < result.sites.size(); ++i)
        if (result.sites[i].onset_step)
            result.flagged.push_back(i);
    const auto order = [&](size_t i) {
        const CompareSite& s = result.sites[i];
        return std::make_tuple(s.onset_step.value_or(0), s.position_in_step, s.run_site_id);
    };
    std::ranges::sort(result.flagged, [&](size_t a, size_t b) { return order(a) < order(b); });
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
    PerformanceComparison& perf = result.performance;
    perf.run = performance_of(in.run_model, in.run_report, common);
    perf.ref = performance_of(in.ref_model, in.ref_report, common);
    price_fp8(perf);
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
        if (result.first_divergent) {
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
