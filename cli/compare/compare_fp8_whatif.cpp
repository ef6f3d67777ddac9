// `compare RUN REF --fp8-whatif` (docs/cli.md "FP8 what-if"): the reference's FP8 what-if (a BF16 run's), set against
// the run's own step when the run is FP8: what the what-if predicted for the run's scaling recipe, and how far the
// run is from it. Both steps are traced, so the difference holds the recording's own share too.
#include "compare/compare_render.hpp"

#include "fp8scope/present/whatif_wording.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {

using analyzer::CompareResult;
using analyzer::Fp8Mode;
using analyzer::Fp8Prediction;
using analyzer::Fp8WhatIf;

namespace {

// The profiles that run the recipe the run's sites show (docs/analysis.md "Compare", recipes): delayed scaling is
// the sample's Fp8Linear; current scaling is the sample's --scaling current or torchao's tensorwise, which the
// trace cannot tell apart.
std::vector<std::string_view> run_recipes(const CompareResult& r)
{
    if (r.delayed_sites > 0 && r.delayed_sites >= r.current_sites + r.current_or_static_sites)
        return { "delayed" };
    if (r.current_sites + r.current_or_static_sites > 0)
        return { "current", "tensorwise" };
    return {};
}

double run_step_ns(const analyzer::Report& report)
{
    return report.steps.steps.empty()
        ? 0
        : static_cast<double>(report.totals.step_ns) / static_cast<double>(report.steps.steps.size());
}

const Fp8Prediction* eager_prediction(const Fp8WhatIf& w, std::string_view recipe)
{
    for (const Fp8Prediction& p : w.predictions)
        if (p.recipe == recipe && p.mode == Fp8Mode::Eager && p.unavailable.empty())
            return &p;
    return nullptr;
}

} // namespace

std::string render_compare_fp8_whatif_text(
    const analyzer::CompareInput& input, const CompareResult& result, const Fp8WhatIf& whatif, bool color)
{
    std::string out = render_fp8_whatif_text(whatif, color);
    if (!whatif.not_applicable.empty())
        return out;
    const double run_ns = run_step_ns(input.run_report);
    const std::vector<std::string_view> recipes = run_recipes(result);
    if (recipes.empty() || run_ns <= 0) {
        out += "  The run shows no FP8 scaling recipe to set against these predictions.\n";
        return out;
    }
    out += fmt::format("  Against the run: its step is {} (traced, like the reference's {}):\n",
        present::whatif_ms(std::llround(run_ns)), present::whatif_ms(whatif.bf16_step_ns));
    for (const std::string_view recipe : recipes)
        if (const Fp8Prediction* p = eager_prediction(whatif, recipe))
            out += fmt::format("    {} eager predicted {} ({}-{}): the run is {:+.1f}% from it\n", recipe,
                present::whatif_ms(p->step_ns), present::whatif_ms(p->step_low_ns), present::whatif_ms(p->step_high_ns),
                100 * (run_ns / static_cast<double>(p->step_ns) - 1));
    out += "  Both steps are traced, and the recording adds more to an FP8 step than to a BF16 one: judge the\n"
           "  prediction on untraced steps (docs/benchmarks.md \"FP8 what-if\").\n";
    return out;
}

nlohmann::ordered_json compare_fp8_whatif_json(
    const analyzer::CompareInput& input, const CompareResult& result, const Fp8WhatIf& whatif)
{
    nlohmann::ordered_json j = fp8_whatif_json(whatif);
    if (!whatif.not_applicable.empty())
        return j;
    const double run_ns = run_step_ns(input.run_report);
    j["run_step_ns"] = std::llround(run_ns);
    auto& against = j["run_against"] = nlohmann::ordered_json::array();
    for (const std::string_view recipe : run_recipes(result))
        if (const Fp8Prediction* p = eager_prediction(whatif, recipe); p && run_ns > 0)
            against.push_back({ { "recipe", recipe }, { "mode", "eager" }, { "predicted_step_ns", p->step_ns },
                { "run_vs_predicted", run_ns / static_cast<double>(p->step_ns) - 1 } });
    return j;
}

} // namespace fp8scope::cli
