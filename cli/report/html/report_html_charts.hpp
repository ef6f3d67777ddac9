// The four charts of the HTML report (report_html.cpp), each a <section> with its title as <h3>, an inline SVG
// (svg_chart.hpp) and a note saying what is shown. Per-step charts draw at most kMaxStepBars bars: more steps are
// grouped into runs of consecutive steps, and the note says so.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace fp8scope::cli {

inline constexpr size_t kMaxStepBars = 500;

inline constexpr std::array<std::string_view, 4> kReportChartTitles { "Bubble ratio per step",
    "Idle time by cause per step", "Top syncs by GPU idle time caused", "Kernel time per step by class" };

std::string bubble_ratio_chart(const analyzer::Report& report);
std::string idle_by_cause_chart(const analyzer::Report& report);
std::string top_syncs_chart(const analyzer::TraceModel& model, const analyzer::Report& report);
std::string kernel_class_chart(const analyzer::Report& report);

} // namespace fp8scope::cli
