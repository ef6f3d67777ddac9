// Compare: the run's scaling recipe from its own samples (delayed, current or static) (docs/analysis.md "Compare").
#include "compare/compare_detail.hpp"

#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fp8scope::analyzer::detail {
namespace {

namespace schema = fp8scope::schema;

// Headroom within this many bits of 0 is "amax = fp8_max * scale_inv": the scale was made from this very amax.
constexpr double kZeroHeadroomBits = 1e-3;
// A recipe share: this fraction of a site's samples with zero headroom means current scaling.
constexpr double kCurrentScalingShare = 0.8;

// (scale_inv * fp8_max, amax) of each sample with both, in step order; nullopt when no sample has an FP8 format.
std::optional<std::vector<std::pair<double, double>>> scaled_amax(const std::map<int64_t, StepSample>& samples)
{
    std::vector<std::pair<double, double>> out;
    bool fp8 = false;
    for (const auto& [step, s] : samples) {
        const std::optional<double> fp8_max = fp8_max_of(s);
        fp8 = fp8 || fp8_max.has_value();
        if (fp8_max && s.scale_inv && positive_finite(s.amax))
            out.emplace_back(*s.scale_inv * *fp8_max, s.amax);
    }
    if (!fp8)
        return std::nullopt;
    return out;
}

size_t zero_headroom_count(const std::vector<std::pair<double, double>>& scaled)
{
    return static_cast<size_t>(std::ranges::count_if(
        scaled, [](const auto& p) { return std::abs(std::log2(p.first / p.second)) <= kZeroHeadroomBits; }));
}

} // namespace

void decide_recipe(
    CompareSite& site, const std::map<int64_t, StepSample>& run, const std::map<int64_t, StepSample>* twin)
{
    if (is_per_block_recipe(site.scale_recipe)) {
        site.recipe = ScalingRecipe::PerBlock;
        const bool blocks = std::ranges::any_of(run, [](const auto& step) { return step.second.blocks.has_value(); });
        site.recipe_evidence = fmt::format(
            "scaled {} (one scale per row or block, not per tensor): its codes hold each block's own amax, not the "
            "operand's; {}",
            scale_recipe_name(*site.scale_recipe),
            blocks ? "its amax and the spread of its blocks come from its per-block statistics"
                   : "this trace holds no per-block statistics for it, so only its codes' own range is compared");
        return;
    }
    const auto scaled = scaled_amax(run);
    if (!scaled) {
        site.recipe = ScalingRecipe::NotFp8;
        site.recipe_evidence = "no FP8 format (a high-precision tensor without a cast target)";
        return;
    }
    const size_t n = scaled->size();
    if (n < 3) {
        site.recipe = ScalingRecipe::Unknown;
        site.recipe_evidence = fmt::format("{} sample(s) with a scale and an amax; 3 are needed", n);
        return;
    }
    // FP8 codes reach fp8_max both under current scaling and when a delayed scale is outgrown (the max element is
    // clipped to it), so the cast's high-precision input decides when it was probed: current scaling never clips.
    const auto twin_scaled = twin ? scaled_amax(*twin) : std::nullopt;
    const bool probed = twin_scaled && twin_scaled->size() >= 3;
    if (std::ranges::all_of(*scaled, [&](const auto& p) { return p.first == scaled->front().first; })) {
        // The same scale, and the amax at fp8_max / scale in every sample: a constant amax, for which a scale made
        // from each step's own amax (current) and a fixed one made from that amax are the same scale.
        const auto& amaxes = probed ? *twin_scaled : *scaled;
        if (zero_headroom_count(amaxes) == amaxes.size()) {
            site.recipe = ScalingRecipe::CurrentOrStatic;
            site.recipe_evidence = fmt::format("the same scale in all {} samples and the {} amax at fp8_max / scale in "
                                               "each: a constant amax, whose current scale is a static one{}",
                n, probed ? "cast's input" : "codes'",
                probed ? ""
                       : " (without a probe of the cast's input, a fixed scale that the amax outgrows every step "
                         "looks the same)");
            return;
        }
        site.recipe = ScalingRecipe::Static;
        site.recipe_evidence = fmt::format("the same scale in all {} samples while the amax is not at fp8_max / scale "
                                           "in {} of them, so not made from each step's amax (a delayed scale whose "
                                           "history maximum did not change in these steps looks the same)",
            n, amaxes.size() - zero_headroom_count(amaxes));
        return;
    }
    if (probed) {
        const size_t zero = zero_headroom_count(*twin_scaled);
        const size_t m = twin_scaled->size();
        const bool current = static_cast<double>(zero) >= kCurrentScalingShare * static_cast<double>(m);
        site.recipe = current ? ScalingRecipe::Current : ScalingRecipe::Delayed;
        site.recipe_evidence = fmt::format("the cast's input (probed with the same scale) has amax = fp8_max / scale "
                                           "in {} of {} samples{}",
            zero, m,
            current ? ": each scale comes from the tensor's own amax" : ": the scale comes from earlier steps");
        return;
    }
    const size_t zero = zero_headroom_count(*scaled);
    if (static_cast<double>(zero) >= kCurrentScalingShare * static_cast<double>(n)) {
        site.recipe = ScalingRecipe::Current;
        site.recipe_evidence = fmt::format("the codes reach fp8_max (headroom 0) in {} of {} samples; without a probe "
                                           "of the cast's input this can also be a delayed scale outgrown every step",
            zero, n);
        return;
    }
    site.recipe = ScalingRecipe::Delayed;
    site.recipe_evidence = fmt::format("headroom above 0 in {} of {} samples: the scale does not follow each step's "
                                       "own amax",
        n - zero, n);
}

void count_recipe(const CompareSite& site, CompareResult& result)
{
    if (site.scale_recipe)
        ++result.scale_recipe_sites[scale_recipe_name(*site.scale_recipe)];
    if (site.unscaled_gemm)
        ++result.unscaled_gemm_sites;
    switch (site.recipe) {
    case ScalingRecipe::Delayed:
        ++result.delayed_sites;
        break;
    case ScalingRecipe::Current:
        ++result.current_sites;
        break;
    case ScalingRecipe::Static:
        ++result.static_sites;
        break;
    case ScalingRecipe::CurrentOrStatic:
        ++result.current_or_static_sites;
        break;
    case ScalingRecipe::Unknown:
        ++result.unknown_recipe_sites;
        break;
    case ScalingRecipe::PerBlock:
        ++result.per_block_sites;
        break;
    case ScalingRecipe::OutsideGemm:
        ++result.outside_gemm_sites;
        break;
    case ScalingRecipe::NotFp8:
        break;
    }
}

GemmKey gemm_key(const TensorSite& site)
{
    return { site.name.index, site.nvtx_path ? site.nvtx_path->index : UINT32_MAX, site.ordinal };
}

std::set<GemmKey> unit_scale_gemms(const TraceModel& model, const SiteSamples& samples)
{
    std::set<GemmKey> out;
    for (const TensorSite& site : model.tensor_sites) {
        const auto source = static_cast<schema::StatsSource>(site.source);
        const auto role = static_cast<schema::TensorRole>(site.role);
        const auto found = samples.find(site.id);
        if ((source != schema::StatsSource::GemmInterception && source != schema::StatsSource::TorchScaledMm)
            || (role != schema::TensorRole::A && role != schema::TensorRole::B) || found == samples.end()
            || found->second.empty())
            continue;
        UnitScaleTest test;
        for (const auto& [step, s] : found->second)
            test.add(s.scale_inv, s.amax, fp8_max_of(s));
        if (test.unit_scaled())
            out.insert(gemm_key(site));
    }
    return out;
}

} // namespace fp8scope::analyzer::detail
