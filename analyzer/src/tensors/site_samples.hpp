// A trace's tensor statistics reduced per site and analysed step (docs/analysis.md "Compare", "Numerics"): what
// compare matches across a pair, the numerics verdict judges alone and the viewer's tensor series plots.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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

// Small figures and names the site samples' users share.
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

} // namespace fp8scope::analyzer::detail
