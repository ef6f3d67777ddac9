// check_report() and exercise_report(): the whole `fp8scope report` path on a loaded model, every format.
#include "fuzz_support.hpp"

#include "report/report_render.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fp8scope::fuzz {

namespace {

void check_totals(std::string_view what, const analyzer::BubbleTotals& t)
{
    if (t.step_ns < 0 || t.idle_ns < 0 || t.busy_ns < 0 || t.busy_ns > t.step_ns || t.idle_ns != t.step_ns - t.busy_ns)
        fail(fmt::format("{}: step {} ns, busy {} ns, idle {} ns", what, t.step_ns, t.busy_ns, t.idle_ns));
    int64_t causes = 0;
    for (const int64_t ns : t.cause_ns) {
        if (ns < 0)
            fail(fmt::format("{}: a cause has {} ns", what, ns));
        causes += ns;
    }
    if (causes != t.idle_ns)
        fail(fmt::format("{}: causes sum to {} ns, idle is {} ns", what, causes, t.idle_ns));
    if (!std::isfinite(t.bubble_ratio) || t.bubble_ratio < 0 || t.bubble_ratio > 1)
        fail(fmt::format("{}: bubble ratio {}", what, t.bubble_ratio));
    if (t.graph_removable_ns < 0 || t.graph_removable_ns > t.idle_ns || t.bubble_count < 0)
        fail(fmt::format("{}: graph-removable {} ns of idle {} ns, {} bubbles", what, t.graph_removable_ns, t.idle_ns,
            t.bubble_count));
}

} // namespace

void check_report(const analyzer::Report& report)
{
    const auto& steps = report.steps.steps;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].end_ns < steps[i].start_ns)
            fail(fmt::format("step {}: [{}, {}]", i, steps[i].start_ns, steps[i].end_ns));
        if (i > 0 && steps[i].start_ns < steps[i - 1].end_ns)
            fail(fmt::format(
                "step {} starts at {}, before step {} ends at {}", i, steps[i].start_ns, i - 1, steps[i - 1].end_ns));
    }
    check_totals("report totals", report.totals);
    for (const auto& row : report.bubbles.per_device_step)
        check_totals(fmt::format("device {} step {}", row.device_id, row.step_index), row.totals);
    for (const auto& device : report.bubbles.per_device)
        check_totals(fmt::format("device {}", device.device_id), device.totals);
    for (const auto& bubble : report.bubbles.bubbles)
        if (bubble.end_ns <= bubble.start_ns)
            fail(fmt::format("a bubble [{}, {}] of no length", bubble.start_ns, bubble.end_ns));
}

analyzer::Report exercise_report(const analyzer::TraceModel& model, const analyzer::ReportOptions& options)
{
    analyzer::Report report = analyzer::analyze(model, options);
    check_report(report);
    // The CLI's own calls (report_command.cpp): JSON strings from the trace may hold bad UTF-8, replaced on dump.
    (void)cli::render_report_text(model, report, { .color = true });
    (void)cli::render_report_json(model, report).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    (void)cli::render_report_markdown(model, report);
    (void)cli::render_report_html(model, report);
    (void)cli::render_report_junit(model, report);
    return report;
}

} // namespace fp8scope::fuzz
