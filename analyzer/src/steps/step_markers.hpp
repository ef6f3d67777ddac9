// The step markers one source reads (steps.cpp: the job's own; step_optimizer.cpp: the optimizer hook's ends, and
// the updates GradScaler skipped): those of the thread that wrote the most of them, in time order. Several threads
// may mark steps (one per rank's worker, a helper thread).
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace fp8scope::analyzer::detail {

struct ThreadMarkers {
    int64_t global_tid = 0;
    std::vector<StepMarker> markers; // in time order (stable: equal times keep the trace's order)
};

// The markers `wanted` accepts, of the thread with the most of them; empty when there are none.
template <typename Wanted> ThreadMarkers busiest_marker_thread(const TraceModel& model, Wanted wanted)
{
    std::map<int64_t, size_t> per_thread;
    for (const StepMarker& marker : model.step_markers)
        if (wanted(marker))
            ++per_thread[marker.global_tid];
    if (per_thread.empty())
        return {};
    ThreadMarkers out;
    out.global_tid = std::max_element(per_thread.begin(), per_thread.end(), [](auto& l, auto& r) {
        return l.second < r.second;
    })->first;
    for (const StepMarker& marker : model.step_markers)
        if (marker.global_tid == out.global_tid && wanted(marker))
            out.markers.push_back(marker);
    std::stable_sort(out.markers.begin(), out.markers.end(),
        [](const StepMarker& l, const StepMarker& r) { return l.timestamp_ns < r.timestamp_ns; });
    return out;
}

} // namespace fp8scope::analyzer::detail
