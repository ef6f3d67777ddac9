#include "fp8scope/present/whatif_wording.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fp8scope::present {

using analyzer::Fp8Mode;
using analyzer::Fp8Prediction;
using analyzer::Fp8WhatIf;
using analyzer::OperandNumerics;

std::string whatif_ms(int64_t ns)
{
    // A few rounded nanoseconds below zero read as 0.00 ms, not -0.00 ms.
    const double ms = static_cast<double>(ns) / 1e6;
    return fmt::format("{:.2f} ms", std::abs(ms) < 0.005 ? 0.0 : ms);
}

std::string whatif_percent(double share)
{
    return fmt::format("{:.2f}%", 100 * share);
}

std::string whatif_bf16_step_sentence(const Fp8WhatIf& w)
{
    return fmt::format("BF16 step {} over {} steps: {} kernels a step, {} of host time per kernel; {} GEMM kernels a "
                       "step, {} of GPU time; in FP8: {}",
        whatif_ms(w.bf16_step_ns), w.steps, w.kernels_per_step, whatif_ms(w.host_ns_per_kernel),
        w.gemm_kernels_per_step, whatif_ms(w.gemm_ns_per_step), w.fp8_gemm_source);
}

std::string whatif_compiled_sentence(const Fp8WhatIf& w)
{
    const analyzer::CompiledBaseline& c = w.compiled;
    if (!c.from_eager)
        return fmt::format(
            "Compiled BF16 step {}: the trace is compiled or CUDA-graphed already", whatif_ms(c.step_ns));
    const std::string attention = c.attention_ns > 0 ? fmt::format(", and its {} of attention {:.1f}x as long",
                                      whatif_ms(c.attention_ns), analyzer::kCompiledAttentionFactor)
                                                     : std::string();
    return fmt::format("Compiled BF16 step {}, estimated from this eager trace: without launch overhead, with its {} "
                       "of element-wise, reduction, normalization and copy work ({} kernels a step) fused to {:.2f} "
                       "of that time{}, as Inductor runs them; GEMMs, communication and optimizer ({}) as they are. "
                       "Not foreseen: attention with dropout, which Inductor runs unfused, and a compiled step the "
                       "host holds up",
        whatif_ms(c.step_ns), whatif_ms(c.fused_ns), c.fused_kernels, analyzer::kInductorFusionFactor, attention,
        whatif_ms(c.kept_ns));
}

std::string whatif_gemm_table_sentence(const Fp8WhatIf& w)
{
    return fmt::format("GEMM times: the table measured on {}{}", w.table_gpu,
        w.trace_gpu.empty() || w.trace_gpu == w.table_gpu
            ? std::string()
            : fmt::format(" (this trace ran on {}: measure its own with --gemm-table)", w.trace_gpu));
}

std::array<std::string, kWhatIfColumnCount> WhatIfPredictionCells::cells() const
{
    return { recipe, mode, bf16_step, gemm_bf16, gemm_fp8, bookkeeping, rest, fp8_step, speedup, vs_measured,
        implementation };
}

WhatIfPredictionCells whatif_prediction_cells(const Fp8Prediction& p)
{
    WhatIfPredictionCells c;
    c.recipe = p.recipe;
    c.mode = analyzer::fp8_mode_name(p.mode);
    c.implementation = p.implementation;
    if (!p.unavailable.empty()) {
        c.unavailable = p.unavailable;
        return c;
    }
    const auto ratio_to = [&](int64_t step_ns) {
        return static_cast<double>(p.bf16_step_ns) / static_cast<double>(std::max<int64_t>(1, step_ns));
    };
    c.bf16_step = whatif_ms(p.bf16_step_ns);
    c.gemm_bf16 = whatif_ms(p.gemm_bf16_ns);
    c.gemm_fp8 = whatif_ms(p.gemm_fp8_ns);
    c.bookkeeping = p.bookkeeping_known
        ? whatif_ms(p.mode == Fp8Mode::Eager ? p.bookkeeping_host_ns : p.bookkeeping_gpu_ns)
        : "unknown";
    c.rest = whatif_ms(p.rest_ns);
    c.fp8_step = whatif_ms(p.step_ns);
    c.vs_measured = fmt::format("{:.2f}x", p.speedup_vs_measured);
    c.fp8_step_interval = fmt::format(
        "{:.2f}-{:.2f} ms", static_cast<double>(p.step_low_ns) / 1e6, static_cast<double>(p.step_high_ns) / 1e6);
    // The slowest step bounds the speed-up from below, the fastest from above.
    c.speedup = fmt::format("{:.2f}x ({:.2f}-{:.2f})", p.speedup, ratio_to(p.step_high_ns), ratio_to(p.step_low_ns));
    return c;
}

std::string_view whatif_bookkeeping_note()
{
    return "BF16 step - (GEMM BF16 - GEMM FP8) + bookkeeping + rest = FP8 step. Bookkeeping: eager, the host time the "
           "casts and scale updates add; compiled, their fused kernels' GPU time (unknown without GEMM statistics: "
           "no operand sizes). Rest: eager, what the host or the GPU deciding the step leaves of it. Speed-up: "
           "against the BF16 step of its mode (compiled: the estimate above); vs measured: against this trace's "
           "BF16 step.";
}

std::string whatif_advice_sentence(const Fp8WhatIf& w)
{
    return "Advice: " + w.advice;
}

std::string whatif_operands_title()
{
    return fmt::format(
        "Operands under per-tensor scales (share of values flushed to zero; delayed: scale from the last "
        "{} samples' amax):",
        analyzer::kDelayedHistory);
}

std::array<std::string, kWhatIfOperandColumnCount> whatif_operand_cells(const OperandNumerics& o)
{
    return { std::to_string(o.steps), whatif_percent(o.e4m3_flushed), whatif_percent(o.e5m2_flushed),
        o.delayed_clipped_max ? whatif_percent(*o.delayed_clipped_max) : "-",
        o.delayed_flushed ? whatif_percent(*o.delayed_flushed) : "-", o.label };
}

std::string whatif_hurt_sentence(const Fp8WhatIf& w)
{
    if (w.hurt.empty())
        return fmt::format("No operand loses {} or more of its values to a per-tensor E4M3 scale.",
            whatif_percent(analyzer::kHurtFlushShare));
    return fmt::format("{} operand(s) lose at least {} of their values to a per-tensor E4M3 scale: a finer recipe "
                       "(rowwise, blockwise) keeps them; the trace holds no per-row figures to say how much",
        w.hurt.size(), whatif_percent(analyzer::kHurtFlushShare));
}

} // namespace fp8scope::present
