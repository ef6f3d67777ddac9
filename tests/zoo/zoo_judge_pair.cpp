// The zoo's pair cells (docs/accuracy.md "How each cell is judged"): the drift verdict and the recipe of an FP8 run
// compared with its recorded BF16 reference, and FP8's price per step.
#include "zoo_cells.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/trace/report.hpp"

#include <fmt/format.h>

#include <cmath>
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
