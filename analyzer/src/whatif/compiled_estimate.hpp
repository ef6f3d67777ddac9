// What torch.compile would make of an eager trace, for the FP8 what-if's compiled predictions (docs/analysis.md
// "FP8 what-if", compiled prediction), and which GEMM kernels an FP8 recipe converts when the trace has no GEMM
// statistics.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <cstdint>

namespace fp8scope::analyzer::detail {

// The eager trace's kernel time per analysed step by what Inductor makes of it (kept: GEMMs, communication, the
// optimizer; attention, kCompiledAttentionFactor as long; the rest fused to kInductorFusionFactor), and the compiled
// BF16 step it gives from `graphed_ns`, the step without launch overhead.
CompiledBaseline compiled_from_eager(const TraceModel& model, const StepSet& steps, double graphed_ns);

// The BF16 GEMM kernels in the analysed steps whose inputs are 16-bit: not FP32 or TF32 by their names (sgemm,
// xmma's f32f32 inputs, the FFMA path, nvjet's 's'-typed inputs), which FP8 recipes leave as they are.
int64_t sixteen_bit_gemm_kernels(const TraceModel& model, const StepSet& steps);

} // namespace fp8scope::analyzer::detail
