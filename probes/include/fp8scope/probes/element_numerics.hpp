// Bit-level decoding of every input element type and the float -> FP8 cast, shared by the statistics kernel and
// its CPU twin so that both see exactly the same values.
//
// Everything here works on bit patterns with integer operations only, so the host (g++) and the device (nvcc)
// compute identical results regardless of FTZ/DAZ modes or FMA contraction. The header is C++17 and includes no
// CUDA header: nvcc compiles it as __host__ __device__, g++ as plain inline functions.
//
// FP8 encodings (OCP 8-bit floating point, as in shared/reference/fp8_numerics.md §3.1):
//   E4M3 (PyTorch float8_e4m3fn): bias 7, max 0x7E = 448, min normal 2^-6, min subnormal 2^-9, no Inf, NaN 0x7F/0xFF.
//   E5M2 (float8_e5m2): bias 15, max 0x7B = 57344, min normal 2^-14, min subnormal 2^-16, Inf 0x7C/0xFC,
//   NaN 0x7D-0x7F/0xFD-0xFF.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FP8SCOPE_HD __host__ __device__ __forceinline__
#else
#define FP8SCOPE_HD inline
#endif

namespace fp8scope::probes::numerics {

// Numbered like schema::Dtype and schema::Fp8Format (static_asserted in tensor_stats_launch.cpp); mirrored here
// because schema.hpp needs C++20 and the CUDA sources are C++17.
enum class ElementType : int32_t { F32 = 0, BF16 = 1, F16 = 2, E4M3 = 3, E5M2 = 4 };
enum class Fp8 : int32_t { None = 0, E4M3 = 1, E5M2 = 2 };

inline constexpr uint32_t kF32InfBits = 0x7F800000u;
inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32QuietNanBits = 0x7FC00000u;

FP8SCOPE_HD uint32_t float_bits(float value)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(value);
#else
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
#endif
}

FP8SCOPE_HD float bits_float(uint32_t bits)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
#endif
}

// Index of the highest set bit (floor(log2 x)); x must be nonzero.
FP8SCOPE_HD int highest_bit(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return 31 - __clz(static_cast<int>(x));
#else
    return 31 - __builtin_clz(x);
#endif
}

// x * y rounded once to nearest even: no FMA contraction can change it on the device.
FP8SCOPE_HD float mul_rn(float x, float y)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(x, y);
#else
    return x * y;
#endif
}

// 1 / x rounded to nearest even (IEEE division on the host, __frcp_rn on the device: the same value).
FP8SCOPE_HD float reciprocal_rn(float x)
{
#if defined(__CUDA_ARCH__)
    return __frcp_rn(x);
#else
    return 1.0f / x;
#endif
}

struct Fp8Spec {
    int mantissa_bits;
    int exponent_bias;
    uint32_t max_code; // largest finite magnitude code
    float max_value;
    float min_normal;
    float min_subnormal;
};

FP8SCOPE_HD constexpr Fp8Spec fp8_spec(Fp8 format)
{
    return format == Fp8::E5M2 ? Fp8Spec { 2, 15, 0x7Bu, 57344.0f, 0x1p-14f, 0x1p-16f }
                               : Fp8Spec { 3, 7, 0x7Eu, 448.0f, 0x1p-6f, 0x1p-9f };
}

FP8SCOPE_HD constexpr Fp8 fp8_format_of(ElementType type)
{
    return type == ElementType::E5M2 ? Fp8::E5M2 : Fp8::E4M3;
}
FP8SCOPE_HD constexpr bool is_fp8(ElementType type)
{
    return type == ElementType::E4M3 || type == ElementType::E5M2;
}

// --- FP8 codes ---------------------------------------------------------------------------------------------

FP8SCOPE_HD bool fp8_is_zero(uint32_t code)
{
    return (code & 0x7Fu) == 0;
}
FP8SCOPE_HD bool fp8_is_nan(uint32_t code, Fp8 format)
{
    return format == Fp8::E5M2 ? (code & 0x7Fu) > 0x7Cu : (code & 0x7Fu) == 0x7Fu;
}
FP8SCOPE_HD bool fp8_is_inf(uint32_t code, Fp8 format)
{
    return format == Fp8::E5M2 && (code & 0x7Fu) == 0x7Cu;
}
// Exponent field 0 and mantissa != 0.
FP8SCOPE_HD bool fp8_is_subnormal(uint32_t code, Fp8 format)
{
    const uint32_t magnitude = code & 0x7Fu;
    return magnitude != 0 && (magnitude >> fp8_spec(format).mantissa_bits) == 0;
}
// |code| == the largest finite code: what a saturating cast produces for everything at or beyond the top.
FP8SCOPE_HD bool fp8_is_saturated(uint32_t code, Fp8 format)
{
    return (code & 0x7Fu) == fp8_spec(format).max_code;
}

// The exact fp32 bit pattern of an FP8 code (every FP8 value is an fp32 value). NaNs become a quiet NaN.
FP8SCOPE_HD uint32_t fp8_to_f32_bits(uint32_t code, Fp8 format)
{
    const Fp8Spec spec = fp8_spec(format);
    const uint32_t sign = (code & 0x80u) << 24;
    const uint32_t magnitude = code & 0x7Fu;
    if (fp8_is_nan(code, format))
        return sign | kF32QuietNanBits;
    if (fp8_is_inf(code, format))
        return sign | kF32InfBits;
    const int m = spec.mantissa_bits;
    const uint32_t exponent_field = magnitude >> m;
    const uint32_t mantissa = magnitude & ((1u << m) - 1u);
    if (exponent_field == 0) {
        if (mantissa == 0)
            return sign;
        // mantissa * 2^(1 - bias - m): normalize around its highest bit p.
        const int p = highest_bit(mantissa);
        const uint32_t f32_exponent = static_cast<uint32_t>(p + 1 - spec.exponent_bias - m + 127);
        return sign | (f32_exponent << 23) | ((mantissa << (23 - p)) & 0x7FFFFFu);
    }
    const uint32_t f32_exponent = exponent_field - static_cast<uint32_t>(spec.exponent_bias) + 127u;
    return sign | (f32_exponent << 23) | (mantissa << (23 - m));
}

// float -> FP8 code, round to nearest even, saturating: finite values beyond the top and +-Inf become +-max
// (CUDA's __NV_SATFINITE, TransformerEngine's casts); NaN becomes 0x7F.
FP8SCOPE_HD uint32_t round_to_fp8(float value, Fp8 format)
{
    const Fp8Spec spec = fp8_spec(format);
    const uint32_t bits = float_bits(value);
    const uint32_t sign = (bits >> 24) & 0x80u;
    const uint32_t abs_bits = bits & kF32AbsMask;
    if (abs_bits > kF32InfBits)
        return 0x7Fu;
    if (abs_bits == kF32InfBits)
        return sign | spec.max_code;
    const int m = spec.mantissa_bits;
    const int min_exponent = 1 - spec.exponent_bias; // of the smallest normal
    const int f32_exponent_field = static_cast<int>(abs_bits >> 23);
    // value = significand * 2^lsb_exponent, exactly.
    const uint32_t significand = f32_exponent_field == 0 ? abs_bits : (abs_bits & 0x7FFFFFu) | 0x800000u;
    const int lsb_exponent = f32_exponent_field == 0 ? -149 : f32_exponent_field - 150;
    const int exponent = f32_exponent_field == 0 ? -127 : f32_exponent_field - 127; // floor(log2); -127 = "tiny"
    const int target_exponent = exponent > min_exponent ? exponent : min_exponent;
    // The target keeps m fraction bits at target_exponent (subnormals: at min_exponent).
    const int shift = target_exponent - m - lsb_exponent;
    if (shift > 25) // value < 2^(lsb + 24) <= a quarter of the target's quantum: rounds to zero
        return sign;
    uint32_t quanta = significand >> shift;
    const uint32_t rest = significand & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (quanta & 1u)))
        ++quanta;
    // Codes are contiguous across the subnormal/normal boundary and across binades, so a carry out of the
    // mantissa lands on the next exponent by itself.
    uint32_t magnitude = (static_cast<uint32_t>(target_exponent + spec.exponent_bias - 1) << m) + quanta;
    if (magnitude > spec.max_code)
        magnitude = spec.max_code;
    return sign | magnitude;
}

// --- 16-bit floats -----------------------------------------------------------------------------------------

FP8SCOPE_HD uint32_t bf16_to_f32_bits(uint32_t half_bits)
{
    return (half_bits & 0xFFFFu) << 16;
}

FP8SCOPE_HD uint32_t f16_to_f32_bits(uint32_t half_bits)
{
    const uint32_t sign = (half_bits & 0x8000u) << 16;
    const uint32_t exponent_field = (half_bits >> 10) & 0x1Fu;
    const uint32_t mantissa = half_bits & 0x3FFu;
    if (exponent_field - 1u < 30u) // normal: rebias 15 -> 127
        return sign | ((exponent_field + 112u) << 23) | (mantissa << 13);
    if (exponent_field == 0x1Fu) // Inf, NaN (payload kept, so a NaN stays a NaN)
        return sign | kF32InfBits | (mantissa << 13);
    if (mantissa == 0)
        return sign;
    const int p = highest_bit(mantissa); // mantissa * 2^-24
    return sign | (static_cast<uint32_t>(p + 103) << 23) | ((mantissa << (23 - p)) & 0x7FFFFFu);
}

// Exponent-histogram bin of a finite nonzero fp32 magnitude: floor(log2|x|) + 149, in [0, 276].
FP8SCOPE_HD int exponent_bin(uint32_t abs_bits)
{
    const uint32_t exponent_field = abs_bits >> 23;
    return exponent_field == 0 ? highest_bit(abs_bits) : static_cast<int>(exponent_field) + 22;
}

} // namespace fp8scope::probes::numerics
