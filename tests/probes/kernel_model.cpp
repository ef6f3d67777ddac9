#include "kernel_model.hpp"

#include "hp_group.hpp"

#include <algorithm>
#include <cstring>

namespace fp8scope::probes::test {

namespace {

using namespace model;

// The kernel's walk, serially: a few leading elements take the scalar head path, the rest forms 32-bit words in
// groups of `group_words` (the kernel's are up to 16), a last odd element takes the tail path.
template <ElementType kType, bool kTarget>
void emulate_hp(const StatsParams& params, const ClassBounds& bounds, size_t group_words, HpThreadAcc& acc,
    unsigned long long* bins)
{
    constexpr uint64_t kBytes = kType == ElementType::F32 ? 4 : 2;
    const auto* bytes = static_cast<const unsigned char*>(params.data);
    auto count_bin = [&](uint32_t offset) { ++bins[offset / kBinStrideBytes]; };
    auto count_extra = [&](int bin) { ++bins[bin]; };
    auto element = [&](uint64_t i) {
        uint32_t raw = 0;
        std::memcpy(&raw, bytes + i * kBytes, kBytes);
        process_element<kType, kTarget>(raw, bounds, acc, count_bin, count_extra);
    };
    const uint64_t head = std::min<uint64_t>(params.numel, 3);
    for (uint64_t i = 0; i < head; ++i)
        element(i);
    const uint64_t words = (params.numel - head) * kBytes / 4;
    for (uint64_t first = 0; first < words; first += group_words) {
        const uint64_t end = std::min<uint64_t>(first + group_words, words);
        auto each_word = [&](auto&& f) {
            for (uint64_t w = first; w < end; ++w) {
                uint32_t word;
                std::memcpy(&word, bytes + head * kBytes + 4 * w, 4);
                f(word);
            }
        };
        process_group<kType, kTarget>(each_word, bounds, acc, count_bin, count_extra);
    }
    for (uint64_t i = head + words * 4 / kBytes; i < params.numel; ++i)
        element(i);
}

template <ElementType kType>
StatsTotals emulate_hp_totals(
    const StatsParams& params, ResolvedScale scale, size_t group_words, unsigned long long* bins)
{
    HpThreadAcc acc;
    const auto target = static_cast<Fp8>(params.target);
    if (target == Fp8::None) {
        emulate_hp<kType, false>(params, ClassBounds {}, group_words, acc, bins);
    } else {
        emulate_hp<kType, true>(params, class_bounds<kType>(target_thresholds(target, scale)), group_words, acc, bins);
    }
    return totals_of<kType>(acc);
}

} // namespace

StatsResult emulate_kernel(const StatsParams& params, size_t group_words)
{
    const ResolvedScale scale
        = resolve_scale(static_cast<ScaleCode>(params.scale_kind), params.scale, params.scale_ptr);
    StatsResult result {};
    const auto type = static_cast<ElementType>(params.dtype);
    if (is_fp8(type)) {
        // Four interleaved count arrays: one array would make every increment wait for the previous one on runs
        // of equal codes (2^31 zeros in twin_big_test.cpp).
        unsigned long long partial[4][256] = {};
        const auto* codes = static_cast<const uint8_t*>(params.data);
        for (uint64_t i = 0; i < params.numel; ++i)
            ++partial[i & 3][codes[i]];
        unsigned long long counts[256];
        for (int code = 0; code < 256; ++code)
            counts[code] = partial[0][code] + partial[1][code] + partial[2][code] + partial[3][code];
        StatsTotals totals = empty_totals();
        for (uint32_t code = 0; code < 256; ++code) {
            int bin;
            merge(totals, fp8_code_totals(code, counts[code], fp8_format_of(type), scale.scale_inv, bin));
            if (bin >= 0)
                result.exponent_histogram[bin] += counts[code];
        }
        write_scalars(&result, totals, scale, params.numel);
        return result;
    }
    unsigned long long bins[kScratchBins] = {};
    StatsTotals totals = type == ElementType::F32
        ? emulate_hp_totals<ElementType::F32>(params, scale, group_words, bins)
        : (type == ElementType::BF16 ? emulate_hp_totals<ElementType::BF16>(params, scale, group_words, bins)
                                     : emulate_hp_totals<ElementType::F16>(params, scale, group_words, bins));
    const auto target = static_cast<Fp8>(params.target);
    if (target == Fp8::None)
        for (int h = 0; h < own_min_normal_bin(type); ++h)
            totals.subnormals += hp_histogram_count(bins, h);
    hp_special_counts(bins, totals);
    write_scalars(&result, totals, scale, params.numel);
    for (int h = 0; h < kHistogramBins; ++h)
        result.exponent_histogram[h] = hp_histogram_count(bins, h);
    return result;
}

} // namespace fp8scope::probes::test
