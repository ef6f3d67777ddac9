// `fp8scope report` output: the analyzer's Report as text (terminals), Markdown (CI job summaries) or JSON
// (schema fp8scope.report/1, docs/cli.md). Formatting only: every figure comes from the analyzer.
#pragma once

#include "fp8scope/analyzer/report.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

inline constexpr const char* kReportJsonSchema = "fp8scope.report/1";

std::string render_report_text(const analyzer::TraceModel& model, const analyzer::Report& report);
nlohmann::ordered_json render_report_json(const analyzer::TraceModel& model, const analyzer::Report& report);
// GitHub-flavoured Markdown, for CI job summaries: the headline figures, causes, syncs, kernel classes and
// recommendations as tables.
std::string render_report_markdown(const analyzer::TraceModel& model, const analyzer::Report& report);

} // namespace fp8scope::cli
