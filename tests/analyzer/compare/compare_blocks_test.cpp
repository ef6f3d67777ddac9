// compare on sites scaled per row or block with per-block statistics (trace format 1.6, issue 31): the amax ratio
// from the dequantized amax, one block climbing away from the others, blocks sinking into the subnormal range, and a
// clean pair that stays quiet. Synthetic traces written through TraceDb and loaded back.
#include "compare_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace fp8scope;
using namespace fp8scope::analyzer;
using namespace fp8scope::testing;
using Catch::Matchers::Contains;

namespace {

constexpr int kSteps = 20;

// The per-block statistics of the run's sample of `site` in step `step` (same step and timestamp as Job::sample's).
void block_sample(Job& job, int64_t site, int step, double position, double amax, double p50, int64_t subnormal_blocks)
{
    BlockStatsRow row;
    row.site_id = site;
    row.step = step;
    row.timestamp_ns = step * kStepNs + static_cast<int64_t>(position * static_cast<double>(kStepNs));
    row.block_rows = 1;
    row.block_cols = 128;
    row.blocks = 1024;
    row.subnormal_blocks = subnormal_blocks;
    row.numel = 1024 * 128;
    row.amax = amax;
    row.block_amax_min = p50 / 4;
    row.block_amax_p50 = p50;
    row.block_amax_p99 = std::min(amax, p50 * 2);
    row.scale_inv_min = row.block_amax_min / 448;
    row.scale_inv_max = amax / 448;
    job.s.block_stats(row);
}

const CompareSite& site_of(const CompareResult& r, int64_t run_id)
{
    const auto it = std::ranges::find(r.sites, run_id, &CompareSite::run_site_id);
    REQUIRE(it != r.sites.end());
    return *it;
}

const DriftEvidence* evidence(const CompareSite& site, std::string_view series)
{
    const auto it = std::ranges::find(site.drift, series, &DriftEvidence::series);
    return it == site.drift.end() ? nullptr : &*it;
}

} // namespace

TEST_CASE("compare, per-block sites: a tile climbing away and rows sinking to subnormal are drift, clean is not",
    "[compare][blocks]")
{
    // Three 1x128-blockwise activations against their BF16 twins, whose amax the run's dequantized amax matches:
    //   "clean":  block amaxes steady (the largest 2x the median), no subnormal block;
    //   "tile":   from step 10 one tile's amax grows x1.6 a step while the median stays (DeepSeek-style drift in one
    //             tile column); the reference's amax grows with it (the drift is planted in both runs);
    //   "rows":   from step 12, 40% of the blocks hold subnormal codes (an outlier channel squeezing every row).
    Job run, ref;
    run.steps(kSteps);
    ref.steps(kSteps);
    const auto pair = [&](const char* name) {
        const int64_t r = run.gemm(name, "1024x512x512", schema::TensorRole::B, schema::Dtype::E4M3);
        run.s.site_recipe(r, schema::ScaleRecipe::Blockwise1x128);
        return std::pair(r, ref.gemm(name, "1024x512x512", schema::TensorRole::B, schema::Dtype::BFloat16));
    };
    const auto [clean, clean_ref] = pair("clean");
    const auto [tile, tile_ref] = pair("tile");
    const auto [rows, rows_ref] = pair("rows");
    for (int i = 0; i < kSteps; ++i) {
        const double wobble = std::exp2(noise(i) * 0.1);
        const double tile_amax = 4.0 * wobble * (i >= 10 ? std::pow(1.6, i - 9) : 1.0);
        for (const auto& [site, site_ref, amax, subnormal] :
            { std::tuple(clean, clean_ref, 4.0 * wobble, int64_t { 0 }),
                std::tuple(tile, tile_ref, tile_amax, int64_t { 0 }),
                std::tuple(rows, rows_ref, 4.0 * wobble, int64_t { i >= 12 ? 410 : 3 }) }) {
            run.sample(site, i, 0.1, schema::Dtype::E4M3, 448.0);
            block_sample(run, site, i, 0.1, amax, 2.0 * wobble, subnormal);
            ref.sample(site_ref, i, 0.1, schema::Dtype::BFloat16, amax);
        }
    }
    const Compared c = compare_jobs(run, ref, "blocks");
    const CompareResult& r = c.result();
    CHECK(r.per_block_sites == 3);

    const CompareSite& quiet = site_of(r, clean);
    CHECK(quiet.recipe == ScalingRecipe::PerBlock);
    CHECK_THAT(quiet.recipe_evidence, Contains("per-block statistics"));
    REQUIRE(quiet.steps.size() == kSteps);
    CHECK(quiet.steps[3].log2_amax_ratio == Approx(0.0).margin(1e-12)); // the dequantized amax against the BF16 one
    CHECK(quiet.steps[3].block_amax_spread_bits == Approx(1.0).margin(1e-12));
    CHECK(quiet.steps[3].subnormal_block_share == Approx(0.0));
    CHECK(quiet.drift.empty());

    const CompareSite& climbing = site_of(r, tile);
    const DriftEvidence* spread = evidence(climbing, "block_amax_spread_bits");
    REQUIRE(spread != nullptr);
    CHECK(spread->onset_step == 10);
    CHECK(evidence(climbing, "log2_amax_ratio") == nullptr); // the reference carries the same growth
    CHECK(climbing.onset_step == 10);

    const CompareSite& sinking = site_of(r, rows);
    const DriftEvidence* subnormal = evidence(sinking, "subnormal_block_share");
    REQUIRE(subnormal != nullptr);
    CHECK(subnormal->onset_step == 12);
    CHECK(subnormal->mean_after == Approx(410.0 / 1024));

    REQUIRE(r.first_divergent);
    CHECK(r.sites[*r.first_divergent].run_site_id == tile);
    CHECK(r.flagged.size() == 2);
}

TEST_CASE("tensor health, per-block figures: spread, shares, scales' range and what one scale per tensor would flush",
    "[tensor_health][blocks]")
{
    // One 1x128-blockwise operand, 6 steps. Its codes all lie in [256, 512) (one histogram bin); its 4 blocks'
    // amaxes in the octaves of 2^8 (two blocks), 2^3 and 2^-12. One scale per tensor, from the amax 448, leaves the
    // first three blocks' codes above the subnormal range and flushes every code of the last: a quarter of them.
    Job run, ref;
    run.steps(6);
    ref.steps(6);
    const int64_t site = run.gemm("t", "512x128x512", schema::TensorRole::B, schema::Dtype::E4M3);
    run.s.site_recipe(site, schema::ScaleRecipe::Blockwise1x128);
    for (int i = 0; i < 6; ++i) {
        TensorStatsRow& codes = run.sample(site, i, 0.1, schema::Dtype::E4M3, 448.0, std::nullopt, 512);
        codes.hist_first_exponent = 8;
        codes.exponent_histogram = { 512 };
        BlockStatsRow b;
        b.site_id = site;
        b.step = i;
        b.timestamp_ns = codes.timestamp_ns;
        b.block_rows = 1;
        b.block_cols = 128;
        b.blocks = 4;
        b.saturating_blocks = i == 3 ? 1 : 0;
        b.subnormal_blocks = 1;
        b.numel = 512;
        b.amax = 448.0;
        b.block_amax_min = 0x1p-12;
        b.block_amax_p50 = 12.0;
        b.block_amax_p99 = 448.0;
        b.scale_inv_min = 0x1p-12 / 448;
        b.scale_inv_max = 1.0;
        b.hist_first_exponent = -12;
        b.exponent_histogram.assign(21, 0);
        b.exponent_histogram[0] = 1; // 2^-12
        b.exponent_histogram[15] = 1; // 2^3
        b.exponent_histogram[20] = 2; // 2^8
        run.s.block_stats(b);
    }
    const Compared c = compare_jobs(run, ref, "block-health");
    const TensorHealth& h = c.run_report.tensor_health;
    CHECK(h.totals.per_block_sites == 1);
    CHECK(h.totals.block_stats_sites == 1);
    REQUIRE(h.top_block_spread.size() == 1);
    const TensorSiteHealth& s = h.sites[h.top_block_spread[0]];
    CHECK(s.site_id == site);
    REQUIRE(s.blocks);
    CHECK(s.blocks->samples == 6);
    CHECK(s.blocks->blocks == 4);
    CHECK(s.blocks->max_spread_bits == Approx(std::log2(448.0 / 12.0)));
    CHECK(s.blocks->max_spread_step == 0);
    CHECK(s.blocks->worst_saturating_share == Approx(0.25));
    CHECK(s.blocks->worst_subnormal_share == Approx(0.25));
    REQUIRE(s.blocks->scale_range_bits);
    CHECK(*s.blocks->scale_range_bits == Approx(std::log2(448.0) + 12));
    REQUIRE(s.blocks->per_tensor_flush_share);
    CHECK(*s.blocks->per_tensor_flush_share == Approx(0.25));
    CHECK(!s.saturation_samples); // no per-tensor saturation from codes each block's amax scales
}
