// `fp8scope report TRACE [--format text|json|md|html|junit|csv] [--table steps|kernels|api] [--color
// auto|always|never] [--steps A:B] [--device N] [--warmup N] [--step-pattern RE]`: the diagnosis of one trace
// (docs/analysis.md), rendered.
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

#include "fp8scope/analyzer/trace/report.hpp"

#include "fp8scope/analyzer/ranks/ranks.hpp"

#include <string_view>
#include <vector>

namespace fp8scope::cli {

struct ReportCliOptions {
    std::string trace_path; // the one trace analysed (`report` and `check`: the one of trace_args, resolved)
    std::vector<std::string> trace_args; // TRACE... as given: files, or directories standing for their *.sqlite
    std::string format = "text";
    std::string color = "auto"; // text only: auto (a terminal without NO_COLOR), always, never
    std::string steps; // "A:B", "A:", ":B"
    std::optional<uint32_t> device;
    std::optional<int> warmup; // nullopt: the analyzer's default (2), clamped to keep one step
    std::string step_pattern;
    std::string step_source = "any"; // any, markers, nvtx, auto (StepOptions::ignore_markers, ignore_nvtx)
    bool no_progress = false; // --no-progress (command_progress.hpp)
    bool merge = false; // --merge: trace_args are per-rank JSON reports (rank_merge.hpp), or directories of them
    size_t top = 10; // --top N: rows of the top-kernels and API tables (report only)
    bool all_steps = false; // --all-steps: every per-step row in text (report only)
    std::string output; // -o FILE: the output there instead of stdout (report, check, compare)
    std::optional<std::string> table; // --table steps|kernels|api: the one table of --format csv (report only)
};

CLI::App* add_report_command(CLI::App& app, ReportCliOptions& options);
int run_report(const ReportCliOptions& options);

// The options `report` and `check` share: TRACE... (one trace, several, or a directory) and add_selection_options(),
// added to `command`.
void add_analysis_options(CLI::App& command, ReportCliOptions& options);
// What is analysed (--steps, --device, --warmup, --step-pattern, --step-source): `report`, `check` and `compare`,
// which applies them to both of its traces.
void add_selection_options(CLI::App& command, ReportCliOptions& options);
// --format text|json|md|html|junit (and csv when `csv`: `report`) and --color auto|always|never (`report` and
// `compare`).
void add_format_options(CLI::App& command, ReportCliOptions& options, bool csv = false);
// Fills the analyzer's options from the command line's; a one-line usage error instead when one is bad.
std::optional<std::string> to_analysis_options(const ReportCliOptions& options, analyzer::ReportOptions& out);

// TRACE... as files: a directory stands for every file directly in it whose name ends in `extension` (".sqlite";
// ".json" with --merge), by name. nullopt with `exit_code` = kExitBadTrace after one line on stderr for a directory
// without one or that cannot be read.
std::optional<std::vector<std::string>> resolve_trace_args(
    const std::vector<std::string>& args, int& exit_code, std::string_view extension = ".sqlite");

// One warning line on stderr when the set holds fewer ranks than its world size (a rank not recorded, or a per-rank
// job that failed), naming the missing ranks: the figures across ranks are then of the ranks given only.
void warn_missing_ranks(const analyzer::RankSetReport& set);

// Several traces: the ranks of one job, loaded and analysed in parallel with the selection options applied to each
// (analyzer::analyze_rank_set()). nullopt with `exit_code` set after one line on stderr: kExitUsage for a bad option
// or a selection that leaves a rank nothing, kExitBadTrace for a trace that cannot be loaded or traces that are not
// one job (the analyzer's line).
std::optional<analyzer::RankSetReport> load_rank_set(
    const ReportCliOptions& options, const std::vector<std::string>& paths, std::string_view command, int& exit_code);

// What `report` and `check` do alike once the options are parsed: load the trace and analyse it. nullopt with
// `exit_code` set after one line on stderr: kExitUsage for a bad option or a selection that leaves nothing
// (`--device 99`, `--steps 500:600`, `--warmup 50` on a shorter trace, naming what exists), kExitBadTrace for a trace
// that cannot be loaded. Prints a one-line warning when the default warm-up was clamped to keep one step.
struct AnalysedTrace {
    analyzer::TraceModel model;
    analyzer::Report report;
};
std::optional<AnalysedTrace> load_and_analyse(
    const ReportCliOptions& options, std::string_view command, int& exit_code);

// The analysis step of load_and_analyse(), for a trace already loaded: nullopt with `exit_code` = kExitUsage after
// one line when the selection leaves nothing. `which` names the trace in that line and in the warm-up warning for a
// command that reads two ("the reference"); empty for one ("the trace"). `progress`: a CommandProgress stage's hook.
std::optional<analyzer::Report> analyse_selection(const analyzer::TraceModel& model,
    const analyzer::ReportOptions& options, std::string_view command, std::string_view which, int& exit_code,
    const analyzer::ProgressHook& progress = {});

} // namespace fp8scope::cli
