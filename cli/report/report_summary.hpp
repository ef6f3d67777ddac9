// The summary that opens `fp8scope report` in text and Markdown (docs/cli.md "What every format shows", Summary first):
// at most nine lines a user reads first, each picked out of the analyzer's Report: a broken numerics verdict's fix
// (numerics before speed), the step and its bubbles, the top cause, the first thing to fix with its saving ("speed
// fix" after a broken verdict's), FP8's share and price, the numerics verdict of the FP8 tensors, tensor health's
// worst finding, NaN scalars and what is wrong with the recording (both only when there is something). Selection and
// wording only; the details follow in each format.
#pragma once

#include "report/report_tensor.hpp"

#include "fp8scope/analyzer/report/report.hpp"

#include <string>
#include <vector>

namespace fp8scope::cli {

struct SummaryLine {
    std::string
        label; // "first fix", "step", "top cause", "speed fix", "FP8", "numerics", "tensors", "recording", "NaN"
    std::string text; // trace text escaped with the format's escape
    bool warning = false; // needs attention: a non-finite value, an unfinished or lossy recording, a NaN scalar
};

std::vector<SummaryLine> report_summary(
    const analyzer::TraceModel& model, const analyzer::Report& report, Escape escape);

// Tensor health's worst finding, in this order: the first NaN/Inf, a scale of FLT_MAX, the most saturation, a stale
// scale, the most underflow, an amax of 0; else that none was seen in so many samples; "no tensor statistics" when
// the trace has none. `warning` is set for the first two and for saturation.
SummaryLine worst_tensor_finding(const analyzer::TensorHealth& health, Escape escape);

} // namespace fp8scope::cli
