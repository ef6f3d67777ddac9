#include "inputs/trace_args.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "fp8scope/analyzer/whatif/gemm_table_json.hpp"
#include "output/present_names.hpp"

#include "fp8scope/present/figures.hpp"
#include "fp8scope/present/selection_wording.hpp"
#include "fp8scope/present/units.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace fp8scope::cli {

namespace {

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

// to_analysis_options() as a step that can fail.
CliExpected<analyzer::ReportOptions> analysis_options(const ReportCliOptions& options)
{
    analyzer::ReportOptions report_options;
    report_options.word_empty_selection = present::empty_selection_text;
    if (auto problem = to_analysis_options(options, report_options))
        return cli_failure(kExitUsage, std::move(*problem));
    return report_options;
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
    command.add_option("--steps", options.steps,
        "Only steps A to B (inclusive; the trace's own step numbers, as report lists them, from the first step "
        "after warm-up): A:B, A: or :B; N for step N alone");
    command.add_option("--device", options.device, "Only this device in the totals");
    command
        .add_option("--warmup", options.warmup,
            "First steps to leave out (default 2, fewer when the trace is shorter; a --warmup that leaves no step is "
            "a usage error)")
        ->check(CLI::Range(0, 1000000));
    command.add_option(
        "--step-pattern", options.step_pattern, "Regular expression (ECMAScript, whole name) for NVTX step ranges");
    command
        .add_option("--step-source", options.step_source,
            "Where steps come from: any (markers, else NVTX, else the optimizer steps fp8scope record's PyTorch hook "
            "marked, else automatic; the default), markers, nvtx, or auto "
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

CliExpected<std::vector<std::string>> resolve_trace_args(const ReportCliOptions& options)
{
    namespace fs = std::filesystem;
    const std::string_view extension = options.merge ? ".json" : ".sqlite";
    std::vector<std::string> paths;
    for (const std::string& arg : options.trace_args) {
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
        if (error || found.empty())
            return cli_failure(kExitBadTrace,
                error ? fmt::format("{}: cannot read the directory: {}", printable(arg), error.message())
                      : fmt::format("{}: no *{} file in the directory", printable(arg), extension));
        std::sort(found.begin(), found.end());
        paths.insert(paths.end(), found.begin(), found.end());
    }
    return paths;
}

CliExpected<MergedRanks> load_ranks(const ReportCliOptions& options, const std::vector<std::string>& paths)
{
    if (options.merge) {
        CliExpected<MergedRanks> merged = load_merged_ranks(paths);
        if (merged)
            warn_missing_ranks(merged->set);
        return merged;
    }
    CliExpected<analyzer::RankSetReport> set = load_rank_set(options, paths);
    if (!set)
        return std::unexpected(std::move(set.error()));
    return MergedRanks { std::move(*set), paths };
}

CliExpected<analyzer::RankSetReport> load_rank_set(
    const ReportCliOptions& options, const std::vector<std::string>& paths)
{
    const CliExpected<analyzer::ReportOptions> report_options = analysis_options(options);
    if (!report_options)
        return std::unexpected(report_options.error());
    CommandProgress progress({ { fmt::format("loading and analysing {} traces", paths.size()),
                                 analyzer::StageWeight::kLoad + analyzer::StageWeight::kAnalyse } },
        options.no_progress);
    auto set = analyzer::analyze_rank_set(paths, *report_options, progress.next_stage());
    if (set) {
        warn_missing_ranks(*set);
        return std::move(*set);
    }
    CliError error = to_cli_error(std::move(set.error()));
    // A directory of unrelated traces (issue 28 item 6): say how it was read, and how to report each file.
    const bool from_directory = std::ranges::any_of(
        options.trace_args, [](const std::string& arg) { return std::filesystem::is_directory(arg); });
    if (error.exit_code == kExitBadTrace && from_directory)
        error.message
            += " (a directory is read as the traces of one job's ranks; give a file to analyse it alone, e.g. '"
            + paths.front() + "')";
    // Two runs given where ranks are read (issue 45): the user most likely wanted to compare them.
    else if (error.exit_code == kExitBadTrace && paths.size() == 2)
        error.message += fmt::format(" (several traces are read as the ranks of one job; to compare two runs use "
                                     "'fp8scope compare {} {}', or 'fp8scope check {} --ref {}')",
            printable(paths[0]), printable(paths[1]), printable(paths[0]), printable(paths[1]));
    return std::unexpected(std::move(error));
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

CliExpected<AnalysedTrace> load_and_analyse(const ReportCliOptions& options)
{
    const CliExpected<analyzer::ReportOptions> report_options = analysis_options(options);
    if (!report_options)
        return std::unexpected(report_options.error());
    CommandProgress progress(
        { { "loading", analyzer::StageWeight::kLoad }, { "analysing", analyzer::StageWeight::kAnalyse } },
        options.no_progress);
    CliExpected<analyzer::TraceModel> model = load_trace_model(options.trace_path, progress.next_stage());
    if (!model)
        return std::unexpected(std::move(model.error()));
    CliExpected<analyzer::Report> report = analyse_selection(*model, *report_options, {}, progress.next_stage());
    if (!report)
        return std::unexpected(std::move(report.error()));
    return AnalysedTrace { std::move(*model), std::move(*report) };
}

CliExpected<analyzer::Report> analyse_selection(const analyzer::TraceModel& model,
    const analyzer::ReportOptions& options, std::string_view which, const analyzer::ProgressHook& progress)
{
    auto analysed = analyzer::analyze(model, options, progress);
    if (!analysed) // only a cancel fails, and the CLI's hooks never cancel
        throw std::logic_error(analysed.error().message);
    analyzer::Report& report = *analysed;
    const analyzer::Selection& selection = report.selection;
    // A command that reads two traces says which one the message is about.
    const std::string subject
        = which.empty() ? std::string("the trace") : fmt::format("{} ({})", which, printable(model.path));
    if (selection.empty) {
        const std::string why = present::empty_selection_text(selection);
        return cli_failure(kExitUsage, which.empty() ? why : fmt::format("{}: {}", subject, why));
    }
    if (selection.warmup_clamped)
        print_warning(fmt::format("{} has {} ({}): {} left out instead of {}, so that one step is analysed", subject,
            count_of(selection.steps_found, "step", "steps"), analyzer::step_source_name(report.steps.source),
            count_of(report.steps.warmup_excluded, "warm-up step", "warm-up steps"), selection.warmup_requested));
    return std::move(report);
}

std::expected<std::optional<analyzer::GemmTable>, std::string> fp8_whatif_table(const ReportCliOptions& options)
{
    if (!options.gemm_table.empty() && !options.fp8_whatif)
        return std::unexpected("--gemm-table is the GEMM table of --fp8-whatif");
    if (options.fp8_whatif && options.format != "text" && options.format != "json")
        return std::unexpected(fmt::format("--fp8-whatif is text or json, not --format {}", options.format));
    if (options.gemm_table.empty())
        return std::nullopt;
    std::string why;
    auto table = analyzer::read_gemm_table_file(options.gemm_table, why);
    if (!table)
        return std::unexpected(fmt::format("--gemm-table {}: {}", present::printable(options.gemm_table), why));
    return table;
}

} // namespace fp8scope::cli
