#include "commands/export_command.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "commands/exit_codes.hpp"
#include "export/kineto_trace.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace fp8scope::cli {

namespace {

constexpr const char* kExportExamples = R"(Examples:
  fp8scope export run.sqlite --perfetto run.json
  fp8scope export run.sqlite --perfetto run.json.gz --steps 10:12
  fp8scope export run.sqlite --perfetto gpu1.json.gz --device 1 --warmup 0
  fp8scope export run.sqlite -o run.json

Writes Chrome-trace JSON in the layout PyTorch's profiler (Kineto) writes, gzipped when OUT ends in .gz: each GPU
a process and each stream a thread; each host thread with its CUDA API calls and NVTX ranges; flow arrows from
every launch to its GPU work; the analysed steps as ProfilerStep#N slices; per GPU a "bubbles" track with each
bubble named by its cause; scalars and tensor statistics as counters. Open it in https://ui.perfetto.dev or
chrome://tracing, or load it with Holistic Trace Analysis (docs/export.md).

Steps and bubbles are the report's: the same --steps, --device, --warmup, --step-pattern and --step-source
select them. --steps also limits the export to the time of those steps (and the launch calls of GPU work in
it, for HTA and the flows); --device to that GPU's tracks (host threads stay whole). Without --steps
everything in the trace is written, warm-up included, but the warm-up steps get no step slice and no bubbles
(--warmup 0 analyses them too).

The events are written as they are made, so memory stays that of `report` on the same trace. One line on
stdout says what was written.

Exit codes: 0 ok, 2 usage error (also --steps, --device or --warmup selecting nothing), 3 unreadable or
invalid trace (one line on stderr), 74 OUT cannot be written (nothing is left under its name), 70 internal
error.
)";

} // namespace

CLI::App* add_export_command(CLI::App& app, ExportCliOptions& options)
{
    CLI::App* command = app.add_subcommand(
        "export", "Export a trace and its analysis for Perfetto UI, chrome://tracing and Holistic Trace Analysis");
    command
        ->add_option(
            "TRACE", options.analysis.trace_path, "Trace file: an fp8scope trace or an Nsight Systems SQLite export")
        ->required();
    command
        ->add_option("-o,--perfetto,--output", options.perfetto_path,
            "Write Chrome-trace JSON (Kineto's layout) to this file; gzipped when it ends in .gz (-o and --output "
            "as in report and check)")
        ->required();
    add_selection_options(*command, options.analysis);
    command->get_option("--device")
        ->description("Only this GPU's tracks and counters (host threads are written whole)");
    command->get_option("--steps")->description(
        "Only the time of steps A to B (inclusive; the trace's own step numbers, as report lists them, from the "
        "first step after warm-up): A:B, A: or :B");
    add_progress_option(*command, options.analysis.no_progress);
    command->footer(kExportExamples);
    return command;
}

int run_export(const ExportCliOptions& options)
{
    // Opened first, so that an output that cannot be written fails before a long load.
    ChromeTraceFile file(options.perfetto_path);
    if (file.error()) {
        print_error(*file.error());
        return kExitOutput;
    }
    const CliExpected<AnalysedTrace> analysed = load_and_analyse(options.analysis);
    if (!analysed)
        return print_failure("export", analysed.error());
    const analyzer::Report& report = analysed->report;

    PerfettoExportOptions export_options;
    export_options.producer = "fp8scope " FP8SCOPE_VERSION;
    export_options.device = options.analysis.device;
    if (!options.analysis.steps.empty() && !report.steps.steps.empty())
        export_options.window_ns = std::pair { report.steps.steps.front().start_ns, report.steps.steps.back().end_ns };

    std::optional<PerfettoExportCounts> counts;
    {
        CommandProgress progress({ { "exporting", analyzer::StageWeight::kAnalyse } }, options.analysis.no_progress);
        counts = write_perfetto_trace(analysed->model, report, export_options, file, progress.next_stage());
    }
    if (!counts) // only a cancel stops it, and the CLI's hooks never cancel
        throw std::logic_error("export cancelled");
    if (!file.commit()) {
        print_error(*file.error());
        return kExitOutput;
    }
    const auto& steps = report.steps.steps;
    const char* source = analyzer::step_source_name(report.steps.source);
    const std::string what = steps.empty() ? std::string("no analysed step")
        : steps.size() == 1
        ? fmt::format("step {} ({})", steps.front().index, source)
        : fmt::format("{} steps {}-{} ({})", steps.size(), steps.front().index, steps.back().index, source);
    std::error_code size_error;
    const auto bytes = std::filesystem::file_size(options.perfetto_path, size_error);
    std::string notes;
    if (counts->nonfinite_values > 0)
        notes += fmt::format(" ({} NaN/Inf counter values left out)", counts->nonfinite_values);
    if (counts->nan_scalars > 0)
        notes += fmt::format(" ({} NaN scalar values as instants)", counts->nan_scalars);
    return write_stdout(fmt::format("Wrote {}: {} events, {} launch flows, {}{}; {}{}{}.\n",
        printable(options.perfetto_path), counts->events, counts->flows, what,
        export_options.device ? fmt::format(", device {}", *export_options.device) : std::string(),
        format_bytes(size_error ? 0 : static_cast<int64_t>(bytes)), file.gzip() ? " gzipped" : "", notes));
}

} // namespace fp8scope::cli
