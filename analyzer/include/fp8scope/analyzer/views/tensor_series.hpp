// The Tensors view's plots (docs/gui.md "Tensors"; docs/analysis.md "Queries for the viewer"): per tensor site, its
// figures over the analysed steps: amax, scale_inv, saturation and underflow ratios, headroom. Several samples of a
// site in one step (micro-batches) are reduced to one point the way compare reduces them, so that a run's series and
// CompareSite::steps (amax of the run against the reference) describe the same points.
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fp8scope::analyzer {

// One site in one analysed step. Ratios and headroom come from tensor_sample_figures() applied to the step's reduced
// sample: amax the largest of the samples', counts and numel summed, scale_inv the first sample's. nullopt where the
// samples cannot show the figure (tensor_health.hpp, TensorSampleFigures).
struct TensorSeriesPoint {
    int64_t step = 0; // StepInterval::index
    int64_t samples = 0; // samples reduced into this point
    int64_t timestamp_ns = 0; // the first sample's
    double amax = 0;
    std::optional<double> scale_inv;
    std::optional<double> saturation_ratio;
    std::optional<double> underflow_ratio;
    std::optional<double> headroom_bits;
    int64_t nonfinite = 0; // NaN + Inf elements, summed
};

struct TensorSiteSeries {
    int64_t site_id = 0;
    std::string label; // tensor_site_label()
    std::vector<TensorSeriesPoint> points; // by step, only steps with a sample
};

// One series per site with samples in the analysed steps, by site id. With `device`, only that device's samples
// (as analyze_tensor_health() takes it). O(samples log samples).
std::vector<TensorSiteSeries> tensor_series(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device = std::nullopt);

} // namespace fp8scope::analyzer
