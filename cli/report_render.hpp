// `fp8scope report` output: the analyzer's Report as text (terminals) or JSON (schema fp8scope.report/1,
// docs/cli.md). Formatting only: every figure comes from the analyzer.
#pragma once

#include "fp8scope/analyzer/report.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace fp8scope::cli {

inline constexpr const char* kReportJsonSchema = "fp8scope.report/1";

std::string render_report_text(const analyzer::TraceModel& model, const analyzer::Report& report);
nlohmann::ordered_json render_report_json(const analyzer::TraceModel& model, const analyzer::Report& report);

} // namespace fp8scope::cli
