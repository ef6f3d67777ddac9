// `report --fp8-whatif` (docs/cli.md "FP8 what-if"): the analyzer's Fp8WhatIf as a text section and as the JSON
// object "fp8_whatif".
#include "report/report_render.hpp"

#include "fp8scope/present/units.hpp"
#include "fp8scope/present/whatif_wording.hpp"
#include "output/present_names.hpp"
#include "output/text_paint.hpp"

#include <fmt/format.h>

namespace fp8scope::cli {

using analyzer::Fp8Prediction;
using analyzer::Fp8WhatIf;
using analyzer::OperandNumerics;

std::string render_fp8_whatif_text(const Fp8WhatIf& w, bool color)
{
    const Paint paint(color);
    std::string out;
    heading_line(out, paint, "FP8 what-if (docs/analysis.md \"FP8 what-if\")");
    if (!w.not_applicable.empty()) {
        out += "  ";
        out += wrapped(w.not_applicable, kTextWidth - 2, "  ") + "\n";
        return out;
    }
    out += "  ";
    out += wrapped(whatif_bf16_step_sentence(w), kTextWidth - 2, "  ") + "\n";
    out += "  ";
    out += wrapped(whatif_gemm_table_sentence(w), kTextWidth - 2, "  ") + "\n";
    out += "  ";
    out += wrapped(whatif_compiled_sentence(w), kTextWidth - 2, "  ") + "\n";
    constexpr std::string_view kRow = "  {:<11} {:<9} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10} {:>17} {:>11}  {}\n";
    const auto& title = kWhatIfColumnTitles;
    out += fmt::format(kRow, title[0], title[1], title[2], title[3], title[4], title[5], title[6], title[7], title[8],
        title[9], title[10]);
    for (const Fp8Prediction& p : w.predictions) {
        const WhatIfPredictionCells c = whatif_prediction_cells(p);
        if (!c.unavailable.empty()) {
            out += fmt::format("  {:<11} {:<9} {}\n", c.recipe, c.mode, c.unavailable);
            continue;
        }
        const auto cell = c.cells();
        out += fmt::format(
            kRow, cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7], cell[8], cell[9], cell[10]);
    }
    out += "  ";
    out += wrapped(std::string(whatif_bookkeeping_note()), kTextWidth - 2, "  ");
    out += "\n";
    out += "  ";
    out += wrapped(whatif_advice_sentence(w), kTextWidth - 2, "    ") + "\n";
    if (!w.operands.empty()) {
        out += "  " + whatif_operands_title() + "\n";
        constexpr std::string_view kOperandRow = "    {:>6} {:>10} {:>10} {:>14} {:>14}  {}\n";
        const auto& head = kWhatIfOperandColumnTitles;
        out += fmt::format(kOperandRow, head[0], head[1], head[2], head[3], head[4], head[5]);
        for (size_t i = 0; i < w.operands.size() && i < kWhatIfOperandsListed; ++i) {
            const auto cell = whatif_operand_cells(w.operands[i]);
            out += fmt::format(kOperandRow, cell[0], cell[1], cell[2], cell[3], cell[4], printable(cell[5]));
        }
        if (w.operands.size() > kWhatIfOperandsListed)
            out += fmt::format("    ... {} more operands (--format json lists every one)\n",
                w.operands.size() - kWhatIfOperandsListed);
        out += w.hurt.empty() ? "  " + whatif_hurt_sentence(w) + "\n"
                              : wrapped(paint.warning("  " + whatif_hurt_sentence(w)), kTextWidth, "    ") + "\n";
    }
    return out;
}

nlohmann::ordered_json fp8_whatif_json(const Fp8WhatIf& w)
{
    nlohmann::ordered_json j;
    if (!w.not_applicable.empty()) {
        j["not_applicable"] = w.not_applicable;
        return j;
    }
    j["table_gpu"] = w.table_gpu;
    j["trace_gpu"] = w.trace_gpu;
    j["steps"] = w.steps;
    j["bf16_step_ns"] = w.bf16_step_ns;
    j["kernels_per_step"] = w.kernels_per_step;
    j["host_ns_per_kernel"] = w.host_ns_per_kernel;
    j["gemm_kernels_per_step"] = w.gemm_kernels_per_step;
    j["gemm_ns_per_step"] = w.gemm_ns_per_step;
    j["fp8_gemms_per_step"] = w.fp8_gemms_per_step;
    j["fp8_gemm_source"] = w.fp8_gemm_source;
    j["operand_elements_per_step"] = w.operand_elements_per_step;
    j["compiled_baseline"] = { { "from_eager", w.compiled.from_eager }, { "step_ns", w.compiled.step_ns },
        { "kept_ns", w.compiled.kept_ns }, { "attention_ns", w.compiled.attention_ns },
        { "fused_ns", w.compiled.fused_ns }, { "fused_kernels", w.compiled.fused_kernels } };
    auto& predictions = j["predictions"] = nlohmann::ordered_json::array();
    for (const Fp8Prediction& p : w.predictions) {
        nlohmann::ordered_json e;
        e["recipe"] = p.recipe;
        e["mode"] = analyzer::fp8_mode_name(p.mode);
        e["implementation"] = p.implementation;
        if (!p.unavailable.empty()) {
            e["unavailable"] = p.unavailable;
        } else {
            e["bf16_step_ns"] = p.bf16_step_ns;
            e["gemm_bf16_ns"] = p.gemm_bf16_ns;
            e["gemm_fp8_ns"] = p.gemm_fp8_ns;
            e["bookkeeping_host_ns"] = p.bookkeeping_host_ns;
            e["bookkeeping_gpu_ns"] = p.bookkeeping_gpu_ns;
            e["bookkeeping_known"] = p.bookkeeping_known;
            e["rest_ns"] = p.rest_ns;
            e["step_ns"] = p.step_ns;
            e["step_low_ns"] = p.step_low_ns;
            e["step_high_ns"] = p.step_high_ns;
            e["speedup"] = p.speedup;
            e["speedup_vs_measured"] = p.speedup_vs_measured;
        }
        predictions.push_back(std::move(e));
    }
    if (w.best)
        j["best"] = { { "recipe", w.predictions[*w.best].recipe },
            { "mode", analyzer::fp8_mode_name(w.predictions[*w.best].mode) } };
    auto& ties = j["ties"] = nlohmann::ordered_json::array();
    for (const size_t i : w.ties)
        ties.push_back(
            { { "recipe", w.predictions[i].recipe }, { "mode", analyzer::fp8_mode_name(w.predictions[i].mode) } });
    j["advice"] = w.advice;
    auto& operands = j["operands"] = nlohmann::ordered_json::array();
    for (const OperandNumerics& o : w.operands) {
        nlohmann::ordered_json e;
        e["site_id"] = o.site_id;
        e["label"] = o.label;
        e["steps"] = o.steps;
        e["e4m3_flushed"] = o.e4m3_flushed;
        e["e4m3_flushed_max"] = o.e4m3_flushed_max;
        e["e5m2_flushed"] = o.e5m2_flushed;
        e["e5m2_flushed_max"] = o.e5m2_flushed_max;
        e["delayed_clipped_max"] = o.delayed_clipped_max ? nlohmann::ordered_json(*o.delayed_clipped_max) : nullptr;
        e["delayed_flushed"] = o.delayed_flushed ? nlohmann::ordered_json(*o.delayed_flushed) : nullptr;
        operands.push_back(std::move(e));
    }
    j["hurt"] = w.hurt;
    return j;
}

} // namespace fp8scope::cli
