// The bit-level decoders and the FP8 cast of element_numerics.hpp against NVIDIA's own host implementations
// (cuda_fp8.h, cuda_bf16.h, cuda_fp16.h compile for the host as well) and against hand-computed values.
#include "fp8scope/probes/element_numerics.hpp"
#include "stats_model.hpp"

#include <catch2/catch.hpp>
#include <cuda_fp8.h>

#include <cmath>
#include <cstring>

using namespace fp8scope::probes::numerics;
namespace model = fp8scope::probes::model;

namespace {

float f32(uint32_t bits)
{
    return bits_float(bits);
}

// The same value (NaNs: both NaN).
bool same_value(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b);
}

__nv_fp8_interpretation_t nv_format(Fp8 format)
{
    return format == Fp8::E5M2 ? __NV_E5M2 : __NV_E4M3;
}

uint32_t nv_round(float value, Fp8 format)
{
    return __nv_cvt_float_to_fp8(value, __NV_SATFINITE, nv_format(format));
}

} // namespace

TEST_CASE("FP8 codes decode to NVIDIA's values, all 256 codes of both formats", "[probes][numerics]")
{
    for (Fp8 format : { Fp8::E4M3, Fp8::E5M2 })
        for (uint32_t code = 0; code < 256; ++code) {
            INFO("format " << static_cast<int>(format) << " code " << code);
            const __half_raw half_raw
                = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(code), nv_format(format));
            CHECK(same_value(f32(fp8_to_f32_bits(code, format)), __half2float(__half(half_raw))));
        }
    CHECK(f32(fp8_to_f32_bits(0x7E, Fp8::E4M3)) == 448.0f);
    CHECK(f32(fp8_to_f32_bits(0xFE, Fp8::E4M3)) == -448.0f);
    CHECK(f32(fp8_to_f32_bits(0x08, Fp8::E4M3)) == 0x1p-6f);
    CHECK(f32(fp8_to_f32_bits(0x01, Fp8::E4M3)) == 0x1p-9f);
    CHECK(f32(fp8_to_f32_bits(0x07, Fp8::E4M3)) == 7 * 0x1p-9f);
    CHECK(std::isnan(f32(fp8_to_f32_bits(0x7F, Fp8::E4M3))));
    CHECK(std::isnan(f32(fp8_to_f32_bits(0xFF, Fp8::E4M3))));
    CHECK(f32(fp8_to_f32_bits(0x7B, Fp8::E5M2)) == 57344.0f);
    CHECK(f32(fp8_to_f32_bits(0x04, Fp8::E5M2)) == 0x1p-14f);
    CHECK(f32(fp8_to_f32_bits(0x01, Fp8::E5M2)) == 0x1p-16f);
    CHECK(f32(fp8_to_f32_bits(0x7C, Fp8::E5M2)) == INFINITY);
    CHECK(f32(fp8_to_f32_bits(0xFC, Fp8::E5M2)) == -INFINITY);
    CHECK(std::isnan(f32(fp8_to_f32_bits(0x7D, Fp8::E5M2))));
    CHECK(float_bits(f32(fp8_to_f32_bits(0x80, Fp8::E5M2))) == 0x80000000u); // -0
}

TEST_CASE("FP8 code classes: counts over all 256 codes", "[probes][numerics]")
{
    struct Expected {
        Fp8 format;
        int zeros, nans, infs, subnormals, saturated;
    };
    // E4M3: 0x00/0x80; NaN 0x7F/0xFF; exponent 0 with mantissa 1..7, both signs; 0x7E/0xFE.
    // E5M2: NaN 0x7D-0x7F both signs; Inf 0x7C/0xFC; mantissa 1..3; 0x7B/0xFB.
    for (const Expected& e : { Expected { Fp8::E4M3, 2, 2, 0, 14, 2 }, Expected { Fp8::E5M2, 2, 6, 2, 6, 2 } }) {
        int zeros = 0, nans = 0, infs = 0, subnormals = 0, saturated = 0;
        for (uint32_t code = 0; code < 256; ++code) {
            zeros += fp8_is_zero(code);
            nans += fp8_is_nan(code, e.format);
            infs += fp8_is_inf(code, e.format);
            subnormals += fp8_is_subnormal(code, e.format);
            saturated += fp8_is_saturated(code, e.format);
        }
        INFO("format " << static_cast<int>(e.format));
        CHECK(zeros == e.zeros);
        CHECK(nans == e.nans);
        CHECK(infs == e.infs);
        CHECK(subnormals == e.subnormals);
        CHECK(saturated == e.saturated);
    }
}

TEST_CASE("bf16 and f16 decode like NVIDIA's and GCC's conversions, all 65536 patterns", "[probes][numerics]")
{
    for (uint32_t raw = 0; raw < 0x10000u; ++raw) {
        INFO("raw " << raw);
        __nv_bfloat16_raw bf_raw;
        bf_raw.x = static_cast<unsigned short>(raw);
        REQUIRE(same_value(f32(bf16_to_f32_bits(raw)), __bfloat162float(__nv_bfloat16(bf_raw))));
        __half_raw h_raw;
        h_raw.x = static_cast<unsigned short>(raw);
        REQUIRE(same_value(f32(f16_to_f32_bits(raw)), __half2float(__half(h_raw))));
        _Float16 gcc_half;
        const auto raw16 = static_cast<uint16_t>(raw);
        std::memcpy(&gcc_half, &raw16, sizeof raw16);
        REQUIRE(same_value(f32(f16_to_f32_bits(raw)), static_cast<float>(gcc_half)));
    }
}

TEST_CASE("round_to_fp8: hand-computed ties and limits", "[probes][numerics]")
{
    // Underflow tie min_subnormal/2 rounds to 0 (even); just above rounds to the smallest subnormal.
    CHECK(round_to_fp8(0x1p-10f, Fp8::E4M3) == 0x00);
    CHECK(round_to_fp8(-0x1p-10f, Fp8::E4M3) == 0x80);
    CHECK(round_to_fp8(std::nextafter(0x1p-10f, 1.0f), Fp8::E4M3) == 0x01);
    CHECK(round_to_fp8(0x1p-17f, Fp8::E5M2) == 0x00);
    CHECK(round_to_fp8(std::nextafter(0x1p-17f, 1.0f), Fp8::E5M2) == 0x01);
    // 1.5 * min_subnormal: tie between 1 (odd) and 2 (even) quanta.
    CHECK(round_to_fp8(1.5f * 0x1p-9f, Fp8::E4M3) == 0x02);
    // The subnormal/normal tie goes to min_normal (code 0x08, even).
    CHECK(round_to_fp8(0x1p-6f - 0x1p-10f, Fp8::E4M3) == 0x08);
    CHECK(round_to_fp8(std::nextafter(0x1p-6f - 0x1p-10f, 0.0f), Fp8::E4M3) == 0x07);
    // Saturation: E4M3 432 is the tie 416|448 and goes to 448 (0x7E even); E5M2 53248 goes to 49152 (0x7A even).
    CHECK(round_to_fp8(432.0f, Fp8::E4M3) == 0x7E);
    CHECK(round_to_fp8(std::nextafter(432.0f, 0.0f), Fp8::E4M3) == 0x7D);
    CHECK(round_to_fp8(448.0f, Fp8::E4M3) == 0x7E);
    CHECK(round_to_fp8(464.0f, Fp8::E4M3) == 0x7E); // beyond the top: saturates, never the NaN code 0x7F
    CHECK(round_to_fp8(1e30f, Fp8::E4M3) == 0x7E);
    CHECK(round_to_fp8(-INFINITY, Fp8::E4M3) == 0xFE);
    CHECK(round_to_fp8(53248.0f, Fp8::E5M2) == 0x7A);
    CHECK(round_to_fp8(std::nextafter(53248.0f, 1e9f), Fp8::E5M2) == 0x7B);
    CHECK(round_to_fp8(INFINITY, Fp8::E5M2) == 0x7B);
    CHECK(round_to_fp8(NAN, Fp8::E4M3) == 0x7F);
    CHECK(round_to_fp8(0x1p-149f, Fp8::E5M2) == 0x00);
}

TEST_CASE("round_to_fp8 equals NVIDIA's saturating cast near every FP8 value and on a sample of all floats",
    "[probes][numerics]")
{
    for (Fp8 format : { Fp8::E4M3, Fp8::E5M2 }) {
        INFO("format " << static_cast<int>(format));
        // Every float within 2^12 ulps of every FP8 value and of every midpoint between neighbours.
        for (uint32_t code = 0; code < 0x80u; ++code) {
            const float value = f32(fp8_to_f32_bits(code, format));
            if (std::isnan(value) || std::isinf(value))
                continue;
            const float next = f32(fp8_to_f32_bits(code + 1, format));
            const float midpoint = std::isfinite(next) ? 0.5f * (value + next) : value * 1.0625f;
            for (float center : { value, midpoint })
                for (int delta = -4096; delta <= 4096; ++delta) {
                    const auto bits = static_cast<uint32_t>(static_cast<int64_t>(float_bits(center)) + delta);
                    if (bits > 0x7F800000u)
                        continue;
                    for (uint32_t sign : { 0u, 0x80000000u }) {
                        const float x = f32(bits | sign);
                        INFO("x bits " << (bits | sign));
                        REQUIRE(round_to_fp8(x, format) == nv_round(x, format));
                    }
                }
        }
        for (uint64_t bits = 0; bits < (uint64_t { 1 } << 32); bits += 4099) {
            const float x = f32(static_cast<uint32_t>(bits));
            INFO("x bits " << bits);
            REQUIRE(round_to_fp8(x, format) == nv_round(x, format));
        }
    }
}

// Every float: about a minute on one core. Run with `fp8scope_probes_tests "[exhaustive]"`.
TEST_CASE("round_to_fp8 equals NVIDIA's saturating cast for every float", "[.][exhaustive][probes][numerics]")
{
    for (Fp8 format : { Fp8::E4M3, Fp8::E5M2 })
        for (uint64_t bits = 0; bits < (uint64_t { 1 } << 32); ++bits) {
            const float x = f32(static_cast<uint32_t>(bits));
            if (round_to_fp8(x, format) != nv_round(x, format))
                FAIL("format " << static_cast<int>(format) << " x bits " << bits);
        }
}

TEST_CASE("exponent bins and the kernel's thresholds", "[probes][numerics]")
{
    CHECK(exponent_bin(float_bits(0x1p-149f)) == 0);
    CHECK(exponent_bin(float_bits(0x1.fffffcp-127f)) == -127 + 149);
    CHECK(exponent_bin(float_bits(0x1p-126f)) == -126 + 149);
    CHECK(exponent_bin(float_bits(1.0f)) == 149);
    CHECK(exponent_bin(float_bits(1.99f)) == 149);
    CHECK(exponent_bin(float_bits(0x1.fffffep127f)) == 276);

    const auto e4m3 = model::target_thresholds(Fp8::E4M3, { 2.0f, 0.5f });
    CHECK(e4m3.scale == 2.0f);
    CHECK(e4m3.overflow_abs == 224.0f);
    CHECK(e4m3.underflow_max == 0x1p-10f);
    CHECK(e4m3.subnormal_below == 0x1p-6f - 0x1p-10f);
    CHECK(e4m3.saturated_min == 432.0f);
    const auto e5m2 = model::target_thresholds(Fp8::E5M2, { 1.0f, 1.0f });
    CHECK(e5m2.overflow_abs == 57344.0f);
    CHECK(e5m2.underflow_max == 0x1p-17f);
    CHECK(e5m2.subnormal_below == 0x1p-14f - 0x1p-17f);
    CHECK(e5m2.saturated_min == std::nextafter(53248.0f, 1e9f));
}
