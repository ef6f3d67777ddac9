#include "fp8scope/analyzer/report.hpp"

#include "fp8scope/analyzer/host_blocking.hpp"

#include <algorithm>

namespace fp8scope::analyzer {

Report analyze(const TraceModel& model, const ReportOptions& options)
{
    Report report;
    report.steps = find_steps(model, options.steps);
    if (options.first_step || options.last_step) {
        const int64_t first = options.first_step.value_or(INT64_MIN);
        const int64_t last = options.last_step.value_or(INT64_MAX);
        std::erase_if(report.steps.steps, [&](const StepInterval& s) { return s.index < first || s.index > last; });
    }
    report.blocking_calls = find_host_blocking_calls(model);
    report.bubbles = analyze_bubbles(model, report.steps, report.blocking_calls);
    report.syncs = build_sync_report(model, report.steps, report.blocking_calls, report.bubbles.bubbles);
    report.kernel_classes = classify_kernels(model, report.steps);
    report.launch = compute_launch_stats(model, report.steps);
    report.tensor_health = analyze_tensor_health(model, report.steps, 10, options.device);
    report.collector_work = summarize_collector_work(model, report.steps, options.device);
    report.device = options.device;
    report.totals = report.bubbles.total;
    if (options.device) {
        report.totals = {};
        for (const DeviceBubbles& d : report.bubbles.per_device)
            if (d.device_id == *options.device)
                report.totals = d.totals;
    }
    return report;
}

} // namespace fp8scope::analyzer
