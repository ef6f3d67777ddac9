// The per-block statistics' twin (block_stats_cpu) on hand-computed operands, and its argument checks. The kernel is
// checked against this twin on the GPU (gpu_block_stats_test.cpp).
#include "fp8scope/probes/block_stats.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;

namespace {

uint64_t octave_count(const BlockStatsResult& r, int octave)
{
    return r.exponent_histogram[octave - kHistogramMinExponent];
}

uint64_t histogram_total(const BlockStatsResult& r)
{
    uint64_t total = 0;
    for (const uint64_t count : r.exponent_histogram)
        total += count;
    return total;
}

} // namespace

TEST_CASE("block twin: 1x16 blocks with a saturating, a subnormal, a NaN and a bad-scale block", "[probes][blocks]")
{
    // rows 2 x cols 32, blocks 1 x 16: block (r, j) covers codes [r * 32 + j * 16, +16).
    std::vector<unsigned char> codes(64, 0x38); // 1.0
    codes[0] = 0x7E; // block (0, 0): two codes at max (448): saturating
    codes[5] = 0xFE; // -448
    for (int i = 16; i < 32; ++i) // block (0, 1): one subnormal (2^-9), the rest zero
        codes[i] = i == 20 ? 0x01 : 0x00;
    for (int i = 32; i < 48; ++i) // block (1, 0): 2.0 and one NaN
        codes[i] = i == 40 ? 0x7F : 0x40;
    const std::vector<float> scales { 2.0f, 0.5f, 4.0f, 0.0f }; // block (1, 1) has a bad scale
    BlockStatsParams params;
    params.data = codes.data();
    params.dtype = schema::Dtype::E4M3;
    params.rows = 2;
    params.cols = 32;
    params.block_rows = 1;
    params.block_cols = 16;
    params.scale_inv = scales.data();
    params.scale_row_stride = 2;
    params.scale_col_stride = 1;
    REQUIRE(check_block_params(params) == nullptr);
    const BlockStatsResult r = block_stats_cpu(params);

    CHECK(r.numel == 64);
    CHECK(r.blocks == 4);
    CHECK(r.bad_scale_blocks == 1);
    CHECK(r.saturating_blocks == 1);
    CHECK(r.subnormal_blocks == 1);
    CHECK(r.zeros == 15);
    CHECK(r.nans == 1);
    CHECK(r.infs == 0);
    CHECK(r.saturated == 2);
    CHECK(r.subnormals == 1);
    // Block amaxes 896, 2^-10 and 8: p50 is the 2nd of 3, p99 the 3rd.
    CHECK(r.amax == 896.0f);
    CHECK(r.block_amax_min == std::ldexp(1.0f, -10));
    CHECK(r.block_amax_p50 == 8.0f);
    CHECK(r.block_amax_p99 == 896.0f);
    CHECK(r.scale_inv_min == 0.5f);
    CHECK(r.scale_inv_max == 4.0f);
    // The good blocks by the octave of their amax; the bad block is left out.
    CHECK(octave_count(r, 9) == 1);
    CHECK(octave_count(r, -10) == 1);
    CHECK(octave_count(r, 3) == 1);
    CHECK(histogram_total(r) == 3);
}

TEST_CASE("block twin: 128x128 blocks over a partial edge, rowwise blocks, E5M2", "[probes][blocks]")
{
    SECTION("128 x 128 on 130 x 144: four blocks (of 16384, 2048, 256 and 32 codes)")
    {
        std::vector<unsigned char> codes(130 * 144, 0x38);
        const std::vector<float> scales { 1.0f, 2.0f, 4.0f, 8.0f };
        BlockStatsParams params { codes.data(), schema::Dtype::E4M3, 130, 144, 128, 128, scales.data(), 2, 1 };
        const BlockStatsResult r = block_stats_cpu(params);
        CHECK(r.blocks == 4);
        CHECK(r.block_amax_min == 1.0f);
        CHECK(r.block_amax_p50 == 2.0f);
        CHECK(r.block_amax_p99 == 8.0f);
        CHECK(r.amax == 8.0f);
        for (int octave = 0; octave < 4; ++octave)
            CHECK(octave_count(r, octave) == 1);
        CHECK(r.saturating_blocks == 0);
    }
    SECTION("one scale per row (block_cols past the row), scale column-major; p50 rounded to 4 significant bits")
    {
        std::vector<unsigned char> codes(3 * 48, 0x38);
        const std::vector<float> scales { 1.3f, 1.0f, 3.0f };
        BlockStatsParams params { codes.data(), schema::Dtype::E4M3, 3, 48, 1, 1 << 20, scales.data(), 1, 0 };
        const BlockStatsResult r = block_stats_cpu(params);
        CHECK(r.blocks == 3);
        CHECK(r.block_amax_p50 == 1.25f); // 1.3 rounded down to 1.25 (1.010 in binary)
        CHECK(r.block_amax_min == 1.0f);
        CHECK(r.amax == 3.0f);
    }
    SECTION("E5M2: Inf makes its block's amax Inf; NaN left out; saturation at 0x7B")
    {
        std::vector<unsigned char> codes(32, 0x3C); // 1.0
        codes[1] = 0x7C; // +Inf in block 0
        codes[2] = 0xFD; // NaN in block 0
        codes[17] = 0x7B; // 57344 in block 1
        const std::vector<float> scales { 1.0f, 1.0f };
        BlockStatsParams params { codes.data(), schema::Dtype::E5M2, 1, 32, 1, 16, scales.data(), 0, 1 };
        const BlockStatsResult r = block_stats_cpu(params);
        CHECK(r.infs == 1);
        CHECK(r.nans == 1);
        CHECK(r.saturated == 1);
        CHECK(std::isinf(r.amax));
        CHECK(r.block_amax_min == 57344.0f);
        CHECK(octave_count(r, 15) == 1); // the Inf block is not counted
        CHECK(histogram_total(r) == 1);
    }
    SECTION("no good scale: zeros, and NaN extrema of the scales")
    {
        std::vector<unsigned char> codes(16, 0x38);
        const std::vector<float> scales { std::nanf("") };
        BlockStatsParams params { codes.data(), schema::Dtype::E4M3, 1, 16, 1, 16, scales.data(), 0, 0 };
        const BlockStatsResult r = block_stats_cpu(params);
        CHECK(r.bad_scale_blocks == 1);
        CHECK(r.amax == 0.0f);
        CHECK(std::isnan(r.scale_inv_min));
        CHECK(histogram_total(r) == 0);
    }
}

TEST_CASE("block parameters: every invalid argument is named", "[probes][blocks]")
{
    alignas(16) static unsigned char codes[64] = {};
    static const float scale = 1.0f;
    const BlockStatsParams valid { codes, schema::Dtype::E4M3, 2, 32, 1, 16, &scale, 0, 0 };
    REQUIRE(check_block_params(valid) == nullptr);
    auto with = [&](auto change) {
        BlockStatsParams p = valid;
        change(p);
        return check_block_params(p);
    };
    CHECK(with([](BlockStatsParams& p) { p.dtype = schema::Dtype::BFloat16; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.rows = 0; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.cols = 24; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.block_rows = 0; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.block_cols = 8; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.data = codes + 1; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.scale_inv = nullptr; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) { p.scale_row_stride = -1; }) != nullptr);
    CHECK(with([](BlockStatsParams& p) {
        p.block_rows = 2;
        p.block_cols = 48;
        p.cols = 96;
    }) != nullptr); // blocks two rows high of 3 chunks per row
    CHECK_THROWS_AS(block_stats_cpu(BlockStatsParams {}), std::invalid_argument);
}
