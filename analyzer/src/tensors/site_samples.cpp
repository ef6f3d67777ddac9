// A trace's tensor statistics reduced per site and analysed step (site_samples.hpp).
#include "tensors/site_samples.hpp"

#include "model/step_locator.hpp"

#include <algorithm>
#include <unordered_map>

namespace fp8scope::analyzer::detail {
namespace {

void add_histogram(StepSample& into, const TensorStats& s)
{
    if (s.exponent_histogram.empty())
        return;
    if (into.histogram.empty()) {
        into.hist_first_exponent = s.hist_first_exponent;
        into.histogram = s.exponent_histogram;
        return;
    }
    const int32_t lo = std::min(into.hist_first_exponent, s.hist_first_exponent);
    const auto end = [](int32_t first, size_t n) { return static_cast<int64_t>(first) + static_cast<int64_t>(n); };
    const int64_t hi = std::max(
        end(into.hist_first_exponent, into.histogram.size()), end(s.hist_first_exponent, s.exponent_histogram.size()));
    std::vector<uint64_t> merged(static_cast<size_t>(hi - lo), 0);
    for (size_t i = 0; i < into.histogram.size(); ++i)
        merged[static_cast<size_t>(into.hist_first_exponent - lo) + i] += into.histogram[i];
    for (size_t i = 0; i < s.exponent_histogram.size(); ++i)
        merged[static_cast<size_t>(s.hist_first_exponent - lo) + i] += s.exponent_histogram[i];
    into.hist_first_exponent = lo;
    into.histogram = std::move(merged);
}

} // namespace

SiteSamples collect_site_samples(const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device)
{
    const StepLocator locator(steps);
    std::unordered_map<int64_t, const StepInterval*> intervals;
    for (const StepInterval& s : steps.steps)
        intervals.emplace(s.index, &s);
    SiteSamples out;
    for (const TensorStats& sample : model.tensor_stats) {
        const std::optional<int64_t> step = locator.analysed_step(sample);
        if (!step || (device && sample.device_id != *device))
            continue;
        auto [it, fresh] = out[sample.site_id].try_emplace(*step);
        StepSample& s = it->second;
        if (fresh) {
            s.scale_inv = tensor_scale_inv(sample);
            s.dtype = sample.dtype;
            s.target_format = sample.target_format;
            s.amax = sample.amax;
            const StepInterval& interval = *intervals.at(*step);
            const double length = static_cast<double>(std::max<int64_t>(1, interval.end_ns - interval.start_ns));
            s.position = std::clamp(static_cast<double>(sample.timestamp_ns - interval.start_ns) / length, 0.0, 1.0);
            s.timestamp_ns = sample.timestamp_ns;
        } else if (!(s.amax >= sample.amax)) {
            s.amax = sample.amax; // also takes a NaN amax, which then shows as no figure
        }
        s.samples += 1;
        s.nonfinite += sample.nans + sample.infs;
        s.numel += sample.numel;
        s.saturated += sample.saturated;
        s.overflows += sample.overflows;
        s.underflows += sample.underflows;
        add_histogram(s, sample);
    }
    for (const BlockStats& b : model.block_stats) {
        const std::optional<int64_t> step = locator.analysed_step(b);
        const auto site = out.find(b.site_id);
        if (!step || site == out.end())
            continue;
        const auto found = site->second.find(*step);
        if (found == site->second.end()) // its per-tensor sample was left out (another device)
            continue;
        StepSample& s = found->second;
        if (!s.blocks)
            s.blocks = StepSample::Blocks { b.amax, b.block_amax_p50, b.block_amax_p99, 0, 0, 0 };
        else if (!(s.blocks->amax >= b.amax))
            s.blocks->amax = b.amax;
        s.blocks->blocks += b.blocks - b.bad_scale_blocks;
        s.blocks->saturating += b.saturating_blocks;
        s.blocks->subnormal += b.subnormal_blocks;
    }
    return out;
}

} // namespace fp8scope::analyzer::detail
