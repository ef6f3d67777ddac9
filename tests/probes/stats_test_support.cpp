#include "stats_test_support.hpp"

#include "fp8scope/probes/element_numerics.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <stdexcept>

namespace fp8scope::probes::test {

namespace {

bool is_fp8(schema::Dtype dtype)
{
    return dtype == schema::Dtype::E4M3 || dtype == schema::Dtype::E5M2;
}

numerics::Fp8 to_fp8(schema::Fp8Format format)
{
    return static_cast<numerics::Fp8>(format);
}

// The element type's raw pattern nearest below |value| (truncation; f16 rounds), with value's sign.
uint32_t raw_near(schema::Dtype dtype, float value)
{
    const uint32_t bits = numerics::float_bits(value);
    switch (dtype) {
    case schema::Dtype::BFloat16:
        return bits >> 16;
    case schema::Dtype::Float16: {
        const _Float16 h = static_cast<_Float16>(value);
        uint16_t raw;
        std::memcpy(&raw, &h, sizeof raw);
        return raw;
    }
    default:
        return bits;
    }
}

uint32_t sign_bit(schema::Dtype dtype)
{
    return dtype == schema::Dtype::Float32 ? 0x80000000u : 0x8000u;
}

} // namespace

size_t element_bytes(schema::Dtype dtype)
{
    return dtype == schema::Dtype::Float32 ? 4 : (is_fp8(dtype) ? 1 : 2);
}

HostTensor::HostTensor(schema::Dtype dtype, const std::vector<uint32_t>& raw, size_t offset_bytes)
    : dtype_(dtype)
    , element_bytes_(element_bytes(dtype))
    , raw_count_(raw.size())
    , offset_(offset_bytes)
    , storage_(offset_bytes + raw.size() * element_bytes_ + 16)
{
    for (size_t i = 0; i < raw.size(); ++i) // little-endian: the low bytes of each raw value
        std::memcpy(storage_.data() + offset_ + i * element_bytes_, &raw[i], element_bytes_);
}

uint32_t f32_raw(float value)
{
    return numerics::float_bits(value);
}

uint32_t bf16_raw(float value)
{
    const uint32_t bits = numerics::float_bits(value);
    if ((bits & 0xFFFFu) != 0 && !std::isnan(value))
        throw std::invalid_argument("not a bf16 value");
    return bits >> 16;
}

uint32_t f16_raw(float value)
{
    const uint32_t raw = raw_near(schema::Dtype::Float16, value);
    if (numerics::bits_float(numerics::f16_to_f32_bits(raw)) != value && !std::isnan(value))
        throw std::invalid_argument("not an f16 value");
    return raw;
}

uint32_t raw_of(schema::Dtype dtype, float value)
{
    switch (dtype) {
    case schema::Dtype::BFloat16:
        return bf16_raw(value);
    case schema::Dtype::Float16:
        return f16_raw(value);
    case schema::Dtype::Float32:
        return f32_raw(value);
    default:
        throw std::invalid_argument("raw_of: FP8 codes are given as codes");
    }
}

std::vector<uint32_t> adversarial_raw(
    schema::Dtype dtype, schema::Fp8Format target, float scale, uint32_t seed, size_t random_count)
{
    std::mt19937 rng(seed);
    std::vector<uint32_t> raw;
    if (is_fp8(dtype)) {
        for (uint32_t code = 0; code < 256; ++code)
            raw.push_back(code);
        for (size_t i = 0; i < random_count; ++i)
            raw.push_back(rng() & 0xFFu);
        return raw;
    }
    const uint32_t sign = sign_bit(dtype);
    const bool f32 = dtype == schema::Dtype::Float32;
    const bool f16 = dtype == schema::Dtype::Float16;
    const uint32_t inf = f32 ? 0x7F800000u : (f16 ? 0x7C00u : 0x7F80u);
    const uint32_t mantissa_mask = f32 ? 0x7FFFFFu : (f16 ? 0x3FFu : 0x7Fu);
    // +-0, NaNs (quiet, signalling, payloads), +-Inf, subnormals, smallest normal, largest finite.
    for (uint32_t special : { 0u, inf, inf + 1, inf | ((mantissa_mask >> 1) + 1), inf | mantissa_mask, 1u, 2u, 3u,
             mantissa_mask, mantissa_mask - 1, mantissa_mask + 1, inf - 1 }) {
        raw.push_back(special);
        raw.push_back(special | sign);
    }
    // Around each class boundary of q = x * scale: the x nearest key / scale, and its neighbours.
    std::vector<float> keys;
    if (target != schema::Fp8Format::None) {
        const auto spec = numerics::fp8_spec(to_fp8(target));
        const float below_max = numerics::bits_float(numerics::fp8_to_f32_bits(spec.max_code - 1, to_fp8(target)));
        keys = { 0.5f * spec.min_subnormal, spec.min_subnormal, 1.5f * spec.min_subnormal,
            spec.min_normal - 0.5f * spec.min_subnormal, spec.min_normal, 0.5f * (below_max + spec.max_value),
            spec.max_value, 1.03125f * spec.max_value, 2.0f * spec.max_value, 1e30f };
        for (float key : keys) // the overflow test is on x itself: x = fp8_max * scale_inv exactly
            raw.push_back(raw_near(dtype, key / scale));
        raw.push_back(raw_near(dtype, numerics::fp8_spec(to_fp8(target)).max_value * (1.0f / scale)));
    }
    const size_t anchors = raw.size();
    for (size_t i = 0; i < anchors; ++i)
        for (int delta : { -3, -2, -1, 1, 2, 3 }) {
            const uint32_t magnitude = raw[i] & ~sign;
            if (magnitude + delta <= inf) // stay in the finite/Inf range of the same sign
                raw.push_back((raw[i] & sign) | (magnitude + delta));
        }
    // Random values: half anywhere in the type's finite range (random exponent and mantissa bits), half
    // log-uniform over the FP8 range mapped back by the scale.
    const int exponent_bits = f32 ? 8 : (f16 ? 5 : 8);
    const int mantissa_bits = f32 ? 23 : (f16 ? 10 : 7);
    std::uniform_real_distribution<float> log2_fp8(-20.0f, 18.0f);
    for (size_t i = 0; i < random_count; ++i) {
        uint32_t value;
        if (i % 2 == 0) {
            const uint32_t exponent = rng() % ((1u << exponent_bits) - 1);
            value = (exponent << mantissa_bits) | (rng() & mantissa_mask);
        } else {
            value = raw_near(dtype, std::exp2(log2_fp8(rng)) / scale) & ~sign;
            if (value >= inf)
                value = inf - 1;
        }
        raw.push_back(value | ((rng() & 1u) ? sign : 0u));
    }
    return raw;
}

std::vector<uint32_t> f32_around_class_bounds(schema::Fp8Format target, float scale, uint32_t seed)
{
    const auto format = to_fp8(target);
    const auto spec = numerics::fp8_spec(format);
    const float below_max = numerics::bits_float(numerics::fp8_to_f32_bits(spec.max_code - 1, format));
    const float keys[] = { 0.5f * spec.min_subnormal, spec.min_normal - 0.5f * spec.min_subnormal,
        0.5f * (below_max + spec.max_value), spec.max_value };
    std::vector<uint32_t> raw;
    for (float key : keys) {
        const uint32_t center = numerics::float_bits(key / scale);
        for (int delta = -4096; delta <= 4096; ++delta)
            raw.push_back(center + delta);
    }
    const uint32_t overflow = numerics::float_bits(spec.max_value * (1.0f / scale));
    for (int delta = -64; delta <= 64; ++delta)
        raw.push_back(overflow + delta);
    std::mt19937 rng(seed);
    for (int i = 0; i < 100000; ++i)
        raw.push_back(rng());
    return raw;
}

StatsParams params_for(
    const HostTensor& tensor, schema::Fp8Format target, ScaleKind kind, float scale, const float* scale_ptr)
{
    StatsParams params;
    params.data = tensor.data();
    params.numel = tensor.numel();
    params.dtype = tensor.dtype();
    params.target = target;
    params.scale_kind = kind;
    params.scale = scale;
    params.scale_ptr = scale_ptr;
    return params;
}

std::string describe(const StatsParams& params)
{
    std::ostringstream out;
    out << "dtype " << static_cast<int>(params.dtype) << ", target " << static_cast<int>(params.target)
        << ", scale kind " << static_cast<int>(params.scale_kind) << ", scale " << params.scale << ", numel "
        << params.numel << ", data at 16n+" << reinterpret_cast<uintptr_t>(params.data) % 16;
    return out.str();
}

void require_same_stats(const StatsResult& got, const StatsResult& want, const std::string& context)
{
    INFO(context);
    CHECK(numerics::float_bits(got.scale) == numerics::float_bits(want.scale));
    CHECK(numerics::float_bits(got.scale_inv) == numerics::float_bits(want.scale_inv));
    CHECK(numerics::float_bits(got.amax) == numerics::float_bits(want.amax));
    CHECK(numerics::float_bits(got.min_nonzero_abs) == numerics::float_bits(want.min_nonzero_abs));
    CHECK(got.numel == want.numel);
    CHECK(got.zeros == want.zeros);
    CHECK(got.nans == want.nans);
    CHECK(got.infs == want.infs);
    CHECK(got.overflows == want.overflows);
    CHECK(got.underflows == want.underflows);
    CHECK(got.subnormals == want.subnormals);
    CHECK(got.saturated == want.saturated);
    int highest = -1;
    for (int h = 0; h < kHistogramBins; ++h) {
        INFO("histogram bin of exponent " << h + kHistogramMinExponent);
        CHECK(got.exponent_histogram[h] == want.exponent_histogram[h]);
        if (want.exponent_histogram[h] != 0)
            highest = h;
    }
    const double bound = highest < 0 ? 0.0 : std::ldexp(1.0, highest + kHistogramMinExponent + 1);
    const double n = static_cast<double>(want.numel);
    CHECK(std::fabs(got.sum - want.sum) <= 1e-12 * n * bound);
    CHECK(std::fabs(got.sum_squares - want.sum_squares) <= 1e-12 * n * bound * bound);
    CHECK(std::fabs(got.sum_cubes - want.sum_cubes) <= 1e-12 * n * bound * bound * bound);
    CHECK(std::fabs(got.sum_fourth - want.sum_fourth) <= 1e-12 * n * bound * bound * bound * bound);
}

} // namespace fp8scope::probes::test
