// The zoo's pair cells (docs/accuracy.md "How each cell is judged"): the drift verdict and the recipe of an FP8 run
// compared with its recorded BF16 reference, and FP8's price per step.
#include "zoo_cells.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace fp8scope::zoo::detail {

using namespace analyzer;
using nlohmann::json;

namespace {

constexpr int64_t kDriftOnsetSteps = 3; // the flagged onset within this many steps of the planted one

} // namespace

PairCells judge_pair(const std::string& dir, const Trace& run)
{
    const json& pair = run.truth.value("pair", json());
    if (!pair.is_object())
        return { not_judged(""), not_judged("") };
    const std::string twin = pair.at("twin").get<std::string>();
    if (pair.value("role", "") != "run")
        return { not_judged("reference of " + twin), not_judged("reference") };
    const Trace ref = load(dir, twin);
    const Report run_report = analyze(run.model);
    const Report ref_report = analyze(ref.model);
    const auto compared = compare_runs({ run.model, run_report, ref.model, ref_report });
    if (const auto* refusal = std::get_if<CompareRefusal>(&compared))
        return { cell(false, "refused: " + refusal->message), cell(false, "refused") };
    const CompareResult& c = std::get<CompareResult>(compared);
    if (!c.numerics_compared()) // a performance-only comparison has no drift or loss to judge
        return { cell(false, "refused: " + c.numerics_not_compared), cell(false, "refused") };

    Cell drift;
    const json& planted = run.truth.value("drift", json());
    const std::string first = c.first_divergent ? c.sites[*c.first_divergent].label : std::string();
    // The first divergent site's onset step, -1 when there is none.
    const int64_t onset = c.first_divergent ? c.sites[*c.first_divergent].onset_step.value_or(-1) : -1;
    if (planted.is_string()) {
        drift = cell(c.flagged.empty(),
            c.flagged.empty()
                ? "clean: no site drifts"
                : fmt::format("clean, but {} tensors flagged, first {} from step {}", c.flagged.size(), first, onset));
    } else if (planted.is_object()) {
        const std::string layer = planted.at("layer").get<std::string>();
        const int64_t planted_onset = planted.at("onset_step").get<int64_t>();
        const bool right = !c.flagged.empty() && first.find(layer) != std::string::npos && onset >= 0
            && std::llabs(onset - planted_onset) <= kDriftOnsetSteps;
        drift = cell(right,
            c.flagged.empty() ? fmt::format("missed: {} from step {}", layer, planted_onset)
                              : fmt::format("{} tensor(s), first {} from step {} (planted {} from {})",
                                  c.flagged.size(), first, onset, layer, planted_onset));
    } else {
        drift = not_judged("");
    }

    Cell recipe;
    const std::string expected = run.truth.value("recipe", "");
    std::map<std::string, int64_t> counts { { "delayed", c.delayed_sites }, { "current", c.current_sites },
        { "static", c.static_sites }, { "unknown", c.unknown_recipe_sites } };
    std::string text = fmt::format("delayed {}, current {}, static {}, unknown {}", c.delayed_sites, c.current_sites,
        c.static_sites, c.unknown_recipe_sites);
    // Sites scaled per row or block count under their scale recipe ("rowwise", "blockwise 1×128"), the name the
    // job's truth gives such a recipe.
    if (c.per_block_sites > 0)
        for (const auto& [name, n] : c.scale_recipe_sites)
            if (name != "tensorwise") {
                counts[name] = n;
                text += fmt::format(", {} {}", name, n);
            }
    if (run.truth.contains("scaled_mm")) {
        // A job that counted its own torch._scaled_mm operands by recipe (the recipe workloads): one site per operand
        // of every GEMM of a step, so the run's sites per scale recipe must equal that count exactly.
        const auto& own = run.truth.at("scaled_mm").at("operands_per_step");
        bool equal = own.size() == c.scale_recipe_sites.size();
        std::string truth_text;
        for (const auto& [name, n] : own.items()) {
            const auto it = c.scale_recipe_sites.find(name);
            equal = equal && it != c.scale_recipe_sites.end() && it->second == n.get<int64_t>();
            truth_text += fmt::format("{}{} {}", truth_text.empty() ? "" : ", ", name, n.get<int64_t>());
        }
        std::string sites_text;
        for (const auto& [name, n] : c.scale_recipe_sites)
            sites_text += fmt::format("{}{} {}", sites_text.empty() ? "" : ", ", name, n);
        recipe = cell(equal,
            fmt::format(
                "sites by scale: {} (the job's operands per step: {}; truth {})", sites_text, truth_text, expected));
        return { drift, recipe };
    }
    const auto majority = std::max_element(
        counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    recipe = cell(majority->first == expected && majority->second > 0, fmt::format("{} (truth {})", text, expected));
    return { drift, recipe };
}

namespace {

// Half the range of a timing's untraced runs of one variant (0 with one run): how far apart the measurement itself
// lies, as the truth's untraced_timing records it (tests/gpu/check_zoo.py).
double half_range_ms(const json& timing, const std::string& key)
{
    const json all = timing.value("runs_ms", json::object());
    const json runs = all.value(key, json::array());
    if (!runs.is_array() || runs.size() < 2)
        return 0.0;
    const auto [low, high] = std::minmax_element(
        runs.begin(), runs.end(), [](const json& a, const json& b) { return a.get<double>() < b.get<double>(); });
    return (high->get<double>() - low->get<double>()) / 2;
}

// A compiled pair (truth mode "compiled"): untraced, the job is GPU-bound, and recording makes its FP8 step
// launch-bound (torchao tensorwise: 21.6 ms traced against 14.5 ms untraced), so the traced change says little.
// The price's parts, read from the traces, give the GPU-bound change (kernel time added plus each added kernel's
// queued gap), set against the change measured untraced. Tolerance: 10% of that change, at least 1% of the BF16
// step, and at least the measurement's own spread (half the range of the FP8 runs plus that of the BF16 runs): the
// tensorwise pair's untraced change was -0.58, -0.37 and +0.24 ms in three calls on one H200, its FP8 runs 14.48
// and 16.00 ms in the last (docs/benchmarks.md "FP8 under torch.compile").
Cell judge_compiled_price(const PerformanceComparison& p, const Trace& run)
{
    const json measured = run.truth.value("measured", json::object());
    const auto untraced = number(measured, "fp8_step_change_ms");
    const auto bf16 = number(measured, "bf16_median_step_ms");
    std::string text = fmt::format("GPU-bound {:+.2f} ms = GEMM {:+.2f} + FP8 bookkeeping {:+.2f} (fused, less {:.2f} "
                                   "of model work absorbed) + other kernels {:+.2f} + {:+.0f} kernels x {:.2f} us",
        p.gpu_bound_change_ns / 1e6, -p.gemm_saved_ns / 1e6, p.bookkeeping_added_ns / 1e6, p.fused_absorbed_ns / 1e6,
        p.other_kernels_added_ns / 1e6, p.kernels_added_per_step, p.ref.queued_gap_ns / 1e3);
    if (!untraced || !bf16)
        return not_judged(text + " (no untraced run)");
    double spread = 0;
    const json timings = run.truth.value("untraced_timing", json::object());
    for (const auto& [name, timing] : timings.items())
        if (timing.value("runs_ms", json::object()).contains("fp8_median_step_ms"))
            spread = half_range_ms(timing, "fp8_median_step_ms") + half_range_ms(timing, "bf16_median_step_ms");
    const double error = p.gpu_bound_change_ns / 1e6 - *untraced;
    const double tolerance = std::max({ 0.10 * std::abs(*untraced), 0.01 * *bf16, spread });
    text += fmt::format("; untraced {:+.2f} ms (runs' spread {:.2f} ms): off by {:+.2f} ms ({:.1f}% of the BF16 step)",
        *untraced, spread, error, 100 * std::abs(error) / *bf16);
    return cell(std::abs(error) <= tolerance, text);
}

} // namespace

Cell judge_price(const Trace& run)
{
    // The explained part (GEMM time, bookkeeping, launch idle) against the traced step change, as the issue asks.
    constexpr double kExplainedTolerance = 0.10;
    // The traced change, less the recording's idle (the idle around the collector's own statistics work), against
    // the change the job measured untraced (docs/analysis.md "Compare", FP8's price). The traced change is a mean of
    // 10-23 steps with their host stalls: fp8_delayed_clean's step 7 holds 58 ms of host idle, and the standard error
    // of that pair's mean change is 42% of its untraced change. Recording also costs the FP8 run's extra launches
    // 1.3-2.9 us each beyond that idle (docs/benchmarks.md, "Collector overhead"). 40% allows both and still fails a
    // price that recording has inflated by half or more: the raw traced changes of the train.py pairs, +53% and +83%.
    constexpr double kUntracedTolerance = 0.40;
    const auto untraced = number(run.truth.value("measured", json::object()), "fp8_step_change_ms");
    const json& pair = run.truth.value("pair", json());
    if (!pair.is_object() || pair.value("role", "") != "run")
        return not_judged("");
    const std::string dir = std::filesystem::path(run.model.path).parent_path().string();
    const Trace ref = load(dir, pair.at("twin").get<std::string>());
    const Report run_report = analyze(run.model);
    const Report ref_report = analyze(ref.model);
    const auto compared = compare_runs({ run.model, run_report, ref.model, ref_report });
    if (const auto* refusal = std::get_if<CompareRefusal>(&compared))
        return cell(false, "refused: " + refusal->message);
    if (const CompareResult& c = std::get<CompareResult>(compared); !c.numerics_compared())
        return cell(false, "refused: " + c.numerics_not_compared); // the pair's numerics, as the scoreboard has it
    const PerformanceComparison& p = std::get<CompareResult>(compared).performance;
    if (run.truth.value("mode", "") == "compiled")
        return judge_compiled_price(p, run);
    std::string text = fmt::format("traced {:+.1f} ms = GEMM {:+.2f} + cast/amax {:+.2f} + launch idle {:+.1f} + rest "
                                   "{:+.1f}",
        p.step_change_ns / 1e6, -p.gemm_saved_ns / 1e6, p.bookkeeping_added_ns / 1e6, p.launch_idle_added_ns / 1e6,
        p.rest_ns / 1e6);
    if (p.explained_share)
        text += fmt::format("; explained {:.0f}%", 100 * *p.explained_share);
    const double estimate_ms = p.untraced_change_estimate_ns / 1e6;
    if (!untraced)
        return not_judged(text + fmt::format("; less the recording's idle {:+.1f} ms (no untraced run)", estimate_ms));
    text += fmt::format("; less the recording's idle {:+.1f} ms vs untraced {:+.1f} ms ({:+.0f}%)", estimate_ms,
        *untraced, 100 * (estimate_ms / *untraced - 1));
    const bool explained = p.explained_share && std::abs(*p.explained_share - 1) <= kExplainedTolerance;
    return cell(explained && within(estimate_ms, *untraced, kUntracedTolerance), text);
}

Cell judge_fused_bookkeeping(const Trace& run)
{
    const json& inductor = run.truth.value("inductor_kernels", json());
    if (!inductor.is_object())
        return not_judged("");
    const json& truth = inductor.at("kernels");
    int64_t agree = 0, disagree = 0, bookkeeping = 0, unknown = 0, gemm = 0;
    std::string first_wrong;
    std::set<uint32_t> seen;
    for (size_t k = 0; k < run.model.kernels.size(); ++k) {
        const StringRef ref = run.model.kernels.name[k];
        if (!seen.insert(ref.index).second)
            continue;
        const std::string name(run.model.strings[ref]);
        if (!name.starts_with("triton_poi_") && !name.starts_with("triton_red_") && !name.starts_with("triton_per_"))
            continue;
        const KernelClass cls = classify_kernel_name(name).cls;
        gemm += cls == KernelClass::Fp8Gemm || cls == KernelClass::OtherGemm;
        const auto it = truth.find(name);
        if (it == truth.end()) {
            ++unknown;
            continue;
        }
        const bool expected = it->value("fp8_bookkeeping", false);
        const bool found = cls == KernelClass::FusedBookkeeping;
        bookkeeping += expected;
        if (expected == found)
            ++agree;
        else if (++disagree == 1)
            first_wrong = fmt::format("{} ({} by name, {} in its source)", name, found ? "bookkeeping" : "not",
                expected ? "bookkeeping" : "not");
    }
    std::string text = fmt::format("{} Inductor kernels: the name agrees with the generated source on {} ({} do FP8 "
                                   "bookkeeping); {} classed as GEMMs",
        agree + disagree + unknown, agree, bookkeeping, gemm);
    if (unknown > 0)
        text += fmt::format("; {} not in the truth", unknown);
    if (disagree > 0)
        text += fmt::format("; {} disagree, first {}", disagree, first_wrong);
    return cell(agree > 0 && disagree == 0 && unknown == 0 && gemm == 0, text);
}

namespace {

// The untraced runs behind a measured key of an eager trace's truth (untraced_timing's runs_ms), else its median.
std::vector<double> measured_runs(const json& truth, const std::string& key)
{
    std::vector<double> runs;
    const json timings = truth.value("untraced_timing", json::object());
    for (const auto& [name, timing] : timings.items())
        if (timing.is_object() && timing.contains("runs_ms") && timing.at("runs_ms").contains(key))
            for (const json& v : timing.at("runs_ms").at(key))
                if (v.is_number())
                    runs.push_back(v.get<double>());
    if (runs.empty())
        if (const auto median = number(truth.value("measured", json()), key.c_str()))
            runs.push_back(*median);
    return runs;
}

struct Judged {
    bool right = false;
    std::string text;
};

// A predicted step against the untraced runs: within kWithin of the runs' median, or of one of the runs when they
// disagree with each other by more than that (the machine's own noise, docs/accuracy.md).
double median_of(std::vector<double> values)
{
    std::ranges::sort(values);
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Judged judge_step(const char* what, double predicted_ms, const std::vector<double>& runs)
{
    constexpr double kWithin = 0.20;
    std::vector<double> sorted = runs;
    std::ranges::sort(sorted);
    const size_t n = sorted.size();
    const double median = median_of(runs);
    const double low = sorted.front() * (1 - kWithin), high = sorted.back() * (1 + kWithin);
    const bool spread = sorted.back() > sorted.front() * (1 + kWithin);
    const bool right = spread ? predicted_ms >= low && predicted_ms <= high : within(predicted_ms, median, kWithin);
    std::string runs_text;
    for (const double r : runs)
        runs_text += fmt::format("{}{:.2f}", runs_text.empty() ? "" : ", ", r);
    return { right,
        fmt::format("{} {:.2f} ms vs {:.2f} ({:+.0f}%{})", what, predicted_ms, median,
            100 * (predicted_ms / median - 1), n > 1 ? fmt::format("; runs {}", runs_text) : std::string()) };
}

} // namespace

Cell judge_compiled_whatif(const Trace& eager, const analyzer::Report& report)
{
    const std::vector<double> bf16 = measured_runs(eager.truth, "compiled_bf16_median_step_ms");
    const std::vector<double> tensorwise = measured_runs(eager.truth, "compiled_tensorwise_median_step_ms");
    const std::vector<double> rowwise = measured_runs(eager.truth, "compiled_rowwise_median_step_ms");
    if (eager.truth.value("mode", "") != "eager" || bf16.empty() || tensorwise.empty())
        return not_judged("");
    const Fp8WhatIf w = predict_fp8(eager.model, report);
    const Fp8Prediction* tw = nullptr;
    const Fp8Prediction* rw = nullptr;
    for (const Fp8Prediction& p : w.predictions) {
        if (p.mode != Fp8Mode::Compiled || !p.unavailable.empty())
            continue;
        if (p.recipe == "tensorwise")
            tw = &p;
        else if (p.recipe == "rowwise")
            rw = &p;
    }
    const std::string role = eager.truth.value("fusion_role", "held_out") == "fit" ? "fit" : "held out";
    if (!w.not_applicable.empty() || !w.compiled.from_eager || tw == nullptr)
        return cell(false,
            fmt::format("{}: no compiled prediction from the eager trace ({})", role,
                w.not_applicable.empty() ? "no tensorwise profile" : w.not_applicable));
    const Judged b = judge_step("BF16", static_cast<double>(w.compiled.step_ns) / 1e6, bf16);
    const Judged t = judge_step("tensorwise", static_cast<double>(tw->step_ns) / 1e6, tensorwise);
    bool right = b.right && t.right;
    std::string text = fmt::format("{}: compiled {}; {}", role, b.text, t.text);
    if (rw != nullptr && !rowwise.empty()) {
        // Rowwise's direction: slower or faster than the compiled BF16 step, predicted and measured.
        const double measured = median_of(rowwise);
        const double bf16_median = median_of(bf16);
        const bool predicted_slower = rw->step_ns > w.compiled.step_ns;
        const bool measured_slower = measured > bf16_median;
        right = right && predicted_slower == measured_slower;
        text += fmt::format("; rowwise {:.2f}x predicted, {:.2f}x measured", rw->speedup, bf16_median / measured);
    }
    return cell(right, text);
}

Cell judge_numerics_verdict(const Trace& run, const analyzer::Report& report)
{
    using analyzer::NumericsVerdict;
    std::string expected = run.truth.value("numerics", "");
    if (expected.empty()) {
        const std::string recipe = run.truth.value("recipe", "");
        const nlohmann::json drift = run.truth.value("drift", nlohmann::json());
        if (recipe.empty() || recipe == "none" || drift.is_null())
            return not_judged("");
        expected = drift.is_string() && drift.get<std::string>() == "clean" ? "healthy" : "at_risk_or_broken";
    }
    if (expected == "reference")
        return not_judged("reference");
    const analyzer::NumericsJudgement& n = report.numerics;
    const std::string said = fmt::format("{}{}", analyzer::numerics_verdict_name(n.verdict),
        n.lead() != nullptr ? fmt::format(": {} {} from step {}", n.lead()->tensor,
            analyzer::numerics_rule_name(n.lead()->rule), n.lead()->onset_step)
                            : std::string());
    const bool right = expected == "healthy" ? n.verdict == NumericsVerdict::Healthy
        : expected == "broken"               ? n.verdict == NumericsVerdict::Broken
                               : n.verdict == NumericsVerdict::AtRisk || n.verdict == NumericsVerdict::Broken;
    return cell(right, fmt::format("{} (truth {})", said, expected));
}

} // namespace fp8scope::zoo::detail
