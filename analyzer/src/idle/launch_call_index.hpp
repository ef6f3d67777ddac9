// The API call that launched each piece of GPU work, found by correlation id: the runtime call when a driver call made
// inside it shares the id (docs/analysis.md "Launch statistics"). analyze() builds this index once and hands it to
// the bubble analysis and the launch statistics, which run side by side: one 40 MB table on a 10 M-call trace
// instead of one each, and no per-kernel copy of the answers
// (docs/benchmarks.md "The analyzer at the speed of its storage").
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/idle/launch_stats.hpp"
#include "model/correlation_index.hpp"

namespace fp8scope::analyzer::detail {

inline CorrelationIndex launch_call_index(const ApiTable& api)
{
    return CorrelationIndex(api.correlation_id, &api.is_driver);
}

BubbleAnalysis analyze_bubbles(const TraceModel& model, const StepSet& steps,
    const std::vector<HostBlockingCall>& blocking, const CorrelationIndex& launch_calls);

LaunchStats compute_launch_stats(const TraceModel& model, const StepSet& steps, const CorrelationIndex& launch_calls);

} // namespace fp8scope::analyzer::detail
