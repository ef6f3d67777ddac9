// The FP8 what-if (docs/analysis.md "FP8 what-if"): each recipe profile's step from the BF16 report's figures, and
// the BF16 operands' histograms under each per-tensor recipe's scale.
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"
#include "model/step_locator.hpp"
#include "whatif/compiled_estimate.hpp"
#include "whatif/host_time.hpp"
#include "whatif/step_kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace fp8scope::analyzer {
namespace {

namespace schema = fp8scope::schema;

// The BF16 GEMM kernels that start in an analysed step: their durations, in start order, and how many of them have
// 16-bit inputs (not has_fp32_gemm_inputs()).
struct StepGemms {
    std::vector<int64_t> durations;
    int64_t sixteen_bit = 0;
};

StepGemms step_gemms(const TraceModel& model, const StepSet& steps)
{
    StepGemms out;
    KernelClassCache classes(model);
    const KernelTable& k = model.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (!detail::starts_in_analysed_step(steps, k.start_ns[i]) || classes.of(i).cls != KernelClass::OtherGemm)
            continue;
        out.durations.push_back(std::max<int64_t>(0, k.end_ns[i] - k.start_ns[i]));
        out.sixteen_bit += has_fp32_gemm_inputs(model.strings[k.name[i]]) ? 0 : 1;
    }
    return out;
}

// A 2-D GEMM operand the collector sampled at the GEMM call (zero-code sites): what an FP8 Linear layer would cast.
bool linear_operand(const TensorSite& site)
{
    const auto role = static_cast<schema::TensorRole>(site.role);
    return static_cast<schema::StatsSource>(site.source) == schema::StatsSource::GemmInterception && site.batch <= 1
        && (role == schema::TensorRole::A || role == schema::TensorRole::B) && is_high_precision(site.dtype);
}

double median(std::vector<double> values)
{
    if (values.empty())
        return 0;
    std::ranges::sort(values);
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Per analysed step with samples: the sampled 2-D GEMMs (their A operands) and the elements of their A and B
// operands; the medians over those steps. Only when every sample's place in its step is known (ordinal >= 0): a
// sample taken at the bounded rate of an unlocked period (ordinal -1, a short zero-code run) sees a few of the
// step's GEMMs, not all of them; then `per_step` is 0 and the samples give only the operand elements of one GEMM on
// average. Samples the per-step cap skipped (FP8SCOPE_STATS_CAP) are the step's last GEMMs, 3 samples (A, B, D)
// each: they are added to the count.
struct LinearGemms {
    int64_t per_step = 0; // 0: the samples do not count the step's GEMMs
    double elements_per_step = 0;
    double elements_per_gemm = 0; // mean A elements + mean B elements over the samples; 0: no sample
    bool partial = false; // samples exist, but they do not count the step's GEMMs
    double capped_per_step = 0; // GEMMs per sampled step whose samples the cap skipped (included in per_step)
};

// The cap's skipped samples per step with samples, in GEMMs (3 samples each).
double capped_per_step(const TraceModel& model)
{
    if (model.meta.tensor_stats_skipped <= 0)
        return 0;
    std::set<int64_t> sampled_steps;
    for (const TensorStats& s : model.tensor_stats)
        if (s.step)
            sampled_steps.insert(*s.step);
    return sampled_steps.empty()
        ? 0
        : static_cast<double>(model.meta.tensor_stats_skipped) / (3.0 * static_cast<double>(sampled_steps.size()));
}

LinearGemms linear_gemms(const TraceModel& model, const StepSet& steps)
{
    std::map<int64_t, const TensorSite*> sites;
    for (const TensorSite& site : model.tensor_sites)
        if (linear_operand(site))
            sites.emplace(site.id, &site);
    const detail::StepLocator locate(steps);
    std::map<int64_t, std::pair<std::set<int64_t>, double>> by_step; // step -> (A sites, elements)
    std::array<std::pair<double, int64_t>, 2> role_elements {}; // A, B: (elements, samples)
    bool positions_known = true;
    for (const TensorStats& s : model.tensor_stats) {
        const auto site = sites.find(s.site_id);
        if (site == sites.end())
            continue;
        const bool is_a = static_cast<schema::TensorRole>(site->second->role) == schema::TensorRole::A;
        auto& [role_sum, role_count] = role_elements[is_a ? 0 : 1];
        role_sum += static_cast<double>(s.numel);
        ++role_count;
        if (site->second->ordinal < 0)
            positions_known = false;
        const auto step = locate.analysed_step(s.step, s.timestamp_ns);
        if (!step)
            continue;
        auto& [a_sites, elements] = by_step[*step];
        if (is_a)
            a_sites.insert(s.site_id);
        elements += static_cast<double>(s.numel);
    }
    LinearGemms out;
    out.capped_per_step = capped_per_step(model);
    for (const auto& [sum, count] : role_elements)
        if (count > 0)
            out.elements_per_gemm += sum / static_cast<double>(count);
    if (!positions_known) {
        out.partial = role_elements[0].second > 0;
        return out;
    }
    std::vector<double> counts, elements;
    for (const auto& [step, entry] : by_step) {
        counts.push_back(static_cast<double>(entry.first.size()));
        elements.push_back(entry.second);
    }
    out.per_step = static_cast<int64_t>(std::llround(median(counts) + out.capped_per_step));
    out.elements_per_step = median(elements);
    return out;
}

std::vector<OperandNumerics> operand_numerics(const TraceModel& model, const StepSet& steps)
{
    // The tensors a recipe casts: GEMM inputs (A, B), and probed inputs, weights and gradients; not outputs.
    std::map<int64_t, const TensorSite*> sites;
    for (const TensorSite& site : model.tensor_sites) {
        const auto role = static_cast<schema::TensorRole>(site.role);
        if (is_high_precision(site.dtype) && role != schema::TensorRole::D && role != schema::TensorRole::Output)
            sites.emplace(site.id, &site);
    }
    const detail::StepLocator locate(steps);
    std::map<int64_t, std::vector<std::pair<int64_t, const TensorStats*>>> samples; // site -> (step, sample)
    for (const TensorStats& s : model.tensor_stats) {
        if (!sites.contains(s.site_id) || s.exponent_histogram.empty() || !(std::isfinite(s.amax) && s.amax > 0))
            continue;
        if (const auto step = locate.analysed_step(s.step, s.timestamp_ns))
            samples[s.site_id].emplace_back(*step, &s);
    }
    std::vector<OperandNumerics> out;
    for (auto& [site_id, series] : samples) {
        std::ranges::sort(series, {}, &std::pair<int64_t, const TensorStats*>::first);
        OperandNumerics o;
        o.site_id = site_id;
        o.label = tensor_site_label(model, *sites.at(site_id));
        o.steps = static_cast<int64_t>(series.size());
        std::vector<double> e4m3, e5m2, delayed_flushed;
        double delayed_clipped = -1;
        for (size_t i = 0; i < series.size(); ++i) {
            const TensorStats& s = *series[i].second;
            const auto& h = s.exponent_histogram;
            e4m3.push_back(shares_under_scale(h, s.hist_first_exponent, s.amax / kE4M3Max, kE4M3Max).flushed);
            e5m2.push_back(shares_under_scale(h, s.hist_first_exponent, s.amax / kE5M2Max, kE5M2Max).flushed);
            if (i == 0)
                continue;
            double history = 0;
            for (size_t j = i > kDelayedHistory ? i - kDelayedHistory : 0; j < i; ++j)
                history = std::max(history, series[j].second->amax);
            const HistogramShares d = shares_under_scale(h, s.hist_first_exponent, history / kE4M3Max, kE4M3Max);
            delayed_clipped = std::max(delayed_clipped, d.clipped);
            delayed_flushed.push_back(d.flushed);
        }
        o.e4m3_flushed = median(e4m3);
        o.e4m3_flushed_max = *std::ranges::max_element(e4m3);
        o.e5m2_flushed = median(e5m2);
        o.e5m2_flushed_max = *std::ranges::max_element(e5m2);
        if (!delayed_flushed.empty()) {
            o.delayed_clipped_max = delayed_clipped;
            o.delayed_flushed = median(delayed_flushed);
        }
        out.push_back(std::move(o));
    }
    std::ranges::stable_sort(
        out, [](const OperandNumerics& a, const OperandNumerics& b) { return a.e4m3_flushed > b.e4m3_flushed; });
    return out;
}

// What the step's figures give every prediction.
struct StepFigures {
    double step = 0, busy = 0, launch_idle = 0, other_idle = 0;
    double kernels = 0, host_per_kernel = 0;
    double graphed_step = 0; // the BF16 step compiled or graphed
    std::vector<int64_t> gemms; // all analysed steps' BF16 GEMM kernels
    double steps = 1;
    double fp8_share = 1; // of the GEMMs, those that would run in FP8
    double fp8_gemms = 0; // per step
    double operand_elements = 0; // per step, of those GEMMs; 0: unknown
};

Fp8Prediction predict(const RecipeProfile& p, Fp8Mode mode, const StepFigures& f, const GemmTable& table)
{
    Fp8Prediction out;
    out.recipe = p.recipe;
    out.implementation = p.implementation;
    out.mode = mode;
    double gemm_bf16 = 0, fp8_median = 0, fp8_fast = 0, fp8_slow = 0;
    for (const int64_t d : f.gemms) {
        const GemmSpeedup s = gemm_speedup(table, d, p.rowwise_gemm);
        gemm_bf16 += static_cast<double>(d);
        fp8_median += static_cast<double>(d) / s.median;
        fp8_fast += static_cast<double>(d) / s.high;
        fp8_slow += static_cast<double>(d) / s.low;
    }
    const double per_step = f.fp8_share / f.steps;
    out.gemm_bf16_ns = std::llround(gemm_bf16 * per_step);
    out.gemm_fp8_ns = std::llround(fp8_median * per_step);
    const double saved = (gemm_bf16 - fp8_median) * per_step;
    const double saved_most = (gemm_bf16 - fp8_fast) * per_step;
    const double saved_least = (gemm_bf16 - fp8_slow) * per_step;
    const double traffic = f.operand_elements * p.compiled_bytes_per_element / kCastBytesPerNs;
    if (mode == Fp8Mode::Eager) {
        out.bf16_step_ns = std::llround(f.step);
        if (!p.eager_host_units_per_gemm || !p.eager_kernels_per_gemm) {
            out.unavailable = fmt::format("no eager run of {} measured yet", p.implementation);
            return out;
        }
        const double host = f.fp8_gemms * *p.eager_host_units_per_gemm * f.host_per_kernel;
        const double eager_traffic
            = p.eager_gpu_ns_per_element ? f.operand_elements * *p.eager_gpu_ns_per_element : traffic;
        const double gpu = std::max(f.fp8_gemms * *p.eager_kernels_per_gemm * kMinBookkeepingKernelNs, eager_traffic);
        out.bookkeeping_host_ns = std::llround(host);
        out.bookkeeping_gpu_ns = std::llround(gpu);
        // The host span (busy + launch idle) grows by the bookkeeping's host time; the GPU's work by its kernels, less
        // what the GEMMs save. The idle the host causes otherwise (syncs, data loading) stays.
        const double host_span = f.kernels * f.host_per_kernel; // busy + launch idle when the GPU waits for it
        auto step_with = [&](double host_extra, double gemm_saved) {
            return f.other_idle + std::max(f.busy - gemm_saved + gpu, host_span + host_extra);
        };
        const double step = step_with(host, saved);
        double low = step_with(host * (1 - kHostUnitsSpread), saved_most);
        const double high = step_with(host * (1 + kHostUnitsSpread), saved_least);
        // A step the host does not hold up (launch idle under a tenth of it) may hide the extra host time behind
        // the GPU's work: the interval then reaches down to that.
        if (f.launch_idle < 0.1 * f.step)
            low = std::min(low, f.other_idle + f.busy - saved_most + gpu);
        out.step_ns = std::llround(step);
        out.step_low_ns = std::llround(low);
        out.step_high_ns = std::llround(high);
    } else {
        out.bf16_step_ns = std::llround(f.graphed_step);
        out.bookkeeping_gpu_ns = std::llround(traffic);
        out.step_ns = std::llround(std::max(1.0, f.graphed_step - saved + traffic));
        out.step_low_ns = std::llround(std::max(1.0, f.graphed_step - saved_most + traffic));
        out.step_high_ns = std::llround(std::max(1.0, f.graphed_step - saved_least + traffic));
    }
    out.bookkeeping_known = mode == Fp8Mode::Eager || f.operand_elements > 0;
    const int64_t bookkeeping = mode == Fp8Mode::Eager ? out.bookkeeping_host_ns : out.bookkeeping_gpu_ns;
    out.rest_ns = out.step_ns - (out.bf16_step_ns - (out.gemm_bf16_ns - out.gemm_fp8_ns) + bookkeeping);
    out.speedup = out.step_ns > 0 ? static_cast<double>(out.bf16_step_ns) / static_cast<double>(out.step_ns) : 0;
    out.speedup_vs_measured = out.step_ns > 0 ? f.step / static_cast<double>(out.step_ns) : 0;
    return out;
}

std::string advice_for(const Fp8WhatIf& w, const StepFigures& f)
{
    if (!w.best)
        return "no recipe could be predicted";
    const Fp8Prediction& best = w.predictions[*w.best];
    const double gemm_share = f.step > 0 ? static_cast<double>(w.gemm_ns_per_step) / f.step : 0;
    if (best.speedup < kPickSpeedup) {
        const Fp8Prediction* eager = nullptr;
        for (const Fp8Prediction& p : w.predictions)
            if (p.mode == Fp8Mode::Eager && p.unavailable.empty() && (!eager || p.step_ns < eager->step_ns))
                eager = &p;
        std::string why = fmt::format("the step's GEMMs are {:.0f}% of it and FP8 saves {:.2f} ms of them",
            100 * gemm_share, static_cast<double>(best.gemm_bf16_ns - best.gemm_fp8_ns) / 1e6);
        if (eager)
            why += fmt::format(", while in eager mode its bookkeeping adds {:.2f} ms of host time a step",
                static_cast<double>(eager->bookkeeping_host_ns) / 1e6);
        return fmt::format("stay in BF16: no recipe is predicted {:.0f}% faster (best: {} {}, {:.2f}x); {}",
            100 * (kPickSpeedup - 1), best.recipe, fp8_mode_name(best.mode), best.speedup, why);
    }
    std::string ties;
    for (const size_t i : w.ties)
        ties += fmt::format("{}{} {} ({:.2f}x)", ties.empty() ? "" : ", ", w.predictions[i].recipe,
            fp8_mode_name(w.predictions[i].mode), w.predictions[i].speedup);
    if (!ties.empty())
        ties = "; as good within its interval: " + ties;
    // Against the BF16 step of its mode; compiled, that step is an estimate, and the measured one is named too.
    const std::string against = best.mode == Fp8Mode::Compiled
        ? fmt::format("the compiled BF16 step (estimated {:.2f} ms; {:.2f}x this trace's measured {:.2f} ms)",
            static_cast<double>(best.bf16_step_ns) / 1e6, best.speedup_vs_measured, f.step / 1e6)
        : std::string("the BF16 step");
    return fmt::format("{} {}: predicted {:.2f}x ({:.2f}-{:.2f}x) {}, since its GEMMs are {:.0f}% of the "
                       "step and run {:.2f}x faster in FP8{}{}",
        best.recipe, fp8_mode_name(best.mode), best.speedup,
        static_cast<double>(best.bf16_step_ns) / static_cast<double>(best.step_high_ns),
        static_cast<double>(best.bf16_step_ns) / static_cast<double>(best.step_low_ns), against, 100 * gemm_share,
        best.gemm_fp8_ns > 0 ? static_cast<double>(best.gemm_bf16_ns) / static_cast<double>(best.gemm_fp8_ns) : 1.0,
        best.mode == Fp8Mode::Compiled ? " and compiling fuses the casts and removes the launch overhead" : "", ties);
}

} // namespace

std::vector<TraceGemmShape> trace_gemm_shapes(const TraceModel& model)
{
    std::map<int64_t, std::array<int64_t, 3>> site_shape; // A sites named "gemm MxNxK" -> (m, n, k)
    for (const TensorSite& site : model.tensor_sites) {
        if (!linear_operand(site) || static_cast<schema::TensorRole>(site.role) != schema::TensorRole::A)
            continue;
        long long m = 0, n = 0, k = 0;
        char tail = 0;
        const std::string name(model.strings[site.name]);
        if (std::sscanf(name.c_str(), "gemm %lldx%lldx%lld%c", &m, &n, &k, &tail) == 3 && m > 0 && n > 0 && k > 0)
            site_shape.emplace(site.id, std::array<int64_t, 3> { m, n, k });
    }
    if (site_shape.empty())
        return {};
    std::map<std::array<int64_t, 3>, int64_t> calls;
    for (const TensorStats& s : model.tensor_stats)
        if (const auto shape = site_shape.find(s.site_id); shape != site_shape.end())
            ++calls[shape->second];
    std::vector<TraceGemmShape> shapes;
    for (const auto& [mnk, count] : calls)
        shapes.push_back({ mnk[0], mnk[1], mnk[2], count });
    return shapes;
}

namespace {

// The prediction with `table`; without one (nullptr), a trace that would need it gets `no_table` as its
// not_applicable, after the reasons that need no table (no steps, FP8 already, no GEMMs), which stay as they are.
Fp8WhatIf predict_with(const TraceModel& model, const Report& report, const GemmTable* table, std::string_view no_table)
{
    Fp8WhatIf w;
    if (table != nullptr)
        w.table_gpu = table->gpu;
    if (!model.gpus.empty())
        w.trace_gpu = model.gpus.front().name;
    const StepSet& steps = report.steps;
    if (steps.steps.empty()) {
        w.not_applicable = "no analysed steps";
        return w;
    }
    const int64_t fp8_gemms = report.kernel_classes.of(KernelClass::Fp8Gemm).count;
    if (fp8_gemms > 0) {
        w.not_applicable = fmt::format("the trace already runs FP8 GEMMs ({} in the analysed steps): compare it "
                                       "with its BF16 run instead (fp8scope compare)",
            fp8_gemms);
        return w;
    }
    StepFigures f;
    f.steps = static_cast<double>(steps.steps.size());
    const StepGemms gemms = step_gemms(model, steps);
    f.gemms = gemms.durations;
    if (f.gemms.empty()) {
        w.not_applicable = "no GEMM kernel in the analysed steps: FP8 would change nothing";
        return w;
    }
    if (table == nullptr) {
        w.not_applicable = no_table;
        return w;
    }
    w.steps = static_cast<int64_t>(steps.steps.size());
    const BubbleTotals& t = report.totals;
    f.step = static_cast<double>(t.step_ns) / f.steps;
    f.busy = static_cast<double>(t.busy_ns) / f.steps;
    f.launch_idle = static_cast<double>(t.cause_ns[static_cast<size_t>(BubbleCause::Launch)]) / f.steps;
    f.other_idle = std::max(0.0, f.step - f.busy - f.launch_idle);
    f.kernels = static_cast<double>(report.launch.kernels) / f.steps;
    // The host's time per kernel: the GPU timeline's (busy + launch idle) / kernels is it when the GPU waits for the
    // host, and more than it when the host runs ahead; the API calls' own figure tells the second case.
    f.host_per_kernel = f.kernels > 0 ? (f.busy + f.launch_idle) / f.kernels : 0;
    const double host_from_calls = detail::host_ns_per_kernel(model, steps, report.bubbles.host_stall_threshold_ns);
    if (host_from_calls > 0)
        f.host_per_kernel = std::min(f.host_per_kernel, host_from_calls);
    const WhatIf what_if = estimate_what_if(report);
    // A trace that is compiled or graphed already is its own compiled baseline.
    const bool graphed = what_if.graph_kernel_share >= kGraphedStepShare || inductor_kernel_count(model) > 0;
    if (graphed) {
        w.compiled.step_ns = std::llround(f.step);
    } else {
        w.compiled = detail::compiled_from_eager(model, steps, static_cast<double>(what_if.without_launch_overhead_ns));
    }
    f.graphed_step = static_cast<double>(w.compiled.step_ns);
    const double gemm_kernels = static_cast<double>(f.gemms.size()) / f.steps;
    const LinearGemms linear = linear_gemms(model, steps);
    if (linear.per_step > 0) {
        f.fp8_gemms = std::min(gemm_kernels, static_cast<double>(linear.per_step));
        f.operand_elements = linear.elements_per_step;
        w.fp8_gemm_source = fmt::format("the 2-D GEMMs the collector sampled ({} a step, of {:.0f} GEMM kernels{}); "
                                        "batched GEMMs (attention) stay in BF16",
            linear.per_step, gemm_kernels,
            linear.capped_per_step > 0 ? fmt::format(
                ", {:.1f} of them counted from the samples the per-step cap skipped", linear.capped_per_step)
                                       : "");
    } else if (linear.partial) {
        f.fp8_gemms = gemm_kernels;
        f.operand_elements = gemm_kernels * linear.elements_per_gemm;
        w.fp8_gemm_source = "every GEMM kernel of the step: its GEMM statistics sampled some GEMMs, not every GEMM "
                            "of a step (no step markers and too short a run for the collector to learn the step's "
                            "GEMM sequence, or the per-step cap), so they cannot tell the Linear layers' GEMMs from "
                            "batched ones; operand sizes from the sampled GEMMs' mean";
    } else {
        // No statistics: the GEMM kernels with 16-bit inputs; FP32 ones (an FP32 head or loss) stay as they are.
        const double sixteen_bit = static_cast<double>(gemms.sixteen_bit) / f.steps;
        f.fp8_gemms = sixteen_bit;
        w.fp8_gemm_source = sixteen_bit < gemm_kernels
            ? fmt::format("the GEMM kernels with 16-bit inputs ({:.0f} of {:.0f} a step; the FP32 ones stay): the "
                          "trace has no GEMM statistics to tell the Linear layers' GEMMs from batched ones, nor "
                          "their operands' sizes",
                sixteen_bit, gemm_kernels)
            : std::string("every GEMM kernel of the step: the trace has no GEMM statistics to tell the Linear "
                          "layers' GEMMs from batched ones, nor their operands' sizes");
    }
    f.fp8_share = gemm_kernels > 0 ? f.fp8_gemms / gemm_kernels : 0;
    w.bf16_step_ns = std::llround(f.step);
    w.kernels_per_step = std::llround(f.kernels);
    w.host_ns_per_kernel = std::llround(f.host_per_kernel);
    w.gemm_kernels_per_step = std::llround(gemm_kernels);
    w.fp8_gemms_per_step = std::llround(f.fp8_gemms);
    w.operand_elements_per_step = std::llround(f.operand_elements);
    int64_t gemm_total = 0;
    for (const int64_t d : f.gemms)
        gemm_total += d;
    w.gemm_ns_per_step = std::llround(static_cast<double>(gemm_total) / f.steps);
    for (const Fp8Mode mode : { Fp8Mode::Eager, Fp8Mode::Compiled })
        for (const RecipeProfile& p : fp8_recipe_profiles())
            w.predictions.push_back(predict(p, mode, f, *table));
    for (size_t i = 0; i < w.predictions.size(); ++i)
        if (w.predictions[i].unavailable.empty()
            && (!w.best || w.predictions[i].speedup > w.predictions[*w.best].speedup))
            w.best = i;
    if (w.best && w.predictions[*w.best].speedup >= kPickSpeedup) {
        const Fp8Prediction& best = w.predictions[*w.best];
        const double low = best.step_high_ns > 0
            ? static_cast<double>(best.bf16_step_ns) / static_cast<double>(best.step_high_ns)
            : best.speedup;
        for (size_t i = 0; i < w.predictions.size(); ++i) {
            const Fp8Prediction& p = w.predictions[i];
            if (i != *w.best && p.unavailable.empty() && p.speedup >= kPickSpeedup && p.speedup >= low)
                w.ties.push_back(i);
        }
    }
    w.advice = advice_for(w, f);
    w.operands = operand_numerics(model, steps);
    for (const OperandNumerics& o : w.operands)
        if (o.e4m3_flushed >= kHurtFlushShare)
            w.hurt.push_back(o.label);
    return w;
}

} // namespace

Fp8WhatIf predict_fp8(const TraceModel& model, const Report& report, const GemmTable& table)
{
    return predict_with(model, report, &table, {});
}

Fp8WhatIf predict_fp8(const TraceModel& model, const Report& report)
{
    const Expected<const GemmTable*> table = shipped_gemm_table(model.gpus.empty() ? "" : model.gpus.front().name);
    if (table)
        return predict_with(model, report, *table, {});
    return predict_with(model, report, nullptr,
        fmt::format("no prediction: {} (the shipped tables are read from ${}/gemm_tables when that is set, else "
                    "from share/fp8scope/gemm_tables above the program's folder; docs/cli.md \"calibrate\")",
            table.error().message, kDataDirVariable));
}

} // namespace fp8scope::analyzer
