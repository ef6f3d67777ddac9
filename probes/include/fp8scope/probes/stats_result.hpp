// The fixed-size result of one tensor-statistics pass (docs/tensor-stats.md defines every field).
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

} // namespace fp8scope::probes
