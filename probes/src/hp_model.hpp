// The high-precision kernel's per-element arithmetic (f32, bf16, f16), as __host__ __device__ pieces shared by the
// kernel (hp_stats_kernel.cu) and its serial host model (tests/probes/kernel_model.cpp).
//
// Everything is decided on an element's magnitude pattern `a` (its bits without the sign: 15 bits for bf16 and
// f16, 31 for f32), whose order is the order of |x|, Inf above every finite value and NaNs above Inf:
// - amax and min_nonzero_abs are an integer max and min over patterns;
// - a target class is an interval of patterns. The cast rounds q = fl32(x * scale), and |q| never decreases as
//   |x| grows, so each class boundary of stats_model.hpp's TargetThresholds is one pattern, found once (on the
//   host for a host scale, per block for a device one) by a search over patterns with the very same float
//   predicate (beyond_bound). Counting a class is then an
//   integer comparison, the same answer as the float comparison element by element.
//
// The kernel reads its elements in groups (4 16-byte vectors per thread). The fast path does, for every element:
// the exponent-histogram atomic, the double moments, and a running max and min pattern, two elements at a time
// for 16-bit types. It makes no test per element. At the end of the group:
// - a group with an Inf, a NaN or an fp32 subnormal (rare) is "special": its moments were poisoned or its
//   subnormals need their own bins, so exact_value() redoes its value statistics element by element;
// - class counting runs only for a group that has an element below the target's normal range or at its top, which
//   the group's min and max tell. Other groups hold no element of any class.
#pragma once

#include "stats_model.hpp"

namespace fp8scope::probes::model {

inline constexpr uint32_t kNoKey = 0xFFFFFFFFu; // key of a zero, or of no element

// min_key holds a - 1 over nonzero patterns: zeros wrap to the top, NaNs sort above Inf.
FP8SCOPE_HD uint32_t key_of(uint32_t pattern)
{
    return pattern - 1u;
}

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t f16_to_f32_bits_hw(uint32_t half)
{
    float value;
    asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(static_cast<unsigned short>(half & 0xFFFFu)));
    return __float_as_uint(value); // exact for every finite f16; Inf and NaN stay Inf and NaN
}
#endif

template <ElementType kType> struct HpFormat;

template <> struct HpFormat<ElementType::F32> {
    static constexpr bool kPacked = false; // one element per 32-bit word
    static constexpr uint32_t kMagnitudeMask = 0x7FFFFFFFu;
    static constexpr uint32_t kInfPattern = kF32InfBits;
    static constexpr uint32_t kFp32SubnormalKeyEnd = 0x7FFFFFu; // keys below: fp32 subnormals
    FP8SCOPE_HD static uint32_t f32_bits(uint32_t raw) { return raw; }
    FP8SCOPE_HD static uint32_t fast_f32_bits(uint32_t raw) { return raw; }
};

template <> struct HpFormat<ElementType::BF16> {
    static constexpr bool kPacked = true;
    static constexpr uint32_t kMagnitudeMask = 0x7FFFu;
    static constexpr uint32_t kInfPattern = 0x7F80u;
    static constexpr uint32_t kFp32SubnormalKeyEnd = 0x7Fu; // bf16 subnormals are fp32 subnormals
    FP8SCOPE_HD static uint32_t f32_bits(uint32_t raw) { return bf16_to_f32_bits(raw); }
    FP8SCOPE_HD static uint32_t fast_f32_bits(uint32_t raw) { return bf16_to_f32_bits(raw); }
};

template <> struct HpFormat<ElementType::F16> {
    static constexpr bool kPacked = true;
    static constexpr uint32_t kMagnitudeMask = 0x7FFFu;
    static constexpr uint32_t kInfPattern = 0x7C00u;
    static constexpr uint32_t kFp32SubnormalKeyEnd = 0; // f16 subnormals are fp32 normals
    FP8SCOPE_HD static uint32_t f32_bits(uint32_t raw) { return f16_to_f32_bits(raw); }
    FP8SCOPE_HD static uint32_t fast_f32_bits(uint32_t raw)
    {
#if defined(__CUDA_ARCH__)
        return f16_to_f32_bits_hw(raw); // one instruction; the integer decoder branches
#else
        return f16_to_f32_bits(raw);
#endif
    }
};

// --- target classes as pattern intervals ------------------------------------------------------------------------

// For a key k = a - 1 (zeros never count) and a pattern a:
//   underflow:  k < underflow_key_end
//   subnormal:  underflow_key_end <= k < subnormal_key_end
//   saturated:  saturated_begin <= a <= Inf pattern
//   overflow:   overflow_begin <= a <= Inf pattern
struct ClassBounds {
    uint32_t underflow_key_end;
    uint32_t subnormal_key_end;
    uint32_t saturated_begin;
    uint32_t overflow_begin;
};

// Whether `pattern` lies at or beyond bound `which` (0..3, in ClassBounds order): false below the bound, true
// from it on, over [0, Inf]. Each predicate is stats_model.hpp's float comparison.
template <ElementType kType> FP8SCOPE_HD bool beyond_bound(int which, uint32_t pattern, const TargetThresholds& t)
{
    const float v = bits_float(HpFormat<kType>::fast_f32_bits(pattern)); // exact for every pattern up to Inf
    const float q = fabsf(mul_rn(v, t.scale));
    switch (which) {
    case 0:
        return !(q <= t.underflow_max);
    case 1:
        return !(q < t.subnormal_below);
    case 2:
        return q >= t.saturated_min;
    default:
        return v > t.overflow_abs;
    }
}

// The first pattern in [0, Inf] beyond bound `which`, or Inf + 1, as ClassBounds holds it: underflow and subnormal
// are "below" classes, whose first pattern outside becomes a key bound.
FP8SCOPE_HD uint32_t bound_value(int which, uint32_t first_beyond)
{
    return which < 2 ? (first_beyond == 0 ? 0u : first_beyond - 1u) : first_beyond;
}

// Bound `which` by binary search (16 or 32 steps). The kernel runs a 32-way search per warp instead
// (hp_stats_kernel.cu); both find the same first pattern because the predicate is monotonic.
template <ElementType kType> FP8SCOPE_HD uint32_t class_bound(int which, const TargetThresholds& t)
{
    uint32_t low = 0;
    uint32_t high = HpFormat<kType>::kInfPattern + 1u; // the answer when no pattern is beyond
    while (low < high) {
        const uint32_t mid = low + (high - low) / 2u;
        if (beyond_bound<kType>(which, mid, t))
            high = mid;
        else
            low = mid + 1u;
    }
    return bound_value(which, low);
}

// All four bounds, in ClassBounds order, by class_bound(). The launch computes them on the host once when the scale
// is a host value; blocks search them themselves only for a scale in device memory.
template <ElementType kType> FP8SCOPE_HD ClassBounds class_bounds(const TargetThresholds& t)
{
    return { class_bound<kType>(0, t), class_bound<kType>(1, t), class_bound<kType>(2, t), class_bound<kType>(3, t) };
}

struct ClassCounts {
    uint32_t underflows = 0;
    uint32_t subnormals = 0;
    uint32_t saturated = 0;
    uint32_t overflows = 0;
};

template <ElementType kType> FP8SCOPE_HD void count_classes(uint32_t pattern, const ClassBounds& b, ClassCounts& c)
{
    const uint32_t key = key_of(pattern);
    const bool not_nan = pattern <= HpFormat<kType>::kInfPattern;
    c.underflows += key < b.underflow_key_end;
    c.subnormals += (key >= b.underflow_key_end) & (key < b.subnormal_key_end);
    c.saturated += (pattern >= b.saturated_begin) & not_nan;
    c.overflows += (pattern >= b.overflow_begin) & not_nan;
}

// Two 16-bit lanes at once, for a group without Inf, NaN or fp32 subnormals. Lane values stay below 2^16, so no
// carry crosses lanes; bit 15 of each lane is the comparison; the result counts lanes at bits 0 and 16.
FP8SCOPE_HD uint32_t lanes_key_below(uint32_t word, uint32_t key_end)
{
    const uint32_t magnitudes = word & 0x7FFF7FFFu;
    const uint32_t keys = (magnitudes + 0x7FFF7FFFu) & 0x7FFF7FFFu; // a - 1, zeros 0x7FFF (key_end < 0x7FFF)
    const uint32_t flags = (0x7FFFu + key_end) * 0x10001u - keys; // bit 15: key < key_end
    return (flags & 0x80008000u) >> 15;
}

FP8SCOPE_HD uint32_t lanes_at_least(uint32_t word, uint32_t begin)
{
    const uint32_t flags = (word & 0x7FFF7FFFu) + (0x8000u - begin) * 0x10001u; // bit 15: a >= begin
    return (flags & 0x80008000u) >> 15;
}

FP8SCOPE_HD uint32_t sum_lanes(uint32_t counts)
{
    return (counts & 0xFFFFu) + (counts >> 16);
}

// --- per thread ---------------------------------------------------------------------------------------------------

struct HpThreadAcc {
    uint32_t amax_pattern = 0; // NaNs excluded
    uint32_t min_key = kNoKey;
    ClassCounts classes;
    double sum = 0.0;
    double sum_squares = 0.0;
    double sum_cubes = 0.0;
    double sum_fourth = 0.0;
};

// The value statistics of one element, exactly: NaNs counted in their bin and skipped, fp32 subnormals counted in
// their bins, Inf kept out of the moments. The exponent histogram and the min key are not touched here.
template <ElementType kType, class CountExtra>
FP8SCOPE_HD void exact_value(uint32_t raw, HpThreadAcc& acc, CountExtra&& count_extra)
{
    using Format = HpFormat<kType>;
    const uint32_t pattern = raw & Format::kMagnitudeMask;
    if (pattern > Format::kInfPattern) {
        count_extra(kNanBin);
        return;
    }
    acc.amax_pattern = acc.amax_pattern > pattern ? acc.amax_pattern : pattern;
    const uint32_t bits = Format::f32_bits(raw);
    const uint32_t abs_bits = bits & kF32AbsMask;
    if constexpr (Format::kFp32SubnormalKeyEnd != 0)
        if (abs_bits != 0 && abs_bits < 0x800000u)
            count_extra(kSubnormalBin0 + highest_bit(abs_bits));
    if (pattern == Format::kInfPattern)
        return;
    const double d = bits_float(bits);
    const double d2 = d * d;
    acc.sum += d;
    acc.sum_squares += d2;
    acc.sum_cubes += d2 * d;
    acc.sum_fourth += d2 * d2;
}

// The thread's totals in fp32 terms (amax bits, min key over fp32 bits), as the block reduction takes them.
template <ElementType kType> FP8SCOPE_HD StatsTotals totals_of(const HpThreadAcc& acc)
{
    using Format = HpFormat<kType>;
    const uint32_t min_key
        = acc.min_key == kNoKey ? kNoMinKey : (Format::f32_bits(acc.min_key + 1u) & kF32AbsMask) - 1u;
    return { 0, 0, 0, acc.classes.overflows, acc.classes.underflows, acc.classes.subnormals, acc.classes.saturated,
        Format::f32_bits(acc.amax_pattern) & kF32AbsMask, min_key, acc.sum, acc.sum_squares, acc.sum_cubes,
        acc.sum_fourth };
}

} // namespace fp8scope::probes::model
