// `fp8scope report TRACE [--format text|json|md|html|junit] [--color auto|always|never] [--steps A:B] [--device N]
// [--warmup N] [--step-pattern RE]`: the diagnosis of one trace (docs/analysis.md), rendered.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace fp8scope::analyzer {
struct ReportOptions;
}

namespace fp8scope::cli {

struct ReportCliOptions {
    std::string trace_path;
    std::string format = "text";
    std::string color = "auto"; // text only: auto (a terminal without NO_COLOR), always, never
    std::string steps; // "A:B", "A:", ":B"
    std::optional<uint32_t> device;
    int warmup = 2;
    std::string step_pattern;
    std::string step_source = "any"; // any, markers, nvtx, auto (StepOptions::ignore_markers, ignore_nvtx)
};

CLI::App* add_report_command(CLI::App& app, ReportCliOptions& options);
int run_report(const ReportCliOptions& options);

// The options `report` and `check` share (--steps, --device, --warmup, --step-pattern), added to `command`.
void add_analysis_options(CLI::App& command, ReportCliOptions& options);
// Fills the analyzer's options from the command line's; a one-line usage error instead when one is bad.
std::optional<std::string> to_analysis_options(const ReportCliOptions& options, analyzer::ReportOptions& out);

} // namespace fp8scope::cli
