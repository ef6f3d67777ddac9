// A step on two clocks (docs/analysis.md "Steps", issue 42): a step marker, an NVTX range's edge and an optimizer
// step's end are host times, when the launching thread got there; the device may still be running work launched
// long before (a GPU-bound loop runs steps ahead of the GPU). The step's device interval begins when the device is
// done with the work launched before the host time, but no later than the first activity launched after it, and
// never before the host time itself (a device idle at the marker is idle in the step that marker begins).
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <vector>

namespace fp8scope::analyzer::detail {

// For each host time t (any order): max(t, min(the latest end of the activities launched before t, the earliest
// start of those launched at or after t)); t itself when nothing was launched on one side. Non-decreasing in t. An
// activity without a launch call counts as launched at its start. One pass over the activities, O(N log M) time and
// O(M) memory for M host times: a 10 M-kernel trace with 1,000 markers holds nothing per activity.
std::vector<int64_t> device_times(const TraceModel& model, const std::vector<int64_t>& host_ns);

} // namespace fp8scope::analyzer::detail
