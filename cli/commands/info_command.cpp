#include "commands/info_command.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "commands/exit_codes.hpp"
#include "trace_info/info_render.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace fp8scope::cli {

namespace {

constexpr const char* kInfoExamples = R"(Examples:
  fp8scope info samples/traces/scenario-demo.sqlite
  fp8scope info run.sqlite --format json
  fp8scope info report.sqlite     (an Nsight Systems export: nsys export --type sqlite)

A finished trace is summarized from what it recorded when it was closed (its meta, row counts and
activity span) and a few small tables, in milliseconds at any size; older and unfinished traces and Nsight
exports are read whole. --read-rows reads and checks every row, as report does. Loading that takes over a
second shows a progress bar on stderr when it is a terminal; --no-progress turns it off.

Exit codes: 0 ok, 2 usage error, 3 unreadable or invalid trace (one line on stderr), 74 stdout cannot be
written, 70 internal error.
The JSON object is documented in docs/cli.md.
)";

} // namespace

CLI::App* add_info_command(CLI::App& app, InfoOptions& options)
{
    CLI::App* info = app.add_subcommand("info", "Show what a trace holds: origin, process, GPUs, time span, rows");
    info->add_option("TRACE", options.trace_path, "Trace file: an fp8scope trace or an Nsight Systems SQLite export")
        ->required();
    info->add_option("--format", options.format, "Output format")
        ->check(CLI::IsMember({ "text", "json" }))
        ->default_str("text");
    add_output_option(*info, options.output);
    info->add_flag("--read-rows", options.read_rows,
        "Read and check every row (as report does) instead of the finished trace's recorded counts and span");
    add_progress_option(*info, options.no_progress);
    info->footer(kInfoExamples);
    return info;
}

int run_info(const InfoOptions& options)
{
    CliExpected<analyzer::TraceSummary> summary = [&] {
        CommandProgress progress({ { "loading", analyzer::StageWeight::kLoad } }, options.no_progress);
        return load_trace_summary(options.trace_path, options.read_rows, progress.next_stage());
    }();
    if (!summary)
        return print_failure("info", summary.error());

    if (options.format == "json") {
        const auto json = render_info_json(*summary);
        // Replace invalid UTF-8 rather than throw: trace text is untrusted.
        return write_output(
            options.output, json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    }
    return write_output(options.output,
        render_info_text(*summary, TextStyle { .bold_headings = options.output.empty() && use_bold_headings() }));
}

} // namespace fp8scope::cli
