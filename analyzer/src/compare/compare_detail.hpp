// The parts of compare (compare.hpp) that its files share: site matching and per-step figures (compare_sites.cpp),
// the recipe and logical roles (site_recipe.cpp), the change-point test (compare_drift.cpp), the performance
// (compare_performance.cpp), what differs between the pair (compare_identity.cpp), and the assembly (compare.cpp).
#pragma once

#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/trace/tensor_health.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace fp8scope::analyzer::detail {

// One site's samples in one analysed step, reduced: several samples (micro-batches) count as one tensor.
struct StepSample {
    double amax = 0; // max over the samples
    int64_t numel = 0, saturated = 0, overflows = 0, underflows = 0; // sums
    std::optional<double> scale_inv; // the first sample's (scale_inv, else 1/scale)
    int32_t dtype = 0, target_format = 0;
    int32_t hist_first_exponent = 0;
    std::vector<uint64_t> histogram; // summed, from hist_first_exponent
    double position = 0; // offset of the first sample in its step, 0..1
    int64_t samples = 0; // how many were reduced
    int64_t timestamp_ns = 0; // the first sample's
    int64_t nonfinite = 0; // NaN + Inf elements, summed
    // An operand scaled per row or block: its per-block statistics in the step (FP8SCOPE_BLOCK_STATS; the first
    // sample's quantiles, the largest amax, counts summed).
    struct Blocks {
        double amax = 0, p50 = 0, p99 = 0;
        int64_t blocks = 0, saturating = 0, subnormal = 0;
    };
    std::optional<Blocks> blocks;
};

// Every site of one trace with samples in the analysed steps: site id -> step index -> reduced samples. With `device`,
// only that device's samples (the tensor series; compare takes every device).
using SiteSamples = std::map<int64_t, std::map<int64_t, StepSample>>;
SiteSamples collect_site_samples(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device = std::nullopt);

struct SiteMatching {
    struct Pair {
        int64_t run_site = 0, ref_site = 0;
        std::string role; // normalised
        bool swapped = false, ambiguous = false;
    };
    std::vector<Pair> pairs; // by run site id
    std::vector<UnmatchedSite> run_unmatched, ref_unmatched;
};
SiteMatching match_sites(
    const TraceModel& run, const SiteSamples& run_samples, const TraceModel& ref, const SiteSamples& ref_samples);

// Per-step figures of one matched pair over the common steps where both have a sample (CompareSite::steps), the
// early-step baselines and the one-step events.
void fill_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref);

// The same for a site scaled per row or block: the amax ratio from its per-block statistics (the dequantized amax),
// the spread of its block amaxes and its share of blocks with subnormal codes, and the codes' own dynamic range
// (each block's codes span its own range, so the codes' median tells how far below its block's max the bulk sits).
// No saturation, headroom or figure of the reference under the run's scale: there is no one scale.
void fill_block_site_steps(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>& ref);

// The run's scaling recipe for one site, from its samples' scale_inv and amax, and from its twin's when it has one:
// the probe of the high-precision tensor that was cast with the same scale (LogicalRoles::twin).
// Adds the site's recipe to the result's recipe line: its decided recipe, its scale recipe, an unscaled GEMM.
void count_recipe(const CompareSite& site, CompareResult& result);

void decide_recipe(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>* twin);

// What a site's tensor is in the model: "activation", "weight", "gradient" or "output", when the trace says. A probe
// says by its role; a GEMM output is "output"; an E5M2 operand is a gradient (the HYBRID recipe); another FP8
// operand is the probe's tensor whose 1/scale equals its scale_inv in the same step and module (the cast that
// made it).
// GEMMs given unit scales while their FP8 codes come from a scale applied outside the GEMM (torchao's rowwise
// backward multiplies the row scales into the output itself; docs/analysis.md "Compare", Scales outside the GEMM):
// GEMM sites (interception) with an FP8 operand whose every sample has scale_inv exactly 1 and whose codes reach the
// format's max in at least kCurrentScalingShare of them, as a scale made from the tensor's own amax puts them. Keyed
// by the site's name, NVTX path and ordinal, so that the GEMM's D (an output not yet scaled) is known too.
using GemmKey = std::tuple<uint32_t, uint32_t, int32_t>; // name, NVTX path (or max), ordinal
std::set<GemmKey> unit_scale_gemms(const TraceModel& model, const SiteSamples& samples);
GemmKey gemm_key(const TensorSite& site);

class LogicalRoles {
public:
    LogicalRoles(const TraceModel& model, const SiteSamples& samples);
    std::optional<std::string> of(const TensorSite& site) const;
    // The probe site whose 1/scale equals this FP8 operand's scale_inv in most of its steps (same module).
    std::optional<int64_t> twin(const TensorSite& site) const;

private:
    struct ProbeScale {
        double scale_inv = 0;
        std::string role;
        int64_t site_id = 0;
    };
    const TraceModel& model_;
    const SiteSamples& samples_;
    std::map<std::pair<int64_t, std::string>, std::vector<ProbeScale>> probes_; // (step, module) -> scales
};

// Small figures and names the compare files share.
// The FP8 maximum of a step sample's format (tensor_health.hpp's fp8_max_of); nullopt for a high-precision one.
inline std::optional<double> fp8_max_of(const StepSample& s)
{
    TensorStats stats;
    stats.dtype = s.dtype;
    stats.target_format = s.target_format;
    return analyzer::fp8_max_of(stats);
}

inline bool positive_finite(double v)
{
    return std::isfinite(v) && v > 0;
}

// A string of the model, empty when absent or out of range.
inline std::string_view text_of(const TraceModel& model, std::optional<StringRef> ref)
{
    return ref && ref->index < model.strings.size() ? model.strings[*ref] : std::string_view {};
}

// The module a path ends in, with the backward range's suffix dropped: "blocks.1.fc1" for both
// "train_step/Transformer/blocks.1/blocks.1.fc1" and "blocks.1.backward/blocks.1.fc1.backward".
inline std::string module_of(std::string_view path)
{
    const size_t slash = path.rfind('/');
    std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
    constexpr std::string_view kBackward = ".backward";
    if (last.ends_with(kBackward))
        last.remove_suffix(kBackward.size());
    return std::string(last);
}

// The change-point test over one series (docs/analysis.md "Compare: drift"). `direction`: +1 a rise is drift, -1 a
// fall, 0 either. `relative_floor`: the shift must also reach this many times |mean before|. nullopt: no drift.
std::optional<DriftEvidence> change_point(const std::string& series, const std::vector<int64_t>& steps,
    const std::vector<double>& values, int direction, double floor, double relative_floor = 0);

// The knee of a climb: the index k (kDriftMinStepsBefore <= k <= last) of the least-squares fit of
// x_i = a + b * max(0, i - k + 1), flat before index k and rising linearly from it; the earliest k wins a tie.
size_t knee_of(const std::vector<double>& values, size_t last);

// change_point() for a rise that climbs: the onset is the knee of the least-squares flat-then-linear fit up to the
// split, when the shift measured from the knee passes the same test; else the split.
std::optional<DriftEvidence> climb_onset(
    const std::string& series, const std::vector<int64_t>& steps, const std::vector<double>& values, double floor);

// Runs change_point over a site's series and fills site.drift and site.onset_step.
void detect_drift(CompareSite& site);

// Both runs' performance (compare_performance.hpp), each over the given step indices of its report.
PerformanceComparison compare_performance(
    const CompareInput& input, const std::set<int64_t>& run_steps, const std::set<int64_t>& ref_steps);

// The program a command line runs: the script after an interpreter ("python -u train.py" -> "train.py"), the module
// after -m, else the executable; its base name. Empty when the command line is unknown. (compare_identity.cpp)
std::string program_of(std::string_view command_line);

// The pair's identity (compare.hpp PairIdentity) from the traces, their performance and their sites' samples over
// each trace's analysed steps; sites_in_common is left to compare_runs(), which knows whether it matched the sites
// already. (compare_identity.cpp)
PairIdentity identify_pair(const CompareInput& in, const PerformanceComparison& performance,
    const SiteSamples& run_samples, const SiteSamples& ref_samples, bool swapped);

} // namespace fp8scope::analyzer::detail
