// Tensor health's per-block figures (tensor_health.hpp, BlockSiteHealth): the per-block statistics of sites scaled
// per row or block (trace format 1.6), per site over the analysed steps.
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include "model/step_locator.hpp"
#include "tensors/tensor_health_parts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace fp8scope::analyzer::detail {

namespace {

// See BlockSiteHealth::per_tensor_flush_share. A block whose amax lies in octave j (taken at 2^(j + 0.5)) holds codes
// v dequantized to about v * A_j / fp8_max; one scale per tensor, fp8_max / amax, casts them to v * A_j / amax and
// flushes those below half the smallest subnormal: the codes' histogram under a cast that multiplies by A_j / amax,
// a scale_inv of amax / A_j.
std::optional<double> flush_share(const TensorStats& codes, const BlockStats& blocks)
{
    const std::optional<double> fp8_max = fp8_max_of(codes);
    if (!fp8_max || codes.exponent_histogram.empty() || blocks.exponent_histogram.empty() || !(blocks.amax > 0)
        || !std::isfinite(blocks.amax))
        return std::nullopt;
    double flushed = 0, weight = 0;
    for (size_t j = 0; j < blocks.exponent_histogram.size(); ++j) {
        const auto n = static_cast<double>(blocks.exponent_histogram[j]);
        if (n == 0)
            continue;
        const double block_amax = std::exp2(static_cast<double>(blocks.hist_first_exponent) + double(j) + 0.5);
        const HistogramShares shares = shares_under_scale(
            codes.exponent_histogram, codes.hist_first_exponent, blocks.amax / block_amax, *fp8_max);
        flushed += n * shares.flushed;
        weight += n;
    }
    return weight > 0 ? std::optional(flushed / weight) : std::nullopt;
}

} // namespace

void add_block_health(
    TensorHealth& health, const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device, size_t top_n)
{
    if (model.block_stats.empty())
        return;
    const StepLocator locator(steps);
    std::unordered_map<int64_t, size_t> site_index;
    for (size_t i = 0; i < health.sites.size(); ++i)
        site_index.emplace(health.sites[i].site_id, i);
    // The per-tensor sample of each (site, analysed step), for the codes' histogram.
    std::map<std::pair<int64_t, int64_t>, const TensorStats*> codes;
    for (const TensorStats& s : model.tensor_stats)
        if (!device || s.device_id == *device)
            if (const auto step = locator.analysed_step(s))
                codes.try_emplace({ s.site_id, *step }, &s);
    for (const BlockStats& b : model.block_stats) {
        const auto step = locator.analysed_step(b);
        const auto at = site_index.find(b.site_id);
        if (!step || at == site_index.end())
            continue;
        const auto sample = codes.find({ b.site_id, *step });
        if (device && sample == codes.end()) // another device's
            continue;
        TensorSiteHealth& site = health.sites[at->second];
        BlockSiteHealth& h = site.blocks ? *site.blocks : site.blocks.emplace();
        ++h.samples;
        h.block_rows = b.block_rows;
        h.block_cols = b.block_cols;
        h.blocks = b.blocks;
        h.amax_p50 = b.block_amax_p50;
        h.amax_p99 = b.block_amax_p99;
        h.amax_max = b.amax;
        h.bad_scale_blocks += b.bad_scale_blocks;
        if (b.block_amax_p50 > 0 && b.amax > 0 && std::isfinite(b.amax)) {
            const double spread = std::log2(b.amax / b.block_amax_p50);
            if (!h.max_spread_step || spread > h.max_spread_bits) {
                h.max_spread_bits = spread;
                h.max_spread_step = *step;
            }
        }
        if (const int64_t good = b.blocks - b.bad_scale_blocks; good > 0) {
            h.worst_saturating_share
                = std::max(h.worst_saturating_share, static_cast<double>(b.saturating_blocks) / double(good));
            h.worst_subnormal_share
                = std::max(h.worst_subnormal_share, static_cast<double>(b.subnormal_blocks) / double(good));
        }
        if (b.scale_inv_min && b.scale_inv_max && *b.scale_inv_min > 0) {
            const double range = std::log2(*b.scale_inv_max / *b.scale_inv_min);
            h.scale_range_bits = std::max(h.scale_range_bits.value_or(range), range);
        }
        if (sample != codes.end())
            if (const auto share = flush_share(*sample->second, b))
                h.per_tensor_flush_share = std::max(h.per_tensor_flush_share.value_or(*share), *share);
    }
    for (size_t i = 0; i < health.sites.size(); ++i)
        if (health.sites[i].blocks) {
            ++health.totals.block_stats_sites;
            health.top_block_spread.push_back(i);
        }
    std::ranges::sort(health.top_block_spread, [&](size_t l, size_t r) {
        const TensorSiteHealth& a = health.sites[l];
        const TensorSiteHealth& b = health.sites[r];
        return std::tie(b.blocks->max_spread_bits, a.site_id) < std::tie(a.blocks->max_spread_bits, b.site_id);
    });
    if (health.top_block_spread.size() > top_n)
        health.top_block_spread.resize(top_n);
}

} // namespace fp8scope::analyzer::detail
