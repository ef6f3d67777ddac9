// The CPU reference twin of the statistics kernel: a plain sequential pass that states each definition of
// docs/tensor-stats.md as directly as possible. It shares with the kernel only the bit-level decoding and the
// FP8 cast (element_numerics.hpp); where the kernel classifies by thresholds, the twin casts every element.
#include "fp8scope/probes/element_numerics.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

namespace fp8scope::probes {

namespace {

using numerics::Fp8;

template <class Raw> Raw load(const void* data, uint64_t index)
{
    Raw raw;
    std::memcpy(&raw, static_cast<const unsigned char*>(data) + index * sizeof(Raw), sizeof raw);
    return raw;
}

class Twin {
public:
    Twin(const StatsParams& params, Fp8 target)
        : target_(target)
    {
        float scale = 1.0f;
        float scale_inv = 1.0f;
        switch (params.scale_kind) {
        case ScaleKind::None:
            break;
        case ScaleKind::Value:
            scale = params.scale, scale_inv = 1.0f / scale;
            break;
        case ScaleKind::InvValue:
            scale_inv = params.scale, scale = 1.0f / scale_inv;
            break;
        case ScaleKind::DevicePointer:
            scale = *params.scale_ptr, scale_inv = 1.0f / scale;
            break;
        case ScaleKind::InvDevicePointer:
            scale_inv = *params.scale_ptr, scale = 1.0f / scale_inv;
            break;
        }
        result_.scale = scale;
        result_.scale_inv = scale_inv;
        result_.numel = params.numel;
        result_.min_nonzero_abs = std::numeric_limits<float>::infinity();
        if (target_ != Fp8::None) // TransformerEngine: |x| > fp8_max * scale_inv, the product in fp32
            overflow_abs_ = numerics::fp8_spec(target_).max_value * scale_inv;
    }

    // A high-precision element; `own_subnormal` says whether it is a subnormal of its own type.
    void high_precision(float x, bool own_subnormal)
    {
        result_.zeros += x == 0.0f;
        result_.nans += std::isnan(x);
        result_.infs += std::isinf(x);
        if (target_ == Fp8::None) {
            result_.subnormals += own_subnormal;
        } else {
            result_.overflows += std::fabs(x) > overflow_abs_;
            // The cast itself: fl32(x * scale), rounded to nearest even, saturating.
            const uint32_t code = numerics::round_to_fp8(x * result_.scale, target_);
            result_.underflows += x != 0.0f && !std::isnan(x) && numerics::fp8_is_zero(code);
            result_.subnormals += numerics::fp8_is_subnormal(code, target_);
            result_.saturated += numerics::fp8_is_saturated(code, target_);
        }
        value(x);
    }

    void fp8(uint32_t code, Fp8 format)
    {
        if (numerics::fp8_is_zero(code)) { // the common case in the 2^31-element test; value(+-0) adds nothing
            ++result_.zeros;
            return;
        }
        result_.nans += numerics::fp8_is_nan(code, format);
        result_.infs += numerics::fp8_is_inf(code, format);
        result_.subnormals += numerics::fp8_is_subnormal(code, format);
        result_.saturated += numerics::fp8_is_saturated(code, format);
        value(numerics::bits_float(numerics::fp8_to_f32_bits(code, format)) * result_.scale_inv);
    }

    const StatsResult& result() const { return result_; }

private:
    // amax, min, histogram and moments of an element's value (dequantized for FP8 codes).
    void value(float v)
    {
        if (std::isnan(v))
            return;
        const float a = std::fabs(v);
        result_.amax = std::max(result_.amax, a);
        if (a == 0.0f || std::isinf(a)) {
            if (a != 0.0f)
                result_.min_nonzero_abs = std::min(result_.min_nonzero_abs, a);
            return;
        }
        result_.min_nonzero_abs = std::min(result_.min_nonzero_abs, a);
        ++result_.exponent_histogram[std::ilogb(a) - kHistogramMinExponent]; // ilogb is exact for subnormals too
        const double d = v;
        const double d2 = d * d;
        result_.sum += d;
        result_.sum_squares += d2;
        result_.sum_cubes += d2 * d;
        result_.sum_fourth += d2 * d2;
    }

    Fp8 target_;
    float overflow_abs_ = 0.0f;
    StatsResult result_ {};
};

} // namespace

StatsResult tensor_stats_cpu(const StatsParams& params)
{
    if (const char* why = check_stats_params(params))
        throw std::invalid_argument(std::string("tensor_stats_cpu: ") + why);
    const bool fp8_input = params.dtype == schema::Dtype::E4M3 || params.dtype == schema::Dtype::E5M2;
    Twin twin(params, fp8_input ? Fp8::None : static_cast<Fp8>(params.target));
    const uint64_t n = params.numel;
    switch (params.dtype) {
    case schema::Dtype::Float32:
        for (uint64_t i = 0; i < n; ++i) {
            const auto raw = load<uint32_t>(params.data, i);
            twin.high_precision(numerics::bits_float(raw), (raw & 0x7F800000u) == 0 && (raw & 0x7FFFFFu) != 0);
        }
        break;
    case schema::Dtype::BFloat16:
        for (uint64_t i = 0; i < n; ++i) {
            const auto raw = load<uint16_t>(params.data, i);
            twin.high_precision(
                numerics::bits_float(numerics::bf16_to_f32_bits(raw)), (raw & 0x7F80u) == 0 && (raw & 0x7Fu) != 0);
        }
        break;
    case schema::Dtype::Float16:
        for (uint64_t i = 0; i < n; ++i) {
            const auto raw = load<uint16_t>(params.data, i);
            twin.high_precision(
                numerics::bits_float(numerics::f16_to_f32_bits(raw)), (raw & 0x7C00u) == 0 && (raw & 0x3FFu) != 0);
        }
        break;
    case schema::Dtype::E4M3:
    case schema::Dtype::E5M2: {
        const Fp8 format = params.dtype == schema::Dtype::E5M2 ? Fp8::E5M2 : Fp8::E4M3;
        const auto* codes = static_cast<const uint8_t*>(params.data);
        for (uint64_t i = 0; i < n; ++i)
            twin.fp8(codes[i], format);
        break;
    }
    }
    return twin.result();
}

TrimmedHistogram trim_histogram(const StatsResult& result)
{
    const auto* begin = std::begin(result.exponent_histogram);
    const auto* end = std::end(result.exponent_histogram);
    const auto* first = std::find_if(begin, end, [](uint64_t count) { return count != 0; });
    if (first == end)
        return {};
    const auto* last
        = std::find_if(std::make_reverse_iterator(end), std::make_reverse_iterator(first), [](uint64_t count) {
              return count != 0;
          }).base();
    return { static_cast<int32_t>(first - begin) + kHistogramMinExponent, std::vector<uint64_t>(first, last) };
}

} // namespace fp8scope::probes
