// The CPU twin on hand-computed cases: every dtype, both targets, the class boundaries, both scale directions.
#include "stats_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

using namespace fp8scope;
using namespace fp8scope::probes;
using namespace fp8scope::probes::test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

struct Counts {
    uint64_t zeros, nans, infs, overflows, underflows, subnormals, saturated;
};

void check_counts(const StatsResult& r, const Counts& c)
{
    CHECK(r.zeros == c.zeros);
    CHECK(r.nans == c.nans);
    CHECK(r.infs == c.infs);
    CHECK(r.overflows == c.overflows);
    CHECK(r.underflows == c.underflows);
    CHECK(r.subnormals == c.subnormals);
    CHECK(r.saturated == c.saturated);
}

// Nonzero histogram bins as {exponent: count}.
std::map<int, uint64_t> histogram_of(const StatsResult& r)
{
    std::map<int, uint64_t> bins;
    for (int h = 0; h < kHistogramBins; ++h)
        if (r.exponent_histogram[h] != 0)
            bins[h + kHistogramMinExponent] = r.exponent_histogram[h];
    return bins;
}

// Moments of the finite values, summed in element order like the twin.
void check_moments(const StatsResult& r, const std::vector<double>& values)
{
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    for (double v : values)
        if (std::isfinite(v)) {
            s1 += v, s2 += v * v, s3 += v * v * v, s4 += (v * v) * (v * v);
        }
    CHECK(r.sum == s1);
    CHECK(r.sum_squares == s2);
    CHECK(r.sum_cubes == s3);
    CHECK(r.sum_fourth == s4);
}

StatsResult twin_of(schema::Dtype dtype, const std::vector<float>& values, schema::Fp8Format target,
    ScaleKind kind = ScaleKind::None, float scale = 1.0f)
{
    std::vector<uint32_t> raw;
    for (float v : values)
        raw.push_back(raw_of(dtype, v));
    const HostTensor tensor(dtype, raw);
    return tensor_stats_cpu(params_for(tensor, target, kind, scale));
}

} // namespace

TEST_CASE("twin, f32 without target: specials, -0 and the input's own subnormals", "[probes][twin]")
{
    const std::vector<float> x { 1.0f, -2.0f, 0.0f, -0.0f, kNan, kInf, -kInf, 0x1p-149f, 0x1p-126f, 3.0f };
    const StatsResult r = twin_of(schema::Dtype::Float32, x, schema::Fp8Format::None);
    check_counts(r, { 2, 1, 2, 0, 0, 1, 0 });
    CHECK(r.numel == 10);
    CHECK(r.amax == kInf); // an Inf propagates into amax, like TransformerEngine's
    CHECK(r.min_nonzero_abs == 0x1p-149f);
    CHECK(r.scale == 1.0f);
    CHECK(r.scale_inv == 1.0f);
    CHECK(histogram_of(r) == std::map<int, uint64_t> { { -149, 1 }, { -126, 1 }, { 0, 1 }, { 1, 2 } });
    check_moments(r, { 1, -2, 0, 0, 0x1p-149, 0x1p-126, 3 });
    CHECK(r.sum == 2.0);
    CHECK(r.sequence == 0);
}

// The values below are exact in f32, bf16 and f16 alike, so each case runs on all three.
const schema::Dtype kHighPrecision[] = { schema::Dtype::Float32, schema::Dtype::BFloat16, schema::Dtype::Float16 };

TEST_CASE("twin, every HP dtype against E4M3 (scale 1): saturation, overflow, the underflow tie, subnormal edges",
    "[probes][twin]")
{
    const std::vector<float> x {
        448.0f, // = fp8_max: saturated, not an overflow (TE: strictly greater)
        464.0f, // overflow, saturated
        432.0f, // the 416|448 tie rounds to 448 (even): saturated
        416.0f, // 0x7D: neither
        0x1p-10f, // min_subnormal / 2: the tie rounds to 0 (even): underflow
        -0x1p-10f, // underflow
        0x1.02p-10f, // just above the tie: rounds to 2^-9, a subnormal
        0x1p-6f, // min normal
        0x1.ep-7f, // min_normal - min_subnormal/2: the tie rounds to 2^-6 (even): normal
        0x1p-7f, // subnormal code 0x04
        0x1p-24f, // underflow (f16's smallest subnormal: its own subnormality does not count with a target)
        0.0f, kNan,
        -kInf // overflow (|x| > 448) and saturated (the cast clamps it)
    };
    for (schema::Dtype dtype : kHighPrecision) {
        INFO("dtype " << static_cast<int>(dtype));
        const StatsResult r = twin_of(dtype, x, schema::Fp8Format::E4M3);
        check_counts(r, { 1, 1, 1, 2, 3, 2, 4 });
        CHECK(r.amax == kInf);
        CHECK(r.min_nonzero_abs == 0x1p-24f);
        CHECK(histogram_of(r) == std::map<int, uint64_t> { { -24, 1 }, { -10, 3 }, { -7, 2 }, { -6, 1 }, { 8, 4 } });
        check_moments(r, { 448, 464, 432, 416, 0x1p-10, -0x1p-10, 0x1.02p-10, 0x1p-6, 0x1.ep-7, 0x1p-7, 0x1p-24, 0 });
    }
}

TEST_CASE("twin, every HP dtype against E5M2 with scale_inv given (0.5, so scale 2)", "[probes][twin]")
{
    const std::vector<float> x {
        28672.0f, // x * 2 = 57344 = fp8_max: saturated; overflow threshold 57344 * 0.5 = 28672: not over
        28800.0f, // overflow, saturated
        26624.0f, // q = 53248: the 49152|57344 tie rounds to 49152 (0x7A even): neither
        26752.0f, // q = 53504: saturated
        0x1p-18f, // q = 2^-17 = min_subnormal / 2: underflow
        0x1.04p-18f, // q = 2^-17 + 2^-23: rounds to 2^-16: subnormal
        0x1p-15f, // q = 2^-14: min normal
        0x1p-16f, // q = 2^-15: subnormal (2 quanta)
        -0.0f, kInf, kNan
    };
    for (schema::Dtype dtype : kHighPrecision) {
        INFO("dtype " << static_cast<int>(dtype));
        const StatsResult r = twin_of(dtype, x, schema::Fp8Format::E5M2, ScaleKind::InvValue, 0.5f);
        CHECK(r.scale == 2.0f);
        CHECK(r.scale_inv == 0.5f);
        check_counts(r, { 1, 1, 1, 2, 1, 2, 4 });
        CHECK(r.amax == kInf);
        CHECK(r.min_nonzero_abs == 0x1p-18f);
        CHECK(histogram_of(r) == std::map<int, uint64_t> { { -18, 2 }, { -16, 1 }, { -15, 1 }, { 14, 4 } });
        check_moments(r, { 28672, 28800, 26624, 26752, 0x1p-18, 0x1.04p-18, 0x1p-15, 0x1p-16, 0 });
    }
}

TEST_CASE("twin, bf16 below fp32's normal range against a target: underflow, never its own subnormal", "[probes][twin]")
{
    const StatsResult r = twin_of(schema::Dtype::BFloat16, { 0x1p-133f, -0x1p-127f }, schema::Fp8Format::E4M3);
    check_counts(r, { 0, 0, 0, 0, 2, 0, 0 });
    CHECK(r.min_nonzero_abs == 0x1p-133f);
}

TEST_CASE("twin, f16 and bf16 without target count their own subnormals", "[probes][twin]")
{
    const StatsResult h = twin_of(
        schema::Dtype::Float16, { 0x1p-24f, 0x1.ff8p-15f, 0x1p-14f, -0x1p-20f, 0.0f }, schema::Fp8Format::None);
    check_counts(h, { 1, 0, 0, 0, 0, 3, 0 });
    CHECK(h.min_nonzero_abs == 0x1p-24f);
    const StatsResult b = twin_of(schema::Dtype::BFloat16, { 0x1p-133f, 0x1p-126f, 1.0f }, schema::Fp8Format::None);
    check_counts(b, { 0, 0, 0, 0, 0, 1, 0 });
}

TEST_CASE("twin, FP8 inputs: all 256 codes dequantized by scale_inv", "[probes][twin]")
{
    struct Case {
        schema::Dtype dtype;
        ScaleKind kind;
        float scale;
        float scale_inv;
        int mantissa_bits, bias, max_exponent_field, codes_in_top_binade;
        Counts counts;
    };
    const Case cases[] = {
        // E4M3, scale 2 given: scale_inv 0.5. Exponent field 15 holds 0x78..0x7E (0x7F is NaN).
        { schema::Dtype::E4M3, ScaleKind::Value, 2.0f, 0.5f, 3, 7, 15, 7, { 2, 2, 0, 0, 0, 14, 2 } },
        // E5M2, scale_inv 4 given. Exponent field 30 is the top binade, 31 holds Inf and NaN.
        { schema::Dtype::E5M2, ScaleKind::InvValue, 4.0f, 4.0f, 2, 15, 30, 4, { 2, 6, 2, 0, 0, 6, 2 } },
    };
    for (const Case& c : cases) {
        INFO("dtype " << static_cast<int>(c.dtype));
        std::vector<uint32_t> codes;
        for (uint32_t code = 0; code < 256; ++code)
            codes.push_back(code);
        const HostTensor tensor(c.dtype, codes);
        const StatsResult r = tensor_stats_cpu(params_for(tensor, schema::Fp8Format::None, c.kind, c.scale));
        CHECK(r.scale_inv == c.scale_inv);
        check_counts(r, c.counts);
        // Expected values from the encoding itself: subnormals m * 2^(1 - bias - mbits), normals
        // (1 + m / 2^mbits) * 2^(e - bias); both signs, dequantized.
        std::vector<double> values;
        std::map<int, uint64_t> histogram;
        const int quanta = 1 << c.mantissa_bits;
        for (double sign : { 1.0, -1.0 }) {
            for (int m = 1; m < quanta; ++m)
                values.push_back(sign * std::ldexp(m, 1 - c.bias - c.mantissa_bits) * c.scale_inv);
            for (int e = 1; e <= c.max_exponent_field; ++e)
                for (int m = 0; m < (e == c.max_exponent_field ? c.codes_in_top_binade : quanta); ++m)
                    values.push_back(sign * std::ldexp(1.0 + double(m) / quanta, e - c.bias) * c.scale_inv);
        }
        for (double v : values)
            ++histogram[std::ilogb(v)];
        CHECK(histogram_of(r) == histogram);
        CHECK(r.min_nonzero_abs == static_cast<float>(std::ldexp(1.0, 1 - c.bias - c.mantissa_bits) * c.scale_inv));
        if (c.dtype == schema::Dtype::E4M3)
            CHECK(r.amax == 224.0f); // max|code| * scale_inv
        else
            CHECK(r.amax == kInf); // the Inf codes
        check_moments(r, values); // the same order as the codes: positives, then negatives
        CHECK(std::fabs(r.sum) <= 1e-12); // symmetric
    }
}

TEST_CASE("twin, edge shapes: all zeros, one element, empty", "[probes][twin]")
{
    const StatsResult zeros = twin_of(schema::Dtype::Float32, { 0.0f, -0.0f, 0.0f }, schema::Fp8Format::E4M3);
    check_counts(zeros, { 3, 0, 0, 0, 0, 0, 0 });
    CHECK(zeros.amax == 0.0f);
    CHECK(zeros.min_nonzero_abs == kInf);
    CHECK(histogram_of(zeros).empty());
    CHECK(zeros.sum_squares == 0.0);
    const HostTensor fp8_zeros(schema::Dtype::E4M3, { 0x00, 0x80 });
    check_counts(tensor_stats_cpu(params_for(fp8_zeros)), { 2, 0, 0, 0, 0, 0, 0 });

    const StatsResult one = twin_of(schema::Dtype::BFloat16, { -3.0f }, schema::Fp8Format::E4M3);
    check_counts(one, { 0, 0, 0, 0, 0, 0, 0 });
    CHECK(one.amax == 3.0f);
    CHECK(one.min_nonzero_abs == 3.0f);
    CHECK(histogram_of(one) == std::map<int, uint64_t> { { 1, 1 } });
    check_moments(one, { -3.0 });

    StatsParams empty;
    empty.dtype = schema::Dtype::E5M2;
    const StatsResult none = tensor_stats_cpu(empty);
    CHECK(none.numel == 0);
    CHECK(none.min_nonzero_abs == kInf);
    CHECK(none.amax == 0.0f);
}

TEST_CASE("twin, scale from a pointer, and a product that overflows fp32", "[probes][twin]")
{
    const HostTensor tensor(schema::Dtype::Float32, { f32_raw(1e30f), f32_raw(1.0f) });
    const float four = 4.0f;
    const StatsResult r
        = tensor_stats_cpu(params_for(tensor, schema::Fp8Format::E4M3, ScaleKind::DevicePointer, 0.0f, &four));
    CHECK(r.scale == 4.0f);
    CHECK(r.scale_inv == 0.25f);
    check_counts(r, { 0, 0, 0, 1, 0, 0, 1 });
    const float tiny_inv = 1e-10f; // scale = 1e10: 1e30 * 1e10 is Inf in fp32, the cast saturates it
    const StatsResult big
        = tensor_stats_cpu(params_for(tensor, schema::Fp8Format::E5M2, ScaleKind::InvDevicePointer, 0.0f, &tiny_inv));
    CHECK(big.scale_inv == 1e-10f);
    CHECK(big.scale == 1.0f / 1e-10f);
    check_counts(big, { 0, 0, 0, 2, 0, 0, 2 });
}

TEST_CASE("parameter checks: the twin throws, the launcher refuses without touching CUDA", "[probes][twin]")
{
    StatsParams missing_data;
    missing_data.numel = 4;
    CHECK(check_stats_params(missing_data) != nullptr);
    CHECK_THROWS_AS(tensor_stats_cpu(missing_data), std::invalid_argument);
    StatsResult out {};
    int scratch[4] = {};
    CHECK(launch_tensor_stats(missing_data, scratch, &out, 1, nullptr) == cudaErrorInvalidValue);

    const HostTensor bf16(schema::Dtype::BFloat16, { 1, 2, 3 }, 1); // odd address for a 2-byte type
    CHECK(std::string(check_stats_params(params_for(bf16))) == "data not aligned to its element size");
    const HostTensor ok(schema::Dtype::BFloat16, { 1, 2, 3 }, 2);
    CHECK(check_stats_params(params_for(ok)) == nullptr);
    CHECK(check_stats_params(params_for(ok, schema::Fp8Format::E4M3, ScaleKind::DevicePointer)) != nullptr);
    StatsParams bad_dtype = params_for(ok);
    bad_dtype.dtype = static_cast<schema::Dtype>(9);
    CHECK(check_stats_params(bad_dtype) != nullptr);
    StatsParams huge = params_for(ok);
    huge.numel = kMaxStatsNumel + 1;
    CHECK(check_stats_params(huge) != nullptr);
    CHECK(launch_tensor_stats(params_for(ok), nullptr, &out, 1, nullptr) == cudaErrorInvalidValue);
    CHECK(launch_tensor_stats(params_for(ok), scratch, nullptr, 1, nullptr) == cudaErrorInvalidValue);
}

TEST_CASE("trim_histogram keeps the first to the last nonzero bin", "[probes][twin]")
{
    StatsResult r {};
    CHECK(trim_histogram(r).counts.empty());
    CHECK(trim_histogram(r).first_exponent == 0);
    r.exponent_histogram[-3 - kHistogramMinExponent] = 5;
    r.exponent_histogram[2 - kHistogramMinExponent] = 7;
    const TrimmedHistogram t = trim_histogram(r);
    CHECK(t.first_exponent == -3);
    CHECK(t.counts == std::vector<uint64_t> { 5, 0, 0, 0, 0, 7 });
    r = {};
    r.exponent_histogram[0] = 1;
    r.exponent_histogram[kHistogramBins - 1] = 2;
    CHECK(trim_histogram(r).first_exponent == -149);
    CHECK(trim_histogram(r).counts.size() == 277);
}
