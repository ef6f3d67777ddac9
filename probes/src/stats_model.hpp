// The statistics kernels' shared arithmetic, as __host__ __device__ pieces: the kernels (hp_stats_kernel.cu,
// tensor_stats_kernel.cu) run them in parallel, and tests/probes/kernel_model.cpp runs them serially on the host to
// check the kernels' algorithm against the CPU twin without a GPU. The twin itself (tensor_stats_cpu.cpp) does not
// use this file: it classifies every element by casting it (round_to_fp8), the definition, where this file uses
// thresholds. The high-precision kernel's per-element work is in hp_model.hpp.
//
// High-precision inputs (f32, bf16, f16) are binned by their fp32 exponent field into kScratchBins counters:
//   [0, 255]   fp32 biased exponent E (E = 0 holds zeros and fp32 subnormals, E = 255 Inf and NaN)
//   [256, 278] fp32 subnormals by floor(log2(mantissa)), i.e. exponents -149 .. -127
//   [279]      NaNs
// FP8 inputs are binned by code: [0, 255]. Everything else about an FP8 tensor follows from the 256 counts.
#pragma once

#include "fp8scope/probes/element_numerics.hpp"
#include "fp8scope/probes/stats_result.hpp"

#include <cmath>
#include <cstdint>

namespace fp8scope::probes::model {

using namespace numerics;

inline constexpr int kScratchBins = 280;
inline constexpr int kSubnormalBin0 = 256;
inline constexpr int kNanBin = 279;
inline constexpr uint32_t kNoMinKey = 0xFFFFFFFFu;

// Numbered like ScaleKind / fp8scope_scale_kind.
enum class ScaleCode : int32_t { None = 0, Value = 1, InvValue = 2, Device = 3, InvDevice = 4 };

struct ResolvedScale {
    float scale;
    float scale_inv;
};

// `pointer` is dereferenced on the side that runs this: a device pointer in the kernel, a host one in tests.
FP8SCOPE_HD ResolvedScale resolve_scale(ScaleCode kind, float value, const float* pointer)
{
    switch (kind) {
    case ScaleCode::Value:
        return { value, reciprocal_rn(value) };
    case ScaleCode::InvValue:
        return { reciprocal_rn(value), value };
    case ScaleCode::Device:
        return { *pointer, reciprocal_rn(*pointer) };
    case ScaleCode::InvDevice:
        return { reciprocal_rn(*pointer), *pointer };
    default:
        return { 1.0f, 1.0f };
    }
}

// Classification of a high-precision x against a target FP8 format, on |q| with q = fl32(x * scale), the value
// a TransformerEngine cast rounds. Each threshold is where round_to_fp8 changes class (round to nearest even):
//   underflow:  |q| <= min_subnormal / 2 (the tie goes to 0, the even code)
//   subnormal:  min_subnormal / 2 < |q| < min_normal - min_subnormal / 2 (that tie goes to min_normal, even)
//   saturated:  |q| >= the midpoint below max, the midpoint itself when max's code is even (E4M3 0x7E: 432),
//               just above it when odd (E5M2 0x7B: 53248 rounds to 49152)
//   overflow:   |x| > fl32(fp8_max * scale_inv) (TransformerEngine's definition, on x itself)
// tests/probes/kernel_model_test.cpp checks them against round_to_fp8.
struct TargetThresholds {
    float scale;
    float overflow_abs;
    float underflow_max;
    float subnormal_below;
    float saturated_min;
};

FP8SCOPE_HD TargetThresholds target_thresholds(Fp8 format, ResolvedScale scale)
{
    const Fp8Spec spec = fp8_spec(format);
    const float below_max = bits_float(fp8_to_f32_bits(spec.max_code - 1u, format));
    const float midpoint = 0.5f * (below_max + spec.max_value); // exact: both are FP8 values
    const float saturated_min = (spec.max_code & 1u) ? bits_float(float_bits(midpoint) + 1u) : midpoint;
    return { scale.scale, mul_rn(spec.max_value, scale.scale_inv), 0.5f * spec.min_subnormal,
        spec.min_normal - 0.5f * spec.min_subnormal, saturated_min };
}

// Totals of a block, of the grid, or of one FP8 code.
struct StatsTotals {
    uint64_t zeros;
    uint64_t nans;
    uint64_t infs;
    uint64_t overflows;
    uint64_t underflows;
    uint64_t subnormals;
    uint64_t saturated;
    uint32_t amax_bits;
    uint32_t min_key;
    double sum;
    double sum_squares;
    double sum_cubes;
    double sum_fourth;
};
static_assert(sizeof(StatsTotals) == 96);

FP8SCOPE_HD StatsTotals empty_totals()
{
    return { 0, 0, 0, 0, 0, 0, 0, 0u, kNoMinKey, 0.0, 0.0, 0.0, 0.0 };
}

FP8SCOPE_HD void merge(StatsTotals& into, const StatsTotals& other)
{
    into.zeros += other.zeros;
    into.nans += other.nans;
    into.infs += other.infs;
    into.overflows += other.overflows;
    into.underflows += other.underflows;
    into.subnormals += other.subnormals;
    into.saturated += other.saturated;
    into.amax_bits = into.amax_bits > other.amax_bits ? into.amax_bits : other.amax_bits;
    into.min_key = into.min_key < other.min_key ? into.min_key : other.min_key;
    into.sum += other.sum;
    into.sum_squares += other.sum_squares;
    into.sum_cubes += other.sum_cubes;
    into.sum_fourth += other.sum_fourth;
}

// Keys at or above Inf's (0x7F7FFFFF) mean "Inf", "only NaNs" or "nothing": all report +Inf.
FP8SCOPE_HD float min_from_key(uint32_t key)
{
    return key >= kF32InfBits - 1u ? bits_float(kF32InfBits) : bits_float(key + 1u);
}

// --- high-precision finalization from the bins ---------------------------------------------------------------

// Count of exponent-histogram bin h in [0, 276] (exponent h - 149).
FP8SCOPE_HD uint64_t hp_histogram_count(const unsigned long long* bins, int h)
{
    return h < 23 ? bins[kSubnormalBin0 + h] : bins[h - 22];
}

// First histogram bin of the input type's normal range: bins below it are its subnormals.
FP8SCOPE_HD int own_min_normal_bin(ElementType type)
{
    return type == ElementType::F16 ? -14 + 149 : -126 + 149;
}

// zeros, NaNs and Infs from the bins (the per-thread pass does not count them).
FP8SCOPE_HD void hp_special_counts(const unsigned long long* bins, StatsTotals& totals)
{
    uint64_t fp32_subnormals = 0;
    for (int h = 0; h < 23; ++h)
        fp32_subnormals += bins[kSubnormalBin0 + h];
    totals.zeros = bins[0] - fp32_subnormals;
    totals.nans = bins[kNanBin];
    totals.infs = bins[255] - bins[kNanBin];
}

// --- FP8 finalization from the code counts -------------------------------------------------------------------

// The dequantized value of a code: fl32(code value * scale_inv).
FP8SCOPE_HD float fp8_value(uint32_t code, Fp8 format, float scale_inv)
{
    return mul_rn(bits_float(fp8_to_f32_bits(code, format)), scale_inv);
}

// Totals of `count` elements holding `code`. `histogram_bin` gets the exponent bin of their value, or -1.
FP8SCOPE_HD StatsTotals fp8_code_totals(uint32_t code, uint64_t count, Fp8 format, float scale_inv, int& histogram_bin)
{
    StatsTotals t = empty_totals();
    histogram_bin = -1;
    if (count == 0)
        return t;
    t.zeros = fp8_is_zero(code) ? count : 0;
    t.nans = fp8_is_nan(code, format) ? count : 0;
    t.infs = fp8_is_inf(code, format) ? count : 0;
    t.subnormals = fp8_is_subnormal(code, format) ? count : 0;
    t.saturated = fp8_is_saturated(code, format) ? count : 0;
    const float value = fp8_value(code, format, scale_inv);
    const uint32_t abs_bits = float_bits(value) & kF32AbsMask;
    if (abs_bits > kF32InfBits)
        return t;
    t.amax_bits = abs_bits;
    if (abs_bits != 0)
        t.min_key = abs_bits - 1u;
    if (abs_bits < kF32InfBits) {
        const double d = value;
        const double d2 = d * d;
        const double n = static_cast<double>(count); // exact: count < 2^53
        t.sum = n * d;
        t.sum_squares = n * d2;
        t.sum_cubes = n * (d2 * d);
        t.sum_fourth = n * (d2 * d2);
        if (abs_bits != 0)
            histogram_bin = exponent_bin(abs_bits);
    }
    return t;
}

// Everything but the histogram and `sequence`.
FP8SCOPE_HD void write_scalars(StatsResult* out, const StatsTotals& t, ResolvedScale scale, uint64_t numel)
{
    out->scale = scale.scale;
    out->scale_inv = scale.scale_inv;
    out->amax = bits_float(t.amax_bits);
    out->min_nonzero_abs = min_from_key(t.min_key);
    out->numel = numel;
    out->zeros = t.zeros;
    out->nans = t.nans;
    out->infs = t.infs;
    out->overflows = t.overflows;
    out->underflows = t.underflows;
    out->subnormals = t.subnormals;
    out->saturated = t.saturated;
    out->sum = t.sum;
    out->sum_squares = t.sum_squares;
    out->sum_cubes = t.sum_cubes;
    out->sum_fourth = t.sum_fourth;
}

} // namespace fp8scope::probes::model
