// Test inputs and comparisons shared by the CPU and GPU tests of the statistics kernels.
#pragma once

#include "fp8scope/probes/tensor_stats.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace fp8scope::probes::test {

// A host tensor: `numel` elements of `dtype`, stored at `offset_bytes` into `storage` so that tests can shift
// the data off its natural alignment. The storage is aligned to 16 bytes.
class HostTensor {
public:
    HostTensor(schema::Dtype dtype, const std::vector<uint32_t>& raw, size_t offset_bytes = 0);
    const void* data() const { return storage_.data() + offset_; }
    size_t bytes() const { return raw_count_ * element_bytes_; }
    uint64_t numel() const { return raw_count_; }
    schema::Dtype dtype() const { return dtype_; }

private:
    schema::Dtype dtype_;
    size_t element_bytes_;
    size_t raw_count_;
    size_t offset_;
    std::vector<unsigned char> storage_; // operator new aligns to 16 bytes
};

size_t element_bytes(schema::Dtype dtype);

// Raw bit patterns of the element type from a float that it represents exactly (checked).
uint32_t raw_of(schema::Dtype dtype, float value);
uint32_t f32_raw(float value);
uint32_t bf16_raw(float value);
uint32_t f16_raw(float value);

// Inputs meant to break a kernel: +-0, NaNs, +-Inf, the type's subnormals, its extremes, and, for a target, the
// elements around every class boundary of x * scale (underflow tie, subnormal/normal boundary, saturation
// midpoint, fp8_max, overflow threshold), plus log-uniform random values of both signs. FP8 types: all 256 codes,
// then random codes.
std::vector<uint32_t> adversarial_raw(
    schema::Dtype dtype, schema::Fp8Format target, float scale, uint32_t seed, size_t random_count);

// f32 patterns in runs of 8193 around each class boundary of x * scale for `target` (underflow tie, subnormal
// end, saturation midpoint, fp8_max), 129 around the overflow threshold, then 100,000 random patterns. The runs
// hold no Inf, NaN or subnormal, so the kernel's fast path and its class counting see them.
std::vector<uint32_t> f32_around_class_bounds(schema::Fp8Format target, float scale, uint32_t seed);

StatsParams params_for(const HostTensor& tensor, schema::Fp8Format target = schema::Fp8Format::None,
    ScaleKind kind = ScaleKind::None, float scale = 1.0f, const float* scale_ptr = nullptr);

// "bit for bit where the arithmetic allows": scales, amax, min, numel, every count and histogram bin exactly;
// the four sums within 1e-12 * numel * bound^k, bound = 2^(highest histogram exponent + 1) (the summation order
// differs). `context` is printed on failure.
void require_same_stats(const StatsResult& got, const StatsResult& want, const std::string& context);

std::string describe(const StatsParams& params);

} // namespace fp8scope::probes::test
