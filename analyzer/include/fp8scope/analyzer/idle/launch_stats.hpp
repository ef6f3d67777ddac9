// Launch statistics (docs/analysis.md "Launch statistics"): launch delay, queue depth per stream, short kernels,
// kernels and launches per step. A kernel's launch call is the API call with its correlation id (the runtime call when
// both a runtime and a driver call carry it).
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <vector>

namespace fp8scope::analyzer {

// Nearest-rank percentiles: the p-quantile is the value at position ceil(p * count) - 1 of the sorted values,
// so every figure is a value that occurred. All zero when count is 0.
struct DelayDistribution {
    int64_t count = 0;
    int64_t min_ns = 0;
    int64_t median_ns = 0;
    int64_t p90_ns = 0;
    int64_t p99_ns = 0;
    int64_t max_ns = 0;
};

struct LaunchStepStats {
    int64_t step_index = 0; // StepInterval::index
    int64_t step_ns = 0;
    int64_t kernels = 0; // kernels whose start is in the step
    int64_t launches = 0; // API calls that launched at least one kernel, by the call's start (a graph launch is one)
    double launches_per_s = 0; // launches / step length in seconds
    int64_t timed_kernels = 0; // kernels of the step with a launch call, not from a graph: the delay/short population
    int64_t short_kernels = 0; // of those, kernels that ran for less time than their launch call took
};

// Queue depth of one stream: the number of kernels launched on it and not yet started. It rises by 1 when the
// launch call ends (or at the kernel's start, if that is earlier) and falls by 1 when the kernel starts.
struct StreamQueueDepth {
    uint32_t device_id = 0;
    uint32_t stream_id = 0;
    int64_t max_depth = 0; // over all steps
    double mean_depth = 0; // time-weighted over all steps together
    std::vector<int64_t> max_per_step; // one per StepSet::steps entry
    std::vector<double> mean_per_step;
};

struct LaunchStats {
    // kernel start - launch-call end over the timed kernels of all steps (can be negative: a kernel may start
    // before its launch call returns).
    DelayDistribution launch_delay;
    int64_t kernels = 0; // kernels starting in a step
    int64_t timed_kernels = 0; // of those, with a launch call and not from a graph
    int64_t graph_kernels = 0; // of those, launched from a CUDA graph (their call is the graph launch)
    int64_t unmatched_kernels = 0; // of those, with no API call of the same correlation id
    int64_t short_kernels = 0;
    double short_share = 0; // short_kernels / timed_kernels
    int64_t launches = 0;
    double launches_per_s = 0; // launches / total step time in seconds
    int64_t step_ns = 0; // sum of the step lengths
    std::vector<LaunchStepStats> steps; // one per StepSet::steps entry
    std::vector<StreamQueueDepth> streams; // every (device, stream) with a launched kernel, by device then stream
};

// O((kernels + API calls) log n): correlation join, one forward walk per table, one sweep per stream.
LaunchStats compute_launch_stats(const TraceModel& model, const StepSet& steps);

} // namespace fp8scope::analyzer
