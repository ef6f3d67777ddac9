// How the FP8 what-if (docs/analysis.md "FP8 what-if") is worded, for `report --fp8-whatif`'s text section
// (cli/report/report_fp8_whatif.cpp) and the viewer's dashboard section (gui/widgets/dashboard_view.cpp): the
// sentences about the BF16 step and the GEMM table, the prediction table's titles and cells, the bookkeeping note,
// the operands' titles and cells, and the sentence about the operands per-tensor scaling hurts. Wording only: every
// figure, the pick and the advice are the analyzer's (fp8_whatif.hpp). Strings from the trace (operand labels) are
// returned as they are; each presenter escapes them for its output.
#pragma once

#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::present {

// "12.34 ms": the what-if's durations, in milliseconds with two decimals.
std::string whatif_ms(int64_t ns);
// "1.23%": a share in percent with two decimals.
std::string whatif_percent(double share);

// "BF16 step 12.34 ms over 28 steps: 1500 kernels a step, 0.02 ms of host time per kernel; 27 GEMM kernels a step,
// 3.10 ms of GPU time; in FP8: <how the FP8 GEMMs were counted>".
std::string whatif_bf16_step_sentence(const analyzer::Fp8WhatIf& whatif);
// The compiled BF16 step the compiled predictions start from, and how it was estimated.
std::string whatif_compiled_sentence(const analyzer::Fp8WhatIf& whatif);
// "GEMM times: the table measured on NVIDIA H100 80GB HBM3", with " (this trace ran on X: measure its own with
// --gemm-table)" when the trace names another GPU.
std::string whatif_gemm_table_sentence(const analyzer::Fp8WhatIf& whatif);

// The prediction table's columns, in the text report's order.
// BF16 step - (GEMM BF16 - GEMM FP8) + bookkeeping + rest = FP8 step; "speed-up" is against the BF16 step of its
// mode (compiled: the compiled estimate), "vs measured" against the trace's own BF16 step.
enum class WhatIfColumn {
    Recipe,
    Mode,
    Bf16Step,
    GemmBf16,
    GemmFp8,
    Bookkeeping,
    Rest,
    Fp8Step,
    Speedup,
    VsMeasured,
    Implementation
};
inline constexpr size_t kWhatIfColumnCount = 11;
inline constexpr std::array<std::string_view, kWhatIfColumnCount> kWhatIfColumnTitles { "recipe", "mode", "BF16 step",
    "GEMM BF16", "GEMM FP8", "bookkeeping", "rest", "FP8 step", "speed-up", "vs measured", "implementation" };

// One prediction as the table shows it. An unavailable one has its recipe, mode and implementation, and `unavailable`
// (the analyzer's reason) instead of figures.
struct WhatIfPredictionCells {
    std::string recipe, mode, implementation;
    std::string unavailable; // non-empty: no figures
    std::string bf16_step, gemm_bf16, gemm_fp8;
    std::string bookkeeping; // eager: the host time added; compiled: the fused kernels' GPU time ("unknown" without
                             // GEMM statistics)
    std::string rest; // what the other columns leave of the FP8 step
    std::string fp8_step; // "10.20 ms"
    std::string fp8_step_interval; // "9.80-11.00 ms"
    std::string speedup; // "1.21x (1.12-1.26)": the median, then the interval
    std::string vs_measured; // "1.85x": against the trace's measured BF16 step
    // The cells in WhatIfColumn order (the figures empty when unavailable).
    std::array<std::string, kWhatIfColumnCount> cells() const;
};
WhatIfPredictionCells whatif_prediction_cells(const analyzer::Fp8Prediction& prediction);
// What the bookkeeping column holds, in either mode.
std::string_view whatif_bookkeeping_note();
// "Advice: " and the analyzer's sentence.
std::string whatif_advice_sentence(const analyzer::Fp8WhatIf& whatif);

// The operands' table: its title sentence, its columns, and one operand's cells.
std::string whatif_operands_title();
inline constexpr size_t kWhatIfOperandColumnCount = 6;
inline constexpr std::array<std::string_view, kWhatIfOperandColumnCount> kWhatIfOperandColumnTitles { "steps",
    "E4M3 cur.", "E5M2 cur.", "delayed clip", "delayed flush", "operand" };
// Operands the text report lists (JSON lists every one; so does the viewer, in a scrolled table).
inline constexpr size_t kWhatIfOperandsListed = 10;
std::array<std::string, kWhatIfOperandColumnCount> whatif_operand_cells(const analyzer::OperandNumerics& operand);
// "No operand loses 1.00% or more of its values to a per-tensor E4M3 scale." or "2 operand(s) lose at least 1.00% of
// their values to a per-tensor E4M3 scale: a finer recipe (rowwise, blockwise) keeps them; the trace holds no
// per-row figures to say how much".
std::string whatif_hurt_sentence(const analyzer::Fp8WhatIf& whatif);

} // namespace fp8scope::present
