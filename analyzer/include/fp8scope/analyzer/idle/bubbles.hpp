// Busy time, bubbles and their causes per device and step (docs/analysis.md "Busy time and bubbles",
// docs/analysis.md "Causes of bubbles").
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fp8scope::analyzer {

inline constexpr size_t kBubbleCauseCount = 5; // BubbleCause values, the index of BubbleTotals::cause_ns
// The gap size distribution's buckets: < 10 us, 10-100 us, 100 us-1 ms, >= 1 ms.
inline constexpr std::array<int64_t, 3> kGapBucketBoundsNs { 10'000, 100'000, 1'000'000 };
inline constexpr size_t kGapBucketCount = kGapBucketBoundsNs.size() + 1;
// Rule 3: a gap is `host` when the launching thread made no CUDA call for a stretch longer than its stall threshold,
// max(kHostStallMinNs, kHostStallMedianMultiple x the median silence between its CUDA calls); otherwise the thread
// kept issuing work (framework dispatch and launch calls) and the gap is `launch`. PyTorch eager spends ~5-30 us
// per op outside CUDA calls, so a fixed share of time inside calls cannot tell the two apart; a data loader or
// Python stall is silent for milliseconds.
inline constexpr int64_t kHostStallMinNs = 100'000;
inline constexpr int64_t kHostStallMedianMultiple = 20;
// A kernel-to-kernel gap inside a CUDA graph replay when the trace has too few graph kernels to measure it: the
// median measured on an H100 (2026-11-24, three graphs of 33 to 2,100 kernels: 256, 416 and 417 ns).
inline constexpr int64_t kDefaultGraphKernelGapNs = 300;
inline constexpr int64_t kMinGraphGapSamples = 100;
// Rule 4 (multi-rank runs): a gap is `comm` when communication kernels cover more than this share of it.
inline constexpr double kCommShare = 0.5;
// ε is measured on launches onto an idle device (BubbleAnalysis::epsilon_ns) when the trace has at least this many;
// with fewer, on every launched activity. Below 20, a few odd launches (a first launch that loads its module, a
// clock step) move the median; a trace of a few steps of a small loop has 20.
inline constexpr int64_t kMinIdleLaunchSamples = 20;

struct BubbleTotals {
    int64_t step_ns = 0; // step time; in sums over devices or steps, the sum of each device's step time
    int64_t busy_ns = 0; // union of kernels, copies and memsets, clipped to the step
    int64_t idle_ns = 0; // step_ns - busy_ns, the sum of the bubbles
    double bubble_ratio = 0; // idle_ns / step_ns (0 when step_ns is 0)
    std::array<int64_t, kBubbleCauseCount> cause_ns {}; // idle time per BubbleCause
    std::array<int64_t, kGapBucketCount> gap_counts {}; // bubbles per size bucket (kGapBucketBoundsNs)
    int64_t bubble_count = 0;
    // The part of the `launch` idle a CUDA graph would remove: each launch bubble shrinks to the graph's
    // kernel-to-kernel gap (BubbleAnalysis::graph_gap_ns), so sum(max(0, length - graph_gap_ns)).
    int64_t graph_removable_ns = 0;
    // The part of the `host` idle that lies inside the step's launches: between the first and the last launch call
    // of the step's work on this device (docs/analysis.md "What-if estimates"). That is framework work inside the
    // captured region (autograd, the optimizer's Python), which a graph replay removes; host idle before the step's
    // first launch or after its last (data loading, logging) stays.
    int64_t host_in_launches_ns = 0;
    // The part of the `sync` idle after the sync call returned: the framework's dispatch up to the next launch and
    // that launch's latency. A graph replay issues the next step as one launch, so the CUDA-Graphs estimate removes
    // it with the launch gaps; the wait itself (up to the return) stays.
    int64_t sync_after_return_ns = 0;
};

struct DeviceStepBubbles {
    uint32_t device_id = 0;
    int64_t step_index = 0; // StepInterval::index
    int64_t step_start_ns = 0, step_end_ns = 0;
    BubbleTotals totals;
    size_t first_bubble = 0; // this device's bubbles in this step: BubbleAnalysis::bubbles[first_bubble, + count)
};

struct DeviceBubbles {
    uint32_t device_id = 0;
    BubbleTotals totals; // over all steps
};

struct BubbleAnalysis {
    // Typical launch latency: the median of (activity start - end of the API call that launched it), clamped at 0,
    // over the activities launched onto an idle device: their call ended after every activity that started before
    // them on the same device had ended, so nothing queued ahead of them and start - call end is the launch
    // latency alone. With fewer than kMinIdleLaunchSamples of those, over every activity joined to its call by
    // correlation id (epsilon_from_idle_launches false), which includes queueing behind earlier work. Rule 2
    // ("dependency") uses it.
    int64_t epsilon_ns = 0;
    int64_t epsilon_samples = 0; // the activities the median was taken over
    int64_t idle_launches = 0; // activities launched onto an idle device
    bool epsilon_from_idle_launches = false; // false: too few idle launches, ε is over every launched activity
    // Rule 4 applies: the meta's world size is above 1 or the trace has communication kernels. Communication
    // kernels then count as idle time (they wait for other ranks), and the gaps they fill are `comm`.
    bool multi_rank = false;
    // Rule 3's threshold: per launching thread, the longest silence (no CUDA call) that still counts as issuing work.
    // Reported for the thread that launched the most activities in the steps (the main launching thread).
    int64_t host_stall_threshold_ns = kHostStallMinNs;
    int64_t host_stall_median_silence_ns = 0; // that thread's median silence between CUDA calls
    int64_t launching_thread_tid = 0; // its globalTid; 0 when no activity has a launching call
    // The kernel-to-kernel gap inside a CUDA graph: the median gap between consecutive kernels of one graph launch
    // on one stream, when the trace has at least kMinGraphGapSamples of them, else kDefaultGraphKernelGapNs.
    int64_t graph_gap_ns = kDefaultGraphKernelGapNs;
    int64_t graph_gap_samples = 0; // 0: the default was used
    // Devices with at least one activity of non-zero length inside the steps, ascending.
    std::vector<uint32_t> devices;
    std::vector<Bubble> bubbles; // by device, then time; one per device, step and maximal idle interval
    std::vector<DeviceStepBubbles> per_device_step; // by device, then step
    std::vector<DeviceBubbles> per_device;
    BubbleTotals total; // all devices and steps
};

// Analyses `steps` (already without warm-up). `blocking` is find_host_blocking_calls(model); Bubble::sync_call
// indexes it. Steps must be in time order and not overlap (as find_steps() gives them).
BubbleAnalysis analyze_bubbles(
    const TraceModel& model, const StepSet& steps, const std::vector<HostBlockingCall>& blocking);

// "sync", "dependency", "launch", "host", "comm".
const char* bubble_cause_name(BubbleCause cause);

} // namespace fp8scope::analyzer
