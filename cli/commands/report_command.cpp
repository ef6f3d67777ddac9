#include "commands/report_command.hpp"

#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "rank_json/rank_summary_json.hpp"
#include "report/report_csv.hpp"
#include "report/report_ranks.hpp"
#include "report/report_render.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace fp8scope::cli {

namespace {

constexpr const char* kReportExamples = R"(Examples:
  fp8scope report samples/traces/h100-train-fp8.sqlite
  fp8scope report run.sqlite --format json > report.json
  fp8scope report run.sqlite --format md >> "$GITHUB_STEP_SUMMARY"
  fp8scope report run.sqlite --format html > fp8scope-report.html
  fp8scope report run.sqlite --format junit > fp8scope-report.xml
  fp8scope report run.sqlite --format csv -o steps.csv
  fp8scope report run.sqlite --format csv --table kernels --top 1000 > kernels.csv
  fp8scope report run.sqlite --color always | less -R
  fp8scope report bf16.sqlite --fp8-whatif
  fp8scope report bf16.sqlite --fp8-whatif --gemm-table my-gpu.json --format json
  fp8scope report run.sqlite --steps 10:20 --device 0
  fp8scope report run.sqlite --warmup 0 --step-pattern 'iter_\d+'
  fp8scope report big.sqlite --no-progress
  fp8scope report rank0.sqlite rank1.sqlite --format json
  fp8scope report traces/            # every *.sqlite in it: the ranks of one job
  fp8scope report rank7.sqlite --format json > reports/rank7.json    # one job per rank, then:
  fp8scope report --merge reports/   # every *.json in it: the same report as of the traces

Steps come from fp8scope.step() markers, else NVTX ranges matching --step-pattern (default: ProfilerStep#N,
step, train_step, iteration), else the repeating kernel sequence; the report says which. Every figure and
threshold is defined in docs/analysis.md; the JSON schema (fp8scope.report/2) and the JUnit layout are in
docs/cli.md. Traces with tensor statistics get a tensor-health section (NaN/Inf, scaling events, the sites
with the most saturation or underflow or the least headroom, a per-site table). html is one self-contained
file (inline SVG charts, no script, nothing fetched). junit has one testcase per analysis area (bubbles,
syncs, launch, fp8_overhead), failed when the area has a recommendation, and tensor_health, failed by a
NaN/Inf or a stale scale; report still exits 0 (use fp8scope check to gate CI). csv is one table per run
(RFC 4180, CRLF, a header row, numbers in the unit the column names: ns, ratio, share of 0..1): --table steps
(the default; every step of every device), kernels (full names) or api, the last two --top N rows. Text is coloured only on a terminal without NO_COLOR, or
with --color always.

--fp8-whatif (text and json, one trace) adds what each FP8 recipe would make of this BF16 run's step, eager and
compiled: GEMM time from a table of FP8 against BF16 GEMM time (the one shipped for the trace's GPU, H100 or H200,
or --gemm-table FILE, as fp8scope calibrate measures it on your GPU), each recipe implementation's
measured bookkeeping, the step and speed-up with an interval, and which recipe and mode to pick; then the share of
each GEMM operand's values that per-tensor E4M3 and E5M2 scales would flush (docs/analysis.md "FP8 what-if").

Several traces, or a directory (its *.sqlite files), are the per-rank traces of one job (same command line and
world size, distinct ranks; docs/analysis.md "Across ranks"), analysed together in text or json (schema
fp8scope.ranks/1): per rank the steps, bubble ratio and idle causes (comm included); per step each rank's
communication, exposed communication and wait, the slowest rank and its lead cause; the straggler waits per
collective kind; the clock of each host and the residual; FP8 scale agreement. Traces of different jobs are
exit code 3; md, html, junit and csv read one trace only (exit code 2). Fewer ranks than the world size: a warning.

--merge reads per-rank JSON reports instead of traces (or a directory: its *.json files): the JSON of one trace
ends with its rank_summary (schema fp8scope.rank_summary/2), so ranks can be analysed as independent jobs (an
array job's tasks) and merged into the same report, byte for byte (docs/multi-rank.md). The selection options
belong to the per-rank reports (exit code 2 with --merge). A file that is not a valid rank report (checked as
untrusted input, at most 1 GiB) or files of different jobs: exit code 3, one line naming the file.

Loading and analysis that take over a second show a progress bar on stderr when it is a
terminal (not in pipes, files or CI logs); --no-progress turns it off.

Exit codes: 0 ok, 2 usage error (also: --steps, --device or --warmup selecting nothing; the message names
what the trace has; md, html, junit or csv with several traces; --table without --format csv; a selection
option with --merge), 3 unreadable or
invalid trace, a directory without *.sqlite (*.json with --merge), a bad per-rank JSON report, or traces that are
not the ranks of one job (one line on stderr), 74 stdout cannot be written, 70 internal error.
)";

} // namespace

CLI::App* add_report_command(CLI::App& app, ReportCliOptions& options)
{
    CLI::App* report = app.add_subcommand("report",
        "Diagnose a trace: steps, bubbles and their causes, syncs, "
        "launch statistics, FP8 overhead, tensor health");
    add_analysis_options(*report, options);
    add_format_options(*report, options, true);
    report
        ->add_option("--table", options.table,
            "The table --format csv writes: steps (every step of every device, not collapsed; the default), kernels "
            "(the top-kernels table, full names) or api (the CUDA API table); --top N rows of the last two. Only with "
            "--format csv")
        ->check(CLI::IsMember(std::vector<std::string>(kCsvTables.begin(), kCsvTables.end())));
    report
        ->add_option("--top", options.top,
            "Rows of the top-kernels and CUDA API tables (whole trace, most time first; default 10, 0 hides the rows)")
        ->check(CLI::Range(0, 1000000));
    report->add_flag("--fp8-whatif", options.fp8_whatif,
        "What each FP8 recipe would make of this BF16 run, eager and compiled, and what its scales would flush "
        "(text and json, one trace)");
    report
        ->add_option("--gemm-table", options.gemm_table,
            "With --fp8-whatif: FP8 against BF16 GEMM times measured on this GPU (fp8scope calibrate) instead "
            "of the shipped table")
        ->check(CLI::ExistingFile);
    report->add_flag("--all-steps", options.all_steps,
        "Every step's row in the text report (without it, more than 10 steps per device show the slowest, the median "
        "and the fastest)");
    report->add_flag("--wide", options.wide,
        "Whole kernel names in the text report's tables (without it, the name column fits $COLUMNS when set, else "
        "70 bytes; names that would read the same are cut where they differ)");
    add_output_option(*report, options.output);
    add_progress_option(*report, options.no_progress);
    report->footer(kReportExamples);
    return report;
}

namespace {

// Several traces, or --merge: the ranks of one job (docs/cli.md "Several ranks"), in text or JSON.
int run_rank_report(const ReportCliOptions& options, const std::vector<std::string>& paths)
{
    if (options.format != "text" && options.format != "json")
        return usage_error("report",
            fmt::format(
                "--format {} reads one trace only; with several traces or --merge use text or json", options.format));
    const CliExpected<MergedRanks> ranks = load_ranks(options, paths);
    if (!ranks)
        return print_failure("report", ranks.error());
    const analyzer::RankSetReport& set = ranks->set;
    if (options.format == "json")
        return write_output(options.output,
            render_rank_set_json(set).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    return write_output(options.output, render_rank_set_text(set, use_color(options.color, options.output)));
}

} // namespace

int run_report(const ReportCliOptions& given)
{
    if (given.merge)
        if (const auto problem = merge_usage_problem(given))
            return usage_error("report", *problem);
    // A table selector for a format that prints every table would be silently ignored: refuse it instead.
    if (given.table && given.format != "csv")
        return usage_error("report",
            fmt::format("--table selects the table of --format csv; --format {} prints every table", given.format));
    const auto whatif_table = fp8_whatif_table(given);
    if (!whatif_table)
        return usage_error("report", whatif_table.error());
    const std::optional<analyzer::GemmTable>& gemm_table = *whatif_table;
    const CliExpected<std::vector<std::string>> paths = resolve_trace_args(given);
    if (!paths)
        return print_failure("report", paths.error());
    if (given.fp8_whatif && (paths->size() > 1 || given.merge))
        return usage_error("report", "--fp8-whatif reads one trace");
    if (paths->size() > 1 || given.merge)
        return run_rank_report(given, *paths);
    ReportCliOptions options = given;
    options.trace_path = paths->front();
    const CliExpected<AnalysedTrace> analysed = load_and_analyse(options);
    if (!analysed)
        return print_failure("report", analysed.error());
    const analyzer::TraceModel& model = analysed->model;
    const analyzer::Report& report = analysed->report;
    if (options.format == "json") {
        auto json = render_report_json(model, report, options.top);
        // Everything `report --merge` needs of this rank, so that ranks can be analysed as independent jobs.
        json["rank_summary"] = rank_summary_json(analyzer::summarize_rank(model, report));
        if (options.fp8_whatif)
            json["fp8_whatif"] = fp8_whatif_json((
                gemm_table ? analyzer::predict_fp8(model, report, *gemm_table) : analyzer::predict_fp8(model, report)));
        return write_output(
            options.output, json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    }
    if (options.format == "md")
        return write_output(options.output, render_report_markdown(model, report, options.top));
    if (options.format == "html")
        return write_output(options.output, render_report_html(model, report, options.top));
    if (options.format == "junit")
        return write_output(options.output, render_report_junit(model, report));
    if (options.format == "csv")
        return write_output(
            options.output, render_report_csv(model, report, options.table.value_or(kCsvTables[0]), options.top));
    const bool color = use_color(options.color, options.output);
    std::string text = render_report_text(model, report,
        ReportTextStyle { .color = color,
            .top = options.top,
            .all_steps = options.all_steps,
            .kernel_name_bytes = options.wide ? 0 : kernel_name_bytes_for(std::getenv("COLUMNS")) });
    if (options.fp8_whatif)
        text += render_fp8_whatif_text(
            (gemm_table ? analyzer::predict_fp8(model, report, *gemm_table) : analyzer::predict_fp8(model, report)),
            color);
    return write_output(options.output, text);
}

} // namespace fp8scope::cli
