#include "fp8scope/analyzer/report/report.hpp"

#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "idle/launch_call_index.hpp"
#include "model/progress_monitor.hpp"

#include <algorithm>
#include <exception>
#include <latch>
#include <optional>
#include <string>
#include <thread>

namespace fp8scope::analyzer {

using detail::ProgressMonitor;
using detail::report_progress;

namespace {

// Why the selection leaves nothing, in the order the options apply: warm-up, the step range, the device. The devices
// are those with activity in the steps the other options kept.
std::optional<EmptySelection> empty_selection(const Selection& s, const ReportOptions& options, const StepSet& kept)
{
    using Reason = EmptySelection::Reason;
    EmptySelection empty; // filled field by field: designated initializers would leave the optionals to -Wextra
    // A trace without activity has no steps to leave out: the report itself says it has nothing to analyse.
    if (options.warmup_given && s.steps_found > 0 && options.steps.warmup >= s.steps_found) {
        empty.reason = Reason::WarmupLeavesNone;
        empty.warmup = options.steps.warmup;
        empty.source = kept.source;
        return empty;
    }
    if ((options.first_step || options.last_step) && kept.steps.empty()) {
        // Steps before the first one left after warm-up: the user asked for warm-up steps (docs/cli.md "Exit codes").
        const bool in_warmup
            = options.last_step && s.first_step && *options.last_step < *s.first_step && kept.warmup_excluded > 0;
        empty.reason = in_warmup ? Reason::StepsInWarmup : Reason::StepsSelectNone;
        empty.first_step = options.first_step;
        empty.last_step = options.last_step;
        empty.warmup_excluded = kept.warmup_excluded;
        return empty;
    }
    if (options.device && std::ranges::find(s.devices, *options.device) == s.devices.end()) {
        empty.reason = Reason::NoSuchDevice;
        empty.device = *options.device;
        return empty;
    }
    return std::nullopt;
}

} // namespace

std::string empty_selection_reason(const Selection& selection, const ReportOptions& options)
{
    if (options.word_empty_selection)
        return options.word_empty_selection(selection);
    return "the options select no step to analyse";
}

namespace {

// Each phase's share of analyze()'s time on the 10 M-kernel benchmark trace (docs/benchmarks.md, "The analyzer's
// load and analysis"), cumulative: the fraction reported when it is done. The bubble analysis (with the sync report
// after it) runs on this thread while the kernel classes and launch statistics run on a second one; the bubbles take
// longer, so their progress stands for both.
constexpr double kStepsDone = 0.01;
constexpr double kBlockingDone = 0.03;
constexpr double kBubblesDone = 0.93;
constexpr double kSyncsDone = 0.95;
constexpr double kLaunchDone = 0.99;

// nullopt when the monitor was cancelled.
std::optional<Report> run_analyses(const TraceModel& model, const ReportOptions& options, ProgressMonitor* monitor)
{
    Report report;
    report.steps = find_steps(model, options.steps);
    if (!report_progress(monitor, kStepsDone))
        return std::nullopt;
    Selection& selection = report.selection;
    selection.steps_found = report.steps.warmup_excluded + static_cast<int64_t>(report.steps.steps.size());
    selection.warmup_requested = options.steps.warmup;
    selection.warmup_clamped = !report.steps.steps.empty() && report.steps.warmup_excluded < options.steps.warmup;
    if (!report.steps.steps.empty()) {
        selection.first_step = report.steps.steps.front().index;
        selection.last_step = report.steps.steps.front().index;
        for (const StepInterval& s : report.steps.steps) {
            selection.first_step = std::min(*selection.first_step, s.index);
            selection.last_step = std::max(*selection.last_step, s.index);
        }
    }
    if (options.first_step || options.last_step) {
        const int64_t first = options.first_step.value_or(INT64_MIN);
        const int64_t last = options.last_step.value_or(INT64_MAX);
        std::erase_if(report.steps.steps, [&](const StepInterval& s) { return s.index < first || s.index > last; });
    }
    report.blocking_calls = find_host_blocking_calls(model);
    if (!report_progress(monitor, kBlockingDone))
        return std::nullopt;
    // The kernel classes and launch statistics read only the model and the steps: on a second core they run while
    // the bubbles are found (analyze()'s two largest parts; about a third off its time on 2 cores, benchmarks.md).
    // A cancel stops the worker between its two parts; the join waits for at most the part it is in. An exception
    // there (std::bad_alloc on a huge trace) is carried over and rethrown here, as it would be without the thread.
    // The bubbles and the launch statistics look launch calls up in one index (launch_call_index.hpp), built here
    // while the worker classifies the kernels (80 ms against 110 ms on the 10 M trace), so that neither waits for it.
    std::exception_ptr side_failure;
    {
        std::optional<detail::CorrelationIndex> launch_calls;
        std::latch index_done(1);
        std::jthread side([&] {
            try {
                report.kernel_classes = classify_kernels(model, report.steps);
                index_done.wait();
                if (launch_calls && (monitor == nullptr || !monitor->cancelled()))
                    report.launch = detail::compute_launch_stats(model, report.steps, *launch_calls);
                // The top-kernels and API tables (nsys stats' cuda_gpu_kern_sum and cuda_api_sum).
                if (monitor == nullptr || !monitor->cancelled()) {
                    report.top_kernels = kernel_table(model, report.steps);
                    report.api_summary = api_table(model);
                }
            } catch (...) {
                side_failure = std::current_exception();
            }
        });
        try {
            launch_calls.emplace(detail::launch_call_index(model.api_calls));
        } catch (...) {
            index_done.count_down(); // the worker stops without it; the join waits for it
            throw;
        }
        index_done.count_down();
        report.bubbles = detail::analyze_bubbles(model, report.steps, report.blocking_calls, *launch_calls);
        if (!report_progress(monitor, kBubblesDone))
            return std::nullopt;
        report.syncs = build_sync_report(model, report.steps, report.blocking_calls, report.bubbles.bubbles);
        if (!report_progress(monitor, kSyncsDone))
            return std::nullopt;
    }
    if (side_failure)
        std::rethrow_exception(side_failure);
    if (!report_progress(monitor, kLaunchDone))
        return std::nullopt;
    report.tensor_health = analyze_tensor_health(model, report.steps, 10, options.device);
    report.numerics = judge_numerics(model, report.steps, report.tensor_health, options.device);
    report.nan_scalars = find_nan_scalars(model);
    report.collector_work = summarize_collector_work(model, report.steps, options.device);
    report.device = options.device;
    selection.devices = report.bubbles.devices;
    selection.empty = empty_selection(selection, options, report.steps);
    report.recording = RecordingStatus { .finished = model.meta.finished,
        .finish_reason = model.meta.finish_reason,
        .dropped_records = model.dropped_records(),
        .clipped_kernels = model.clipped_kernels,
        .api_calls = static_cast<int64_t>(model.api_calls.size()) };
    report.totals = report.bubbles.total;
    if (options.device) {
        report.totals = {};
        for (const DeviceBubbles& d : report.bubbles.per_device)
            if (d.device_id == *options.device)
                report.totals = d.totals;
    }
    if (!report_progress(monitor, 1.0))
        return std::nullopt;
    return report;
}

} // namespace

Report analyze(const TraceModel& model, const ReportOptions& options)
{
    return *run_analyses(model, options, nullptr);
}

Expected<Report> analyze(const TraceModel& model, const ReportOptions& options, const ProgressHook& progress)
{
    if (!progress)
        return analyze(model, options);
    ProgressMonitor monitor(progress);
    auto report = run_analyses(model, options, &monitor);
    if (!report)
        return std::unexpected(ProgressMonitor::cancelled_error("analysis cancelled"));
    return std::move(*report);
}

} // namespace fp8scope::analyzer
