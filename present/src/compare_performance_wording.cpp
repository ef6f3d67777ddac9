// The performance per step that every `compare` format shows (compare_wording.hpp): the medians, idle by cause,
// kernel classes, the kernel diff and what recording added, as rows and sentences. The figures are the analyzer's
// (compare_performance.hpp).
#include "fp8scope/present/compare_wording.hpp"

#include "fp8scope/present/figures.hpp"

#include <fmt/format.h>

#include <cmath>

namespace fp8scope::present {

using namespace analyzer;

namespace {

// "+34.860 ms (+207%)": the change, and relative to the reference when both runs have the figure (a figure that
// appeared or vanished is its own change).
std::string change_text(const SideBySide& v)
{
    const std::string change = signed_ns_text(v.change());
    if (v.ref == 0 || v.run == 0 || std::llround(v.change()) == 0)
        return change;
    return fmt::format("{} ({:+.0f}%)", change, 100.0 * v.change() / v.ref);
}

std::string ratio_change_text(const SideBySide& v)
{
    const double change = std::round(v.change() * 1000) / 1000;
    return fmt::format("{:+.3f}", change == 0 ? 0.0 : change); // never "-0.000"
}

std::string per_step_count(double count)
{
    return fmt::format("{:.1f}", count);
}

} // namespace

std::string numerics_not_compared_sentence(const CompareResult& result)
{
    if (result.numerics_compared())
        return {};
    if (result.loss.final_relative_delta) // the loss needs no tensor statistics (issue 42)
        return fmt::format("Drift not compared: {}", result.numerics_not_compared);
    return fmt::format("Drift and loss not compared: {}; performance only", result.numerics_not_compared);
}

std::string performance_steps_text(const PerformanceComparison& p)
{
    if (p.steps_basis == PerformanceSteps::Common)
        return fmt::format("the {}", count_of(p.run.steps, "common step", "common steps"));
    return fmt::format(
        "each trace's own analysed steps ({} and {}): no step number in common", p.run.steps, p.ref.steps);
}

std::vector<PerformanceRow> per_step_rows(const PerformanceComparison& p)
{
    std::vector<PerformanceRow> rows {
        { "step time (median)", ns_text(p.step_median_ns.run), ns_text(p.step_median_ns.ref),
            change_text(p.step_median_ns) },
        { "busy (median)", ns_text(p.busy_median_ns.run), ns_text(p.busy_median_ns.ref),
            change_text(p.busy_median_ns) },
        { "bubble ratio (median)", fmt::format("{:.3f}", p.bubble_ratio_median.run),
            fmt::format("{:.3f}", p.bubble_ratio_median.ref), ratio_change_text(p.bubble_ratio_median) },
    };
    for (size_t c = 0; c < kBubbleCauseCount; ++c) {
        const SideBySide& idle = p.idle_by_cause_ns[c];
        if (std::llround(idle.run) != 0 || std::llround(idle.ref) != 0)
            // "idle, cause launch": the cause alone, unlike the performance table's launch idle, which adds the host
            // idle inside the step's launches.
            rows.push_back({ fmt::format("idle, cause {}", bubble_cause_name(static_cast<BubbleCause>(c))),
                ns_text(idle.run), ns_text(idle.ref), change_text(idle) });
    }
    for (size_t c = 0; c < kKernelClassCount; ++c) {
        const SideBySide& time = p.class_time_ns[c];
        if (p.class_count[c].run > 0 || p.class_count[c].ref > 0)
            rows.push_back({ fmt::format("{} kernels", kernel_class_label(static_cast<KernelClass>(c))),
                ns_text(time.run), ns_text(time.ref), change_text(time) });
    }
    return rows;
}

std::vector<KernelList> kernel_lists(const PerformanceComparison& p)
{
    const KernelDiff& d = p.kernels;
    const auto rows_of = [](const std::vector<KernelChange>& changes) {
        std::vector<KernelListRow> rows;
        for (const KernelChange& k : changes)
            rows.push_back({ k.name, ns_text(k.time_ns.run), ns_text(k.time_ns.ref), change_text(k.time_ns),
                per_step_count(k.count.run), per_step_count(k.count.ref), std::string(kernel_class_label(k.cls)) });
        return rows;
    };
    return {
        { "appeared",
            fmt::format("Kernels that appeared (only in the run: {}, {} per step)",
                count_of(d.appeared_names, "name", "names"), ns_text(d.appeared_ns)),
            rows_of(d.appeared), static_cast<size_t>(d.appeared_names) },
        { "vanished",
            fmt::format("Kernels that vanished (only in the reference: {}, {} per step)",
                count_of(d.vanished_names, "name", "names"), ns_text(d.vanished_ns)),
            rows_of(d.vanished), static_cast<size_t>(d.vanished_names) },
        { "changed",
            fmt::format("Kernels that changed most (time per step; {} in both runs)",
                count_of(d.common_names, "name", "names")),
            rows_of(d.changed), static_cast<size_t>(d.common_names) },
    };
}

std::string recording_inflation_sentence(const PerformanceComparison& p)
{
    const RecordingInflation& r = p.recording;
    if (!r.notable)
        return {};
    return fmt::format("Recording inflated the difference: the collector's own GPU work (its tensor statistics) is "
                       "{:.1f}% of the run's step ({} per step) and {:.1f}% of the reference's ({}), notable from "
                       "{:g}%; it changed the run's step against the reference's by about {} per step (the bubbles it "
                       "ran in)",
        100.0 * r.share.run, ns_text(r.collector_ns.run), 100.0 * r.share.ref, ns_text(r.collector_ns.ref),
        100.0 * kRecordingNotableShare, signed_ns_text(r.inflation_ns));
}

} // namespace fp8scope::present
