// The whole diagnosis of one trace: every analysis of docs/analysis.md run in order on the same steps. The CLI's
// `report` (and later `check` and the GUI) render this struct; they compute nothing themselves.
#pragma once

#include "fp8scope/analyzer/idle/bubbles.hpp"
#include "fp8scope/analyzer/idle/launch_stats.hpp"
#include "fp8scope/analyzer/idle/syncs.hpp"
#include "fp8scope/analyzer/kernels/api_table.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/kernels/kernel_table.hpp"
#include "fp8scope/analyzer/load/collector_work.hpp"
#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/progress.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "fp8scope/analyzer/steps/steps.hpp"
#include "fp8scope/analyzer/tensors/nan_scalars.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/common/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace fp8scope::analyzer {

struct Selection;

struct ReportOptions {
    StepOptions steps;
    // Keep only the steps whose index is in [first, last] (after warm-up), e.g. `--steps 5:20`.
    std::optional<int64_t> first_step;
    std::optional<int64_t> last_step;
    std::optional<uint32_t> device; // only this device's bubbles in the totals
    // The user chose steps.warmup (`--warmup N`): a warm-up that leaves no step is then an empty selection. The
    // default warm-up is clamped instead, so that a short trace still gets a report (docs/analysis.md "Steps").
    bool warmup_given = false;
    // How the presenter words a selection that leaves nothing (present::empty_selection_text, which names the CLI's
    // options), for the analyses that refuse a trace for it themselves (a rank of `report --merge`, a side of
    // compare). Without one they say it without naming options.
    std::function<std::string(const Selection&)> word_empty_selection;
};

// Why a selection leaves nothing to analyse, in the order the options apply: the warm-up, then the step range, then
// the device (the devices that exist are Selection::devices). Facts only: present/selection_wording.hpp words them
// with the options' names, which are the CLI's.
struct EmptySelection {
    enum class Reason {
        WarmupLeavesNone, // the warm-up asked for is at least the steps the trace has
        StepsInWarmup, // the step range ends before the first step left after warm-up
        StepsSelectNone, // the step range holds none of the steps left
        NoSuchDevice, // no device with GPU activity in the analysed steps has that number
    };
    Reason reason = Reason::StepsSelectNone;
    int64_t warmup = 0; // WarmupLeavesNone: the warm-up asked for
    StepSource source = StepSource::WholeTrace; // WarmupLeavesNone: where the steps came from
    std::optional<int64_t> first_step, last_step; // the step range asked for, either end open
    int64_t warmup_excluded = 0; // StepsInWarmup: the steps the warm-up left out
    uint32_t device = 0; // NoSuchDevice: the device asked for
};

// What the options selected against what the trace holds. A selection that leaves nothing to analyse is the
// user's mistake, not a finding: `empty` then says why, and the CLI refuses it as a usage error (never a report or
// a passing gate about nothing), in present/'s words that also name what exists.
struct Selection {
    int64_t steps_found = 0; // steps the trace has, warm-up included
    int64_t warmup_requested = 0;
    bool warmup_clamped = false; // fewer warm-up steps excluded than requested, to keep one step
    // Step numbers left after warm-up, before --steps: what `--steps` can select from.
    std::optional<int64_t> first_step, last_step;
    std::vector<uint32_t> devices; // devices with GPU activity in the analysed steps, before --device
    std::optional<EmptySelection> empty; // set when the selection leaves nothing
};

// The refusal of a selection that leaves nothing, in options.word_empty_selection's words, else plainly.
std::string empty_selection_reason(const Selection& selection, const ReportOptions& options);

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
