#include "kernel_model.hpp"

#include "stats_model.hpp"

#include <cstring>

namespace fp8scope::probes::test {

namespace {

using namespace model;

template <bool kTarget>
void accumulate_hp(
    const StatsParams& params, const TargetThresholds& thresholds, HpThreadAcc& acc, unsigned long long* bins)
{
    const auto* bytes = static_cast<const unsigned char*>(params.data);
    auto count_extra = [&](int bin) { ++bins[bin]; };
    for (uint64_t i = 0; i < params.numel; ++i) {
        uint32_t bits = 0;
        switch (params.dtype) {
        case schema::Dtype::Float32:
            std::memcpy(&bits, bytes + 4 * i, 4);
            break;
        case schema::Dtype::BFloat16: {
            uint16_t raw;
            std::memcpy(&raw, bytes + 2 * i, 2);
            bits = bf16_to_f32_bits(raw);
            break;
        }
        default: {
            uint16_t raw;
            std::memcpy(&raw, bytes + 2 * i, 2);
            bits = f16_to_f32_bits(raw);
            break;
        }
        }
        ++bins[hp_accumulate<kTarget>(bits, thresholds, acc, count_extra)];
    }
}

} // namespace

StatsResult emulate_kernel(const StatsParams& params)
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
    HpThreadAcc acc;
    const auto target = static_cast<Fp8>(params.target);
    if (target == Fp8::None)
        accumulate_hp<false>(params, TargetThresholds {}, acc, bins);
    else
        accumulate_hp<true>(params, target_thresholds(target, scale), acc, bins);
    StatsTotals totals = totals_of(acc);
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
