// What torch.compile would make of an eager trace, for the FP8 what-if's compiled predictions (docs/analysis.md
// "FP8 what-if", compiled prediction).
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

} // namespace fp8scope::analyzer::detail
