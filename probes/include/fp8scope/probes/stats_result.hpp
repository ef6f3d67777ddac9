// The fixed-size results of one tensor-statistics pass and of one per-block statistics pass (docs/tensor-stats.md
// defines every field).
//
// The GPU writes it into caller-provided memory, typically pinned host memory mapped into the device's address
// space, and writes `sequence` last, after a system-wide fence. A host thread that polls `sequence` with an
// acquire load and sees the value it passed to launch_tensor_stats may read every other field.
//
// C++17 and free of CUDA headers: the kernel (nvcc, C++17) and the host code (C++23) share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fp8scope::probes {

// floor(log2|x|) of every finite nonzero fp32 value, subnormals included; bf16, fp16 and dequantized FP8 values
// are fp32 values, so the same bins serve every input type.
inline constexpr int kHistogramMinExponent = -149;
inline constexpr int kHistogramMaxExponent = 127;
inline constexpr int kHistogramBins = kHistogramMaxExponent - kHistogramMinExponent + 1; // 277

struct StatsResult {
    float scale; // the scale used (x * scale is what a cast to FP8 rounds); 1 for ScaleKind::None
    float scale_inv; // 1 / scale, rounded to nearest; dequantizes FP8 codes
    float amax; // max |x| over non-NaN elements: an Inf makes it Inf; 0 when there is none
    float min_nonzero_abs; // min |x| over nonzero non-NaN elements; +Inf when there is none
    uint64_t numel;
    uint64_t zeros; // +0 and -0
    uint64_t nans;
    uint64_t infs;
    uint64_t overflows; // |x| > fp8_max * scale_inv (HP input with a target only)
    uint64_t underflows; // x != 0 whose cast x * scale rounds to +-0 (HP input with a target only)
    uint64_t subnormals; // see docs/tensor-stats.md: the target's subnormals, or the input type's own
    uint64_t saturated; // the cast gives +-max (HP with a target), or |code| == max code (FP8 input)
    double sum; // moments over finite elements, accumulated in double
    double sum_squares;
    double sum_cubes;
    double sum_fourth;
    // Counts of finite nonzero elements by floor(log2|x|): bin i holds exponent i + kHistogramMinExponent.
    uint64_t exponent_histogram[kHistogramBins];
    // Written last; equals the launch's `sequence` once the rest is complete. 0 from tensor_stats_cpu.
    uint64_t sequence;
};

static_assert(std::is_trivially_copyable_v<StatsResult> && std::is_standard_layout_v<StatsResult>);
static_assert(sizeof(StatsResult) == 16 + 8 * 8 + 4 * 8 + kHistogramBins * 8 + 8, "StatsResult has no padding");
static_assert(sizeof(StatsResult) == 2336);
static_assert(offsetof(StatsResult, sequence) % 8 == 0, "sequence is written by one aligned 8-byte store");

struct BlockStatsResult {
    // Over blocks with a good scale (scale_inv positive and finite): the largest block amax (the operand's amax),
    // the smallest, and the nearest-rank p50 and p99 rounded down to 4 significant bits (kept in 3 mantissa bits).
    // A block's amax is fl32(value of its largest non-NaN code magnitude * its scale_inv). 0 with no good block.
    float amax;
    float block_amax_min;
    float block_amax_p50;
    float block_amax_p99;
    // The smallest and largest good scale_inv; NaN with no good block.
    float scale_inv_min;
    float scale_inv_max;
    uint64_t numel;
    uint64_t blocks;
    uint64_t bad_scale_blocks; // scale_inv not positive and finite: left out of the block figures and the histogram
    uint64_t saturating_blocks; // good blocks with two or more codes at +-max
    uint64_t subnormal_blocks; // good blocks with at least one subnormal code
    // Codes, over the whole operand: as StatsResult counts them for FP8 input.
    uint64_t zeros;
    uint64_t nans;
    uint64_t infs;
    uint64_t subnormals;
    uint64_t saturated;
    // Good blocks by the octave of their amax, floor(log2 amax): bin i holds octave i + kHistogramMinExponent (an amax
    // below 2^-126 in the bin of -127; an amax of 0, below 2^-129, or +Inf not counted). With the codes' own
    // histogram (the operand's StatsResult) it gives the dequantized values' distribution (docs/tensor-stats.md).
    uint64_t exponent_histogram[kHistogramBins];
    // Written last; equals the launch's `sequence` once the rest is complete. 0 from block_stats_cpu.
    uint64_t sequence;
};

static_assert(std::is_trivially_copyable_v<BlockStatsResult> && std::is_standard_layout_v<BlockStatsResult>);
static_assert(sizeof(BlockStatsResult) == 6 * 4 + 10 * 8 + kHistogramBins * 8 + 8);
static_assert(offsetof(BlockStatsResult, sequence) % 8 == 0);

} // namespace fp8scope::probes
