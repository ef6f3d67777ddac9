// tensor_series(): each site's figures per analysed step for the Tensors view's plots (tensor_series.hpp). The samples
// of a step are reduced by compare's collect_site_samples(), and the figures of the reduced sample come from
// tensor_sample_figures(), so a series, tensor health and compare agree on every definition.
#include "fp8scope/analyzer/views/tensor_series.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include "tensors/site_samples.hpp"

#include <unordered_map>

namespace fp8scope::analyzer {

std::vector<TensorSiteSeries> tensor_series(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device)
{
    std::unordered_map<int64_t, const TensorSite*> sites;
    for (const TensorSite& site : model.tensor_sites)
        sites.try_emplace(site.id, &site);
    std::vector<TensorSiteSeries> out;
    for (const auto& [site_id, by_step] : detail::collect_site_samples(model, steps, device)) {
        TensorSiteSeries& series = out.emplace_back();
        series.site_id = site_id;
        if (const auto site = sites.find(site_id); site != sites.end())
            series.label = tensor_site_label(model, *site->second);
        for (const auto& [step, s] : by_step) {
            TensorStats reduced;
            reduced.dtype = s.dtype;
            reduced.target_format = s.target_format;
            reduced.numel = s.numel;
            reduced.amax = s.amax;
            reduced.scale_inv = s.scale_inv;
            reduced.saturated = s.saturated;
            reduced.overflows = s.overflows;
            reduced.underflows = s.underflows;
            const TensorSampleFigures figures = tensor_sample_figures(reduced);
            series.points.push_back({ .step = step,
                .samples = s.samples,
                .timestamp_ns = s.timestamp_ns,
                .amax = s.amax,
                .scale_inv = s.scale_inv,
                .saturation_ratio = figures.saturation_ratio,
                .underflow_ratio = figures.underflow_ratio,
                .headroom_bits = figures.headroom_bits,
                .nonfinite = s.nonfinite });
        }
    }
    return out;
}

} // namespace fp8scope::analyzer
