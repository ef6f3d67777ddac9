// fp8scope: the command-line tool. A thin layer over the analyzer: it parses arguments (CLI11), calls the
// analyzer, and formats what comes back. Exit codes follow the spec's "CLI conventions" (exit_codes.hpp).
#include "calibrate/calibrate_command.hpp"
#include "commands/check_command.hpp"
#include "commands/command_support.hpp"
#include "commands/compare_command.hpp"
#include "commands/exit_codes.hpp"
#include "commands/export_command.hpp"
#include "commands/info_command.hpp"
#include "commands/report_command.hpp"
#include "record/record_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string_view>
#include <vector>

namespace {

// Edit distance between two option names (insertions, deletions, substitutions, adjacent swaps).
size_t edit_distance(std::string_view a, std::string_view b)
{
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({ d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1) });
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

// "unknown option '--stpes' (did you mean --steps?)" for the first argument of the form --name that `command` does
// not know, when one of its options is within two edits of it; nullopt otherwise.
std::optional<std::string> did_you_mean(const CLI::App& command, const std::vector<const char*>& args)
{
    std::vector<std::string> known;
    for (const CLI::Option* option : command.get_options())
        for (const std::string& name : option->get_lnames())
            known.push_back("--" + name);
    for (const char* arg : args) {
        const std::string_view given = std::string_view(arg).substr(0, std::string_view(arg).find('='));
        if (given == "--")
            break; // the recorded command's own arguments
        if (!given.starts_with("--") || std::ranges::find(known, given) != known.end())
            continue;
        const std::string* best = nullptr;
        size_t best_distance = 3;
        for (const std::string& name : known)
            if (const size_t d = edit_distance(given, name); d < best_distance) {
                best = &name;
                best_distance = d;
            }
        if (best)
            return fmt::format("unknown option '{}' (did you mean {}?)", given, *best);
        return std::nullopt;
    }
    return std::nullopt;
}

constexpr const char* kMainExamples = R"(Examples:
  fp8scope info samples/traces/scenario-demo.sqlite
  fp8scope info run.sqlite --format json
  fp8scope report samples/traces/h100-train-fp8.sqlite
  fp8scope check run.sqlite --max-bubble-ratio 0.3 --junit check.xml
  fp8scope compare samples/traces/compare/h100-drift-fp8.sqlite samples/traces/compare/h100-drift-bf16.sqlite
  fp8scope check fp8.sqlite --ref bf16.sqlite --junit check.xml
  fp8scope export run.sqlite --perfetto run.json.gz --steps 10:12
  fp8scope record -o 'traces/run-%r-%p.sqlite' -- python train.py --precision fp8
  fp8scope calibrate bf16.sqlite -o gemm_table.json
  fp8scope record --help

Exit codes: 0 ok, 1 a check budget failed (or had no data to judge), 2 usage error (also --steps, --device
or --warmup selecting nothing), 3 unreadable or invalid trace, 74 output cannot be written, 70 internal error
(a bug: please report it); 3 also for two traces that compare or check --ref cannot compare; 74 also for an
export file that cannot be written; 69 calibrate found no GPU, CUDA driver or cuBLASLt. record exits with
the recorded command's exit code (see fp8scope record --help).
Reference: docs/cli.md; trace format: docs/trace-format.md.
)";

int run(int argc, char** argv)
{
    using namespace fp8scope::cli;

    CLI::App app { "fp8scope: profiling and diagnosis of FP8 training on NVIDIA GPUs", "fp8scope" };
    app.set_version_flag("--version", "fp8scope " FP8SCOPE_VERSION);
    // At most one subcommand; "none" is reported below with our own message, and an unknown word then reaches
    // CLI11 as an unexpected argument, which names it.
    app.require_subcommand(0, 1);
    app.footer(kMainExamples);

    InfoOptions info_options;
    CLI::App* info = add_info_command(app, info_options);
    RecordOptions record_options;
    CLI::App* record = add_record_command(app, record_options);
    ReportCliOptions report_options;
    CLI::App* report = add_report_command(app, report_options);
    CheckCliOptions check_options;
    CLI::App* check = add_check_command(app, check_options);
    CompareCliOptions compare_options;
    CLI::App* compare = add_compare_command(app, compare_options);
    ExportCliOptions export_options;
    CLI::App* export_command = add_export_command(app, export_options);
    CalibrateOptions calibrate_options;
    CLI::App* calibrate = add_calibrate_command(app, calibrate_options);
    constexpr const char* kAvailable = "available: info, record, report, check, compare, export, calibrate";

    // The recorded command's own arguments never reach CLI11 (`-- python train.py --lr 3`).
    const std::vector<const char*> args = split_record_command(*record, argc, argv, record_options);
    auto help_hint = [&] {
        if (info->parsed())
            return "fp8scope info";
        if (report->parsed())
            return "fp8scope report";
        if (check->parsed())
            return "fp8scope check";
        if (compare->parsed())
            return "fp8scope compare";
        if (export_command->parsed())
            return "fp8scope export";
        if (calibrate->parsed())
            return "fp8scope calibrate";
        return record->parsed() ? "fp8scope record" : "fp8scope";
    };
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::Success& e) {
        // --help and --version: CLI11 prints them to stdout.
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        const bool in_subcommand = info->parsed() || record->parsed() || report->parsed() || check->parsed()
            || compare->parsed() || export_command->parsed() || calibrate->parsed();
        // CLI11 reports a mistyped subcommand as unexpected arguments, listed in reverse; name it plainly.
        std::optional<std::string> suggestion;
        for (const CLI::App* command : { info, record, report, check, compare, export_command, calibrate })
            if (command->parsed())
                suggestion = did_you_mean(*command, args);
        if (!in_subcommand && argc > 1 && argv[1][0] != '-')
            fmt::print(stderr, "fp8scope: usage error: unknown subcommand '{}' ({})\n", argv[1], kAvailable);
        else if (suggestion)
            fmt::print(stderr, "fp8scope: usage error: {}\n", *suggestion);
        else
            fmt::print(stderr, "fp8scope: usage error: {}\n", e.what());
        fmt::print(stderr, "Run '{} --help' for usage and examples.\n", help_hint());
        return kExitUsage;
    }

    if (info->parsed())
        return run_info(info_options);
    if (report->parsed())
        return run_report(report_options);
    if (check->parsed())
        return run_check(check_options);
    if (compare->parsed())
        return run_compare(compare_options);
    if (export_command->parsed())
        return run_export(export_options);
    if (calibrate->parsed())
        return run_calibrate(calibrate_options);
    if (record->parsed()) {
        if (const auto error = record_usage_error(record_options))
            return usage_error("record", *error);
        return run_record(record_options);
    }
    fmt::print(stderr, "fp8scope: usage error: a subcommand is required ({})\n", kAvailable);
    fmt::print(stderr, "Run 'fp8scope --help' for usage and examples.\n");
    return kExitUsage;
}

} // namespace

int main(int argc, char** argv)
{
    // Last resort: every expected failure is an error value with its own exit code. Whatever reaches here is a
    // bug in fp8scope, reported as such (70, EX_SOFTWARE) instead of std::terminate's abort.
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fp8scope: internal error: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "fp8scope: internal error: unknown exception\n");
    }
    return fp8scope::cli::kExitInternal;
}
