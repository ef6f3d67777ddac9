// Sentences and figures that several `compare` formats show (text, Markdown, HTML, JUnit), picked out of the
// analyzer's CompareResult: the verdict, the loss delta, a site's drift evidence, the step alignment, the site
// matching, the thresholds, the performance rows. Wording only: the drift verdicts, the loss delta and the limits
// are the analyzer's (compare.hpp, docs/analysis.md "Compare"). Sentences that hold text from a trace (site labels,
// paths) take the format's escape (report_tensor.hpp's Escape).
#pragma once

#include "fp8scope/present/tensor_wording.hpp"

#include "fp8scope/analyzer/compare/compare.hpp"

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::present {

// Where the loss thresholds come from (docs/analysis.md "Compare", shared/reference/fp8_numerics.md §6.7): the
// threshold, then the strict figure. The often repeated "NVIDIA: about 1e-3 on Llama-2-7B" has no primary source
// (fp8_numerics.md §6.8), so it is not cited.
inline constexpr std::array<std::string_view, 2> kLossThresholdSources {
    "NVIDIA/Megatron-LM issue #1152, an NVIDIA maintainer: FP8 against BF16 loss difference below 1e-2 after several "
    "billion tokens (an absolute difference, applied here to the relative one)",
    "DeepSeek-V3 Technical Report (arXiv:2412.19437), section 3.3: relative loss error of FP8 training against BF16 "
    "below 0.25%",
};

// Matched sites, flagged sites and unmatched sites listed in text and Markdown (JSON lists all, HTML up to 500).
inline constexpr size_t kListedCompareSites = 20;

// "0.90%": a relative delta as a percentage, two decimals (two significant digits below 0.01%).
std::string delta_percent(double relative_delta);

// The identity Escape, for outputs that escape whole sentences themselves (JSON, XML attributes).
std::string as_is(std::string_view text);

// "3 tensors drift; first divergent: LABEL from step 15 (evidence)", "no site drifts", or "not compared: <why>".
std::string drift_sentence(const analyzer::CompareResult& result, Escape escape);
// The verdict, first line of every format: "FP8 run healthy against its reference: no site drifts; loss delta
// 0.90% (threshold 1%, strict 0.25%)", drift_headline(), or "LOSS DELTA: no site drifts, but ...". Without a tensor
// comparison, numerics_not_compared_sentence(). The series, noise units and floors are drift_sentence()'s, below it.
std::string verdict_sentence(const analyzer::CompareResult& result, Escape escape);
// The first drifting tensor in plain words: "blocks.1.fc1's input", "blocks.0.qkv · B", or its label when unnamed.
std::string drifting_tensor(const analyzer::CompareSite& site, Escape escape);
// What happened to which tensor from which step, in plain words and under 160 characters for a named module: "DRIFT:
// blocks.1.fc1's input outgrows its scale from step 18 (+2 more tensors); loss off by 7.4% from step 22".
std::string drift_headline(const analyzer::CompareResult& result, Escape escape);
// "loss delta 0.90% (scalar 'loss', means over the last 10 common steps; threshold 1%, strict 0.25%); largest
// per-step delta 4.06% at step 9", or "no loss delta: <why>".
std::string loss_sentence(const analyzer::LossComparison& loss, Escape escape);
// "log2_amax_ratio 0.01 -> 2.3 from step 15 (12.4 noise units, floor 0.5; 12 steps before, 16 after)".
std::string evidence_text(const analyzer::DriftEvidence& evidence);
// Every evidence of a site, joined by "; ".
std::string site_evidence_text(const analyzer::CompareSite& site);
// "from step 15", "no onset".
std::string onset_text(const std::optional<int64_t>& onset_step);

// "26 common steps, 3 to 29 (run: markers, reference: markers); only in the run: none; only in the reference: 30, 31".
std::string alignment_sentence(const analyzer::StepAlignment& alignment);
// "24 sites matched; 2 of the run and 0 of the reference unmatched".
std::string matching_sentence(const analyzer::CompareResult& result);

// Unmatched sites grouped by their reason, in the order each reason first appears
// (docs/cli.md "What every format shows", of compare): a reason shared by many sites (every probe the reference lacks)
// is one line. `labels` in site order.
struct UnmatchedGroup {
    std::string reason;
    std::vector<std::string> labels;
};
std::vector<UnmatchedGroup> unmatched_groups(const std::vector<analyzer::UnmatchedSite>& sites);
inline constexpr size_t kLabelsPerUnmatchedGroup = 3; // labels named in a group's line; the JSON lists every site
// "N sites (REASON): a, b, c and K more"; one site: "LABEL: REASON". `label` and `text` render a site's label and
// the reason (both strings from the traces) for the output format.
std::string unmatched_group_text(const UnmatchedGroup& group, const std::function<std::string(std::string_view)>& label,
    const std::function<std::string(std::string_view)>& text);
// How sites were matched: dtype ignored, roles normalised, with the counts of swapped and ambiguous orientations.
std::string role_normalisation_sentence(const analyzer::CompareResult& result);
// A site's scaling recipe with the analyzer's evidence: "delayed (the scale changes every step)".
std::string recipe_text(const analyzer::CompareSite& site);
// "8 delayed, 0 current, 0 static, 0 current or static (a constant amax cannot tell), 0 unknown; the bookkeeping..."
std::string recipe_sentence(const analyzer::CompareResult& result);
// "amax ratio beyond 2x": what an amax-ratio event is (kAmaxRatioEventLog2), as event lists are titled.
std::string amax_ratio_event_title();
// "12 steps; first at step 15 in LABEL (2.31)" or "none": an event list (amax-ratio or stale-scale events).
std::string compare_events_text(int64_t total, const std::vector<analyzer::CompareEvent>& first, Escape escape);
// Every constant of compare.hpp in one sentence.
std::string compare_thresholds_sentence();
// "PATH, written by PRODUCER; 28 steps from markers (...), 2 warm-up steps excluded", escaped.
std::string trace_sentence(const analyzer::TraceModel& model, const analyzer::Report& report, Escape escape);

// "21.409 ms", and signed: "+21.409 ms", "-52.595 us", "0 ns".
std::string ns_text(double ns);
std::string signed_ns_text(double ns);

// What the pair is, before any figure (compare_pair_wording.cpp; docs/analysis.md "Compare", "What the pair is"):
// labelled lines, in this order: "Order" (only when the caller swapped the arguments), "GPU", "Job", "Model"
// (tensor sites and kernel names in common) and "Precision".
struct PairLine {
    std::string label, text;
};
std::vector<PairLine> pair_lines(const analyzer::PairIdentity& identity, Escape escape);
// "FP8's price is not split out: <why the pair is performance only>; ..." for a pair of different GPUs or jobs, whose
// step change is not FP8's; "" otherwise, when the price is shown.
std::string price_not_split_sentence(const analyzer::PairIdentity& identity, Escape escape);

// The rows of the performance table, run beside reference: what, run, reference, and the difference or gain.
struct PerformanceRow {
    std::string what, run, ref, change;
};
// `fp8_pair` false (a pair of different GPUs or jobs, PairIdentity::performance_only): the differences are plain
// differences, not GEMM time "saved" or bookkeeping "added" by FP8, and the net gain row is left out.
std::vector<PerformanceRow> performance_rows(const analyzer::PerformanceComparison& performance, bool fp8_pair = true);

// The performance per step (compare_performance_wording.cpp; docs/analysis.md "Compare", performance).
// Text and Markdown list this many kernels per list; HTML and JSON every one the analyzer lists (kKernelChangesListed).
inline constexpr size_t kListedKernelChangesText = 5;
// "Drift and loss not compared: <the analyzer's reason>; performance only" ("Drift not compared: <reason>" when the
// loss was compared without tensor statistics), or "" when they were compared.
std::string numerics_not_compared_sentence(const analyzer::CompareResult& result);
// Which steps the figures are over: "the 28 common steps", or "each trace's own analysed steps (30 and 10): no step
// number in common".
std::string performance_steps_text(const analyzer::PerformanceComparison& performance);
// Step time, busy time and bubble ratio (medians), then idle by cause and GPU time by kernel class (means per step;
// the causes and classes with time in either run), each with its change ("+34.860 ms (+207%)").
std::vector<PerformanceRow> per_step_rows(const analyzer::PerformanceComparison& performance);
// One kernel list of the diff, with its title ("Kernels that appeared (only in the run: 12 names, 1.234 ms per
// step)") and a row per kernel: time per step in the run and the reference, the change, kernels per step, class.
struct KernelListRow {
    std::string name; // the full name (kernel_table.hpp)
    std::string run, ref, change, run_count, ref_count, cls;
};
struct KernelList {
    std::string id; // "appeared", "vanished", "changed"
    std::string title;
    std::vector<KernelListRow> rows; // as the analyzer lists them
    size_t names = 0; // names in the list before the cut
};
std::vector<KernelList> kernel_lists(const analyzer::PerformanceComparison& performance);
// "Recording inflated the difference: ..." when the collector's GPU time is notable (kRecordingNotableShare), else "".
std::string recording_inflation_sentence(const analyzer::PerformanceComparison& performance);

// FP8's price (docs/analysis.md "Compare"): the traced step change in its four parts (GEMM time, cast and amax/scale
// kernels, the idle the extra launches add, the rest), then the change itself; each signed, with its share of the
// change ("" when the change is 0).
struct PriceRow {
    std::string what, per_step, share, note;
};
std::vector<PriceRow> fp8_price_rows(const analyzer::PerformanceComparison& performance);
// "GEMM time, FP8 bookkeeping and launch idle explain 97% of the traced step change (+34.139 ms per
// step); the rest is +1.020 ms", or why there is nothing to explain.
std::string fp8_price_sentence(const analyzer::PerformanceComparison& performance);
// "recording itself cost the run +7.930 ms more idle per step than the reference (...); the change without it, an
// estimate of the untraced change: +26.929 ms".
std::string recording_cost_sentence(const analyzer::PerformanceComparison& performance);
// What would win the price back, each with the most it can win per step (the analyzer's figures) and how it works.
struct RecoveryRow {
    std::string fix, recovers, how;
};
std::vector<RecoveryRow> fp8_recovery_rows(const analyzer::PerformanceComparison& performance);
// The same in one sentence: "CUDA graphs: up to 21.409 ms; fused casts: up to 292.929 us; torch.compile: up to ...".
std::string fp8_recovery_sentence(const analyzer::PerformanceComparison& performance);

} // namespace fp8scope::present
