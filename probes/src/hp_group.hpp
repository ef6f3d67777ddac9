// One group of a high-precision kernel thread's elements (4 16-byte vectors): the fast path over every element,
// then what the group's max and min call for (hp_model.hpp explains the scheme). The kernel
// (hp_stats_kernel.cu) and its serial host model (tests/probes/kernel_model.cpp) both run process_group(), over
// the 32-bit words of the group, two bf16/f16 elements or one f32 per word, low half first.
#pragma once

#include "hp_model.hpp"

namespace fp8scope::probes::model {

FP8SCOPE_HD uint32_t max_u16x2(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t d;
    asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    const uint32_t lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
    const uint32_t hi = (a >> 16) > (b >> 16) ? (a >> 16) : (b >> 16);
    return (hi << 16) | lo;
#endif
}

FP8SCOPE_HD uint32_t max_s16x2(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t d;
    asm("max.s16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
#else
    const auto lo_a = static_cast<int16_t>(a & 0xFFFFu), lo_b = static_cast<int16_t>(b & 0xFFFFu);
    const auto hi_a = static_cast<int16_t>(a >> 16), hi_b = static_cast<int16_t>(b >> 16);
    const uint32_t lo = static_cast<uint16_t>(lo_a > lo_b ? lo_a : lo_b);
    const uint32_t hi = static_cast<uint16_t>(hi_a > hi_b ? hi_a : hi_b);
    return (hi << 16) | lo;
#endif
}

// One group's running state. Packed types keep two lanes: max_bits the max pattern (unsigned), min_bits the max
// of 0x8000 - a (signed: a zero gives -32768, below every nonzero pattern's 1..0x7FFF). f32 keeps max pattern
// and min key.
struct GroupAcc {
    double sum = 0.0;
    double sum_squares = 0.0;
    double sum_cubes = 0.0;
    double sum_fourth = 0.0;
    uint32_t max_bits = 0;
    uint32_t min_bits;
};

template <ElementType kType> FP8SCOPE_HD GroupAcc empty_group()
{
    GroupAcc g;
    g.min_bits = HpFormat<kType>::kPacked ? 0x80008000u : kNoKey;
    return g;
}

// The histogram bin of an element as the kernel addresses it: its fp32 exponent field (zeros and fp32 subnormals
// 0, Inf and NaN 255) times 128, the byte offset of the bin's 32 lane copies. For a bf16 element in the low half of
// a word this is word & 0x7F80: one instruction with the lane's offset.
inline constexpr uint32_t kBinStrideBytes = 128;

FP8SCOPE_HD uint32_t bin_offset(uint32_t f32_bits)
{
    return (f32_bits >> 16) & 0x7F80u;
}

// Moments of one element's value (poisoned by Inf and NaN: such a group is special); returns its bin_offset().
FP8SCOPE_HD uint32_t fast_value(uint32_t f32_bits, GroupAcc& g)
{
    const double d = bits_float(f32_bits);
    const double d2 = d * d;
    g.sum += d;
    g.sum_squares += d2;
    g.sum_cubes += d2 * d;
    g.sum_fourth += d2 * d2;
    return bin_offset(f32_bits);
}

// The fast path for one 32-bit word: two bf16/f16 elements (low half first) or one f32.
template <ElementType kType, class CountBin>
FP8SCOPE_HD void fast_word(uint32_t word, GroupAcc& g, CountBin&& count_bin)
{
    using Format = HpFormat<kType>;
    if constexpr (Format::kPacked) {
        count_bin(fast_value(Format::fast_f32_bits(word & 0xFFFFu), g));
        count_bin(fast_value(Format::fast_f32_bits(word >> 16), g));
        const uint32_t magnitudes = word & 0x7FFF7FFFu;
        g.max_bits = max_u16x2(g.max_bits, magnitudes);
        g.min_bits = max_s16x2(g.min_bits, 0x80008000u - magnitudes); // lane-wise: 0x8000 >= a, no borrow
    } else {
        count_bin(fast_value(word, g));
        const uint32_t pattern = word & Format::kMagnitudeMask;
        g.max_bits = g.max_bits > pattern ? g.max_bits : pattern;
        g.min_bits = g.min_bits < key_of(pattern) ? g.min_bits : key_of(pattern);
    }
}

struct GroupExtrema {
    uint32_t max_pattern; // NaNs included
    uint32_t min_key; // kNoKey when every element is zero
};

template <ElementType kType> FP8SCOPE_HD GroupExtrema group_extrema(const GroupAcc& g)
{
    if constexpr (!HpFormat<kType>::kPacked)
        return { g.max_bits, g.min_bits };
    const uint32_t lo = g.max_bits & 0xFFFFu, hi = g.max_bits >> 16;
    const int min_lo = static_cast<int16_t>(g.min_bits & 0xFFFFu), min_hi = static_cast<int16_t>(g.min_bits >> 16);
    const int best = min_lo > min_hi ? min_lo : min_hi; // 0x8000 - (min nonzero a), or -32768
    return { lo > hi ? lo : hi, best > 0 ? static_cast<uint32_t>(0x7FFF - best) : kNoKey };
}

// Inf, NaN or an fp32 subnormal in the group: its value statistics need exact_value().
template <ElementType kType> FP8SCOPE_HD bool is_special(const GroupExtrema& x)
{
    if constexpr (HpFormat<kType>::kFp32SubnormalKeyEnd == 0)
        return x.max_pattern >= HpFormat<kType>::kInfPattern;
    else
        return x.max_pattern >= HpFormat<kType>::kInfPattern || x.min_key < HpFormat<kType>::kFp32SubnormalKeyEnd;
}

// A group that is not special: its moments and extrema are exact.
FP8SCOPE_HD void fold_group(HpThreadAcc& acc, const GroupAcc& g, const GroupExtrema& x)
{
    acc.amax_pattern = acc.amax_pattern > x.max_pattern ? acc.amax_pattern : x.max_pattern;
    acc.min_key = acc.min_key < x.min_key ? acc.min_key : x.min_key;
    acc.sum += g.sum;
    acc.sum_squares += g.sum_squares;
    acc.sum_cubes += g.sum_cubes;
    acc.sum_fourth += g.sum_fourth;
}

// Underflows and target subnormals of a group without Inf, NaN or fp32 subnormals. for_each_word(f) calls f on
// every word of the group.
template <ElementType kType, class ForEachWord>
FP8SCOPE_HD void count_low_classes(ForEachWord&& for_each_word, const ClassBounds& bounds, ClassCounts& classes)
{
    if constexpr (HpFormat<kType>::kPacked) {
        uint32_t under = 0, below_normal = 0; // two lanes, each at most the group's words
        for_each_word([&](uint32_t word) {
            under += lanes_key_below(word, bounds.underflow_key_end);
            below_normal += lanes_key_below(word, bounds.subnormal_key_end);
        });
        classes.underflows += sum_lanes(under);
        classes.subnormals += sum_lanes(below_normal) - sum_lanes(under);
    } else {
        const ClassBounds low { bounds.underflow_key_end, bounds.subnormal_key_end, kNoKey, kNoKey };
        for_each_word([&](uint32_t word) { count_classes<kType>(word & kF32AbsMask, low, classes); });
    }
}

// Saturated and overflowing elements of a group without Inf, NaN or fp32 subnormals.
template <ElementType kType, class ForEachWord>
FP8SCOPE_HD void count_high_classes(ForEachWord&& for_each_word, const ClassBounds& bounds, ClassCounts& classes)
{
    if constexpr (HpFormat<kType>::kPacked) {
        uint32_t saturated = 0, overflows = 0;
        for_each_word([&](uint32_t word) {
            saturated += lanes_at_least(word, bounds.saturated_begin);
            overflows += lanes_at_least(word, bounds.overflow_begin);
        });
        classes.saturated += sum_lanes(saturated);
        classes.overflows += sum_lanes(overflows);
    } else {
        const ClassBounds high { 0, 0, bounds.saturated_begin, bounds.overflow_begin };
        for_each_word([&](uint32_t word) { count_classes<kType>(word & kF32AbsMask, high, classes); });
    }
}

// The first of the two "high" bounds: a group whose max pattern is below it holds no saturated or overflowing
// element.
FP8SCOPE_HD uint32_t high_begin(const ClassBounds& b)
{
    return b.saturated_begin < b.overflow_begin ? b.saturated_begin : b.overflow_begin;
}

// One group: count_bin(bin_offset) adds an element to the exponent histogram, count_extra(bin) to the bins of
// fp32 subnormals and NaNs. Without a target, `bounds` is unused.
template <ElementType kType, bool kTarget, class ForEachWord, class CountBin, class CountExtra>
FP8SCOPE_HD void process_group(ForEachWord&& for_each_word, const ClassBounds& bounds, HpThreadAcc& acc,
    CountBin&& count_bin, CountExtra&& count_extra)
{
    using Format = HpFormat<kType>;
    GroupAcc g = empty_group<kType>();
    for_each_word([&](uint32_t word) { fast_word<kType>(word, g, count_bin); });
    const GroupExtrema extrema = group_extrema<kType>(g);
    if (!is_special<kType>(extrema)) {
        fold_group(acc, g, extrema);
        if constexpr (kTarget) {
            if (extrema.min_key < bounds.subnormal_key_end) // an element below the target's normal range
                count_low_classes<kType>(for_each_word, bounds, acc.classes);
            if (extrema.max_pattern >= high_begin(bounds)) // an element at the top
                count_high_classes<kType>(for_each_word, bounds, acc.classes);
        }
        return;
    }
    // Special (rare): value statistics and classes element by element; the histogram and min key stand.
    acc.min_key = acc.min_key < extrema.min_key ? acc.min_key : extrema.min_key;
    auto exact = [&](uint32_t raw) {
        exact_value<kType>(raw, acc, count_extra);
        if constexpr (kTarget)
            count_classes<kType>(raw & Format::kMagnitudeMask, bounds, acc.classes);
    };
    for_each_word([&](uint32_t word) {
        if constexpr (Format::kPacked) {
            exact(word & 0xFFFFu);
            exact(word >> 16);
        } else {
            exact(word);
        }
    });
}

// One element outside the groups (the scalar head and tail of an unaligned tensor), exactly.
template <ElementType kType, bool kTarget, class CountBin, class CountExtra>
FP8SCOPE_HD void process_element(
    uint32_t raw, const ClassBounds& bounds, HpThreadAcc& acc, CountBin&& count_bin, CountExtra&& count_extra)
{
    using Format = HpFormat<kType>;
    const uint32_t pattern = raw & Format::kMagnitudeMask;
    count_bin(bin_offset(Format::f32_bits(raw)));
    acc.min_key = acc.min_key < key_of(pattern) ? acc.min_key : key_of(pattern);
    exact_value<kType>(raw, acc, count_extra);
    if constexpr (kTarget)
        count_classes<kType>(pattern, bounds, acc.classes);
}

} // namespace fp8scope::probes::model
