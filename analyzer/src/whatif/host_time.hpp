// The host's own time per launched kernel in the analysed steps (docs/analysis.md "FP8 what-if"): what the host
// spends issuing the step's work, whether or not the GPU waits for it.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>

namespace fp8scope::analyzer::detail {

// Over the CUDA API calls (every thread, in start order) from the launch call of the analysed steps' first kernel
// to that of their last (and the silence after it, up to the next call): each silence between calls up to
// `stall_threshold_ns` (longer ones are host stalls, which FP8 does not change) plus each call's time up to the calls'
// median duration (what a call takes when it does not block: a launch into a full queue, a sync), with overlapping
// calls counted once; divided by the steps' kernels. 0 when no kernel of the steps has a launch call. A launch-bound
// step's value is its host span per kernel; a GPU-bound step's is smaller than the GPU's time per kernel, which is the
// only figure its GPU timeline gives.
double host_ns_per_kernel(const TraceModel& model, const StepSet& steps, int64_t stall_threshold_ns);

} // namespace fp8scope::analyzer::detail
