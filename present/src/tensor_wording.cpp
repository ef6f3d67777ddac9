#include "fp8scope/present/tensor_wording.hpp"

#include "fp8scope/present/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fp8scope::present {

using namespace analyzer;

std::vector<size_t> sites_by_attention(const TensorHealth& health)
{
    std::vector<size_t> order(health.sites.size());
    std::iota(order.begin(), order.end(), size_t { 0 });
    // A site without a headroom figure sorts after every site with one.
    const auto headroom = [](const TensorSiteHealth& s) { return s.min_headroom_bits.value_or(HUGE_VAL); };
    std::ranges::sort(order, [&](size_t a, size_t b) {
        const TensorSiteHealth& x = health.sites[a];
        const TensorSiteHealth& y = health.sites[b];
        if (x.worst_saturation_ratio != y.worst_saturation_ratio)
            return x.worst_saturation_ratio > y.worst_saturation_ratio;
        if (x.worst_underflow_ratio != y.worst_underflow_ratio)
            return x.worst_underflow_ratio > y.worst_underflow_ratio;
        if (headroom(x) != headroom(y))
            return headroom(x) < headroom(y);
        return x.site_id < y.site_id;
    });
    return order;
}

std::string tensor_thresholds_sentence()
{
    return fmt::format("FP8 max E4M3 {:g}, E5M2 {:g}; stale scale: headroom below {:g} bits; scale = FLT_MAX: scale "
                       ">= {:g}",
        kE4M3Max, kE5M2Max, kStaleScaleHeadroomBits, kFltMaxScale);
}

std::string tensor_totals_sentence(const TensorHealth& health)
{
    const TensorHealthTotals& t = health.totals;
    const auto count
        = [](int64_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
    // Per step that has samples: with statistics every N-th step, a mean over all steps is a figure no step has.
    return fmt::format("{} of {}; {} of {} in the analysed steps ({:.1f} per step with samples; {} of {} with samples)",
        count(t.samples, "sample"), count(t.sites, "site"), count(t.samples_in_steps, "sample"),
        count(t.sites_in_steps, "site"), t.samples_per_sampled_step, t.steps_with_samples, count(t.steps, "step"));
}

std::string recipes_sentence(const TensorHealth& health)
{
    std::string out;
    for (const RecipeTotals& r : health.totals.recipes)
        out += fmt::format("{}{}: {} site{}, {} sample{} ({:.1f} per step with samples)", out.empty() ? "" : "; ",
            r.recipe, r.sites, r.sites == 1 ? "" : "s", r.samples, r.samples == 1 ? "" : "s",
            r.samples_per_sampled_step);
    return out;
}

std::string block_figures_text(const BlockSiteHealth& b)
{
    std::string out = fmt::format("largest block amax 2^{:.1f} the median", b.max_spread_bits);
    if (b.amax_p50 > 0 && b.amax_p99 > 0)
        out += fmt::format(" (p99 2^{:.1f})", std::log2(b.amax_p99 / b.amax_p50));
    out += fmt::format("; {:.2g}% of blocks saturating, {:.2g}% with subnormal codes", 100 * b.worst_saturating_share,
        100 * b.worst_subnormal_share);
    if (b.scale_range_bits)
        out += fmt::format("; scales span {:.1f} bits", *b.scale_range_bits);
    if (b.per_tensor_flush_share)
        out += fmt::format("; one scale per tensor would flush ~{:.2g}%", 100 * *b.per_tensor_flush_share);
    return out;
}

std::string unnamed_sites_sentence(const TensorHealth& health)
{
    const int64_t n = health.totals.unnamed_gemm_sites;
    if (n == 0)
        return "";
    return fmt::format("{} zero-code GEMM site{} named by shape alone: each says where it sits in the step (the n-th "
                       "GEMM of the forward or backward pass, in launch order); fp8scope.torch.annotate(model) names "
                       "them by module instead (docs/python.md)",
        n, n == 1 ? " is" : "s are");
}

std::string fraction_text(double ratio)
{
    // Fractions that matter are small (1e-4 of a tensor clipped): significant digits, as `check` prints them.
    return fmt::format("{:.3g}", ratio);
}

std::string headroom_text(std::optional<double> bits)
{
    if (!bits)
        return "-";
    // Two decimals, except near 0: a stale scale (below kStaleScaleHeadroomBits) never shows as "-0.00", and
    // float rounding of an exact scale (about -1e-7 bits) shows as the 0 it is.
    if (std::abs(*bits) < 0.005)
        return *bits < kStaleScaleHeadroomBits ? fmt::format("{:.2g} bits", *bits) : "0.00 bits";
    return fmt::format("{:.2f} bits", *bits);
}

std::string amax_range_text(const TensorSiteHealth& site)
{
    if (!site.amax_min || !site.amax_max)
        return "-";
    return fmt::format("{:.3g}..{:.3g}", *site.amax_min, *site.amax_max);
}

std::string step_text(std::optional<int64_t> step)
{
    return step ? fmt::format("step {}", *step) : "no step";
}

std::string worst_saturation_text(const TensorSiteHealth& site)
{
    if (site.saturation_samples == 0)
        return "-";
    return fmt::format("{} ({})", fraction_text(site.worst_saturation_ratio), step_text(site.worst_saturation_step));
}

std::string worst_underflow_text(const TensorSiteHealth& site)
{
    if (site.underflow_samples == 0)
        return "-";
    return fmt::format("{} ({})", fraction_text(site.worst_underflow_ratio), step_text(site.worst_underflow_step));
}

std::string min_headroom_text(const TensorSiteHealth& site)
{
    if (!site.min_headroom_bits)
        return "-";
    return fmt::format("{} ({})", headroom_text(site.min_headroom_bits), step_text(site.min_headroom_step));
}

std::string first_nonfinite_text(const TensorHealth& health, Escape escape)
{
    if (!health.first_nonfinite)
        return "none";
    const NonfiniteSample& n = *health.first_nonfinite;
    return fmt::format("{}: {} NaN, {} Inf in {} elements of {}{} ({} sample{} with NaN/Inf)", step_text(n.where.step),
        n.nans, n.infs, n.numel, escape(n.where.site_label), n.nan_scale ? ", its scale NaN" : "",
        health.totals.nonfinite_samples, health.totals.nonfinite_samples == 1 ? "" : "s");
}

const TensorEventList& tensor_events(const TensorHealth& health, TensorEventKind kind)
{
    switch (kind) {
    case TensorEventKind::FltMaxScale:
        return health.flt_max_scale;
    case TensorEventKind::ZeroAmax:
        return health.zero_amax;
    case TensorEventKind::StaleScale:
        break;
    }
    return health.stale_scale;
}

const char* tensor_event_title(TensorEventKind kind)
{
    switch (kind) {
    case TensorEventKind::FltMaxScale:
        return "scale = FLT_MAX";
    case TensorEventKind::ZeroAmax:
        return "amax = 0";
    case TensorEventKind::StaleScale:
        break;
    }
    return "stale scale";
}

std::string tensor_event_text(const TensorHealth& health, TensorEventKind kind, Escape escape)
{
    const TensorEventList& list = tensor_events(health, kind);
    if (list.total == 0 || list.first.empty())
        return "none";
    const TensorEvent& first = list.first.front();
    std::string value;
    if (kind == TensorEventKind::FltMaxScale)
        value = fmt::format("scale {:.5g}", first.value);
    else if (kind == TensorEventKind::StaleScale)
        value = fmt::format("headroom {}", headroom_text(first.value));
    else
        value = "amax 0";
    return fmt::format("{} sample{}; first at {} in {} ({})", list.total, list.total == 1 ? "" : "s",
        step_text(first.where.step), escape(first.where.site_label), value);
}

} // namespace fp8scope::present
