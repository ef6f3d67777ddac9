// The collector's own GPU work, kept apart from the job's (docs/analysis.md "The collector's own GPU work").
//
// The collector marks the CUDA calls it makes itself (tensor statistics kernels, the memset of their scratch, its
// allocations) in FP8SCOPE_COLLECTOR_WORK by correlation id. At load, every kernel, copy, memset and API call with
// such an id, and every kernel named in the `fp8scope::probes` namespace (traces from before the table existed),
// is moved out of the activity tables into TraceModel::collector_work. Busy time, bubbles, kernel counts and
// classes, launch statistics and step detection therefore never see it; the report shows it as one line.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <optional>

namespace fp8scope::analyzer {

// Moves the collector's own activities out of the model's tables (the loader calls it once, after sorting).
void separate_collector_work(TraceModel& model);

struct CollectorWorkSummary {
    int64_t kernels = 0, memcpys = 0, memsets = 0; // in the trace, all devices
    int64_t api_calls = 0; // the collector's own CUDA calls left out of the API table
    // Inside the analysed steps, on the report's device (or all devices): the union of the collector's activity
    // intervals per device, clipped to each step, summed over steps and devices.
    int64_t time_in_steps_ns = 0;
    int64_t step_time_ns = 0; // the analysed steps' length, summed over the devices counted
    int64_t steps = 0;
    double time_per_step_ns() const { return steps > 0 ? double(time_in_steps_ns) / double(steps) : 0.0; }
    // Collector GPU time / step time; 0 without steps.
    double share() const { return step_time_ns > 0 ? double(time_in_steps_ns) / double(step_time_ns) : 0.0; }
};

CollectorWorkSummary summarize_collector_work(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device = std::nullopt);

} // namespace fp8scope::analyzer
