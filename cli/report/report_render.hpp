// `fp8scope report` output: the analyzer's Report as text (terminals), Markdown (CI job summaries), JSON
// (schema fp8scope.report/2, docs/cli.md), one self-contained HTML page (CI artifacts) or JUnit XML (CI test
// reports). Formatting only: every figure comes from the analyzer.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>

namespace fp8scope::cli {

inline constexpr const char* kReportJsonSchema = "fp8scope.report/2";

struct ReportTextStyle {
    bool color = false; // ANSI colour: bold headings, bubble ratios by severity, recommendations highlighted
    size_t top = 10; // rows of the top-kernels and API tables (`--top N`; report_tables.hpp's kDefaultTopRows)
    bool all_steps = false; // every step's row (`--all-steps`); else more than kStepRowsShown collapse
    size_t kernel_name_bytes = 70; // the top-kernels table's name column (0: whole names, `--wide`)
};

// The top-kernels name column for a terminal of $COLUMNS (null or not a number: the default 70 bytes): what is
// left of it after the table's figures, at least 30.
size_t kernel_name_bytes_for(const char* columns);

// Long sentences of the text report wrap at this width.
inline constexpr size_t kTextWidth = 120;

// Per-step rows listed in full up to this many; more collapse into the slowest, the median and the fastest step.
inline constexpr size_t kStepRowsShown = 10;

// The keys of a BubbleTotals' gap_counts (kGapBucketBoundsNs) in every JSON output.
inline constexpr std::array<const char*, analyzer::kGapBucketCount> kGapCountKeys { "lt_10us", "10us_100us",
    "100us_1ms", "ge_1ms" };

// A BubbleTotals as the report's JSON writes it ("totals", "per_device_step"; the multi-rank report's ranks).
nlohmann::ordered_json bubble_totals_json(const analyzer::BubbleTotals& totals);

std::string render_report_text(
    const analyzer::TraceModel& model, const analyzer::Report& report, ReportTextStyle style = {});
// `top`: rows of the top-kernels and API tables (`--top N`).
nlohmann::ordered_json render_report_json(
    const analyzer::TraceModel& model, const analyzer::Report& report, size_t top = 10);
// GitHub-flavoured Markdown, for CI job summaries: the headline figures, causes, syncs, kernel classes and
// recommendations as tables.
std::string render_report_markdown(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top = 10);
// Text wrapped at spaces to lines of at most `width` bytes (a word longer than that stands alone), the lines after
// the first indented by `indent`; no trailing newline.
std::string wrapped(std::string_view text, size_t width, std::string_view indent);
// One HTML file with no external resource (inline CSS and SVG charts, no script): the tables of the Markdown
// report, the per-step table and four charts (report_html.cpp).
std::string render_report_html(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top = 10);
// JUnit XML: one testsuite "fp8scope.report", one testcase per analysis area, failed when the area has a
// recommendation (report_junit.cpp; layout in docs/cli.md).
std::string render_report_junit(const analyzer::TraceModel& model, const analyzer::Report& report);

// `report --fp8-whatif` (report_fp8_whatif.cpp; docs/cli.md "FP8 what-if"): the section after the text report, and
// the JSON object "fp8_whatif".
std::string render_fp8_whatif_text(const analyzer::Fp8WhatIf& whatif, bool color);
nlohmann::ordered_json fp8_whatif_json(const analyzer::Fp8WhatIf& whatif);

} // namespace fp8scope::cli
