#include "commands/check_command.hpp"

#include "commands/command_progress.hpp"
#include "commands/command_support.hpp"
#include "commands/compare_command.hpp"
#include "commands/exit_codes.hpp"
#include "fp8scope/present/units.hpp"
#include "inputs/rank_merge.hpp"
#include "output/present_names.hpp"
#include "report/check_render.hpp"

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/ranks/rank_budgets.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace fp8scope::cli {

namespace {

constexpr const char* kCheckExamples = R"(Examples:
  fp8scope check run.sqlite --max-bubble-ratio 0.3 --max-syncs-per-step 2
  fp8scope check run.sqlite --max-launch-bound-ratio 0.1 --junit check.xml --md "$GITHUB_STEP_SUMMARY"
  fp8scope check run.sqlite --max-bubble-ratio 0.25 --steps 10:50 --device 0
  fp8scope check run.sqlite --no-nonfinite --max-saturation 0.001 --max-underflow 0.01
  fp8scope check fp8.sqlite --ref bf16.sqlite --junit check.xml --md "$GITHUB_STEP_SUMMARY"
  fp8scope check fp8.sqlite --ref bf16.sqlite --max-loss-delta 0.0025 --max-drift-sites 0
  fp8scope check rank0.sqlite rank1.sqlite --max-bubble-ratio 0.3 --max-straggler-wait 5ms --junit check.xml
  fp8scope check traces/ --max-straggler-wait 500us
  fp8scope check --merge reports/ --max-straggler-wait 500us --junit check.xml

A budget holds when its figure over all analysed steps is within the limit: the bubble ratio (idle / step
time), the launch-bound ratio (idle time caused by launches / step time), host-blocking syncs per step (mean).
Each result names the worst step and its figure. Definitions: docs/analysis.md.

Tensor budgets read the trace's tensor statistics: --max-saturation and --max-underflow limit the worst single
sample in the analysed steps (a fraction of its elements, 0 to 1) and name its step and tensor; --no-nonfinite
fails on any sample with NaN/Inf, warm-up included, naming the first. A trace without tensor statistics fails
them: a gate that passes without data would vouch for numerics it never saw.

--ref REF compares the trace with its reference (typically the BF16 run of the same job) as fp8scope compare
does: --max-drift-sites N limits the tensor sites whose scaling drifts against the reference (the result names
the first divergent site and its onset step), --max-loss-delta R the relative difference of the mean loss over
the last common steps (1e-2 = 1%; DeepSeek-V3 reports below 0.25%). --ref alone applies both, with 0 drifting
sites and 0.01; the loss delta is shown as a percentage, as compare shows it. Two traces whose drift and loss
cannot be compared (no tensor statistics, different jobs or GPUs, no common step, no site in common) are exit
code 3: compare shows their performance alone, but a gate never passes on numerics it did not see. A TRACE
without FP8 GEMMs against an FP8 REF is gated the right way round, with a warning; the other budgets stay TRACE's.

Several traces (or a directory of *.sqlite files) are the ranks of one job, analysed together as
fp8scope report does: --max-bubble-ratio applies to the worst rank, --max-straggler-wait DURATION (with its
unit: 500us, 5ms, 1.5s) to the largest wait of any rank in one step's collectives; each result names the rank
and the step, and the straggler wait also the straggler that rank waited for. The other budgets and --ref read one trace. Traces of different jobs are exit code 3.
--merge reads the ranks' JSON reports instead ('fp8scope report RANK.sqlite --format json' each, or a
directory of them; docs/multi-rank.md), with the same budgets, results and exit codes.

A budget with nothing to judge fails, with the reason in place of the figure: no steps or no GPU activity in
them (bubble and launch-bound ratios), no CUDA API calls (launch-bound ratio, syncs), no tensor statistics,
no loss scalar in both traces (loss delta), no collective matched across the ranks (straggler wait).
A gate passes only on data it has seen.

Loading and analysis that take over a second show a progress bar on stderr when it is a terminal (never in
pipes, files or CI logs); --no-progress turns it off.

Exit codes: 0 every budget holds, 1 a budget failed (or had no data to judge), 2 usage error (also: no budget
given; --max-loss-delta, --max-drift-sites or --loss-scalar without --ref; --max-straggler-wait with one
trace; a one-trace budget or --ref with several; a selection option with --merge; --steps, --device or
--warmup selecting nothing, with what the trace has), 3 unreadable or invalid trace, two traces that cannot be
compared, traces that are not the ranks of one job, or a bad per-rank JSON report (one line on stderr), 74 a report file or stdout cannot be written, 70 internal error.
)";

// A duration with its unit (parse_duration_ns()): --max-straggler-wait, --max-step-time.
const CLI::Validator kDuration(
    [](std::string& text) {
        return parse_duration_ns(text) ? std::string()
                                       : "expected a duration with its unit (ns, us, ms, s), e.g. 500us or 5ms";
    },
    "DURATION", "duration");

// CLI::Range compares, and every comparison with NaN is false, so "nan" would pass it and then fail (or pass)
// every budget silently.
const CLI::Validator kNotNan(
    [](std::string& text) -> std::string {
        return std::isnan(std::strtod(text.c_str(), nullptr)) ? "NaN is not a budget" : std::string();
    },
    "", "not NaN");

} // namespace

CLI::App* add_check_command(CLI::App& app, CheckCliOptions& options)
{
    CLI::App* check = app.add_subcommand("check",
        "CI gate: exit 1 when a budget (bubble ratio, syncs per step, "
        "launch-bound ratio, tensor health, drift against a reference) "
        "fails");
    add_analysis_options(*check, options.report);
    check->add_option("--max-bubble-ratio", options.max_bubble_ratio, "Budget for idle / step time (0 to 1)")
        ->check(CLI::Range(0.0, 1.0))
        ->check(kNotNan);
    check
        ->add_option("--max-straggler-wait", options.max_straggler_wait,
            "Several traces: budget for the largest wait of any rank in one step's collectives (500us, 5ms, 1.5s)")
        ->check(kDuration);
    check
        ->add_option("--max-step-time", options.max_step_time,
            "Budget for the mean step time (500us, 5ms, 1.5s); the worst step is the longest")
        ->check(kDuration);
    check->add_option("--max-syncs-per-step", options.max_syncs_per_step, "Budget for host-blocking syncs per step")
        ->check(CLI::NonNegativeNumber)
        ->check(kNotNan);
    check
        ->add_option("--max-launch-bound-ratio", options.max_launch_bound_ratio,
            "Budget for launch-caused idle / step time (0 to 1)")
        ->check(CLI::Range(0.0, 1.0))
        ->check(kNotNan);
    check
        ->add_option("--max-saturation", options.max_saturation,
            "Budget for the worst tensor sample's saturated fraction (0 to 1)")
        ->check(CLI::Range(0.0, 1.0))
        ->check(kNotNan);
    check
        ->add_option("--max-underflow", options.max_underflow,
            "Budget for the worst tensor sample's underflow fraction (0 to 1)")
        ->check(CLI::Range(0.0, 1.0))
        ->check(kNotNan);
    check->add_flag("--no-nonfinite", options.no_nonfinite, "Fail when any tensor sample holds NaN or Inf");
    CLI::Option* ref = check->add_option("--ref", options.ref_path,
        "Reference trace (e.g. the BF16 run of the same job): gate on scaling drift and the loss delta against it");
    check
        ->add_option("--max-loss-delta", options.max_loss_delta,
            "Budget for the relative loss delta against --ref (0 or more; with --ref and no compare budget: 0.01)")
        ->check(CLI::NonNegativeNumber)
        ->check(kNotNan)
        ->needs(ref);
    check
        ->add_option("--max-drift-sites", options.max_drift_sites,
            "Budget for the sites that drift against --ref (with --ref and no compare budget: 0)")
        ->check(CLI::NonNegativeNumber)
        ->needs(ref);
    check->add_option("--loss-scalar", options.loss_scalar, "Name of the loss scalar in both traces (with --ref)")
        ->default_str("loss")
        ->needs(ref);
    check->add_option("--junit", options.junit_path, "Also write JUnit XML here (one testcase per budget)");
    check->add_option("--md", options.md_path, "Also write a Markdown summary here (CI job summaries)");
    add_output_option(*check, options.report.output);
    add_progress_option(*check, options.report.no_progress);
    check->footer(kCheckExamples);
    return check;
}

namespace {

// The verdicts in every format asked for; kExitCheckFailed when one failed.
int write_check(
    const CheckCliOptions& options, const CheckSubject& subject, const std::vector<analyzer::BudgetResult>& results)
{
    if (!options.junit_path.empty() && !write_text_file(options.junit_path, render_check_junit(subject, results)))
        return kExitOutput;
    if (!options.md_path.empty() && !write_text_file(options.md_path, render_check_markdown(subject, results)))
        return kExitOutput;
    if (const int written = write_output(options.report.output, render_check_text(subject, results));
        written != kExitOk)
        return written;
    for (const auto& r : results)
        if (!r.passed)
            return kExitCheckFailed;
    return kExitOk;
}

// Several traces: the ranks of one job, gated on the worst rank's bubble ratio and the largest straggler wait.
int run_rank_check(const CheckCliOptions& options, const std::vector<std::string>& paths)
{
    if (!options.ref_path.empty() || options.max_syncs_per_step || options.max_launch_bound_ratio
        || !options.max_step_time.empty() || options.max_saturation || options.max_underflow || options.no_nonfinite)
        return usage_error("check",
            "with several traces only --max-bubble-ratio and --max-straggler-wait apply (the other budgets and "
            "--ref read one trace)");
    const CliExpected<MergedRanks> ranks = load_ranks(options.report, paths);
    if (!ranks)
        return print_failure("check", ranks.error());
    const analyzer::RankSetReport& set = ranks->set;
    const analyzer::RankBudgets budgets { .max_bubble_ratio = options.max_bubble_ratio,
        .max_straggler_wait_ns
        = options.max_straggler_wait.empty() ? std::nullopt : parse_duration_ns(options.max_straggler_wait) };
    // Named by their traces, also when merged (MergedRanks::traces).
    // Filled field by field: GCC 12 warns -Wmaybe-uninitialized of a designated `.recording = {}` in Release.
    CheckSubject subject;
    subject.trace = fmt::format("{} ranks: {}", set.ranks.size(), fmt::join(ranks->traces, ", "));
    subject.warnings = rank_recording_warnings(set.ranks);
    return write_check(options, subject, analyzer::evaluate_rank_budgets(set, budgets));
}

} // namespace

int run_check(const CheckCliOptions& given)
{
    if (given.report.merge)
        if (const auto problem = merge_usage_problem(given.report))
            return usage_error("check", *problem);
    const CliExpected<std::vector<std::string>> paths = resolve_trace_args(given.report);
    if (!paths)
        return print_failure("check", paths.error());
    if (paths->size() > 1 || given.report.merge) {
        // One-trace budgets are named, not met with "no budget given" (issue 28 item 6).
        std::vector<std::string> one_trace;
        if (given.max_syncs_per_step)
            one_trace.emplace_back("--max-syncs-per-step");
        if (given.max_launch_bound_ratio)
            one_trace.emplace_back("--max-launch-bound-ratio");
        if (!given.max_step_time.empty())
            one_trace.emplace_back("--max-step-time");
        if (given.max_saturation)
            one_trace.emplace_back("--max-saturation");
        if (given.max_underflow)
            one_trace.emplace_back("--max-underflow");
        if (given.no_nonfinite)
            one_trace.emplace_back("--no-nonfinite");
        if (!one_trace.empty())
            return usage_error("check",
                fmt::format("{} {} to one trace; over the ranks of a job use --max-bubble-ratio "
                            "or --max-straggler-wait, or check each rank's trace on its own",
                    fmt::join(one_trace, ", "), one_trace.size() == 1 ? "applies" : "apply"));
        if (!given.max_bubble_ratio && given.max_straggler_wait.empty())
            return usage_error("check", "no budget given: use --max-bubble-ratio or --max-straggler-wait");
        return run_rank_check(given, *paths);
    }
    if (!given.max_straggler_wait.empty())
        return usage_error("check", "--max-straggler-wait needs the traces of several ranks (or their directory)");
    CheckCliOptions options = given;
    options.report.trace_path = paths->front();
    const analyzer::Budgets budgets { .max_bubble_ratio = options.max_bubble_ratio,
        .max_syncs_per_step = options.max_syncs_per_step,
        .max_launch_bound_ratio = options.max_launch_bound_ratio,
        .max_step_time_ns = options.max_step_time.empty()
            ? std::nullopt
            : std::optional<double>(static_cast<double>(*parse_duration_ns(options.max_step_time))),
        .max_saturation = options.max_saturation,
        .max_underflow = options.max_underflow,
        .no_nonfinite = options.no_nonfinite };
    const bool comparing = !options.ref_path.empty();
    if (!budgets.max_bubble_ratio && !budgets.max_syncs_per_step && !budgets.max_launch_bound_ratio
        && !budgets.max_step_time_ns && !budgets.max_saturation && !budgets.max_underflow && !budgets.no_nonfinite
        && !comparing)
        return usage_error("check",
            "no budget given: use --max-bubble-ratio, --max-syncs-per-step, --max-launch-bound-ratio, --max-step-time, "
            "--max-saturation, --max-underflow, --no-nonfinite or --ref");
    std::optional<AnalysedTrace> analysed;
    std::optional<ComparedRuns> compared;
    if (comparing) {
        CliExpected<ComparedRuns> loaded
            = load_and_compare(options.report, options.ref_path, options.loss_scalar, CompareNeeds::Numerics);
        if (!loaded)
            return print_failure("check", loaded.error());
        compared = std::move(*loaded);
    } else {
        CliExpected<AnalysedTrace> loaded = load_and_analyse(options.report);
        if (!loaded)
            return print_failure("check", loaded.error());
        analysed = std::move(*loaded);
    }
    // The trace budgets are RUN's, as given; drift and loss are the FP8 run's against the other, which
    // load_and_compare() put the right way round when the FP8 run was given as the reference.
    const bool swapped = compared && compared->result.identity.swapped;
    const AnalysedTrace& run = compared ? (swapped ? compared->ref : compared->run) : *analysed;
    auto results = analyzer::evaluate_budgets(run.report, budgets);
    if (compared) {
        analyzer::CompareBudgets compare_budgets { .max_loss_delta = options.max_loss_delta,
            .max_drift_sites = options.max_drift_sites };
        if (!compare_budgets.max_loss_delta && !compare_budgets.max_drift_sites)
            compare_budgets = analyzer::kDefaultCompareBudgets;
        for (auto& r : analyzer::evaluate_compare_budgets(compared->result, compare_budgets))
            results.push_back(std::move(r));
    }
    CheckSubject subject { .trace = options.report.trace_path,
        .recording = run.report.recording,
        .reference = options.ref_path,
        .nan_scalars = run.report.nan_scalars,
        .warnings = {} };
    if (swapped)
        subject.warnings.push_back(fmt::format("the FP8 run was given as the reference: drift and loss are gated for "
                                               "'{}' against '{}' (swap the arguments to silence this)",
            compared->run.model.path, compared->ref.model.path));
    return write_check(options, subject, results);
}

} // namespace fp8scope::cli
