// The whole diagnosis of one trace: every analysis of docs/analysis.md run in order on the same steps. The CLI's
// `report` (and later `check` and the GUI) render this struct; they compute nothing themselves.
#pragma once

#include "fp8scope/analyzer/analysis_types.hpp"
#include "fp8scope/analyzer/bubbles.hpp"
#include "fp8scope/analyzer/collector_work.hpp"
#include "fp8scope/analyzer/kernel_classes.hpp"
#include "fp8scope/analyzer/launch_stats.hpp"
#include "fp8scope/analyzer/steps.hpp"
#include "fp8scope/analyzer/syncs.hpp"
#include "fp8scope/analyzer/tensor_health.hpp"
#include "fp8scope/analyzer/trace_model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace fp8scope::analyzer {

struct ReportOptions {
    StepOptions steps;
    // Keep only the steps whose index is in [first, last] (after warm-up), e.g. `--steps 5:20`.
    std::optional<int64_t> first_step;
    std::optional<int64_t> last_step;
    std::optional<uint32_t> device; // only this device's bubbles in the totals
};

struct Report {
    StepSet steps;
    std::vector<HostBlockingCall> blocking_calls;
    BubbleAnalysis bubbles;
    SyncReport syncs;
    KernelClassReport kernel_classes;
    LaunchStats launch;
    TensorHealth tensor_health;
    CollectorWorkSummary collector_work; // the collector's own GPU time, kept out of everything above
    std::optional<uint32_t> device; // the device the totals are for, when one was asked for
    BubbleTotals totals; // bubbles for that device, or for all devices
};

Report analyze(const TraceModel& model, const ReportOptions& options = {});

} // namespace fp8scope::analyzer
