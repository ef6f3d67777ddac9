// `report --fp8-whatif` (docs/cli.md "FP8 what-if"): the analyzer's Fp8WhatIf as a text section and as the JSON
// object "fp8_whatif", and the GEMM table file `--gemm-table` reads (the format tests/gpu/tools/gemm_table.py writes).
#include "report/report_render.hpp"

#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/text_paint.hpp"

#include <fmt/format.h>

#include <fstream>

namespace fp8scope::cli {

using analyzer::Fp8Mode;
using analyzer::Fp8Prediction;
using analyzer::Fp8WhatIf;
using analyzer::GemmTable;
using analyzer::GemmTimeRow;
using analyzer::OperandNumerics;

namespace {

std::string ms(int64_t ns)
{
    return fmt::format("{:.2f} ms", static_cast<double>(ns) / 1e6);
}

std::string percent_of(double share)
{
    return fmt::format("{:.2f}%", 100 * share);
}

} // namespace

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
    out += wrapped(fmt::format("BF16 step {} over {} steps: {} kernels a step, {} of host time per kernel; {} GEMM "
                               "kernels a step, {} of GPU time; in FP8: {}",
                       ms(w.bf16_step_ns), w.steps, w.kernels_per_step, ms(w.host_ns_per_kernel),
                       w.gemm_kernels_per_step, ms(w.gemm_ns_per_step), w.fp8_gemm_source),
               kTextWidth - 2, "  ")
        + "\n";
    out += "  ";
    out += wrapped(fmt::format("GEMM times: the table measured on {}{}", w.table_gpu,
                       w.trace_gpu.empty() || w.trace_gpu == w.table_gpu
                           ? std::string()
                           : fmt::format(" (this trace ran on {}: measure its own with --gemm-table)", w.trace_gpu)),
               kTextWidth - 2, "  ")
        + "\n";
    out += fmt::format("  {:<11} {:<9} {:>10} {:>10} {:>10} {:>11} {:>10} {:>17}  {}\n", "recipe", "mode", "BF16 step",
        "GEMM BF16", "GEMM FP8", "bookkeeping", "FP8 step", "speed-up", "implementation");
    for (const Fp8Prediction& p : w.predictions) {
        if (!p.unavailable.empty()) {
            out += fmt::format("  {:<11} {:<9} {}\n", p.recipe, analyzer::fp8_mode_name(p.mode), p.unavailable);
            continue;
        }
        const int64_t bookkeeping = p.mode == Fp8Mode::Eager ? p.bookkeeping_host_ns : p.bookkeeping_gpu_ns;
        const std::string speedup = fmt::format("{:.2f}x ({:.2f}-{:.2f})", p.speedup,
            static_cast<double>(p.bf16_step_ns) / static_cast<double>(std::max<int64_t>(1, p.step_high_ns)),
            static_cast<double>(p.bf16_step_ns) / static_cast<double>(std::max<int64_t>(1, p.step_low_ns)));
        out += fmt::format("  {:<11} {:<9} {:>10} {:>10} {:>10} {:>11} {:>10} {:>17}  {}\n", p.recipe,
            analyzer::fp8_mode_name(p.mode), ms(p.bf16_step_ns), ms(p.gemm_bf16_ns), ms(p.gemm_fp8_ns), ms(bookkeeping),
            ms(p.step_ns), speedup, p.implementation);
    }
    out += "  Bookkeeping: eager, the host time the casts and scale updates add; compiled, their fused kernels' GPU "
           "time.\n";
    out += "  ";
    out += wrapped("Advice: " + w.advice, kTextWidth - 2, "    ") + "\n";
    if (!w.operands.empty()) {
        out += fmt::format("  Operands under per-tensor scales (share of values flushed to zero; delayed: scale from "
                           "the last {} samples' amax):\n",
            analyzer::kDelayedHistory);
        out += fmt::format("    {:>6} {:>10} {:>10} {:>14} {:>14}  {}\n", "steps", "E4M3 cur.", "E5M2 cur.",
            "delayed clip", "delayed flush", "operand");
        constexpr size_t kShown = 10;
        for (size_t i = 0; i < w.operands.size() && i < kShown; ++i) {
            const OperandNumerics& o = w.operands[i];
            out += fmt::format("    {:>6} {:>10} {:>10} {:>14} {:>14}  {}\n", o.steps, percent_of(o.e4m3_flushed),
                percent_of(o.e5m2_flushed), o.delayed_clipped_max ? percent_of(*o.delayed_clipped_max) : "-",
                o.delayed_flushed ? percent_of(*o.delayed_flushed) : "-", printable(o.label));
        }
        if (w.operands.size() > kShown)
            out += fmt::format(
                "    ... {} more operands (--format json lists every one)\n", w.operands.size() - kShown);
        out += w.hurt.empty()
            ? fmt::format("  No operand loses {} or more of its values to a per-tensor E4M3 scale.\n",
                percent_of(analyzer::kHurtFlushShare))
            : wrapped(paint.warning(fmt::format("  {} operand(s) lose at least {} of their values to a per-tensor E4M3 "
                                                "scale: a finer recipe (rowwise, blockwise) keeps them; the trace "
                                                "holds no per-row figures to say how much",
                          w.hurt.size(), percent_of(analyzer::kHurtFlushShare))),
                  kTextWidth, "    ")
                + "\n";
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
            e["step_ns"] = p.step_ns;
            e["step_low_ns"] = p.step_low_ns;
            e["step_high_ns"] = p.step_high_ns;
            e["speedup"] = p.speedup;
        }
        predictions.push_back(std::move(e));
    }
    if (w.best)
        j["best"] = { { "recipe", w.predictions[*w.best].recipe },
            { "mode", analyzer::fp8_mode_name(w.predictions[*w.best].mode) } };
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

std::optional<GemmTable> parse_gemm_table(const std::string& text, std::string& error)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        error = "not a JSON object";
        return std::nullopt;
    }
    // A field of the wrong type reads as absent (json::value() would throw on it).
    const auto text_of = [&](const char* key) {
        const auto v = j.find(key);
        return v != j.end() && v->is_string() ? v->get<std::string>() : std::string();
    };
    if (text_of("format") != "fp8scope.gemm_table/1") {
        error = "not an fp8scope.gemm_table/1 document (its \"format\")";
        return std::nullopt;
    }
    const auto rows = j.find("rows");
    if (rows == j.end() || !rows->is_array() || rows->empty()) {
        error = "no \"rows\" array, or an empty one";
        return std::nullopt;
    }
    GemmTable table;
    table.gpu = text_of("gpu");
    table.date = text_of("date");
    table.method = text_of("method");
    auto positive = [](const nlohmann::json& row, const char* key) -> std::optional<int64_t> {
        const auto v = row.find(key);
        if (v == row.end() || !v->is_number_integer() || v->get<int64_t>() <= 0)
            return std::nullopt;
        return v->get<int64_t>();
    };
    for (size_t i = 0; i < rows->size(); ++i) {
        const nlohmann::json& row = (*rows)[i];
        GemmTimeRow r;
        const auto m = row.is_object() ? positive(row, "m") : std::nullopt;
        const auto n = row.is_object() ? positive(row, "n") : std::nullopt;
        const auto k = row.is_object() ? positive(row, "k") : std::nullopt;
        const auto bf16 = row.is_object() ? positive(row, "bf16_ns") : std::nullopt;
        const auto fp8 = row.is_object() ? positive(row, "fp8_tensorwise_ns") : std::nullopt;
        if (!m || !n || !k || !bf16 || !fp8) {
            error = fmt::format("row {}: needs positive integers m, n, k, bf16_ns and fp8_tensorwise_ns", i);
            return std::nullopt;
        }
        r.m = *m;
        r.n = *n;
        r.k = *k;
        r.bf16_ns = *bf16;
        r.fp8_tensorwise_ns = *fp8;
        r.fp8_rowwise_ns = positive(row, "fp8_rowwise_ns");
        table.rows.push_back(r);
    }
    return table;
}

std::optional<GemmTable> read_gemm_table_file(const std::string& path, std::string& error)
{
    constexpr size_t kMaxBytes = 16u << 20; // a table of every shape a job could have is far smaller
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot be read";
        return std::nullopt;
    }
    std::string text;
    for (char buffer[1 << 16]; in.read(buffer, sizeof buffer) || in.gcount() > 0;) {
        text.append(buffer, static_cast<size_t>(in.gcount()));
        if (text.size() > kMaxBytes) {
            error = fmt::format("larger than {} MiB", kMaxBytes >> 20);
            return std::nullopt;
        }
    }
    if (in.bad()) {
        error = "cannot be read";
        return std::nullopt;
    }
    return parse_gemm_table(text, error);
}

} // namespace fp8scope::cli
