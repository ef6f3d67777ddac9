// Compare's drift test and scaling recipe (docs/analysis.md "Compare"): scenario pairs written through the real writer
// and loaded back, with exact expected onsets: static, current and delayed scaling told apart, a delayed scale that
// falls behind its amax, repeated bursts, an amax that climbs away from its tensor's bulk, and the check budgets.
#include "compare_test_support.hpp"
#include "fp8scope/analyzer/compare/compare.hpp"
#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "fp8scope/analyzer/report/report.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using Catch::Matchers::WithinAbs;

TEST_CASE("scaling recipe: static, current, delayed, and an outgrown delayed scale told apart by the cast's probe",
    "[compare]")
{
    constexpr int kSteps = 8;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [fixed, fixed_ref] = site("s/static");
    const auto [current, current_ref] = site("s/current");
    const auto [delayed, delayed_ref] = site("s/delayed");
    const auto [outgrown, outgrown_ref] = site("s/outgrown");
    const int64_t probe = run.s.tensor_site("input", schema::TensorRole::Input, schema::Dtype::BFloat16, 1, 64,
        schema::StatsSource::ExplicitProbe, "s/outgrown");
    for (int i = 0; i < kSteps; ++i) {
        const double amax = 2.0 + 0.1 * i;
        run.sample(fixed, i, 0.1, schema::Dtype::E4M3, amax, 0.01);
        run.sample(current, i, 0.2, schema::Dtype::E4M3, amax, amax / 448); // codes reach 448 every step
        run.sample(delayed, i, 0.3, schema::Dtype::E4M3, amax, (amax + 0.3) / 448); // headroom every step
        // The amax outgrows the delayed scale every step: the codes reach 448 (clipped), the probe of the cast's
        // input shows the true amax above fp8_max / scale.
        const double stale = (amax - 0.1) / 448;
        run.sample(outgrown, i, 0.4, schema::Dtype::E4M3, 448 * stale, stale);
        TensorStatsRow& p = run.sample(probe, i, 0.39, schema::Dtype::BFloat16, amax);
        p.scale = 1 / stale;
        p.scale_inv.reset();
        p.target_format = schema::Fp8Format::E4M3;
        for (const int64_t r : { fixed_ref, current_ref, delayed_ref, outgrown_ref })
            ref.sample(r, i, 0.5, schema::Dtype::BFloat16, amax);
    }
    const Compared c = compare_jobs(run, ref, "recipe");
    const CompareResult& r = c.result();
    CHECK(site_with(r, fixed).recipe == ScalingRecipe::Static);
    CHECK(site_with(r, current).recipe == ScalingRecipe::Current);
    CHECK_THAT(site_with(r, current).recipe_evidence, Contains("without a probe"));
    CHECK(site_with(r, delayed).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, outgrown).recipe == ScalingRecipe::Delayed);
    CHECK_THAT(site_with(r, outgrown).recipe_evidence, Contains("probed with the same scale"));
    CHECK(site_with(r, outgrown).logical_role == "activation");
    CHECK(r.static_sites == 1);
    CHECK(r.current_sites == 1);
    CHECK(r.delayed_sites == 2);
    CHECK(std::string(scaling_recipe_name(ScalingRecipe::Current)) == "current");
}

TEST_CASE("drift: a delayed scale that falls behind its amax in most steps is drift, sporadic new records and a "
          "current scale short of the reference are not",
    "[compare]")
{
    constexpr int kSteps = 24;
    constexpr int kOnset = 12;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [lagging, lagging_ref] = site("step/blocks.1/fc1");
    const auto [records, records_ref] = site("step/blocks.0/fc2");
    const auto [current, current_ref] = site("step/blocks.0/proj");
    double previous_true = 0;
    for (int i = 0; i < kSteps; ++i) {
        const double ref_amax = 4.0 * std::exp2(0.02 * i);
        // Healthy delayed scaling: the scale covers the amax with 0.14 bit of room.
        const double healthy_scale_inv = 4.4 * std::exp2(0.02 * i) / 448;
        // Planted: from the onset one feature grows 15% a step in both runs; the run's delayed scale, made from the
        // previous step's amax, falls log2(1.15) = 0.20 bit short every step. The codes clip at that scale (a few
        // elements, under the saturation floor), so the amax ratio is only -0.20 bit.
        const double true_amax = i < kOnset ? ref_amax : ref_amax * std::pow(1.15, i - kOnset + 1);
        const double lag_scale_inv = i < kOnset ? healthy_scale_inv : previous_true / 448;
        run.sample(lagging, i, 0.3, schema::Dtype::E4M3, std::min(true_amax, 448 * lag_scale_inv), lag_scale_inv)
            .saturated
            = i < kOnset ? 0 : 3;
        ref.sample(lagging_ref, i, 0.3, schema::Dtype::BFloat16, true_amax);
        previous_true = true_amax;
        // Healthy delayed scaling with a new record every 4th step: the reference's amax 0.3 bit beyond the scale.
        const double record = i % 4 == 3 ? ref_amax * std::exp2(0.3) * 4.4 / 4.0 : ref_amax;
        run.sample(records, i, 0.2, schema::Dtype::E4M3, std::min(record, 448 * healthy_scale_inv), healthy_scale_inv);
        ref.sample(records_ref, i, 0.2, schema::Dtype::BFloat16, record);
        // Current scaling: the scale follows the run's own amax; from the onset the reference's amax is 0.15 bit
        // above it (a stale burst by size in every step), which is the amax ratio's business, not a lagging scale.
        const double run_amax = ref_amax * std::exp2(noise(i));
        run.sample(current, i, 0.1, schema::Dtype::E4M3, run_amax, run_amax / 448);
        ref.sample(current_ref, i, 0.1, schema::Dtype::BFloat16, i < kOnset ? run_amax : run_amax * std::exp2(0.15));
    }
    const Compared c = compare_jobs(run, ref, "bursts");
    const CompareResult& r = c.result();
    CHECK(site_with(r, lagging).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, records).recipe == ScalingRecipe::Delayed);
    CHECK(site_with(r, current).recipe == ScalingRecipe::Current);
    CHECK(site_with(r, records).drift.empty());
    CHECK(site_with(r, records).stale_scale_events == kSteps / 4);
    CHECK(site_with(r, current).drift.empty());
    CHECK(site_with(r, current).stale_scale_events == kSteps - kOnset);
    REQUIRE(r.flagged.size() == 1);
    const CompareSite& p = site_with(r, lagging);
    CHECK(r.sites[*r.first_divergent].run_site_id == lagging);
    // Two series say so (issue 43): the bursts, and the outgrown scale (short in most steps as the amax grows), whose
    // onset is the knee of the amax's climb, within a step of the planting.
    REQUIRE(p.drift.size() == 2);
    const auto evidence = [&](const std::string& series) -> const DriftEvidence& {
        const auto found = std::ranges::find(p.drift, series, &DriftEvidence::series);
        REQUIRE(found != p.drift.end());
        return *found;
    };
    const DriftEvidence& outgrown = evidence("outgrown_scale");
    CHECK(std::abs(outgrown.onset_step - kOnset) <= 1);
    CHECK(outgrown.mean_after >= kOutgrownShortShare);
    REQUIRE(outgrown.shortfall_bits);
    CHECK(*outgrown.shortfall_bits == Approx(std::log2(1.15) + 0.02).margin(0.05));
    REQUIRE(p.onset_step);
    CHECK(*p.onset_step == std::min<int64_t>(kOnset, outgrown.onset_step));
    const DriftEvidence& e = evidence("stale_scale_bursts");
    CHECK(e.onset_step == kOnset);
    CHECK(e.mean_before == 0.0);
    CHECK(e.mean_after == 1.0);
    CHECK(e.steps_before == kOnset);
    CHECK(e.steps_after == kSteps - kOnset);
    CHECK(e.floor == kDriftFloorBurstShare);
    CHECK(std::isinf(e.statistic)); // no step-to-step change before or after the onset
    // Short by one step's growth: 15% and the slow 0.02 bit of the healthy trend.
    CHECK_THAT(*p.steps[kOnset + 1].headroom_vs_ref_bits, WithinAbs(-std::log2(1.15) - 0.02, 1e-12));
    CHECK_THAT(*p.steps[kOnset + 1].log2_amax_ratio, WithinAbs(-std::log2(1.15) - 0.02, 1e-12));
}

TEST_CASE("drift: bursts must repeat: three at the end of the run are not drift", "[compare]")
{
    constexpr int kSteps = 12;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const int64_t rs = run.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    const int64_t fs = ref.gemm("p", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < kSteps; ++i) {
        const double scale_inv = 4.4 * std::exp2(0.02 * i) / 448;
        const double amax = 4.0 * std::exp2(0.02 * i) * (i >= kSteps - 3 ? 1.4 : 1.0); // 0.35 bit short, 3 times
        run.sample(rs, i, 0.1, schema::Dtype::E4M3, std::min(amax, 448 * scale_inv), scale_inv);
        ref.sample(fs, i, 0.1, schema::Dtype::BFloat16, amax);
    }
    const Compared c = compare_jobs(run, ref, "few-bursts");
    const CompareResult& r = c.result();
    CHECK(r.sites.at(0).recipe == ScalingRecipe::Delayed);
    CHECK(r.sites.at(0).stale_scale_events == 3);
    CHECK(r.flagged.empty()); // the share rises 0 -> 1, but kDriftMinBursts = 4 are needed
}

namespace {

// A histogram of `numel` nonzero elements: all but one in the bin of exponent `bulk`, one in the bin of `amax`.
void bulk_and_max(TensorStatsRow& row, int32_t bulk, double amax, uint64_t numel)
{
    const auto top = static_cast<int32_t>(std::floor(std::log2(amax)));
    row.hist_first_exponent = bulk;
    row.exponent_histogram.assign(static_cast<size_t>(top - bulk + 1), 0);
    row.exponent_histogram.front() += numel - 1;
    row.exponent_histogram.back() += 1;
}

} // namespace

TEST_CASE("drift: an amax that climbs away from its tensor's bulk is drift from the knee of the climb, a tensor "
          "that grows as a whole, or whose amax climbs 2 bits, is not",
    "[compare]")
{
    constexpr int kSteps = 24;
    constexpr int kOnset = 8;
    constexpr uint64_t kNumel = 1000;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [outlier, outlier_ref] = site("Model/blocks.1/fc1");
    const auto [whole, whole_ref] = site("Model/blocks.1/fc2");
    const auto [modest, modest_ref] = site("Model/blocks.0/fc2");
    // Current scaling (the scale from each step's own amax), the same amax in both runs: the reference's amax ratio
    // says nothing, and the reference has no histogram (no underflow figure).
    const auto sample = [&](int64_t run_site, int64_t ref_site, int i, double position, double amax, int32_t bulk) {
        TensorStatsRow& row
            = run.sample(run_site, i, position, schema::Dtype::E4M3, amax, amax / 448, static_cast<int64_t>(kNumel));
        bulk_and_max(row, bulk, amax, kNumel);
        ref.sample(ref_site, i, position, schema::Dtype::BFloat16, amax, std::nullopt, static_cast<int64_t>(kNumel));
    };
    for (int i = 0; i < kSteps; ++i) {
        const int grown = std::max(0, i - kOnset + 1);
        // One feature grows 1.6x a step from the onset; the bulk stays in [0.5, 1).
        sample(outlier, outlier_ref, i, 0.1, 4.0 * std::exp2(noise(i)) * std::pow(1.6, grown), -1);
        // Everything grows 1.6x a step: the bulk follows the amax, 3 binades below it.
        const double whole_amax = 4.0 * std::pow(1.6, grown);
        sample(whole, whole_ref, i, 0.5, whole_amax, static_cast<int32_t>(std::floor(std::log2(whole_amax))) - 3);
        // The amax climbs 2 bits and stays (a consequence downstream).
        sample(modest, modest_ref, i, 0.3, 4.0 * std::exp2(std::min(2.0, 0.25 * grown)), -1);
    }
    const Compared c = compare_jobs(run, ref, "dynamic-range");
    const CompareResult& r = c.result();
    const CompareSite& p = site_with(r, outlier);
    CHECK(p.recipe == ScalingRecipe::Current);
    // log2(amax) - log2(median): the median is the 500th of 1000 elements, in the bulk's bin of 999.
    const double median = -1 + 500.0 / 999.0;
    CHECK_THAT(*p.steps[0].run_dynamic_range_bits, WithinAbs(2 + noise(0) - median, 1e-12));
    CHECK(site_with(r, whole).drift.empty());
    CHECK(site_with(r, modest).drift.empty());
    REQUIRE(r.flagged.size() == 1);
    CHECK(r.sites[*r.first_divergent].run_site_id == outlier);
    REQUIRE(p.drift.size() == 1);
    const DriftEvidence& e = p.drift[0];
    CHECK(e.series == "run_dynamic_range_bits");
    // The mean shift alone would split the climb in its middle; the knee of the flat-then-linear fit is the onset.
    CHECK(e.onset_step == kOnset);
    CHECK(p.onset_step == kOnset);
    CHECK(e.steps_before == kOnset);
    CHECK(e.floor == kDriftFloorRangeBits);
    double before = 0;
    for (int i = 0; i < kOnset; ++i)
        before += 2 + noise(i) - median;
    CHECK_THAT(e.mean_before, WithinAbs(before / kOnset, 1e-12));
    CHECK(e.mean_after - e.mean_before >= kDriftFloorRangeBits);
    CHECK(e.statistic >= kDriftSigmas);
}

TEST_CASE(
    "drift: the reference's underflow under the run's scale must rise by 1 point and at least double", "[compare]")
{
    constexpr int kSteps = 16;
    constexpr int kOnset = 8;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16) };
    };
    const auto [tail, tail_ref] = site("p/tail");
    const auto [flush, flush_ref] = site("p/flush");
    // The run's scale is 1 (E4M3): the reference's values in [2^-12, 2^-11) are below half the smallest subnormal
    // (2^-10) and flush to zero, those in [1, 2) do not. Per mille of 1000 elements below, before and from the onset.
    const auto sample = [&](int64_t run_site, int64_t ref_site, int i, uint64_t below) {
        run.sample(run_site, i, 0.1, schema::Dtype::E4M3, 1.5, 1.0, 1000);
        TensorStatsRow& row = ref.sample(ref_site, i, 0.1, schema::Dtype::BFloat16, 1.5, std::nullopt, 1000);
        row.hist_first_exponent = -12;
        row.exponent_histogram.assign(13, 0);
        row.exponent_histogram.front() = below;
        row.exponent_histogram.back() = 1000 - below;
    };
    for (int i = 0; i < kSteps; ++i) {
        // torchao's clean pair in the zoo (docs/accuracy.md "Scoreboard"): 8.3% -> 9.9%, a tail that moved a little.
        sample(tail, tail_ref, i, i < kOnset ? 83 : 99);
        // 2% -> 4.5%: more than doubled, by 2.5 points.
        sample(flush, flush_ref, i, i < kOnset ? 20 : 45);
    }
    const Compared c = compare_jobs(run, ref, "underflow");
    const CompareResult& r = c.result();
    CHECK_THAT(*site_with(r, tail).steps[kOnset].ref_underflow_under_run_scale, WithinAbs(0.099, 1e-12));
    CHECK(site_with(r, tail).drift.empty());
    REQUIRE(r.flagged.size() == 1);
    const CompareSite& f = site_with(r, flush);
    REQUIRE(f.drift.size() == 1);
    CHECK(f.drift[0].series == "ref_underflow_under_run_scale");
    CHECK(f.drift[0].onset_step == kOnset);
    CHECK_THAT(f.drift[0].mean_before, WithinAbs(0.02, 1e-12));
    CHECK_THAT(f.drift[0].mean_after, WithinAbs(0.045, 1e-12));
    CHECK_THAT(f.drift[0].floor, WithinAbs(0.02, 1e-12)); // the level before, above the 1-point floor
}

TEST_CASE(
    "scaling recipe: a constant amax at fp8_max / scale cannot tell current from static, and says so", "[compare]")
{
    constexpr int kSteps = 6;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto site = [&](const std::string& path) {
        return std::pair { run.gemm(path, "64x128x32", schema::TensorRole::A, schema::Dtype::E4M3),
            ref.gemm(path, "64x128x32", schema::TensorRole::A, schema::Dtype::BFloat16) };
    };
    const auto [frozen, frozen_ref] = site("s/frozen");
    const auto [probed, probed_ref] = site("s/probed");
    const auto [clipped, clipped_ref] = site("s/clipped");
    const auto [fixed, fixed_ref] = site("s/fixed");
    const auto probe = [&](const std::string& path) {
        return run.s.tensor_site("weight", schema::TensorRole::Weight, schema::Dtype::BFloat16, 1, 64,
            schema::StatsSource::ExplicitProbe, path);
    };
    const int64_t probed_twin = probe("s/probed");
    const int64_t clipped_twin = probe("s/clipped");
    const auto probe_sample = [&](int64_t twin, int i, double amax, double scale_inv) {
        TensorStatsRow& p = run.sample(twin, i, 0.05, schema::Dtype::BFloat16, amax);
        p.scale = 1 / scale_inv;
        p.scale_inv.reset();
        p.target_format = schema::Fp8Format::E4M3;
    };
    for (int i = 0; i < kSteps; ++i) {
        // A frozen weight: its amax never changes, so a current scale never changes either.
        run.sample(frozen, i, 0.1, schema::Dtype::E4M3, 2.0, 2.0 / 448);
        // The same, with the cast's input probed: its amax is fp8_max / scale in every step.
        run.sample(probed, i, 0.2, schema::Dtype::E4M3, 2.0, 2.0 / 448);
        probe_sample(probed_twin, i, 2.0, 2.0 / 448);
        // A fixed scale that the amax outgrows: the codes clip at fp8_max, the probe shows the amax beyond it.
        run.sample(clipped, i, 0.3, schema::Dtype::E4M3, 1.5, 1.5 / 448);
        probe_sample(clipped_twin, i, 2.0, 1.5 / 448);
        // A fixed scale with room above a moving amax.
        run.sample(fixed, i, 0.4, schema::Dtype::E4M3, 2.0 + 0.1 * i, 0.01);
        for (const int64_t r : { frozen_ref, probed_ref, clipped_ref, fixed_ref })
            ref.sample(r, i, 0.5, schema::Dtype::BFloat16, 2.0);
    }
    const Compared c = compare_jobs(run, ref, "recipe-constant");
    const CompareResult& r = c.result();
    CHECK(site_with(r, frozen).recipe == ScalingRecipe::CurrentOrStatic);
    CHECK_THAT(site_with(r, frozen).recipe_evidence,
        Contains("the same scale in all 6 samples and the codes' amax at fp8_max / scale in each")
            && Contains("without a probe"));
    CHECK(site_with(r, probed).recipe == ScalingRecipe::CurrentOrStatic);
    CHECK_THAT(site_with(r, probed).recipe_evidence, Contains("the cast's input amax at fp8_max / scale"));
    CHECK(site_with(r, clipped).recipe == ScalingRecipe::Static);
    CHECK_THAT(site_with(r, clipped).recipe_evidence, Contains("not at fp8_max / scale in 6 of them"));
    CHECK(site_with(r, fixed).recipe == ScalingRecipe::Static);
    CHECK(r.current_or_static_sites == 2);
    CHECK(r.static_sites == 2);
    CHECK(r.current_sites == 0);
    CHECK(std::string(scaling_recipe_name(ScalingRecipe::CurrentOrStatic)) == "current or static");
    // Neither is stale-scale drift: a fixed scale that clips every step from the first is no change.
    CHECK(r.flagged.empty());
}

TEST_CASE(
    "scaled per row or block, or outside the GEMM: no drift from codes that hold no values (issue 31)", "[compare]")
{
    // Three FP8 GEMMs against their BF16 twins, 20 steps. In each, the run's codes sit at fp8_max every step while the
    // reference's amax jumps from step 10 on: real values on a real tensorwise GEMM would be drift.
    //   "blockwise":  its operand scaled per 1x128 tile (format 1.5): the codes are each tile's own amax;
    //   "unit":       scale_inv exactly 1 with the codes at fp8_max (torchao's rowwise backward), with its BF16 output
    //                 D 2^20 above the twin's and wandering: the scale is applied outside the GEMM;
    //   "tensorwise": a real scale_inv (4/448): drift, flagged.
    constexpr int kSteps = 20;
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const int64_t block_run = run.gemm("blockwise", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    run.s.site_recipe(block_run, schema::ScaleRecipe::Blockwise1x128);
    const int64_t unit_run = run.gemm("unit", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    run.s.site_recipe(unit_run, schema::ScaleRecipe::Tensorwise);
    const int64_t unit_d_run = run.gemm("unit", "64x128x32", schema::TensorRole::D, schema::Dtype::BFloat16);
    run.s.site_ordinal(unit_d_run, 0); // the GEMM's D: same name, path and ordinal as its B
    const int64_t real_run = run.gemm("tensorwise", "64x128x32", schema::TensorRole::B, schema::Dtype::E4M3);
    run.s.site_recipe(real_run, schema::ScaleRecipe::Tensorwise);
    const int64_t block_ref = ref.gemm("blockwise", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    const int64_t unit_ref = ref.gemm("unit", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    const int64_t unit_d_ref = ref.gemm("unit", "64x128x32", schema::TensorRole::D, schema::Dtype::BFloat16);
    ref.s.site_ordinal(unit_d_ref, 0);
    const int64_t real_ref = ref.gemm("tensorwise", "64x128x32", schema::TensorRole::B, schema::Dtype::BFloat16);
    for (int i = 0; i < kSteps; ++i) {
        const double ref_amax = i < 10 ? 4.0 * std::exp2(noise(i)) : 64.0;
        run.sample(block_run, i, 0.1, schema::Dtype::E4M3, 448.0);
        run.sample(unit_run, i, 0.2, schema::Dtype::E4M3, 448.0, 1.0);
        run.sample(unit_d_run, i, 0.3, schema::Dtype::BFloat16, std::exp2(20 + 3 * noise(i) + (i >= 10 ? 4 : 0)));
        run.sample(real_run, i, 0.4, schema::Dtype::E4M3, 448.0 * 4.0 / 448, 4.0 / 448);
        ref.sample(block_ref, i, 0.1, schema::Dtype::BFloat16, ref_amax);
        ref.sample(unit_ref, i, 0.2, schema::Dtype::BFloat16, ref_amax);
        ref.sample(unit_d_ref, i, 0.3, schema::Dtype::BFloat16, 1.0);
        ref.sample(real_ref, i, 0.4, schema::Dtype::BFloat16, ref_amax);
    }
    const Compared c = compare_jobs(run, ref, "per-block");
    const CompareResult& r = c.result();
    const auto site = [&](int64_t run_id) -> const CompareSite& {
        const auto it = std::ranges::find(r.sites, run_id, &CompareSite::run_site_id);
        REQUIRE(it != r.sites.end());
        return *it;
    };
    CHECK(site(block_run).recipe == ScalingRecipe::PerBlock);
    CHECK_THAT(site(block_run).recipe_evidence, Contains("blockwise 1×128") && Contains("no per-block statistics"));
    // Without per-block statistics (a 1.5 trace) its steps have no amax of the operand, so no ratio, and no drift.
    CHECK(std::ranges::none_of(
        site(block_run).steps, [](const CompareStep& s) { return s.log2_amax_ratio.has_value(); }));
    CHECK(site(block_run).drift.empty());
    CHECK(site(unit_run).recipe == ScalingRecipe::OutsideGemm);
    CHECK(site(unit_run).unscaled_gemm);
    CHECK(site(unit_d_run).unscaled_gemm); // the same GEMM's output
    CHECK(site(unit_d_run).recipe == ScalingRecipe::NotFp8);
    CHECK(site(unit_d_run).drift.empty());
    CHECK(r.per_block_sites == 1);
    CHECK(r.outside_gemm_sites == 1);
    CHECK(r.unscaled_gemm_sites == 2);
    CHECK(r.scale_recipe_sites == std::map<std::string, int64_t> { { "blockwise 1×128", 1 }, { "tensorwise", 2 } });
    REQUIRE(r.flagged.size() == 1);
    CHECK(r.sites[r.flagged[0]].run_site_id == real_run);
    CHECK(r.sites[r.flagged[0]].onset_step == 10);
}
