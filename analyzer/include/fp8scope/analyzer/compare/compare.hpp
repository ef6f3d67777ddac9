// Scaling drift against a reference run (docs/analysis.md "Compare"): two traces of the same job, typically FP8 (the
// run) and BF16 (the reference), analysed on the same steps. Their tensor sites are matched by GEMM-site identity with
// dtype ignored and operand roles normalised; per matched site and step the run's figures are set against the
// reference's distribution; a change-point test over steps flags drifting sites and names the first divergent one; the
// loss scalars and the performance of both runs are set side by side. The result is plain data for the renderers and
// `check --ref`.
#pragma once

#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/compare/compare_performance.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/numerics/drift_evidence.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fp8scope::analyzer {

// Thresholds, printed in every compare output (docs/analysis.md "Compare").
inline constexpr double kAmaxRatioEventLog2 = 1.0; // |log2(amax run / amax ref)| above this is an amax-ratio event
inline constexpr double kLossDeltaThreshold = 1e-2; // default --max-loss-delta
inline constexpr double kLossDeltaStrict = 2.5e-3; // shown beside it (DeepSeek-V3: < 0.25 %)
inline constexpr int kLossWindowSteps = 10; // the loss delta compares means over this many trailing steps
inline constexpr double kDriftFloorLog2 = 0.5; // bits: the amax ratio against the reference
inline constexpr double kDriftFloorSaturation = 1e-5; // fraction of elements (also at least 8 elements)
// Fraction of the reference's nonzero elements; the share must also at least double (rise by its level before).
inline constexpr double kDriftFloorUnderflow = 1e-2;
// Stale-scale bursts (sites whose scale is not made from the step's own amax: delayed or static): a step is a burst
// when the run's scale falls short of the reference's amax by at least kStaleBurstBits (about one E4M3 code step at
// the top of the range, log2(448 / 416) = 0.107). The share of steps with a burst must rise by kDriftFloorBurstShare,
// with at least kDriftMinBursts bursts from the onset on.
inline constexpr double kStaleBurstBits = 0.1;
inline constexpr double kDriftFloorBurstShare = 0.5;
inline constexpr int kDriftMinBursts = 4;
// The run's dynamic range, log2(amax / median |x|): how far below fp8_max a scale made from the amax puts the bulk
// of the tensor. A rise of this many bits is an amax that leaves its tensor behind (an outlier that squeezes every
// other value toward underflow).
inline constexpr double kDriftFloorRangeBits = 3.0;
// The share of a per-block site's blocks holding subnormal codes must rise by this much (and at least double) to be a
// drift: a few blocks with a tiny value are the tensor's own tail.
inline constexpr double kDriftFloorSubnormalBlocks = 0.05;
// Early-step baseline: the median over the first steps of a site's series, this many (fewer in short runs).
inline constexpr int kBaselineSteps = 5;

// Why two traces cannot be compared at all, not even their performance (the CLI exits 3 with the message): a trace
// without analysed steps.
struct CompareRefusal {
    std::string message;
};

// CurrentOrStatic: the same scale in every sample and the codes at fp8_max in every one (amax = fp8_max / scale, so a
// constant amax): a scale made from each step's amax and a fixed one made from that amax cannot be told apart.
// PerBlock: one scale per row or block (is_per_block_recipe): not one scale to classify; its drift series are the
// amax ratio and block figures from its per-block statistics (trace format 1.6) and its codes' dynamic range.
// OutsideGemm: the GEMM was given unit scales while its codes were scaled by their own
// amax, so the scale is applied outside it (torchao's rowwise backward): its codes, and its output, are not values.
enum class ScalingRecipe { NotFp8, Delayed, Current, Static, Unknown, CurrentOrStatic, PerBlock, OutsideGemm };
// "not FP8", "delayed", "current", "static", "unknown", "current or static", "per row or block", "scaled outside
// the GEMM"
const char* scaling_recipe_name(ScalingRecipe recipe);

// One matched site's figures at one common step (nullopt where a side cannot show the figure).
struct CompareStep {
    int64_t step = 0;
    std::optional<double> amax_run, amax_ref;
    std::optional<double> log2_amax_ratio; // log2(amax_run / amax_ref)
    std::optional<double> run_saturation; // the run's own clipped fraction (FP8 codes at max, or probe overflows)
    std::optional<double> run_underflow; // the run's own underflow (high-precision probes with a target only)
    // The reference's distribution under the run's scale: the fraction of its nonzero elements that the run's
    // scale_inv would clip (above fp8_max) or flush to zero (below half the format's smallest subnormal), from the
    // reference's exponent histogram, log-uniform within a bin.
    std::optional<double> ref_saturation_under_run_scale, ref_underflow_under_run_scale;
    std::optional<double> run_headroom_bits; // log2(fp8_max * scale_inv_run / amax_run), the run's own
    std::optional<double> headroom_vs_ref_bits; // log2(fp8_max * scale_inv_run / amax_ref)
    bool stale_scale = false; // headroom_vs_ref < 0: the reference's amax is beyond the run's scale
    // log2(amax_run / median |x| of the run), the median from its exponent histogram (log-uniform within a bin)
    std::optional<double> run_dynamic_range_bits;
    // Sites scaled per row or block, from their per-block statistics: log2(largest block amax / median block amax),
    // how far one block's amax stands above the others; and the share of blocks holding subnormal codes.
    std::optional<double> block_amax_spread_bits, subnormal_block_share;
    std::optional<double> baseline_delta_log2_ratio; // log2_amax_ratio minus the site's early-step baseline
    std::optional<double> baseline_delta_saturation; // run_saturation minus its baseline
};

struct CompareSite {
    // tensor_site_label() of the run's site (with the run's own cuBLAS role), then the logical role in parentheses
    // when known: "train_step/.../blocks.1.fc1 · gemm 2048x2048x512 #0 · B (activation)"
    std::string label;
    int64_t run_site_id = 0, ref_site_id = 0;
    int32_t run_dtype = 0, ref_dtype = 0;
    std::string module; // the module its NVTX path ends in ("blocks.1.fc1"), "" without one
    std::string role; // normalised role: "A", "B", "D" or the probe's role word
    std::optional<std::string> logical_role; // "activation", "weight", "gradient" when known
    bool role_swapped = false; // the run's cuBLAS A/B were swapped to the canonical orientation
    bool orientation_ambiguous = false; // m == n: cuBLAS's own A/B order kept
    ScalingRecipe recipe = ScalingRecipe::Unknown; // the run's
    std::optional<int32_t> scale_recipe; // the run site's ENUM_FP8SCOPE_SCALE_RECIPE (TensorSite::scale_recipe)
    // The site belongs to a GEMM given unit scales, its scale applied outside (ScalingRecipe::OutsideGemm): its
    // operands' codes and its output are not the tensors' values, so it has no step figures and no drift.
    bool unscaled_gemm = false;
    std::string recipe_evidence;
    double position_in_step = 0; // median offset of the site's samples in their step, 0..1 (execution order)
    std::vector<CompareStep> steps; // common steps where both sides have a sample
    int64_t min_numel = 0; // the run's smallest element count in those steps
    std::optional<double> baseline_log2_ratio, baseline_saturation;
    std::vector<DriftEvidence> drift; // empty: no drift
    std::optional<int64_t> onset_step; // earliest onset over drift
    int64_t amax_ratio_events = 0; // steps with |log2_amax_ratio| > kAmaxRatioEventLog2
    int64_t stale_scale_events = 0;
    // The run's sites that hold the same FP8 tensor (numerics.hpp's Fp8Tensor: the same codes and scale in every
    // step, or the probe cast with that scale): a drift is one finding per tensor. `tensor` is the index of the
    // tensor among the run's; `also` lists the labels of the other matched sites of the same tensor that drift, on
    // the one of them that stands for it in CompareResult::flagged.
    std::optional<size_t> tensor;
    std::vector<std::string> also;
};

struct UnmatchedSite {
    std::string label;
    int64_t site_id = 0;
    std::string reason;
};

struct CompareEvent {
    std::string site;
    int64_t step = 0;
    double value = 0; // bits: the log2 amax ratio, or the headroom against the reference
};

struct LossStep {
    int64_t step = 0;
    double run = 0, ref = 0;
    double relative_delta = 0; // |run - ref| / |ref|
};

struct LossComparison {
    std::string scalar; // the scalar's name ("loss")
    std::string unavailable; // non-empty: why there is no loss delta
    std::vector<LossStep> steps;
    // |mean(run) - mean(ref)| / |mean(ref)| over the last kLossWindowSteps common steps (fewer when fewer): the
    // gated figure.
    std::optional<double> final_relative_delta;
    int window = 0;
    std::optional<double> max_step_relative_delta;
    std::optional<int64_t> max_step;
    // Common steps where the run's value is NaN or Inf and the reference's is finite (a run that diverged), and the
    // first of them: the loss budget fails on any, whatever the finite steps' delta.
    int64_t run_nonfinite_steps = 0;
    std::optional<int64_t> first_run_nonfinite_step;
    // The step from which the per-step relative delta shifts up and stays (the drift test's change point over the
    // per-step deltas, floor kLossDeltaStrict), and its mean from there; nullopt: no such shift.
    std::optional<int64_t> onset_step;
    std::optional<double> delta_after_onset;
};

struct StepAlignment {
    StepSource run_source = StepSource::WholeTrace, ref_source = StepSource::WholeTrace;
    std::vector<int64_t> common; // step indices analysed in both, ascending
    std::vector<int64_t> run_only, ref_only;
};

// One trace of a compared pair, as compare names it before any figure (issue 45).
struct RunIdentity {
    std::string gpu; // the GPU names of its analysed devices, distinct, joined by " + "; empty when the trace has none
    std::string program; // the program its command line runs (the script after python); empty when unknown
    bool fp8 = false; // FP8 GEMM kernels ran in its analysed steps
    int64_t sites = 0; // tensor sites with samples in its analysed steps
};

// What differs between the run and the reference, before any figure: GPU, command line, model, precision. A pair of
// different GPUs or jobs is compared by performance alone (performance_only says why): its drift and loss would set
// one model's tensors against another's, and its step change is not FP8's.
struct PairIdentity {
    RunIdentity run, ref;
    // The sites in common: those compared (CompareResult::sites) when drift is compared, else those matched over
    // each trace's analysed steps; none when either trace has no tensor statistics.
    std::optional<int64_t> sites_in_common;
    int64_t kernel_names_in_common = 0, run_only_kernel_names = 0, ref_only_kernel_names = 0;
    // The command lines' arguments that only one has, beyond precision switches and run names, in their order
    // ("--layers 2"): see command_arguments_beyond_precision().
    std::vector<std::string> run_only_arguments, ref_only_arguments;
    bool different_gpus = false, different_jobs = false;
    std::string performance_only; // why only the performance is compared (GPUs or jobs differ); empty: neither
    // The caller swapped the arguments: the user gave the FP8 run as the reference (CompareOptions::swapped).
    bool swapped = false;
};

// The arguments of a command line after its program, as "flag value" items (one item per flag with its value, and
// one per positional argument), leaving out what a precision switch or a run's name changes between an FP8 run and
// its BF16 twin: an item with a word (split at anything not a letter or digit) such as fp8, bf16, precision, dtype,
// amp, recipe or amax, and a flag with a word such as name, out, output, o, log, save, dir, seed, steps, iters,
// epochs, compile or graphs (docs/analysis.md "Compare", the pair). Empty for an unknown command line.
std::vector<std::string> command_arguments_beyond_precision(std::string_view command_line);

struct CompareResult {
    PairIdentity identity;
    StepAlignment alignment;
    // Why drift and loss were not compared, one sentence; empty when they were. Their figures below are then empty,
    // the loss says the same reason, and both default budgets fail: a gate never passes on data it has not seen.
    // Reasons: no tensor statistics in a trace, traces of different jobs, no common step, no tensor statistics in the
    // common steps, no site in common. The performance is compared either way.
    std::string numerics_not_compared;
    bool numerics_compared() const { return numerics_not_compared.empty(); }
    std::vector<CompareSite> sites; // matched, by the run's site id
    std::vector<UnmatchedSite> run_unmatched, ref_unmatched;
    // Indices into sites, one per drifting FP8 tensor (the earliest of its sites; CompareSite::also names the
    // others): earliest onset, then position in step, then run site id. Its size is the count of drifting tensors.
    std::vector<size_t> flagged;
    std::optional<size_t> first_divergent; // flagged.front()
    int64_t amax_ratio_events = 0, stale_scale_events = 0;
    std::vector<CompareEvent> first_amax_ratio_events, first_stale_scale_events; // earliest 20 each
    LossComparison loss;
    PerformanceComparison performance;
    // Sites of the run per recipe (FP8 sites only) and the run's bookkeeping time per step they cost.
    int64_t delayed_sites = 0, current_sites = 0, static_sites = 0, unknown_recipe_sites = 0;
    int64_t current_or_static_sites = 0; // ScalingRecipe::CurrentOrStatic: a constant amax cannot tell
    int64_t per_block_sites = 0; // ScalingRecipe::PerBlock
    int64_t outside_gemm_sites = 0; // ScalingRecipe::OutsideGemm
    int64_t unscaled_gemm_sites = 0; // CompareSite::unscaled_gemm (operands and outputs)
    // The run's matched sites by scale recipe (scale_recipe_name(); format 1.5 traces): "rowwise" -> 24
    std::map<std::string, int64_t> scale_recipe_sites;
};

struct CompareOptions {
    ReportOptions report; // steps, warm-up, device: applied to both traces
    std::string loss_scalar = "loss";
    bool swapped = false; // the caller swapped the user's arguments (fp8_given_as_reference()): PairIdentity says so
};

// The two analyses are made by the caller (analyze() on each model with the same options), so that a GUI can reuse
// them. Returns a refusal only for traces whose performance cannot be compared (one without analysed steps); traces
// whose tensors cannot be compared give the performance with CompareResult::numerics_not_compared saying why.
struct CompareInput {
    const TraceModel& run_model;
    const Report& run_report;
    const TraceModel& ref_model;
    const Report& ref_report;
};

std::variant<CompareResult, CompareRefusal> compare_runs(const CompareInput& input, const CompareOptions& options = {});

// Whether a report's analysed steps ran FP8 GEMM kernels.
bool runs_fp8(const Report& report);
// The user gave the pair the wrong way round: the reference runs FP8 GEMMs and the run none. Callers swap the two
// and say so (CompareOptions::swapped), so that FP8's price is computed for the FP8 run.
bool fp8_given_as_reference(const CompareInput& input);

// `check RUN --ref REF` budgets (docs/analysis.md "Budgets"). With neither given, check --ref applies both defaults
// (kDefaultCompareBudgets).
struct CompareBudgets {
    std::optional<double> max_loss_delta; // final_relative_delta; fails without loss scalars in both traces
    std::optional<int64_t> max_drift_sites; // flagged tensors (CompareResult::flagged); `where` names the first
                                            // divergent one and its onset
};

// Results named "max-loss-delta" and "max-drift-sites", in that order (only those given). Their `where` is a short
// sentence, not a bare site label: the loss scalar and its window, or "first divergent: <label> from step N".
std::vector<BudgetResult> evaluate_compare_budgets(const CompareResult& result, const CompareBudgets& budgets);

// The default gate: no drifting site and the loss delta within kLossDeltaThreshold. `check --ref` applies it when
// given neither budget; every compare output's verdict and the viewer's are this gate's.
inline constexpr CompareBudgets kDefaultCompareBudgets { .max_loss_delta = kLossDeltaThreshold, .max_drift_sites = 0 };

// evaluate_compare_budgets() with kDefaultCompareBudgets, its two results by name.
struct CompareVerdict {
    BudgetResult loss; // "max-loss-delta"
    BudgetResult drift; // "max-drift-sites"
    bool healthy() const { return loss.passed && drift.passed; }
};
CompareVerdict default_compare_verdict(const CompareResult& result);

} // namespace fp8scope::analyzer
