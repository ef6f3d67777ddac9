#include "commands/compare_command.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "commands/exit_codes.hpp"
#include "compare/compare_render.hpp"
#include "fp8scope/analyzer/whatif/fp8_whatif.hpp"
#include "fp8scope/present/units.hpp"
#include "output/present_names.hpp"
#include "report/report_render.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace fp8scope::cli {

namespace {

constexpr const char* kCompareExamples = R"(Examples:
  fp8scope compare samples/traces/compare/h100-drift-fp8.sqlite samples/traces/compare/h100-drift-bf16.sqlite
  fp8scope compare fp8.sqlite bf16.sqlite --format json > compare.json
  fp8scope compare fp8.sqlite bf16.sqlite --format md >> "$GITHUB_STEP_SUMMARY"
  fp8scope compare fp8.sqlite bf16.sqlite --format html > fp8scope-compare.html
  fp8scope compare fp8.sqlite bf16.sqlite --steps 10:200 --loss-scalar train/loss
  fp8scope compare samples/traces/h100-train-fp8.sqlite samples/traces/h100-train-bf16.sqlite   # performance only
  fp8scope compare fp8.sqlite bf16.sqlite --fp8-whatif     # the reference's FP8 what-if against the run
  fp8scope check fp8.sqlite --ref bf16.sqlite --junit compare.xml

RUN is the run under test (typically FP8), REF its reference (the same job in BF16), both recorded with tensor
statistics. Both are analysed with the same step options; their tensor sites are matched by GEMM site with dtype
ignored and operand roles normalised, and per site and common step the run's amax, saturation and headroom are
set against the reference's. A site drifts when a change-point test finds a lasting shift; the first divergent
site is the earliest onset. The loss delta compares the mean of the loss scalar over the last common steps
(threshold 1%, strict 0.25%), and the performance table sets GEMM time saved against FP8 bookkeeping added.
The performance per step follows, as HTA's trace diff: step time, busy time and bubble ratio (medians), idle
by cause, kernel time by class, and the kernels that appeared, vanished or changed most. Traces without tensor
statistics (or of different jobs or GPUs, with no common step or no site in common) are compared by performance
alone: the verdict says why drift and loss were not. Before any figure, compare names each run's GPU, job
(program and arguments beyond precision switches and run names), model (sites and kernel names in common) and
precision; given a BF16 RUN and an FP8 REF, it swaps them and says so. When the collector's own GPU work is 2% of
either run's step or more, a line says that recording inflated the difference, and by about how much.
Definitions and thresholds: docs/analysis.md "Compare"; the JSON schema (fp8scope.compare/1) and the JUnit layout
are in docs/cli.md. junit has two testcases, drift and loss_delta; compare still exits 0 whatever it finds (use
fp8scope check --ref to gate CI, which refuses traces whose drift and loss cannot be compared). Text is
coloured only on a terminal without NO_COLOR, or with --color always.
Loading and analysis that take over a second show a progress bar on stderr when it is a terminal (not in pipes,
files or CI logs); --no-progress turns it off.

Exit codes: 0 ok, 2 usage error (also: --steps, --device or --warmup selecting nothing in either trace), 3 an
unreadable or invalid trace, or a trace without analysed steps (one line on stderr), 74 stdout cannot be
written, 70 internal error. A comparison of the performance alone is 0.
)";

} // namespace

CLI::App* add_compare_command(CLI::App& app, CompareCliOptions& options)
{
    CLI::App* compare = app.add_subcommand("compare",
        "Compare an FP8 run with its reference (e.g. BF16): scaling "
        "drift per tensor site, loss delta, performance per step");
    compare->add_option("RUN", options.report.trace_path, "The run under test (typically FP8): an fp8scope trace")
        ->required();
    compare->add_option("REF", options.ref_path, "Its reference (typically BF16): an fp8scope trace of the same job")
        ->required();
    add_selection_options(*compare, options.report);
    add_format_options(*compare, options.report);
    compare->add_option("--loss-scalar", options.loss_scalar, "Name of the loss scalar in both traces")
        ->default_str("loss");
    compare->add_flag("--fp8-whatif", options.report.fp8_whatif,
        "The reference's FP8 what-if (a BF16 run's), and the run's step against the prediction for its recipe (text "
        "and json)");
    compare
        ->add_option("--gemm-table", options.report.gemm_table,
            "With --fp8-whatif: FP8 against BF16 GEMM times measured on this GPU (fp8scope calibrate) instead of the "
            "H100's")
        ->check(CLI::ExistingFile);
    add_output_option(*compare, options.report.output);
    add_progress_option(*compare, options.report.no_progress);
    compare->footer(kCompareExamples);
    return compare;
}

CliExpected<ComparedRuns> load_and_compare(
    const ReportCliOptions& options, const std::string& ref_path, const std::string& loss_scalar, CompareNeeds needs)
{
    analyzer::CompareOptions compare_options;
    compare_options.loss_scalar = loss_scalar;
    if (auto problem = to_analysis_options(options, compare_options.report))
        return cli_failure(kExitUsage, std::move(*problem));
    // Both files are read before either is analysed: an unreadable file is reported before a selection problem.
    using analyzer::StageWeight;
    CommandProgress progress(
        { { "loading the run", StageWeight::kLoad }, { "loading the reference", StageWeight::kLoad },
            { "analysing the run", StageWeight::kAnalyse }, { "analysing the reference", StageWeight::kAnalyse },
            { "comparing", StageWeight::kCompare } },
        options.no_progress);
    CliExpected<analyzer::TraceModel> run_model = load_trace_model(options.trace_path, progress.next_stage());
    if (!run_model)
        return std::unexpected(std::move(run_model.error()));
    CliExpected<analyzer::TraceModel> ref_model = load_trace_model(ref_path, progress.next_stage());
    if (!ref_model)
        return std::unexpected(std::move(ref_model.error()));
    CliExpected<analyzer::Report> run_report
        = analyse_selection(*run_model, compare_options.report, "the run", progress.next_stage());
    if (!run_report)
        return std::unexpected(std::move(run_report.error()));
    CliExpected<analyzer::Report> ref_report
        = analyse_selection(*ref_model, compare_options.report, "the reference", progress.next_stage());
    if (!ref_report)
        return std::unexpected(std::move(ref_report.error()));
    ComparedRuns compared { { std::move(*run_model), std::move(*run_report) },
        { std::move(*ref_model), std::move(*ref_report) }, {} };
    // FP8 given as the reference and a run without FP8 GEMMs as the run: compared the right way round, and said so
    // (the first lines of every format), so that FP8's price is the FP8 run's with its signs as they are.
    if (analyzer::fp8_given_as_reference(compared.input())) {
        std::swap(compared.run, compared.ref);
        compare_options.swapped = true;
    }
    // compare_runs() takes no hook: it is quick next to loading and analysing (StageWeight::kCompare); the bar
    // names the stage and stays where it is.
    progress.next_stage();
    auto outcome = analyzer::compare_runs(compared.input(), compare_options);
    if (const auto* refusal = std::get_if<analyzer::CompareRefusal>(&outcome))
        return cli_failure(kExitBadTrace, refusal->message);
    compared.result = std::move(std::get<analyzer::CompareResult>(outcome));
    // A gate on drift and loss without them would pass on nothing: refused, as before the performance comparison.
    if (needs == CompareNeeds::Numerics && !compared.result.numerics_compared())
        return cli_failure(kExitBadTrace, compared.result.numerics_not_compared);
    return compared;
}

int run_compare(const CompareCliOptions& options)
{
    const ReportCliOptions& given = options.report;
    const auto whatif_table = fp8_whatif_table(given);
    if (!whatif_table)
        return usage_error("compare", whatif_table.error());
    const std::optional<analyzer::GemmTable>& gemm_table = *whatif_table;
    const CliExpected<ComparedRuns> compared
        = load_and_compare(options.report, options.ref_path, options.loss_scalar, CompareNeeds::Performance);
    if (!compared)
        return print_failure("compare", compared.error());
    const analyzer::CompareInput input = compared->input();
    const analyzer::CompareResult& result = compared->result;
    const std::string& format = options.report.format;
    std::optional<analyzer::Fp8WhatIf> whatif;
    if (given.fp8_whatif)
        whatif = gemm_table ? analyzer::predict_fp8(input.ref_model, input.ref_report, *gemm_table)
                            : analyzer::predict_fp8(input.ref_model, input.ref_report);
    if (format == "json") {
        auto json = render_compare_json(input, result);
        if (whatif)
            json["fp8_whatif"] = compare_fp8_whatif_json(input, result, *whatif);
        return write_output(
            options.report.output, json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    }
    if (format == "md")
        return write_output(options.report.output, render_compare_markdown(input, result));
    if (format == "html")
        return write_output(options.report.output, render_compare_html(input, result));
    if (format == "junit")
        return write_output(options.report.output, render_compare_junit(input, result));
    const bool color = use_color(options.report.color, options.report.output);
    std::string text = render_compare_text(input, result, ReportTextStyle { .color = color });
    if (whatif)
        text += "\n" + render_compare_fp8_whatif_text(input, result, *whatif, color);
    return write_output(options.report.output, text);
}

} // namespace fp8scope::cli
