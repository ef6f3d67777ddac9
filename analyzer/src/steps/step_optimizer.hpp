// Steps from the optimizer (docs/analysis.md "Steps", issue 42): `fp8scope record` hooks PyTorch's optimizers, and
// every optimizer step writes a marker when it ends (FP8SCOPE_STEP_MARKER, source optimizer). A training step ends
// with its update, so these are exact step ends on the host's clock, with no code in the job. Where the next step
// begins is not marked: after the update a loop may still log, read its loss (`.item()`) and load data before its
// first forward launch. It begins at the launch call that follows the loop thread's longest silence between the
// update's end and the next GEMM launch: the loop's top, where data loading and sleeps sit.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <optional>

namespace fp8scope::analyzer::detail {

// nullopt when the trace has no optimizer markers. The steps' device intervals come from their host times
// (step_clocks.hpp).
std::optional<StepSet> steps_from_optimizer(const TraceModel& model);

} // namespace fp8scope::analyzer::detail
