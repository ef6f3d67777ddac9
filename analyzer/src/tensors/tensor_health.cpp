// Tensor health over the analysed steps (docs/analysis.md "Tensor health"): per-site saturation, underflow and
// headroom, rankings, the first non-finite sample and the scaling events. Samples are sorted twice (by time, and
// by site), so the whole analysis is O(samples log samples).
#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include "model/step_locator.hpp"
#include "tensors/tensor_health_parts.hpp"

#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace fp8scope::analyzer {
namespace {

// Sample order for "first" and "earliest": the sample's own step number (a sample without one, recorded
// before the first marker or in a trace without markers, comes before every numbered one), then time, then
// site id. Without own steps this is time order, which is step order since analysed steps do not overlap.
auto order_key(const TensorStats& s)
{
    return std::make_tuple(s.step.value_or(INT64_MIN), s.timestamp_ns, s.site_id);
}

class SiteLabels {
public:
    explicit SiteLabels(const TraceModel& model)
    {
        for (const TensorSite& site : model.tensor_sites)
            labels_.emplace(site.id, tensor_site_label(model, site));
    }
    std::string operator()(int64_t site_id) const
    {
        const auto it = labels_.find(site_id);
        return it != labels_.end() ? it->second : "site " + std::to_string(site_id) + " (not in the site table)";
    }

private:
    std::unordered_map<int64_t, std::string> labels_;
};

bool flt_max_scale(const TensorStats& s)
{
    return (s.scale && *s.scale >= kFltMaxScale)
        || (s.scale_inv && *s.scale_inv >= 0 && *s.scale_inv <= 1.0 / kFltMaxScale);
}

double scale_of(const TensorStats& s)
{
    if (s.scale)
        return *s.scale;
    return *s.scale_inv > 0 ? 1.0 / *s.scale_inv : HUGE_VAL;
}

void note(TensorEventList& list, TensorSampleLocation where, double value)
{
    ++list.total;
    if (list.first.size() < kTensorEventsListed)
        list.first.push_back(TensorEvent { std::move(where), value });
}

// Running sums of one site; finish() turns them into the ratios.
struct SiteSums {
    int64_t saturated = 0, saturation_numel = 0, underflows = 0, underflow_numel = 0;
};

void add_sample(
    TensorSiteHealth& site, SiteSums& sums, const TensorStats& s, const TensorSampleFigures& f, int64_t step)
{
    ++site.samples;
    site.first_step = std::min(site.first_step.value_or(step), step);
    site.last_step = std::max(site.last_step.value_or(step), step);
    if (f.saturation_ratio) {
        ++site.saturation_samples;
        sums.saturated += std::max(s.saturated, s.overflows);
        sums.saturation_numel += s.numel;
        if (!site.worst_saturation_step || *f.saturation_ratio > site.worst_saturation_ratio) {
            site.worst_saturation_ratio = *f.saturation_ratio;
            site.worst_saturation_step = step;
        }
    }
    if (f.underflow_ratio) {
        ++site.underflow_samples;
        sums.underflows += s.underflows;
        sums.underflow_numel += s.numel;
        if (!site.worst_underflow_step || *f.underflow_ratio > site.worst_underflow_ratio) {
            site.worst_underflow_ratio = *f.underflow_ratio;
            site.worst_underflow_step = step;
        }
    }
    if (f.headroom_bits && (!site.min_headroom_bits || *f.headroom_bits < *site.min_headroom_bits)) {
        site.min_headroom_bits = f.headroom_bits;
        site.min_headroom_step = step;
    }
    if (std::isfinite(s.amax)) {
        site.amax_min = std::min(site.amax_min.value_or(s.amax), s.amax);
        site.amax_max = std::max(site.amax_max.value_or(s.amax), s.amax);
    }
    if (f.nonfinite_sample())
        ++site.nonfinite_samples;
}

void finish(TensorSiteHealth& site, const SiteSums& sums)
{
    if (sums.saturation_numel > 0)
        site.mean_saturation_ratio = static_cast<double>(sums.saturated) / static_cast<double>(sums.saturation_numel);
    if (sums.underflow_numel > 0)
        site.mean_underflow_ratio = static_cast<double>(sums.underflows) / static_cast<double>(sums.underflow_numel);
}

// The first top_n indices of `sites` that `has` accepts, ordered by `before`.
template <class Has, class Before>
std::vector<size_t> ranking(const std::vector<TensorSiteHealth>& sites, size_t top_n, Has has, Before before)
{
    std::vector<size_t> order;
    for (size_t i = 0; i < sites.size(); ++i)
        if (has(sites[i]))
            order.push_back(i);
    const auto by = [&](size_t l, size_t r) { return before(sites[l], sites[r]); };
    const size_t n = std::min(top_n, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), by);
    order.resize(n);
    return order;
}

// Per recipe: the sites and samples of scaled FP8 operands in the analysed steps, and the samples per analysed step
// that holds any of that recipe (what one sampled step holds: a GEMM's two operands count twice).
std::vector<RecipeTotals> recipe_totals(const std::vector<TensorSiteHealth>& sites, const TraceModel& model,
    const std::vector<std::optional<int64_t>>& analysed)
{
    std::map<int32_t, RecipeTotals> by_recipe;
    std::unordered_map<int64_t, int32_t> recipe_of;
    // Only FP8 operands: a BF16 GEMM's operands carry the tensorwise default of their GEMM's scale mode, but nothing
    // was scaled (issue 44: a compiled BF16 run showed "tensorwise: 111 sites").
    std::unordered_set<int64_t> fp8_sites;
    for (const TensorSite& s : model.tensor_sites)
        if (const auto d = static_cast<schema::Dtype>(s.dtype); d == schema::Dtype::E4M3 || d == schema::Dtype::E5M2)
            fp8_sites.insert(s.id);
    for (const TensorSiteHealth& site : sites)
        if (site.scale_recipe && fp8_sites.contains(site.site_id)) {
            RecipeTotals& totals = by_recipe[*site.scale_recipe];
            totals.recipe = scale_recipe_name(*site.scale_recipe);
            totals.sites += 1;
            totals.samples += site.samples;
            recipe_of.emplace(site.site_id, *site.scale_recipe);
        }
    std::map<int32_t, std::set<int64_t>> steps;
    for (size_t i = 0; i < model.tensor_stats.size(); ++i)
        if (const auto it = recipe_of.find(model.tensor_stats[i].site_id); it != recipe_of.end() && analysed[i])
            steps[it->second].insert(*analysed[i]);
    std::vector<RecipeTotals> out;
    for (auto& [recipe, totals] : by_recipe) {
        const size_t n = steps[recipe].size();
        totals.samples_per_sampled_step = n == 0 ? 0.0 : static_cast<double>(totals.samples) / static_cast<double>(n);
        out.push_back(std::move(totals));
    }
    return out;
}

} // namespace

TensorHealth analyze_tensor_health(
    const TraceModel& model, const StepSet& steps, size_t top_n, std::optional<uint32_t> device)
{
    TensorHealth health;
    const std::vector<TensorStats>& stats = model.tensor_stats;
    health.totals.samples = static_cast<int64_t>(stats.size());
    health.totals.sites = static_cast<int64_t>(model.tensor_sites.size());
    if (stats.empty())
        return health;

    const detail::StepLocator locator(steps);
    const SiteLabels labels(model);
    std::unordered_set<int64_t> per_block_sites;
    for (const TensorSite& site : model.tensor_sites)
        if (is_per_block_recipe(site.scale_recipe))
            per_block_sites.insert(site.id);
    // GEMM operands scaled outside the GEMM: their codes at max are each row's own amax (UnitScaleTest).
    std::unordered_map<int64_t, UnitScaleTest> unit_scale;
    for (const TensorSite& site : model.tensor_sites) {
        const auto source = static_cast<schema::StatsSource>(site.source);
        const auto role = static_cast<schema::TensorRole>(site.role);
        if ((source == schema::StatsSource::GemmInterception || source == schema::StatsSource::TorchScaledMm)
            && (role == schema::TensorRole::A || role == schema::TensorRole::B))
            unit_scale.emplace(site.id, UnitScaleTest {});
    }
    for (const TensorStats& s : stats)
        if (const auto it = unit_scale.find(s.site_id); it != unit_scale.end())
            it->second.add(tensor_scale_inv(s), s.amax, fp8_max_of(s));
    // The whole GEMM (its A, B and D share name, NVTX path and ordinal) when one operand was scaled outside it.
    const auto gemm_of = [](const TensorSite& site) {
        return std::tuple(site.name.index, site.nvtx_path ? site.nvtx_path->index : UINT32_MAX, site.ordinal);
    };
    std::set<std::tuple<uint32_t, uint32_t, int32_t>> unit_scaled_gemms;
    for (const TensorSite& site : model.tensor_sites)
        if (const auto it = unit_scale.find(site.id); it != unit_scale.end() && it->second.unit_scaled())
            unit_scaled_gemms.insert(gemm_of(site));
    for (const TensorSite& site : model.tensor_sites)
        if (unit_scaled_gemms.contains(gemm_of(site))
            && (site.source == int32_t(schema::StatsSource::GemmInterception)
                || site.source == int32_t(schema::StatsSource::TorchScaledMm)))
            per_block_sites.insert(site.id); // no one scale to judge their codes by, as for sites scaled per block
    std::vector<std::optional<int64_t>> analysed(stats.size());
    std::vector<TensorSampleFigures> figures(stats.size());
    std::vector<bool> included(stats.size(), true);
    for (size_t i = 0; i < stats.size(); ++i) {
        included[i] = !device || stats[i].device_id == *device;
        analysed[i] = included[i] ? locator.analysed_step(stats[i]) : std::nullopt;
        figures[i] = tensor_sample_figures(stats[i]);
        if (per_block_sites.contains(stats[i].site_id)) {
            // Codes at max are each block's own amax, and no one scale_inv exists (is_per_block_recipe), or the
            // scale was applied outside the GEMM.
            figures[i].saturation_ratio.reset();
            figures[i].headroom_bits.reset();
        }
    }
    const auto locate = [&](size_t i) {
        return TensorSampleLocation { .sample_index = i,
            .site_id = stats[i].site_id,
            .site_label = labels(stats[i].site_id),
            .step = analysed[i] ? analysed[i] : stats[i].step,
            .in_analysed_steps = analysed[i].has_value(),
            .timestamp_ns = stats[i].timestamp_ns };
    };

    std::vector<size_t> order(stats.size());
    std::iota(order.begin(), order.end(), size_t { 0 });
    std::ranges::sort(order, [&](size_t l, size_t r) { return order_key(stats[l]) < order_key(stats[r]); });

    // Events and the first non-finite sample, in sample order, so that each list keeps the earliest.
    std::vector<int64_t> steps_seen;
    for (const size_t i : order) {
        if (!included[i])
            continue;
        const TensorStats& s = stats[i];
        const TensorSampleFigures& f = figures[i];
        if (f.nonfinite_sample()) {
            ++health.totals.nonfinite_samples;
            if (!health.first_nonfinite)
                health.first_nonfinite = NonfiniteSample { locate(i), s.nans, s.infs, s.numel, f.nan_scale };
        }
        if (!analysed[i])
            continue; // warm-up scaling events are expected while the amax history fills
        ++health.totals.samples_in_steps;
        steps_seen.push_back(*analysed[i]);
        if (flt_max_scale(s))
            note(health.flt_max_scale, locate(i), scale_of(s));
        // A tensor with NaN/Inf is reported as non-finite; its true amax is not 0.
        if (s.numel > 0 && s.amax == 0 && !f.nonfinite_sample())
            note(health.zero_amax, locate(i), s.amax);
        if (f.headroom_bits && *f.headroom_bits < kStaleScaleHeadroomBits)
            note(health.stale_scale, locate(i), *f.headroom_bits);
    }
    std::ranges::sort(steps_seen);
    health.totals.steps_with_samples
        = std::ranges::distance(steps_seen.begin(), std::ranges::unique(steps_seen).begin());
    health.totals.steps = static_cast<int64_t>(steps.steps.size());
    if (!steps.steps.empty())
        health.totals.samples_per_step
            = static_cast<double>(health.totals.samples_in_steps) / static_cast<double>(steps.steps.size());
    if (health.totals.steps_with_samples > 0)
        health.totals.samples_per_sampled_step = static_cast<double>(health.totals.samples_in_steps)
            / static_cast<double>(health.totals.steps_with_samples);

    // Per site: a stable sort of the time order by site keeps each site's samples earliest first, so that a
    // site's worst figure is its earliest sample with it.
    std::ranges::stable_sort(order, {}, [&](size_t i) { return stats[i].site_id; });
    std::unordered_map<int64_t, GemmSitePlace> places = detail::gemm_site_places(model, analysed);
    std::unordered_map<int64_t, const TensorSite*> site_of;
    for (const TensorSite& site : model.tensor_sites)
        site_of.emplace(site.id, &site);
    for (size_t at = 0; at < order.size();) {
        const int64_t site_id = stats[order[at]].site_id;
        TensorSiteHealth site;
        site.site_id = site_id;
        SiteSums sums;
        for (; at < order.size() && stats[order[at]].site_id == site_id; ++at)
            if (const size_t i = order[at]; analysed[i])
                add_sample(site, sums, stats[i], figures[i], *analysed[i]);
        if (site.samples == 0)
            continue;
        finish(site, sums);
        site.label = labels(site_id);
        if (const auto place = places.find(site_id); place != places.end())
            site.place = place->second;
        if (const auto it = site_of.find(site_id); it != site_of.end())
            site.scale_recipe = it->second->scale_recipe;
        if (const auto it = site_of.find(site_id); it != site_of.end()
            && static_cast<schema::StatsSource>(it->second->source) == schema::StatsSource::GemmInterception) {
            const std::optional<StringRef>& path = it->second->nvtx_path;
            if (!path || path->index >= model.strings.size() || model.strings[*path].empty())
                ++health.totals.unnamed_gemm_sites;
        }
        health.sites.push_back(std::move(site));
    }
    health.totals.sites_in_steps = static_cast<int64_t>(health.sites.size());
    health.totals.recipes = recipe_totals(health.sites, model, analysed);
    health.totals.per_block_sites = std::ranges::count_if(
        health.sites, [](const TensorSiteHealth& site) { return is_per_block_recipe(site.scale_recipe); });
    detail::add_block_health(health, model, steps, device, top_n);

    health.top_saturation = ranking(
        health.sites, top_n, [](const TensorSiteHealth& s) { return s.saturation_samples > 0; },
        [](const TensorSiteHealth& l, const TensorSiteHealth& r) {
            return std::tie(r.worst_saturation_ratio, r.mean_saturation_ratio, l.site_id)
                < std::tie(l.worst_saturation_ratio, l.mean_saturation_ratio, r.site_id);
        });
    health.top_underflow = ranking(
        health.sites, top_n, [](const TensorSiteHealth& s) { return s.underflow_samples > 0; },
        [](const TensorSiteHealth& l, const TensorSiteHealth& r) {
            return std::tie(r.worst_underflow_ratio, r.mean_underflow_ratio, l.site_id)
                < std::tie(l.worst_underflow_ratio, l.mean_underflow_ratio, r.site_id);
        });
    health.top_least_headroom = ranking(
        health.sites, top_n, [](const TensorSiteHealth& s) { return s.min_headroom_bits.has_value(); },
        [](const TensorSiteHealth& l, const TensorSiteHealth& r) {
            return std::tie(*l.min_headroom_bits, l.site_id) < std::tie(*r.min_headroom_bits, r.site_id);
        });
    return health;
}

std::string gemm_place_text(const GemmSitePlace& place)
{
    switch (place.phase) {
    case GemmPhase::Forward:
        return fmt::format("forward GEMM {} of {} sampled", place.position, place.of);
    case GemmPhase::Backward:
        return fmt::format("backward GEMM {} of {} sampled", place.position, place.of);
    case GemmPhase::Unknown:
        break;
    }
    return fmt::format("GEMM {} of {} sampled in the step", place.position, place.of);
}

std::string located_site_label(const TensorSiteHealth& site)
{
    return site.place ? fmt::format("{} ({})", site.label, gemm_place_text(*site.place)) : site.label;
}

} // namespace fp8scope::analyzer
