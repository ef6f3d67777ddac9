// Types every analysis shares (docs/analysis.md). Steps are the unit that every figure of a report is given per; the
// step finder (steps.hpp) makes them, the other analyses take them as input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// Where the steps came from, in the order of preference of docs/analysis.md "Steps".
enum class StepSource {
    Markers, // fp8scope.step() markers (FP8SCOPE_STEP_MARKER)
    Nvtx, // NVTX ranges matching a pattern
    Automatic, // the repeating kernel sequence
    WholeTrace, // nothing found: the whole trace is one step
    Optimizer, // the ends of PyTorch optimizer steps (FP8SCOPE_STEP_MARKER source optimizer, fp8scope record's hook)
};

struct StepInterval {
    int64_t index = 0; // the job's step number (marker or NVTX number when known, else its position)
    int64_t start_ns = 0;
    int64_t end_ns = 0; // exclusive
    // The step on the host's clock (issue 42): when the launching thread began it (the marker, the NVTX range's
    // start, the end of the previous optimizer step; for automatic steps the launch call of the step's first
    // activity). start_ns/end_ns are the device's clock: a GPU-bound loop's host runs steps ahead of its GPU.
    int64_t host_start_ns = kUnknownHostStart;
    static constexpr int64_t kUnknownHostStart = INT64_MIN;
};

struct StepSet {
    StepSource source = StepSource::WholeTrace;
    std::string detail; // e.g. the NVTX range name that matched, or how the period was found
    std::vector<StepInterval> steps; // warm-up steps already removed; in time order, not overlapping
    int64_t warmup_excluded = 0;
    // Windowed recordings (TraceModel::capture): steps left out because they lie outside every capture window, or
    // because a window's edge cuts them (only part of such a step was recorded). Counted after warm-up.
    int64_t outside_windows_excluded = 0;
    int64_t window_edge_excluded = 0;
};

// A CUDA API call that blocks the host until the GPU catches up (docs/analysis.md "Causes of bubbles", rule 1): stream,
// device and event syncs, blocking memcpys, async copies to or from pageable memory, and implicitly synchronizing APIs.
// Found by find_host_blocking_calls() (host_blocking.hpp); used by the bubble causes and the sync report.
enum class HostBlockingKind {
    StreamSync,
    DeviceSync,
    EventSync,
    BlockingMemcpy, // cudaMemcpy and friends: synchronous by definition
    PageableAsyncMemcpy, // cudaMemcpyAsync to or from pageable memory: staged, so the host waits
    BlockingMemset, // cudaMemset (not Async) on device memory
    Other, // other implicitly synchronizing APIs (cudaFree, cudaMalloc of a busy device, ...)
};

struct HostBlockingCall {
    size_t api_index = 0; // row in TraceModel::api_calls
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t global_tid = 0;
    HostBlockingKind kind = HostBlockingKind::Other;
    std::optional<uint32_t> device_id; // from the correlated SYNCHRONIZATION or MEMCPY row when there is one
    std::optional<uint32_t> stream_id;
};

enum class BubbleCause : uint8_t { Sync, Dependency, Launch, Host, Comm };

// A maximal idle interval of one device inside one step (docs/analysis.md "Busy time and bubbles"). A trace can hold
// one per kernel, so the fields are ordered and sized to pack into 48 bytes (72 before: 24 MB more on the 10 M-kernel
// benchmark's million bubbles; docs/benchmarks.md "The analyzer at the speed of its storage"). Row indices fit 32 bits,
// as in the analyses' indexes.
struct Bubble {
    int64_t step_index = 0; // StepInterval::index
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    uint32_t device_id = 0;
    BubbleCause cause = BubbleCause::Host;
    std::optional<uint32_t> sync_call; // index into the HostBlockingCall list, for BubbleCause::Sync
    std::optional<uint32_t> next_api_index; // the API call that launched the activity ending the bubble, if known
};
static_assert(sizeof(Bubble) == 48);

} // namespace fp8scope::analyzer
