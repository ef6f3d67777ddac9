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

class HostToDevice {
public:
    explicit HostToDevice(const TraceModel& model);

    // max(host_ns, min(latest end of the activities launched before host_ns, earliest start of those launched at or
    // after it)); host_ns when nothing was launched on one side. Non-decreasing in host_ns.
    int64_t device_time(int64_t host_ns) const;

private:
    std::vector<int64_t> launch_ns_; // every activity's launch call start (its own start without one), ascending
    std::vector<int64_t> end_before_; // prefix max of the activities' ends, in launch order
    std::vector<int64_t> start_after_; // suffix min of the activities' starts, in launch order
};

} // namespace fp8scope::analyzer::detail
