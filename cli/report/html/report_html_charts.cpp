#include "report/html/report_html_charts.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/palette.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "output/svg_chart.hpp"
#include "output/xml_escape.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace fp8scope::cli {

using namespace analyzer;

namespace {

constexpr size_t kTopSyncs = 10;
constexpr size_t kMaxLabelBytes = 140; // an NVTX path can be long; the tooltip has it whole

// Consecutive steps drawn as one bar, so that a chart never has more than kMaxStepBars bars.
struct StepGroups {
    size_t steps = 0;
    size_t per_bar = 1;
    size_t bars() const { return (steps + per_bar - 1) / per_bar; }
    size_t first(size_t bar) const { return bar * per_bar; }
    size_t end(size_t bar) const { return std::min(steps, (bar + 1) * per_bar); }
};

StepGroups group_steps(size_t steps)
{
    return { steps, std::max<size_t>(1, (steps + kMaxStepBars - 1) / kMaxStepBars) };
}

std::string bar_label(const Report& r, const StepGroups& g, size_t bar)
{
    const int64_t first = r.steps.steps[g.first(bar)].index;
    const int64_t last = r.steps.steps[g.end(bar) - 1].index;
    return first == last ? fmt::format("step {}", first) : fmt::format("steps {}-{}", first, last);
}

std::string x_title(const Report& r)
{
    if (r.steps.steps.empty())
        return "no steps";
    return fmt::format(
        "{} steps, {} to {}", r.steps.steps.size(), r.steps.steps.front().index, r.steps.steps.back().index);
}

std::string grouping_note(const StepGroups& g)
{
    if (g.per_bar == 1)
        return {};
    return fmt::format(" {} steps are drawn as {} bars of up to {} consecutive steps each (the mean per step).",
        g.steps, g.bars(), g.per_bar);
}

std::string section(size_t title, const std::string& svg, const std::string& note)
{
    return fmt::format("<section class=\"chart\">\n<h3>{}</h3>\n{}<p class=\"note\">{}</p>\n</section>\n",
        kReportChartTitles[title], svg, xml_escaped(note));
}

svg::BarChart step_chart(const Report& r, size_t title, std::string (*format_value)(double))
{
    svg::BarChart chart;
    chart.description = kReportChartTitles[title];
    chart.format_value = format_value;
    chart.x_title = x_title(r);
    return chart;
}

std::string ratio_text(double ratio)
{
    return fmt::format("{:.3g}", ratio);
}

} // namespace

std::string bubble_ratio_chart(const Report& r)
{
    const std::vector<StepBubbleTotals> steps = bubbles_per_step(r);
    const StepGroups g = group_steps(steps.size());
    svg::BarChart chart = step_chart(r, 0, ratio_text);
    chart.series = { { "bubble ratio", "#1f77b4" } };
    chart.reference = r.totals.bubble_ratio;
    chart.reference_label = fmt::format("trace-wide {:.3f}", r.totals.bubble_ratio);
    for (size_t bar = 0; bar < g.bars(); ++bar) {
        int64_t idle_ns = 0, step_ns = 0;
        for (size_t i = g.first(bar); i < g.end(bar); ++i) {
            idle_ns += steps[i].totals.idle_ns;
            step_ns += steps[i].totals.step_ns;
        }
        const double ratio = step_ns > 0 ? static_cast<double>(idle_ns) / static_cast<double>(step_ns) : 0.0;
        chart.bars.push_back({ bar_label(r, g, bar), { ratio } });
    }
    return section(0, svg::bar_chart(chart),
        "Idle time / step time per step; the dashed line is the ratio over all analysed steps." + grouping_note(g));
}

std::string idle_by_cause_chart(const Report& r)
{
    const std::vector<StepBubbleTotals> steps = bubbles_per_step(r);
    const StepGroups g = group_steps(steps.size());
    // The four causes always (the legend then reads the same for every trace), comm in multi-rank runs.
    std::vector<size_t> causes;
    for (const BubbleCause c : causes_to_show(r))
        causes.push_back(static_cast<size_t>(c));
    svg::BarChart chart = step_chart(r, 1, compact_duration);
    for (const size_t c : causes)
        chart.series.push_back({ bubble_cause_name(static_cast<BubbleCause>(c)), kCauseColors[c] });
    for (size_t bar = 0; bar < g.bars(); ++bar) {
        svg::Bar b { bar_label(r, g, bar), std::vector<double>(causes.size(), 0.0) };
        const auto n = static_cast<double>(g.end(bar) - g.first(bar));
        for (size_t i = g.first(bar); i < g.end(bar); ++i)
            for (size_t k = 0; k < causes.size(); ++k)
                b.values[k] += static_cast<double>(steps[i].totals.cause_ns[causes[k]]) / n;
        chart.bars.push_back(std::move(b));
    }
    const std::string devices = r.bubbles.devices.size() > 1 && !r.device ? ", summed over the devices" : "";
    return section(1, svg::bar_chart(chart),
        fmt::format("Idle time per step by the cause of each bubble{} (causes: docs/analysis.md).{}", devices,
            grouping_note(g)));
}

std::string top_syncs_chart(const TraceModel& model, const Report& r)
{
    struct Site {
        int64_t idle_ns = 0;
        int64_t calls = 0;
    };
    std::map<std::pair<std::string_view, std::string_view>, Site> sites; // (API, NVTX path) of the calls in steps
    for (const SyncCallReport& call : r.syncs.calls) {
        if (!call.step)
            continue;
        Site& site = sites[{ api_base_name(model.strings[call.api_name]), call.nvtx_path }];
        site.idle_ns += call.idle_caused_ns;
        ++site.calls;
    }
    std::vector<std::pair<std::pair<std::string_view, std::string_view>, Site>> ranked(sites.begin(), sites.end());
    std::ranges::stable_sort(ranked, [](const auto& a, const auto& b) { return a.second.idle_ns > b.second.idle_ns; });
    std::vector<svg::HorizontalBar> bars;
    for (const auto& [key, site] : ranked) {
        if (bars.size() == kTopSyncs || site.idle_ns <= 0)
            break;
        std::string label = fmt::format("{} at {}", key.first, key.second.empty() ? "(no NVTX range)" : key.second);
        label = shortened(label, kMaxLabelBytes);
        bars.push_back({ std::move(label), static_cast<double>(site.idle_ns),
            fmt::format("{} over {} call{}", compact_duration(static_cast<double>(site.idle_ns)), site.calls,
                site.calls == 1 ? "" : "s") });
    }
    if (bars.empty())
        return section(2, "", "No host-blocking call in the analysed steps left the GPU idle.");
    return section(2, svg::horizontal_bar_chart(kReportChartTitles[2], bars, "#d62728"),
        fmt::format("GPU idle time charged to each sync (API and NVTX path at the call), over all analysed steps; the "
                    "top {} of {}.",
            bars.size(), sites.size()));
}

std::string kernel_class_chart(const Report& r)
{
    const KernelClassReport& k = r.kernel_classes;
    const StepGroups g = group_steps(std::min(k.steps.size(), r.steps.steps.size()));
    svg::BarChart chart = step_chart(r, 3, compact_duration);
    for (size_t c = 0; c < kKernelClassCount; ++c)
        chart.series.push_back({ std::string(kernel_class_label(static_cast<KernelClass>(c))), kClassColors[c] });
    for (size_t bar = 0; bar < g.bars(); ++bar) {
        svg::Bar b { bar_label(r, g, bar), std::vector<double>(kKernelClassCount, 0.0) };
        const auto n = static_cast<double>(g.end(bar) - g.first(bar));
        for (size_t i = g.first(bar); i < g.end(bar); ++i)
            for (size_t c = 0; c < kKernelClassCount; ++c)
                b.values[c] += static_cast<double>(k.steps[i].by_class[c].time_ns) / n;
        chart.bars.push_back(std::move(b));
    }
    return section(3, svg::bar_chart(chart),
        "Summed kernel time per step by class (kernels overlap across streams and devices, so a bar can exceed the "
        "step time)."
            + grouping_note(g));
}

} // namespace fp8scope::cli
