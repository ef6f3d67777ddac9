// The report's "tensor_health" object (schema fp8scope.report/2, docs/cli.md): every figure of the analyzer's
// TensorHealth, sites by site id and rankings as site ids, so that a consumer can join them.
#include "report/report_tensor.hpp"

#include "fp8scope/analyzer/tensors/tensor_health.hpp"

namespace fp8scope::cli {

using namespace analyzer;

namespace {

using json = nlohmann::ordered_json;

template <class T> json optional_json(const std::optional<T>& value)
{
    return value ? json(*value) : json(nullptr);
}

json location_json(const TensorSampleLocation& where)
{
    return { { "site_id", where.site_id }, { "site", where.site_label }, { "step", optional_json(where.step) },
        { "in_analysed_steps", where.in_analysed_steps }, { "timestamp_ns", where.timestamp_ns } };
}

json events_json(const TensorEventList& list)
{
    json first = json::array();
    for (const TensorEvent& e : list.first) {
        json event = location_json(e.where);
        event["value"] = e.value;
        first.push_back(std::move(event));
    }
    return { { "total", list.total }, { "first", std::move(first) } };
}

json ranking_json(const TensorHealth& health, const std::vector<size_t>& ranking)
{
    json ids = json::array();
    for (const size_t i : ranking)
        ids.push_back(health.sites[i].site_id);
    return ids;
}

// Where a zero-code GEMM site sits in the step; null for other sites and for GEMMs not sampled in the placing step.
json place_json(const std::optional<GemmSitePlace>& place)
{
    if (!place)
        return nullptr;
    const std::string_view phase = place->phase == GemmPhase::Forward ? "forward"
        : place->phase == GemmPhase::Backward                         ? "backward"
                                                                      : "unknown";
    return { { "step", place->step }, { "phase", phase }, { "position", place->position }, { "of", place->of },
        { "text", gemm_place_text(*place) } };
}

json blocks_json(const std::optional<BlockSiteHealth>& b)
{
    if (!b)
        return nullptr;
    return { { "samples", b->samples }, { "block_rows", b->block_rows }, { "block_cols", b->block_cols },
        { "blocks", b->blocks }, { "amax_p50", b->amax_p50 }, { "amax_p99", b->amax_p99 }, { "amax_max", b->amax_max },
        { "max_spread_bits", b->max_spread_bits }, { "max_spread_step", optional_json(b->max_spread_step) },
        { "worst_saturating_share", b->worst_saturating_share }, { "worst_subnormal_share", b->worst_subnormal_share },
        { "scale_range_bits", optional_json(b->scale_range_bits) },
        { "per_tensor_flush_share", optional_json(b->per_tensor_flush_share) },
        { "bad_scale_blocks", b->bad_scale_blocks } };
}

json site_json(const TensorSiteHealth& s)
{
    return { { "site_id", s.site_id }, { "site", s.label }, { "samples", s.samples },
        { "first_step", optional_json(s.first_step) }, { "last_step", optional_json(s.last_step) },
        { "saturation_samples", s.saturation_samples }, { "worst_saturation_ratio", s.worst_saturation_ratio },
        { "worst_saturation_step", optional_json(s.worst_saturation_step) },
        { "mean_saturation_ratio", s.mean_saturation_ratio }, { "underflow_samples", s.underflow_samples },
        { "worst_underflow_ratio", s.worst_underflow_ratio },
        { "worst_underflow_step", optional_json(s.worst_underflow_step) },
        { "mean_underflow_ratio", s.mean_underflow_ratio }, { "min_headroom_bits", optional_json(s.min_headroom_bits) },
        { "min_headroom_step", optional_json(s.min_headroom_step) }, { "amax_min", optional_json(s.amax_min) },
        { "amax_max", optional_json(s.amax_max) }, { "nonfinite_samples", s.nonfinite_samples },
        { "place", place_json(s.place) },
        { "scale_recipe", s.scale_recipe ? json(scale_recipe_name(*s.scale_recipe)) : json(nullptr) },
        { "blocks", blocks_json(s.blocks) } };
}

} // namespace

nlohmann::ordered_json tensor_health_json(const TensorHealth& h)
{
    const TensorHealthTotals& t = h.totals;
    json first_nonfinite = nullptr;
    if (h.first_nonfinite) {
        first_nonfinite = location_json(h.first_nonfinite->where);
        first_nonfinite["nans"] = h.first_nonfinite->nans;
        first_nonfinite["infs"] = h.first_nonfinite->infs;
        first_nonfinite["numel"] = h.first_nonfinite->numel;
        first_nonfinite["nan_scale"] = h.first_nonfinite->nan_scale;
    }
    json sites = json::array();
    for (const TensorSiteHealth& s : h.sites)
        sites.push_back(site_json(s));
    json recipes = json::array();
    for (const RecipeTotals& r : t.recipes)
        recipes.push_back({ { "recipe", r.recipe }, { "sites", r.sites }, { "samples", r.samples },
            { "samples_per_sampled_step", r.samples_per_sampled_step } });
    return {
        { "samples", t.samples },
        { "sites_total", t.sites },
        { "nonfinite_samples", t.nonfinite_samples },
        { "samples_in_steps", t.samples_in_steps },
        { "sites_in_steps", t.sites_in_steps },
        { "unnamed_gemm_sites", t.unnamed_gemm_sites },
        { "recipes", recipes },
        { "per_block_sites", t.per_block_sites },
        { "block_stats_sites", t.block_stats_sites },
        { "steps_with_samples", t.steps_with_samples },
        { "samples_per_step", t.samples_per_step },
        { "samples_per_sampled_step", t.samples_per_sampled_step },
        { "steps", t.steps },
        { "thresholds",
            { { "e4m3_max", kE4M3Max }, { "e5m2_max", kE5M2Max }, { "flt_max_scale", kFltMaxScale },
                { "stale_scale_headroom_bits", kStaleScaleHeadroomBits }, { "events_listed", kTensorEventsListed } } },
        { "first_nonfinite", std::move(first_nonfinite) },
        { "flt_max_scale", events_json(h.flt_max_scale) },
        { "zero_amax", events_json(h.zero_amax) },
        { "stale_scale", events_json(h.stale_scale) },
        { "top_saturation", ranking_json(h, h.top_saturation) },
        { "top_underflow", ranking_json(h, h.top_underflow) },
        { "top_least_headroom", ranking_json(h, h.top_least_headroom) },
        { "top_block_spread", ranking_json(h, h.top_block_spread) },
        { "sites", std::move(sites) },
    };
}

} // namespace fp8scope::cli
