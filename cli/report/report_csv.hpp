// `fp8scope report --format csv --table steps|kernels|api`: one of the report's tables as RFC 4180 CSV, for
// spreadsheets and pandas (nsys stats --format csv, torch.profiler's key_averages() users). One table per run, a
// header row, plain numbers in the unit each column's name gives (ns, a ratio, a share of 0..1), full names;
// records end in CRLF and a field with a comma, a quote, CR or LF is quoted, its quotes doubled (RFC 4180 §2).
// Formatting only: every figure is the analyzer's, the same value the JSON report has.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace fp8scope::cli {

// The tables `--table` selects; the first is the default.
inline constexpr std::array<const char*, 3> kCsvTables { "steps", "kernels", "api" };

// One field: as it is, or quoted when RFC 4180 requires it.
std::string csv_field(std::string_view text);

// `table`: one of kCsvTables. steps: every step of every device (of `--device`'s alone when given), not
// collapsed; kernels and api: the first `top` rows, most total time first, as the top-kernels and CUDA API tables.
std::string render_report_csv(
    const analyzer::TraceModel& model, const analyzer::Report& report, std::string_view table, size_t top);

} // namespace fp8scope::cli
