// Figures and sentences that several `report` formats show (text, Markdown, HTML, JUnit), picked out of the
// analyzer's Report: the causes to list, the sentence naming the step source, a recommendation's worst step.
// Selection and wording only; every quantity is the analyzer's (docs/analysis.md).
#pragma once

#include "fp8scope/analyzer/advice/recommendations.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::present {

// The causes a report lists: sync, dependency, launch and host always (a report then reads the same for every
// trace), and comm in multi-rank runs (rule 4), where it is a possible cause even when it caused nothing. The JSON
// report lists all five always.
std::vector<analyzer::BubbleCause> causes_to_show(const analyzer::Report& report);

// 100 * part / whole, 0 when whole is 0.
inline double percent(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// value / steps (integer division), 0 without steps.
inline int64_t per_step(int64_t value, size_t steps)
{
    return steps > 0 ? value / static_cast<int64_t>(steps) : 0;
}

// Display only: how a bubble ratio is shown (text colour, HTML class): under 0.1 fine, under 0.3 a warning, above
// bad (docs/cli.md). The CI gate's limits are the user's own (`check --max-bubble-ratio`).
enum class Severity { Ok, Warn, Bad };
inline Severity bubble_ratio_severity(double ratio)
{
    return ratio >= 0.3 ? Severity::Bad : ratio >= 0.1 ? Severity::Warn : Severity::Ok;
}

// "28 steps from nvtx (train_step), 2 warm-up steps excluded".
std::string steps_sentence(const analyzer::StepSet& steps);

// The cause with the most idle time among sync, dependency, launch, host and comm (ties: the earlier one).
analyzer::BubbleCause top_cause(const analyzer::BubbleTotals& totals);

// The analysis area a recommendation belongs to: "bubbles", "syncs", "launch" or "fp8_overhead". Every area has
// exactly one kind of recommendation (kFindingAreas), so a JUnit report has a stable set of testcases.
struct FindingArea {
    const char* area;
    analyzer::RecommendationKind kind;
};
inline constexpr FindingArea kFindingAreas[] = {
    { "bubbles", analyzer::RecommendationKind::ReduceHostWork },
    { "syncs", analyzer::RecommendationKind::RemoveSync },
    { "launch", analyzer::RecommendationKind::CudaGraphs },
    { "fp8_overhead", analyzer::RecommendationKind::FuseFp8Bookkeeping },
};

// "worst step 29: idle caused by host 68.5% of the step", or "no worst step" without steps.
std::string worst_step_text(
    const std::optional<analyzer::RecommendationStep>& worst, analyzer::RecommendationKind kind);

// How ε was measured, after its value: "1.7 µs (median activity start − launch call end over 62 launches onto an
// idle device)", or, with fewer than kMinIdleLaunchSamples of those, the median over every launched activity and
// why ("… over all 98 launched activities: only 7 found the device idle, fewer than 20, so it includes queueing
// behind earlier work"). Plain text.
std::string epsilon_sentence(const analyzer::BubbleAnalysis& bubbles);

// Rule 3 and the CUDA Graphs estimate's constants, as every format prints them: "a gap is host when the launching
// thread made no CUDA call for over 300 µs (max(100 µs, 20 × its median silence of 15 µs)), else launch; a CUDA
// graph leaves 256 ns between kernels (measured on 1234 graph kernels)". Plain text.
std::string launch_rule_sentence(const analyzer::BubbleAnalysis& bubbles);

// "Collector GPU time per step: 120 µs (0.4% of the step; 31 kernels, 1 memset of fp8scope's own, left out of
// every figure)", or "Collector GPU time per step: none" when the collector launched nothing.
std::string collector_work_sentence(const analyzer::CollectorWorkSummary& work);

// What a reader must know about how complete the trace is, one sentence each, empty when nothing: the recording
// process did not close it (kUnfinishedText), records the collector dropped, kernels the loader clipped.
std::vector<std::string> recording_warnings(const analyzer::RecordingStatus& recording);
// recording_warnings() joined by "; ", or "finished (exit), no records dropped" when there is none.
std::string recording_sentence(const analyzer::RecordingStatus& recording);
// "loss: NaN from step 1234 (3 of 200 values); grad_norm: NaN from 2.5 s (1 of 10 values)" (the session time when
// the scalar has no step), or "" when no scalar went NaN. Names are printed as given: escape them for the output.
std::string nan_scalars_sentence(const std::vector<analyzer::NanScalar>& scalars);

// The kernel classes with no kernel in the steps, as "other GEMM, communication" (empty when every class has one):
// reports list them in one line instead of rows of zeros.
std::string empty_kernel_classes(const analyzer::KernelClassReport& classes);

// How the fused bookkeeping class's time is attributed (docs/analysis.md "FP8 overhead: kernel classes"), per step:
// "of which 0.9 ms in kernels that do only FP8 bookkeeping; 2.5 ms in kernels that also do the model's own work,
// which one trace cannot split (compare with the BF16 run prices it)". Empty when the class has no kernel.
std::string fused_bookkeeping_attribution(const analyzer::KernelClassReport& classes, size_t steps);

// The APIs with calls in the steps, most GPU idle caused first (ties: the analyzer's order, most blocked time):
// the rows a sync table shows. APIs called only outside the steps are left out (SyncReport::outside_steps counts them).
std::vector<const analyzer::SyncApiSummary*> syncs_by_idle_caused(const analyzer::SyncReport& syncs);

// The sync idle of a sync table's headline, the same figure as the idle cause "sync" (BubbleTotals::cause_ns) under
// the same name, with the part the calls in the steps caused: "sync idle 1.098 ms, of which the calls in the steps
// caused 1.089 ms (a call just before a step can cause idle in it)", or "sync idle 1.098 ms, all caused by the calls in
// the steps", or "no sync idle".
std::string sync_idle_text(const analyzer::Report& report);

// count / steps with `decimals` decimals, or two significant digits when the rate is below one unit of the last
// decimal (1 call in 28 steps: "0.036" per step, not "0.0"; 14 kernels in 28 steps: "0.5", not "0"), "0" for none.
std::string per_step_rate(int64_t count, size_t steps, int decimals);

// "1 step", "2 steps".
std::string count_of(int64_t count, std::string_view singular, std::string_view plural);

// "no change would save 1% of a step or more" (kMinRecommendationSavingShare), capitalised or not, without a full
// stop.
std::string no_recommendation_sentence(bool capitalised);
// The what-if line's CUDA Graphs part: "without launch overhead (CUDA Graphs) 1.234 ms", or, for steps that run
// from CUDA graphs already, "the steps already run from CUDA graphs (100% of their kernels)".
std::string graphs_what_if(const analyzer::WhatIf& w);

// The sentence `info` prints for a trace whose recording process never closed it.
inline constexpr std::string_view kUnfinishedText = "unfinished: the recording process did not close the trace "
                                                    "(crash or SIGKILL); data up to the last commit is present";

// "finished", "finished (exit)" (the reason made printable) or kUnfinishedText: how `info` and every report name a
// trace's state.
std::string finish_status_text(bool finished, std::string_view finish_reason);

} // namespace fp8scope::present
