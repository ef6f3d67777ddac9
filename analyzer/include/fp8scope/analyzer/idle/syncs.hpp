// The sync report (docs/analysis.md "Syncs"): each host-blocking call with its duration, the GPU idle time it caused,
// the NVTX path at the call and its step, and a summary per API name.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

struct SyncCallReport {
    size_t call = 0; // index into the HostBlockingCall list given to build_sync_report
    size_t api_index = 0; // row in TraceModel::api_calls
    StringRef api_name;
    HostBlockingKind kind = HostBlockingKind::Other;
    int64_t global_tid = 0;
    std::optional<uint32_t> device_id, stream_id;
    int64_t start_ns = 0;
    int64_t duration_ns = 0;
    // The NVTX push/pop ranges open on the calling thread at start_ns, outermost first, joined with '/'; empty
    // when none is open.
    std::string nvtx_path;
    // Sum of the lengths of the bubbles whose cause is Sync and whose sync_call is this call.
    int64_t idle_caused_ns = 0;
    // Position in StepSet::steps of the step containing start_ns; nullopt outside every step (warm-up, tail).
    std::optional<size_t> step;
};

struct SyncStepCounts {
    int64_t count = 0;
    int64_t duration_ns = 0;
    int64_t idle_caused_ns = 0;
};

struct SyncApiSummary {
    StringRef api_name; // the first raw name met of this API
    std::string name; // api_base_name(): the API as the program called it, without version or _ptds/_ptsz suffix
    // Over the calls inside the steps.
    int64_t count = 0;
    int64_t duration_ns = 0;
    int64_t idle_caused_ns = 0;
    int64_t outside_steps = 0; // calls of this name outside every step, not in the figures above
    std::vector<SyncStepCounts> per_step; // one per StepSet::steps entry
};

struct SyncReport {
    std::vector<SyncCallReport> calls; // every host-blocking call, in the order given
    // Per API (raw names with the same api_base_name() are one API), most total duration first (ties: name index).
    // Figures cover the calls inside the steps.
    std::vector<SyncApiSummary> by_api;
    std::vector<SyncStepCounts> per_step; // all names together, one per step
    SyncStepCounts total; // all names, all steps
    // Calls outside every step. A call just before a step can still cause idle time inside it: total plus
    // outside_steps covers every call, and their idle_caused_ns add up to all the sync bubbles given.
    SyncStepCounts outside_steps;
};

// `calls` from find_host_blocking_calls (sorted by start, or not); `bubbles` from the bubble analysis (only those
// with cause Sync and a sync_call are used; a sync_call out of range is ignored). O((calls + NVTX ranges) log n +
// bubbles + steps).
SyncReport build_sync_report(const TraceModel& model, const StepSet& steps, const std::vector<HostBlockingCall>& calls,
    const std::vector<Bubble>& bubbles);

} // namespace fp8scope::analyzer
