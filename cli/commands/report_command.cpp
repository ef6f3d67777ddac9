#include "commands/report_command.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "commands/exit_codes.hpp"
#include "fp8scope/present/units.hpp"
#include "commands/rank_merge.hpp"
#include "rank_json/rank_summary_json.hpp"
#include "report/report_csv.hpp"
#include "fp8scope/present/figures.hpp"
#include "output/present_names.hpp"
#include "report/report_ranks.hpp"
#include "report/report_render.hpp"

#include "fp8scope/analyzer/trace/report.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>

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

    bool parse_int(std::string_view text, int64_t& value)
    {
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        return ec == std::errc() && end == text.data() + text.size();
    }

    // "A:B", "A:", ":B" or "N" (one step, N:N) -> the inclusive step range; false for anything else.
    bool parse_step_range(const std::string& text, analyzer::ReportOptions& out)
    {
        const auto colon = text.find(':');
        if (colon == std::string::npos) {
            int64_t step = 0;
            if (!parse_int(text, step))
                return false;
            out.first_step = out.last_step = step;
            return true;
        }
        const std::string_view first = std::string_view(text).substr(0, colon);
        const std::string_view last = std::string_view(text).substr(colon + 1);
        if (first.empty() && last.empty())
            return false;
        int64_t value = 0;
        if (!first.empty()) {
            if (!parse_int(first, value))
                return false;
            out.first_step = value;
        }
        if (!last.empty()) {
            if (!parse_int(last, value))
                return false;
            out.last_step = value;
        }
        return !(out.first_step && out.last_step && *out.first_step > *out.last_step);
    }

} // namespace

void add_analysis_options(CLI::App& command, ReportCliOptions& options)
{
    command
        .add_option("TRACE", options.trace_args,
            "Trace file: an fp8scope trace or an Nsight Systems SQLite export; several, or a directory (its *.sqlite "
            "files): the per-rank traces of one job. With --merge: per-rank JSON reports, or a directory of them")
        ->required();
    command.add_flag("--merge", options.merge,
        "The ranks of one job from their JSON reports ('fp8scope report RANK.sqlite --format json' each, e.g. as "
        "the tasks of an array job): TRACE... are those files, or directories (their *.json files)");
    add_selection_options(command, options);
}

void add_selection_options(CLI::App& command, ReportCliOptions& options)
{
    command.add_option("--steps", options.steps, "Only steps A to B (inclusive, step numbers after warm-up): A:B, A: or :B; N for step N alone");
    command.add_option("--device", options.device, "Only this device in the totals");
    command
        .add_option("--warmup", options.warmup,
            "First steps to leave out (default 2, fewer when the trace is shorter; a --warmup that leaves no step is "
            "a usage error)")
        ->check(CLI::Range(0, 1000000));
    command.add_option("--step-pattern", options.step_pattern,
        "Regular expression (ECMAScript, whole name) for NVTX step ranges");
    command.add_option("--step-source", options.step_source,
        "Where steps come from: any (markers, else NVTX, else automatic; the default), markers, nvtx, or auto "
        "(automatic detection with markers and NVTX ignored)")
        ->check(CLI::IsMember({ "any", "markers", "nvtx", "auto" }))
        ->default_str("any");
}

std::optional<std::string> to_analysis_options(const ReportCliOptions& options, analyzer::ReportOptions& out)
{
    if (options.warmup) {
        out.steps.warmup = *options.warmup;
        out.warmup_given = true;
    }
    if (!options.step_pattern.empty()) {
        if (auto problem = analyzer::check_nvtx_step_pattern(options.step_pattern))
            return fmt::format("--step-pattern: {}", *problem);
        out.steps.nvtx_pattern = options.step_pattern;
    }
    out.steps.ignore_markers = options.step_source == "nvtx" || options.step_source == "auto";
    out.steps.ignore_nvtx = options.step_source == "markers" || options.step_source == "auto";
    if (!options.steps.empty() && !parse_step_range(options.steps, out))
        return fmt::format("--steps '{}': expected A:B, A: or :B with A <= B, or one step N", options.steps);
    out.device = options.device;
    return std::nullopt;
}

void add_format_options(CLI::App& command, ReportCliOptions& options, bool csv)
{
    std::vector<std::string> formats { "text", "json", "md", "html", "junit" };
    if (csv)
        formats.push_back("csv");
    command
        .add_option("--format", options.format,
            csv ? "Output format: text, json, md, html, junit, or csv (one table, --table)"
                : "Output format: text, json, md, html or junit")
        ->check(CLI::IsMember(formats))
        ->default_str("text");
    command
        .add_option("--color", options.color, "Colour in text output: auto (a terminal, NO_COLOR unset), always, never")
        ->check(CLI::IsMember({ "auto", "always", "never" }))
        ->default_str("auto");
}

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
    report->add_flag("--all-steps", options.all_steps,
        "Every step's row in the text report (without it, more than 10 steps per device show the slowest, the median "
        "and the fastest)");
    add_output_option(*report, options.output);
    add_progress_option(*report, options.no_progress);
    report->footer(kReportExamples);
    return report;
}

std::optional<analyzer::Report> analyse_selection(const analyzer::TraceModel& model,
    const analyzer::ReportOptions& options, std::string_view command, std::string_view which, int& exit_code,
    const analyzer::ProgressHook& progress)
{
    auto analysed = analyzer::analyze(model, options, progress);
    if (!analysed) // only a cancel fails, and the CLI's hooks never cancel
        throw std::logic_error(analysed.error().message);
    analyzer::Report& report = *analysed;
    const analyzer::Selection& selection = report.selection;
    // A command that reads two traces says which one the message is about.
    const std::string subject
        = which.empty() ? std::string("the trace") : fmt::format("{} ({})", which, printable(model.path));
    if (!selection.empty.empty()) {
        exit_code
            = usage_error(command, which.empty() ? selection.empty : fmt::format("{}: {}", subject, selection.empty));
        return std::nullopt;
    }
    if (selection.warmup_clamped)
        print_warning(fmt::format("{} has {} ({}): {} left out instead of {}, so that one step is analysed", subject,
            count_of(selection.steps_found, "step", "steps"), analyzer::step_source_name(report.steps.source),
            count_of(report.steps.warmup_excluded, "warm-up step", "warm-up steps"), selection.warmup_requested));
    return std::move(report);
}

std::optional<std::vector<std::string>> resolve_trace_args(
    const std::vector<std::string>& args, int& exit_code, std::string_view extension)
{
    namespace fs = std::filesystem;
    std::vector<std::string> paths;
    for (const std::string& arg : args) {
        std::error_code error;
        if (!fs::is_directory(arg, error)) {
            paths.push_back(arg); // a file, or a path the loader then reports as missing
            continue;
        }
        std::vector<std::string> found;
        for (fs::directory_iterator it(arg, error), end; !error && it != end; it.increment(error))
            if (it->path().extension() == extension && it->is_regular_file(error))
                found.push_back(it->path().string());
        // A directory without a trace is an input with nothing to read, as `info` says of any directory: exit 3.
        if (error || found.empty()) {
            print_error(error ? fmt::format("{}: cannot read the directory: {}", printable(arg), error.message())
                              : fmt::format("{}: no *{} file in the directory", printable(arg), extension));
            exit_code = kExitBadTrace;
            return std::nullopt;
        }
        std::sort(found.begin(), found.end());
        paths.insert(paths.end(), found.begin(), found.end());
    }
    return paths;
}

void warn_missing_ranks(const analyzer::RankSetReport& set)
{
    if (set.ranks.empty() || static_cast<int64_t>(set.ranks.size()) >= set.ranks.front().world_size)
        return;
    constexpr size_t kNamed = 8;
    std::vector<int32_t> missing;
    size_t given = 0; // set.ranks is by rank, distinct and below the world size (check_one_job())
    for (int32_t rank = 0; rank < set.ranks.front().world_size && missing.size() <= kNamed; ++rank) {
        if (given < set.ranks.size() && set.ranks[given].rank == rank)
            ++given;
        else
            missing.push_back(rank);
    }
    const int64_t absent = set.ranks.front().world_size - static_cast<int64_t>(set.ranks.size());
    print_warning(fmt::format("{} of world size {}: the figures across ranks leave out {} {}{}",
        count_of(static_cast<int64_t>(set.ranks.size()), "rank", "ranks"), set.ranks.front().world_size,
        absent == 1 ? "rank" : "ranks",
        fmt::join(missing.begin(), missing.begin() + static_cast<ptrdiff_t>(std::min(missing.size(), kNamed)), ", "),
        missing.size() > kNamed ? fmt::format(" and {} more", absent - static_cast<int64_t>(kNamed)) : ""));
}

std::optional<analyzer::RankSetReport> load_rank_set(
    const ReportCliOptions& options, const std::vector<std::string>& paths, std::string_view command, int& exit_code)
{
    analyzer::ReportOptions report_options;
    if (auto problem = to_analysis_options(options, report_options)) {
        exit_code = usage_error(command, *problem);
        return std::nullopt;
    }
    CommandProgress progress({ { fmt::format("loading and analysing {} traces", paths.size()),
                                   analyzer::StageWeight::kLoad + analyzer::StageWeight::kAnalyse } },
        options.no_progress);
    auto set = analyzer::analyze_rank_set(paths, report_options, progress.next_stage());
    if (set) {
        warn_missing_ranks(*set);
        return std::move(*set);
    }
    if (set.error().code == ErrorCode::Usage) {
        exit_code = usage_error(command, set.error().message);
        return std::nullopt;
    }
    // A directory of unrelated traces (issue 28 item 6): say how it was read, and how to report each file.
    const bool from_directory = std::ranges::any_of(
        options.trace_args, [](const std::string& arg) { return std::filesystem::is_directory(arg); });
    print_error(from_directory ? set.error().message
                + " (a directory is read as the traces of one job's ranks; give a file to analyse it alone, e.g. '"
                + paths.front() + "')"
                               : set.error().message);
    exit_code = kExitBadTrace;
    return std::nullopt;
}

std::optional<AnalysedTrace> load_and_analyse(const ReportCliOptions& options, std::string_view command, int& exit_code)
{
    analyzer::ReportOptions report_options;
    if (auto problem = to_analysis_options(options, report_options)) {
        exit_code = usage_error(command, *problem);
        return std::nullopt;
    }
    CommandProgress progress({ { "loading", analyzer::StageWeight::kLoad },
                                 { "analysing", analyzer::StageWeight::kAnalyse } },
        options.no_progress);
    std::optional<analyzer::TraceModel> model = load_trace_or_report(options.trace_path, progress.next_stage());
    if (!model) {
        exit_code = kExitBadTrace;
        return std::nullopt;
    }
    std::optional<analyzer::Report> report
        = analyse_selection(*model, report_options, command, {}, exit_code, progress.next_stage());
    if (!report)
        return std::nullopt;
    return AnalysedTrace { std::move(*model), std::move(*report) };
}

namespace {

    // Several traces, or --merge: the ranks of one job (docs/cli.md "Several ranks"), in text or JSON.
    int run_rank_report(const ReportCliOptions& options, const std::vector<std::string>& paths)
    {
        if (options.format != "text" && options.format != "json")
            return usage_error("report",
                fmt::format("--format {} reads one trace only; with several traces or --merge use text or json",
                    options.format));
        int exit_code = kExitOk;
        std::optional<analyzer::RankSetReport> set;
        if (!options.merge)
            set = load_rank_set(options, paths, "report", exit_code);
        else if (std::optional<MergedRanks> merged = load_merged_ranks(paths, exit_code)) {
            warn_missing_ranks(merged->set);
            set = std::move(merged->set);
        }
        if (!set)
            return exit_code;
        if (options.format == "json")
            return write_output(options.output, render_rank_set_json(*set).dump(2, ' ', false,
                                    nlohmann::ordered_json::error_handler_t::replace)
                + "\n");
        return write_output(options.output, render_rank_set_text(*set, use_color(options.color, options.output)));
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
    int exit_code = kExitOk;
    const std::optional<std::vector<std::string>> paths
        = resolve_trace_args(given.trace_args, exit_code, given.merge ? ".json" : ".sqlite");
    if (!paths)
        return exit_code;
    if (paths->size() > 1 || given.merge)
        return run_rank_report(given, *paths);
    ReportCliOptions options = given;
    options.trace_path = paths->front();
    const std::optional<AnalysedTrace> analysed = load_and_analyse(options, "report", exit_code);
    if (!analysed)
        return exit_code;
    const analyzer::TraceModel& model = analysed->model;
    const analyzer::Report& report = analysed->report;
    if (options.format == "json") {
        auto json = render_report_json(model, report, options.top);
        // Everything `report --merge` needs of this rank, so that ranks can be analysed as independent jobs.
        json["rank_summary"] = rank_summary_json(analyzer::summarize_rank(model, report));
        return write_output(options.output, json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
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
    return write_output(options.output, render_report_text(
        model, report,
        ReportTextStyle { .color = use_color(options.color, options.output), .top = options.top, .all_steps = options.all_steps }));
}

} // namespace fp8scope::cli
