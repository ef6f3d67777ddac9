// FP8 numerics of one trace judged alone (docs/analysis.md "Numerics verdict"): healthy, at risk or broken, with the
// evidence that decides it, and no reference run needed. The unit is the FP8 tensor, not the GEMM site: the sites
// that hold the same data and scale in a step (a forward GEMM and the weight-gradient GEMM that reuses the saved FP8
// activation; the probe of the high-precision tensor cast with that scale) are one tensor. The result is plain data
// for the renderers; the words are present/'s.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// Thresholds, printed with the verdict (docs/analysis.md "Numerics verdict"). Shares are of a tensor's values in one
// analysed step.
inline constexpr double kBrokenClipShare = 1e-2; // clipped to the format's max: broken at once
inline constexpr double kAtRiskClipShare = 1e-3; // at risk when it recurs in kAtRiskClipSteps sampled steps
inline constexpr int kAtRiskClipSteps = 2;
inline constexpr double kBrokenFlushShare = 0.25; // nonzero values flushed to zero under the scale
inline constexpr double kAtRiskFlushShare = 1e-2;
// FP8 codes show clipping only as a pile-up at the format's max: the codes at max must be at least this share of the
// codes in the histogram's top octave (one value at max is a scale made from the amax; a uniform tensor under a
// current scale puts about a tenth of its top octave there).
inline constexpr double kPileUpShare = 0.5;
// A scale outgrown step after step (outgrown_scale()): from some onset on, over at least kOutgrownSteps sampled steps,
// the amax is beyond the scale's reach in kOutgrownShortShare of them, by kOutgrownBits on average (about one E4M3
// code step at the top of the range, log2(448 / 416) = 0.107, as compare's stale-scale bursts), while the amax rises
// kOutgrownRiseBits from before the onset to the end. Healthy delayed scaling falls short when the amax sets a record,
// now and then; a weight's scale trails its slowly growing amax by a few hundredths of a bit every step.
inline constexpr int kOutgrownSteps = 4;
inline constexpr double kOutgrownShortShare = 2.0 / 3.0;
inline constexpr double kOutgrownBits = 0.1;
inline constexpr double kOutgrownRiseBits = 1.0;
// An amax that climbs: a forward tensor's log2 amax rising by at least this many bits, from its early-step baseline
// (the median of its first kBaselineSamples sampled steps) to its last, at a knee the change-point test of compare
// finds (docs/analysis.md "Compare: drift"), over at least kClimbMinSteps sampled steps. Healthy training moves an
// activation's or weight's amax by about a bit over a short run; gradients move more and are not judged by it.
inline constexpr double kClimbBits = 2.0;
inline constexpr int kClimbMinSteps = 6;
inline constexpr int kBaselineSamples = 3;

enum class NumericsVerdict { NoData, Healthy, AtRisk, Broken };
// "no_data", "healthy", "at_risk", "broken"
const char* numerics_verdict_name(NumericsVerdict verdict);

enum class NumericsRule { NonFinite, Clipping, Flushing, OutgrownScale, AmaxClimb };
// "nonfinite", "clipping", "flushing", "outgrown_scale", "amax_climb"
const char* numerics_rule_name(NumericsRule rule);

// One FP8 tensor: the sites that hold it. Codes: the GEMM operands (or other FP8 samples) with the same data and
// scale in every step they were sampled; probe: the high-precision tensor cast with that scale (same module, its
// 1/scale equal to the codes' scale_inv), or a probe with a target format and no codes seen.
struct Fp8Tensor {
    std::optional<int64_t> probe_site;
    std::vector<int64_t> code_sites; // by site id
    // The site that names it: the probe when there is one, else the first code site.
    int64_t name_site() const { return probe_site ? *probe_site : code_sites.front(); }
};

// How a tensor's scale is made, as far as one trace shows: Current when every probe sample's scale puts its own amax
// at the format's max (|headroom| within 0.01 bit), Lagging when some do not (delayed or static), Unknown without a
// probe with a scale.
enum class ScaleKind { Unknown, Current, Lagging };

struct NumericsFinding {
    NumericsRule rule = NumericsRule::Clipping;
    NumericsVerdict severity = NumericsVerdict::AtRisk; // AtRisk or Broken
    int64_t site_id = 0; // Fp8Tensor::name_site()
    std::string tensor; // tensor_site_label() of that site
    std::string module; // its module ("blocks.2.fc2"), "" when unnamed
    std::string role; // "input", "weight", "gradient", "A", "B", ...: tensor_role_word()
    std::vector<std::string> read_by; // the code sites' located labels, in site order
    ScaleKind scale = ScaleKind::Unknown;
    int64_t onset_step = 0; // the first step showing it (the knee of a climb)
    int64_t worst_step = 0;
    // Clipping, Flushing: the share at the worst step. OutgrownScale: how far the scale fell short on average over
    // the steps it did, in bits (negative); `short_share` of the steps from the onset it did, `rise_bits` the amax's
    // rise. AmaxClimb: bits climbed from the baseline. NonFinite: NaN + Inf elements summed over the
    // steps (in each step the most any of its sites held).
    double value = 0;
    int64_t steps = 0; // sampled steps showing it (from the onset on for OutgrownScale and AmaxClimb)
    double short_share = 0, rise_bits = 0; // OutgrownScale only
    double position = 0; // the tensor's median offset in its step, 0..1: execution order within a step
};

struct NumericsJudgement {
    NumericsVerdict verdict = NumericsVerdict::NoData;
    std::string no_data; // NoData: why ("no FP8 tensor statistics in the analysed steps")
    // Broken before at risk, then earliest onset, then position in the step, then site id. One per tensor and rule.
    std::vector<NumericsFinding> findings;
    int64_t tensors = 0; // FP8 tensors judged
    int64_t sites = 0; // their sites
    int64_t sampled_steps = 0; // analysed steps with FP8 samples
    const NumericsFinding* lead() const { return findings.empty() ? nullptr : &findings.front(); }
};

// A delayed (or static) scale that lags a growing amax, over one tensor's sampled steps: `headroom_bits` is
// log2(fp8_max * scale_inv / amax) (below 0: the amax beyond the scale), `log2_amax` the amax's; nullopt where a step
// cannot show it. The earliest onset that passes the test of kOutgrownSteps .. kOutgrownRiseBits; nullopt: none.
struct OutgrownScale {
    int64_t onset_step = 0;
    int64_t steps = 0; // sampled steps from the onset on
    double short_share = 0; // of those, the share where the amax was beyond the scale
    double mean_shortfall_bits = 0; // how far beyond, on average over those
    double worst_bits = 0; // the most (a negative headroom)
    int64_t worst_step = 0;
    double amax_rise_bits = 0; // from before the onset (median of up to kBaselineSamples steps) to the end (idem)
};
std::optional<OutgrownScale> outgrown_scale(const std::vector<int64_t>& steps,
    const std::vector<std::optional<double>>& headroom_bits, const std::vector<std::optional<double>>& log2_amax);

// The FP8 tensors of a trace in the analysed steps (with `device`, that device's samples only), by name site.
std::vector<Fp8Tensor> find_fp8_tensors(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device = std::nullopt);

// The verdict. `health` (analyze_tensor_health on the same steps and device) gives the sites' located labels.
NumericsJudgement judge_numerics(const TraceModel& model, const StepSet& steps, const TensorHealth& health,
    std::optional<uint32_t> device = std::nullopt);

} // namespace fp8scope::analyzer
