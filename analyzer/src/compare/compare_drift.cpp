// Compare: drift, the change-point test (numerics/change_point.hpp) run over each matched site's series
// (docs/analysis.md "Compare: drift").
//
// Five series per site, each a different way FP8 scaling goes wrong (docs/analysis.md "Compare"):
// - log2_amax_ratio: the run's amax leaves the reference's (a clipped or a diverged tensor);
// - run_saturation: the run's cast clips more elements;
// - stale_scale_bursts: a scale that is not made from the step's own amax (delayed, static) falls short of the
//   reference's amax in most steps from some step on: it cannot follow its amax;
// - ref_underflow_under_run_scale: the run's scale flushes a share of the reference's values that at least doubles;
// - run_dynamic_range_bits: the run's amax climbs away from the bulk of its tensor, which a per-tensor scale then
//   squeezes toward underflow. It climbs rather than jumps, so its onset is the knee of the climb.
#include "compare/compare_detail.hpp"

#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

namespace fp8scope::analyzer::detail {

void detect_drift(CompareSite& site)
{
    const auto series_of = [&](auto value) {
        std::pair<std::vector<int64_t>, std::vector<double>> out;
        for (const CompareStep& row : site.steps)
            if (const std::optional<double> v = value(row); v && std::isfinite(*v)) {
                out.first.push_back(row.step);
                out.second.push_back(*v);
            }
        return out;
    };
    const auto add = [&](std::optional<DriftEvidence> evidence) {
        if (evidence)
            site.drift.push_back(std::move(*evidence));
    };

    // The run's amax against the reference's, either direction.
    {
        const auto [steps, values] = series_of([](const CompareStep& r) { return r.log2_amax_ratio; });
        add(change_point("log2_amax_ratio", steps, values, 0, kDriftFloorLog2));
    }
    // Saturation's floor is also at least 8 elements of the smallest sample, so that a handful of elements landing on
    // fp8_max (healthy delayed scaling puts the max element there) is never a drift.
    {
        const auto [steps, values] = series_of([](const CompareStep& r) { return r.run_saturation; });
        double floor = kDriftFloorSaturation;
        if (site.min_numel > 0)
            floor = std::max(floor, 8.0 / static_cast<double>(site.min_numel));
        add(change_point("run_saturation", steps, values, +1, floor));
    }
    // A scale that does not come from the step's own amax (delayed; static) falls behind a growing amax in bursts:
    // steps where it falls short of the reference's amax by more than a code step. Healthy delayed scaling has such a
    // burst when the amax sets a new record, now and then; a scale that cannot follow its amax has one in most steps.
    // Under current scaling the run's scale follows its own amax, and a reference amax above it is the amax ratio.
    if (site.recipe == ScalingRecipe::Delayed || site.recipe == ScalingRecipe::Static) {
        const auto [steps, values] = series_of([](const CompareStep& r) -> std::optional<double> {
            if (!r.headroom_vs_ref_bits)
                return std::nullopt;
            return -*r.headroom_vs_ref_bits >= kStaleBurstBits ? 1.0 : 0.0;
        });
        auto evidence = change_point("stale_scale_bursts", steps, values, +1, kDriftFloorBurstShare);
        if (evidence && std::count(values.begin() + evidence->steps_before, values.end(), 1.0) >= kDriftMinBursts)
            add(std::move(evidence));
    }
    // A slow drift: the scale lags a steadily growing amax, short of the reference's amax in most steps from some
    // onset on, even when no step's change is large enough for the bursts' change point (numerics.hpp's
    // outgrown_scale(), the one-trace verdict's test, here on the run's scale against the reference's amax).
    // Gradients are left out, as the verdict leaves them out of its amax climb: their amaxes move a bit or more in
    // healthy runs, and they follow a forward tensor's drift rather than start one.
    const bool gradient
        = site.logical_role == "gradient" || site.run_dtype == static_cast<int32_t>(schema::Dtype::E5M2);
    if (!gradient
        && (site.recipe == ScalingRecipe::Delayed || site.recipe == ScalingRecipe::Static
            || site.recipe == ScalingRecipe::Unknown)) {
        std::vector<int64_t> steps;
        std::vector<std::optional<double>> headroom, log2_amax;
        for (const CompareStep& r : site.steps) {
            steps.push_back(r.step);
            // Short of the reference's amax; or the run's own codes at the scale's max (headroom 0 within float
            // rounding), which a cast reaches when its own amax met or passed the scale: short by at least nothing.
            std::optional<double> h = r.headroom_vs_ref_bits;
            if (h && *h >= kStaleScaleHeadroomBits && r.run_headroom_bits
                && std::abs(*r.run_headroom_bits) < -kStaleScaleHeadroomBits)
                h = 2 * kStaleScaleHeadroomBits;
            headroom.push_back(h);
            log2_amax.push_back(r.amax_ref && *r.amax_ref > 0 && std::isfinite(*r.amax_ref)
                    ? std::optional(std::log2(*r.amax_ref))
                    : std::nullopt);
        }
        if (const std::optional<OutgrownScale> o = outgrown_scale(steps, headroom, log2_amax)) {
            DriftEvidence e;
            e.series = "outgrown_scale";
            e.onset_step = o->onset_step;
            int64_t before = 0, short_before = 0;
            for (size_t i = 0; i < steps.size() && steps[i] < o->onset_step; ++i)
                if (headroom[i]) {
                    ++before;
                    short_before += *headroom[i] < kStaleScaleHeadroomBits ? 1 : 0;
                }
            e.mean_before = before > 0 ? static_cast<double>(short_before) / static_cast<double>(before) : 0.0;
            e.mean_after = o->short_share;
            e.floor = kOutgrownShortShare;
            e.steps_before = before;
            e.steps_after = o->steps;
            e.shortfall_bits = o->mean_shortfall_bits;
            e.amax_rise_bits = o->amax_rise_bits;
            add(std::move(e));
        }
    }
    // A share of the reference's values flushed to zero that stays small, or moves a little on top of a large one, is
    // the tensor's own tail: the share must rise by the floor and at least double.
    {
        const auto [steps, values] = series_of([](const CompareStep& r) { return r.ref_underflow_under_run_scale; });
        add(change_point("ref_underflow_under_run_scale", steps, values, +1, kDriftFloorUnderflow, 1.0));
    }
    // An FP8 tensor's amax that climbs away from its bulk: a per-tensor scale made from that amax moves every other
    // value as many bits toward underflow.
    if (site.recipe != ScalingRecipe::NotFp8) {
        const auto [steps, values] = series_of([](const CompareStep& r) { return r.run_dynamic_range_bits; });
        add(climb_onset("run_dynamic_range_bits", steps, values, kDriftFloorRangeBits));
    }
    // Scaled per row or block: one block's amax climbing away from the others' (a block scale follows it, so nothing
    // clips, but the block is what a drift in a few channels looks like), and blocks whose codes sink into the
    // subnormal range (a row's other values squeezed below its outlier), which must rise by the floor and double.
    if (site.recipe == ScalingRecipe::PerBlock) {
        const auto [spread_steps, spread] = series_of([](const CompareStep& r) { return r.block_amax_spread_bits; });
        add(climb_onset("block_amax_spread_bits", spread_steps, spread, kDriftFloorRangeBits));
        const auto [steps, values] = series_of([](const CompareStep& r) { return r.subnormal_block_share; });
        add(change_point("subnormal_block_share", steps, values, +1, kDriftFloorSubnormalBlocks, 1.0));
    }
    for (const DriftEvidence& e : site.drift)
        if (!site.onset_step || e.onset_step < *site.onset_step)
            site.onset_step = e.onset_step;
}

} // namespace fp8scope::analyzer::detail
