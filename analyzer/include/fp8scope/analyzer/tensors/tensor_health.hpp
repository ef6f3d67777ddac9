// Tensor health (docs/analysis.md "Tensor health"): from the per-tensor FP8 statistics of a trace
// (TraceModel::tensor_sites / tensor_stats), which tensors saturate, underflow or run out of headroom, where the first
// NaN/Inf appeared, and the scaling events users ask about (scale == FLT_MAX, amax == 0, a stale delayed scale). The
// result is plain data for the renderers and the `check` budgets.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// Largest finite values of the OCP FP8 formats; TransformerEngine's fp8_dtype_max uses the same.
inline constexpr double kE4M3Max = 448.0;
inline constexpr double kE5M2Max = 57344.0;
// TransformerEngine replaces a scale that would be Inf by FLT_MAX (3.40282347e38, PR #786). At or above this
// bound (FLT_MAX rounded down, so that a value that went through float rounding still counts) the scale is that
// fallback; a scale_inv at or below its inverse is the same event seen from the GEMM side.
inline constexpr double kFltMaxScale = 3.4028e38;
// Below this headroom the delayed scale no longer covers this sample's amax: the cast clips. Not exactly 0: a scale
// chosen for exactly this amax (margin 0) gives headroom 0 up to float rounding of scale and amax (~1e-7 bits).
inline constexpr double kStaleScaleHeadroomBits = -1e-6;
// Each event list keeps its earliest events; `total` counts them all.
inline constexpr size_t kTensorEventsListed = 20;

// FP32, BF16 or FP16: a tensor an FP8 recipe would cast (schema::Dtype).
bool is_high_precision(int32_t dtype);

// The smallest subnormals: a value below half of it rounds to zero (OCP FP8: E4M3 2^-9, E5M2 2^-16).
inline constexpr double kE4M3MinSubnormalLog2 = -9;
inline constexpr double kE5M2MinSubnormalLog2 = -16;
// kE5M2MinSubnormalLog2 for kE5M2Max, else kE4M3MinSubnormalLog2.
double min_subnormal_log2(double fp8_max);

// The shares of a tensor's nonzero finite elements, given by their exponent histogram (bin i holds |x| in
// [2^(first_exponent + i), 2^(first_exponent + i + 1)), taken as log-uniform), that a cast with this scale_inv (the
// cast multiplies by 1/scale_inv) clips above fp8_max and flushes below half the format's smallest subnormal. Both 0
// for an empty histogram.
struct HistogramShares {
    double clipped = 0, flushed = 0;
};
HistogramShares shares_under_scale(
    const std::vector<uint64_t>& histogram, int32_t first_exponent, double scale_inv, double fp8_max);

// The figures derived from one sample; nullopt where the sample cannot show the figure.
struct TensorSampleFigures {
    // max(saturated, overflows) / numel: elements clipped to the FP8 format's max. Needs an FP8 format (target
    // format, or the dtype for FP8 codes) and numel > 0.
    std::optional<double> saturation_ratio;
    // underflows / numel: nonzero elements that the cast turns into +-0. Needs a high-precision dtype (FP32, BF16,
    // FP16) with a target format: for FP8 codes the lost values are not observable.
    std::optional<double> underflow_ratio;
    // log2(fp8_max * scale_inv / amax): needs an FP8 format, scale_inv (or 1/scale) > 0 and finite, amax > 0 and
    // finite. Below 0: the cast clips; large: range wasted (and more underflow).
    std::optional<double> headroom_bits;
    int64_t nonfinite = 0; // nans + infs
    // scale or scale_inv recorded as NaN (trace format 1.4, "NaN values"): a failed scale update, after which the
    // cast's output is NaN whatever the elements. The sample counts as holding NaN.
    bool nan_scale = false;
    bool nonfinite_sample() const { return nonfinite > 0 || nan_scale; }
};

// The FP8 format's max for a sample (target format, else the dtype when it is FP8), nullopt when none.
std::optional<double> fp8_max_of(const TensorStats& sample);
TensorSampleFigures tensor_sample_figures(const TensorStats& sample);
// The sample's scale_inv when positive and finite, else 1/scale when that is; nullopt otherwise.
std::optional<double> tensor_scale_inv(const TensorStats& sample);

// "A", "B", "D", "input", "weight", "output", "gradient"; "" for `other` (schema::TensorRole).
std::string_view tensor_role_word(int32_t role);

// ENUM_FP8SCOPE_SCALE_RECIPE's names: "tensorwise", "rowwise", "blockwise 1×128", "blockwise 128×128", "MX 32",
// "NVFP4 16"; "recipe N" for a value this reader does not know.
std::string scale_recipe_name(int32_t recipe);
// A recipe with more than one scale per operand (rowwise, blockwise, MX, NVFP4; an unknown value too): the codes of
// one block are scaled by its own amax, so a code at the format's max is that block's largest element, not a clipped
// value, and there is no one scale_inv to dequantize the operand with. Tensor health and compare then leave out the
// figures that need one (saturation, headroom) and read the trace's per-block statistics instead (format 1.6:
// BlockSiteHealth, compare's block series; docs/analysis.md).
bool is_per_block_recipe(std::optional<int32_t> recipe);

// A GEMM operand given unit scales while its codes were scaled by their own amax, the scale being applied outside the
// GEMM (torchao's rowwise backward multiplies the row scales into the output; docs/analysis.md "Compare", Scales
// outside the GEMM): every sample's scale_inv exactly 1, and the codes' amax at the format's max in at least 80% of
// them. Its codes are not values: tensor health gives it no saturation or headroom figure and compare no drift. Fed
// one sample (or one step's reduced samples) at a time.
class UnitScaleTest {
public:
    void add(std::optional<double> scale_inv, double amax, std::optional<double> fp8_max)
    {
        ++samples_;
        if (!fp8_max || scale_inv != 1.0)
            return;
        ++unit_;
        at_max_ += amax == *fp8_max ? 1 : 0;
    }
    bool unit_scaled() const
    {
        return samples_ > 0 && unit_ == samples_ && static_cast<double>(at_max_) >= 0.8 * static_cast<double>(samples_);
    }

private:
    size_t samples_ = 0, unit_ = 0, at_max_ = 0;
};

// "train_step/layers.3/mlp.fc2 · gemm 4096x1024x4096 #0 · A · rowwise": NVTX path, name, the ordinal for a GEMM
// site, role (omitted when `other`), the scale recipe when the trace has one (format 1.5). The one place that names
// a site; renderers use it.
std::string tensor_site_label(const TraceModel& model, const TensorSite& site);

// Where a sample is. `step` is the analysed step holding it (StepInterval::index), else the sample's own step
// number (the collector's, from step markers), else nullopt: a warm-up sample of a trace without step markers, or
// one outside every step.
struct TensorSampleLocation {
    size_t sample_index = 0; // row in TraceModel::tensor_stats
    int64_t site_id = 0;
    std::string site_label;
    std::optional<int64_t> step;
    bool in_analysed_steps = false;
    int64_t timestamp_ns = 0;
};

// The first sample holding NaN or Inf, or with a NaN scale, over every sample (warm-up included).
struct NonfiniteSample {
    TensorSampleLocation where;
    int64_t nans = 0, infs = 0, numel = 0;
    bool nan_scale = false;
};

// A scaling event: `value` is the scale for FLT_MAX-scale events (scale, or 1/scale_inv), the amax (0) for
// zero-amax events and the headroom in bits for stale-scale events.
struct TensorEvent {
    TensorSampleLocation where;
    double value = 0;
};

struct TensorEventList {
    std::vector<TensorEvent> first; // the earliest kTensorEventsListed, by step, then time, then site id
    int64_t total = 0;
};

// Where a zero-code GEMM site sits in the step (docs/analysis.md "Tensor health", Where a GEMM site sits): in launch
// order among the GEMMs sampled in one step, within its pass when the step's GEMMs came from two or more threads
// (PyTorch's backward runs on autograd's thread), else within the step.
enum class GemmPhase : uint8_t { Unknown, Forward, Backward };
struct GemmSitePlace {
    int64_t step = 0; // the analysed step it was placed in: the one with the most GEMMs sampled
    GemmPhase phase = GemmPhase::Unknown;
    int64_t position = 0; // 1-based
    int64_t of = 0; // GEMMs sampled in that step and pass (in the step when the pass is unknown)
};

// "forward GEMM 3 of 24 sampled", "backward GEMM 1 of 48 sampled", "GEMM 5 of 12 sampled in the step"
std::string gemm_place_text(const GemmSitePlace& place);

// A site scaled per row or block, over its per-block statistics in the analysed steps (trace format 1.6;
// docs/analysis.md "Tensor health", Per-block figures). Shares are of the blocks with a good scale.
struct BlockSiteHealth {
    int64_t samples = 0;
    int64_t block_rows = 0, block_cols = 0, blocks = 0; // the last sample's
    double amax_p50 = 0, amax_p99 = 0, amax_max = 0; // the last sample's block amaxes
    double max_spread_bits = 0; // the widest log2(largest block amax / median block amax) over the samples
    std::optional<int64_t> max_spread_step;
    double worst_saturating_share = 0; // blocks with two or more codes at +-max
    double worst_subnormal_share = 0; // blocks holding subnormal codes
    std::optional<double> scale_range_bits; // the widest log2(largest / smallest block scale_inv)
    // An estimate of what one scale per tensor (current scaling, from the operand's amax) would flush to zero: the
    // share of nonzero values pushed below half the smallest subnormal, from the codes' histogram (the per-tensor
    // sample of the same step) and the blocks' amaxes by octave, taking every block's codes as distributed alike.
    // The worst over the samples; nullopt without a per-tensor sample in the step.
    std::optional<double> per_tensor_flush_share;
    int64_t bad_scale_blocks = 0; // summed over the samples
};

// One site over its samples in the analysed steps. Ratios are element-weighted over the samples that can show
// them (Σ count / Σ numel, as TransformerEngine's debug tools reduce over micro-batches); worst_* is one sample.
struct TensorSiteHealth {
    int64_t site_id = 0;
    std::string label; // tensor_site_label()
    int64_t samples = 0;
    std::optional<int64_t> first_step, last_step;
    int64_t saturation_samples = 0; // samples with a saturation figure
    double worst_saturation_ratio = 0, mean_saturation_ratio = 0;
    std::optional<int64_t> worst_saturation_step; // the earliest sample with the worst figure
    int64_t underflow_samples = 0;
    double worst_underflow_ratio = 0, mean_underflow_ratio = 0;
    std::optional<int64_t> worst_underflow_step;
    std::optional<double> min_headroom_bits; // nullopt: no sample has a headroom figure
    std::optional<int64_t> min_headroom_step;
    std::optional<double> amax_min, amax_max; // over samples with a finite amax
    int64_t nonfinite_samples = 0;
    std::optional<GemmSitePlace> place; // zero-code GEMM sites sampled in the placing step
    std::optional<int32_t> scale_recipe; // TensorSite::scale_recipe
    std::optional<BlockSiteHealth> blocks; // a site scaled per row or block, with per-block statistics
};

// The FP8 operands of scaled GEMMs with one recipe, in the analysed steps.
struct RecipeTotals {
    std::string recipe; // scale_recipe_name()
    int64_t sites = 0, samples = 0;
    double samples_per_sampled_step = 0; // samples / analysed steps with samples of this recipe
};

// The site's label, then its place for a zero-code GEMM site: "gemm 512x2048x512 #8 · B (forward GEMM 9 of 24
// sampled)".
std::string located_site_label(const TensorSiteHealth& site);

struct TensorHealthTotals {
    int64_t samples = 0; // every sample in the trace
    int64_t sites = 0; // every site in the trace
    int64_t nonfinite_samples = 0; // every sample, warm-up included
    int64_t samples_in_steps = 0;
    int64_t sites_in_steps = 0; // sites with at least one sample in the analysed steps
    int64_t steps_with_samples = 0; // analysed steps holding at least one sample
    int64_t steps = 0; // analysed steps
    double samples_per_step = 0; // samples_in_steps / analysed steps (0 without steps)
    // samples_in_steps / steps_with_samples (0 without): what a sampled step holds, when statistics are taken every
    // N-th step (FP8SCOPE_STATS_EVERY) and most steps hold none
    double samples_per_sampled_step = 0;
    // Zero-code GEMM sites in the steps without an NVTX path: named by shape alone, which fp8scope.torch.annotate
    // (module names) would improve.
    int64_t unnamed_gemm_sites = 0;
    std::vector<RecipeTotals> recipes; // by ENUM_FP8SCOPE_SCALE_RECIPE value; empty when no site has a recipe
    // Sites in the analysed steps scaled per row or block (is_per_block_recipe): FP8, but without per-tensor
    // saturation or headroom figures; those with per-block statistics have their block figures instead.
    int64_t per_block_sites = 0;
    int64_t block_stats_sites = 0;
};

struct TensorHealth {
    TensorHealthTotals totals;
    std::vector<TensorSiteHealth> sites; // sites with samples in the analysed steps, by site id
    // Indices into `sites`, at most top_n each. Saturation and underflow: worst figure, then mean, descending, then
    // site id; sites without the figure are left out. Least headroom: min_headroom_bits ascending, then site id.
    std::vector<size_t> top_saturation, top_underflow, top_least_headroom;
    // Sites with per-block statistics, widest block-amax spread first, then site id.
    std::vector<size_t> top_block_spread;
    std::optional<NonfiniteSample> first_nonfinite;
    // Over the samples in the analysed steps.
    TensorEventList flt_max_scale, zero_amax, stale_scale;
};

// A trace without tensor statistics gives an empty result (totals all 0). O(samples log samples).
// With `device`, only that device's samples count (as `report --device` limits the bubble totals); totals.samples and
// totals.sites still count the whole trace.
TensorHealth analyze_tensor_health(
    const TraceModel& model, const StepSet& steps, size_t top_n = 10, std::optional<uint32_t> device = std::nullopt);

} // namespace fp8scope::analyzer
