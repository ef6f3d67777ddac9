// What `report`, `check`, `compare` and `export` share before they render: their options (TRACE..., the selection of
// what is analysed, the format), TRACE... as files, and the trace or the ranks of one job loaded and analysed. Each
// step that can fail returns CliExpected (cli_error.hpp) and prints nothing; the command prints the error.
#pragma once

#include "commands/cli_error.hpp"
#include "inputs/rank_merge.hpp"

#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/report/report.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace fp8scope::cli {

// The options of `report`; `check`, `compare` and `export` hold them too, for what they share with it.
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
    bool wide = false; // --wide: whole kernel names in text (report only)
    std::string output; // -o FILE: the output there instead of stdout (report, check, compare)
    std::optional<std::string> table; // --table steps|kernels|api: the one table of --format csv (report only)
    bool fp8_whatif = false; // --fp8-whatif: the FP8 what-if section (report only, text and json)
    std::string gemm_table; // --gemm-table FILE: its GEMM table instead of the H100's (with --fp8-whatif)
};

// The options `report` and `check` share: TRACE... (one trace, several, or a directory), --merge and
// add_selection_options(), added to `command`.
void add_analysis_options(CLI::App& command, ReportCliOptions& options);
// What is analysed (--steps, --device, --warmup, --step-pattern, --step-source): `report`, `check`, `export` and
// `compare`, which applies them to both of its traces.
void add_selection_options(CLI::App& command, ReportCliOptions& options);
// --format text|json|md|html|junit (and csv when `csv`: `report`) and --color auto|always|never (`report` and
// `compare`).
void add_format_options(CLI::App& command, ReportCliOptions& options, bool csv = false);
// Fills the analyzer's options from the command line's; a one-line usage error instead when one is bad.
// --fp8-whatif and --gemm-table, as report and compare take them: the table file read (nullopt: the shipped one), or
// the usage problem's message (the table without the what-if, a format other than text or json, a bad table file).
std::expected<std::optional<analyzer::GemmTable>, std::string> fp8_whatif_table(const ReportCliOptions& options);

std::optional<std::string> to_analysis_options(const ReportCliOptions& options, analyzer::ReportOptions& out);

// TRACE... as files: a directory stands for every file directly in it whose name ends in ".sqlite" (".json" with
// --merge), by name. kExitBadTrace for a directory without one or that cannot be read.
CliExpected<std::vector<std::string>> resolve_trace_args(const ReportCliOptions& options);

// The ranks of one job (several traces, or --merge), each trace named by its path (with --merge, the path its JSON
// report names): load_rank_set(), or load_merged_ranks() and warn_missing_ranks().
CliExpected<MergedRanks> load_ranks(const ReportCliOptions& options, const std::vector<std::string>& paths);

// Several traces: the ranks of one job, loaded and analysed in parallel with the selection options applied to each
// (analyzer::analyze_rank_set()), then warn_missing_ranks(). kExitUsage for a bad option or a selection that leaves a
// rank nothing, kExitBadTrace for a trace that cannot be loaded or traces that are not one job (the analyzer's line).
CliExpected<analyzer::RankSetReport> load_rank_set(
    const ReportCliOptions& options, const std::vector<std::string>& paths);

// One warning line on stderr when the set holds fewer ranks than its world size (a rank not recorded, or a per-rank
// job that failed), naming the missing ranks: the figures across ranks are then of the ranks given only.
void warn_missing_ranks(const analyzer::RankSetReport& set);

// What `report`, `check` and `export` do alike once the options are parsed: load the trace and analyse it.
// kExitUsage for a bad option or a selection that leaves nothing (`--device 99`, `--steps 500:600`, `--warmup 50` on
// a shorter trace, naming what exists), kExitBadTrace for a trace that cannot be loaded. Prints a one-line warning
// when the default warm-up was clamped to keep one step.
struct AnalysedTrace {
    analyzer::TraceModel model;
    analyzer::Report report;
};
CliExpected<AnalysedTrace> load_and_analyse(const ReportCliOptions& options);

// The analysis step of load_and_analyse(), for a trace already loaded: kExitUsage when the selection leaves nothing.
// `which` names the trace in that line and in the warm-up warning for a command that reads two ("the reference");
// empty for one ("the trace"). `progress`: a CommandProgress stage's hook.
CliExpected<analyzer::Report> analyse_selection(const analyzer::TraceModel& model,
    const analyzer::ReportOptions& options, std::string_view which, const analyzer::ProgressHook& progress = {});

} // namespace fp8scope::cli
