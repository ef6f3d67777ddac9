// Host-blocking CUDA calls in a trace (spec "Cause of a bubble", rule 1; docs/analysis.md "Syncs").
#pragma once

#include "fp8scope/analyzer/analysis_types.hpp"
#include "fp8scope/analyzer/trace_model.hpp"

#include <vector>

namespace fp8scope::analyzer {

// Every host-blocking call of the trace, in order of start time.
std::vector<HostBlockingCall> find_host_blocking_calls(const TraceModel& model);

} // namespace fp8scope::analyzer
