// The numerics verdict of one trace in plain words (docs/analysis.md "Numerics verdict"), for every format of
// `fp8scope report` and for the viewer: the verdict, what happened to which tensor from which step, and what to do
// about it. The verdict and its figures are the analyzer's (numerics.hpp); tensor names come from the trace's NVTX
// names, so every sentence that holds one takes the format's escape.
#pragma once

#include "fp8scope/present/tensor_wording.hpp"

#include "fp8scope/analyzer/numerics/numerics.hpp"

#include <string>

namespace fp8scope::present {

// "broken", "at risk", "healthy", "no FP8 statistics"
std::string numerics_verdict_word(analyzer::NumericsVerdict verdict);
// The tensor in words: "blocks.2.fc2's input", "blocks.1.fc1's output gradient", "blocks.0.qkv · B", or a zero-code
// GEMM operand's label with its place.
std::string finding_tensor(const analyzer::NumericsFinding& finding, Escape escape);
// What happened, from which step: "blocks.2.fc2's input: 99.3% of its values clip at step 20".
std::string finding_sentence(const analyzer::NumericsFinding& finding, Escape escape);
// What to do about it: "use current scaling for it, or a shorter amax history".
std::string finding_fix(const analyzer::NumericsFinding& finding);
// The finding and its fix: "blocks.2.fc2's input: 99.3% of its values clip at step 20 — use current scaling for it,
// or a shorter amax history".
std::string finding_with_fix(const analyzer::NumericsFinding& finding, Escape escape);
// "read by forward GEMM 7 of 24 sampled, backward GEMM 6 of 48 sampled"; "" without code sites.
std::string read_by_text(const analyzer::NumericsFinding& finding, Escape escape);
// The summary's line: "broken: <lead finding> (3 tensors: 2 broken, 1 at risk)", "at risk: ...", "healthy: 24 FP8
// tensors over 10 sampled steps: none clips, flushes, outgrows its scale or holds NaN/Inf", or why there is no verdict.
std::string numerics_summary(const analyzer::NumericsJudgement& judgement, Escape escape);
// The rules' thresholds: "broken: NaN/Inf, 1% of a tensor's values clipped or 25% flushed in a step; at risk: ...".
std::string numerics_thresholds_sentence();

} // namespace fp8scope::present
