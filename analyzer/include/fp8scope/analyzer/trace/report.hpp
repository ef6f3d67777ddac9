// The whole diagnosis of one trace: every analysis of docs/analysis.md run in order on the same steps. The CLI's
// `report` (and later `check` and the GUI) render this struct; they compute nothing themselves.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "fp8scope/analyzer/trace/bubbles.hpp"
#include "fp8scope/analyzer/trace/collector_work.hpp"
#include "fp8scope/analyzer/trace/kernel_classes.hpp"
#include "fp8scope/analyzer/trace/launch_stats.hpp"
#include "fp8scope/analyzer/trace/nan_scalars.hpp"
#include "fp8scope/analyzer/trace/syncs.hpp"
#include "fp8scope/analyzer/trace/tensor_health.hpp"
#include "fp8scope/analyzer/views/api_table.hpp"
#include "fp8scope/analyzer/views/kernel_table.hpp"
#include "fp8scope/common/error.hpp"

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
    // The user chose steps.warmup (`--warmup N`): a warm-up that leaves no step is then an empty selection. The
    // default warm-up is clamped instead, so that a short trace still gets a report (docs/analysis.md "Steps").
    bool warmup_given = false;
};

// What the options selected against what the trace holds. A selection that leaves nothing to analyse is the
// user's mistake, not a finding: `empty` then says why and names what exists, and the CLI refuses it as a usage
// error (never a report or a passing gate about nothing).
struct Selection {
    int64_t steps_found = 0; // steps the trace has, warm-up included
    int64_t warmup_requested = 0;
    bool warmup_clamped = false; // fewer warm-up steps excluded than requested, to keep one step
    // Step numbers left after warm-up, before --steps: what `--steps` can select from.
    std::optional<int64_t> first_step, last_step;
    std::vector<uint32_t> devices; // devices with GPU activity in the analysed steps, before --device
    // Non-empty when the selection leaves nothing: "--device 99: no device 99 in the analysed steps; devices: 0".
    std::string empty;
};

// How complete the recording is: figures from an unfinished trace or one that dropped records undercount, and
// every report format says so (docs/cli.md).
struct RecordingStatus {
    bool finished = true; // false: the recording process never closed the trace (crash, SIGKILL)
    std::string finish_reason; // "exit", "SIGTERM", ...; empty when not recorded
    int64_t dropped_records = 0; // records the collector lost while recording
    ClippedKernels clipped_kernels; // kernels clipped by the loader (trace_model.hpp)
    // CUDA API calls in the trace: without them no gap can be charged to a launch and no sync can be seen (an
    // Nsight export made without CUDA API tracing), so the launch-bound and sync budgets have nothing to judge.
    int64_t api_calls = 0;
};

struct Report {
    StepSet steps;
    std::vector<HostBlockingCall> blocking_calls;
    BubbleAnalysis bubbles;
    SyncReport syncs;
    KernelClassReport kernel_classes;
    // Every kernel and every CUDA API call of the trace by name, whole trace (warm-up and outside steps included),
    // as nsys stats' cuda_gpu_kern_sum and cuda_api_sum count them.
    KernelTableResult top_kernels;
    ApiTableResult api_summary;
    LaunchStats launch;
    TensorHealth tensor_health;
    NumericsJudgement numerics; // the FP8 tensors judged alone: healthy, at risk or broken
    std::vector<NanScalar> nan_scalars; // scalars that went NaN, over the whole trace
    CollectorWorkSummary collector_work; // the collector's own GPU time, kept out of everything above
    std::optional<uint32_t> device; // the device the totals are for, when one was asked for
    BubbleTotals totals; // bubbles for that device, or for all devices
    Selection selection;
    RecordingStatus recording;
};

Report analyze(const TraceModel& model, const ReportOptions& options = {});

// The same, reporting progress after each analysis (weighted by its typical share of the time on a large trace) and
// stopping between two analyses with ErrorCode::Cancelled ("analysis cancelled") when `progress` returns false.
Expected<Report> analyze(const TraceModel& model, const ReportOptions& options, const ProgressHook& progress);

} // namespace fp8scope::analyzer
