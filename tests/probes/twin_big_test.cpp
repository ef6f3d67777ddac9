// More than 2^31 elements on the CPU: 64-bit indexing in the twin and in the kernel model (about 2.1 GB of RAM and
// a few seconds). Run alone with `fp8scope_probes_tests "[big]"` or `ctest -R probes/big`.
#include "kernel_model.hpp"
#include "stats_test_support.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <memory>

using namespace fp8scope;
using namespace fp8scope::probes;

TEST_CASE(
    "big: twin and kernel model on 2^31 + 5 E4M3 elements, values planted across the 2^31 boundary", "[probes][big]")
{
    const uint64_t numel = (uint64_t { 1 } << 31) + 5;
    // calloc: untouched pages read as zeros without being written first (seconds saved on 2 GB).
    const std::unique_ptr<uint8_t, decltype(&std::free)> storage(
        static_cast<uint8_t*>(std::calloc(numel, 1)), &std::free);
    REQUIRE(storage != nullptr);
    uint8_t* codes = storage.get();
    codes[0] = 0x01; // 2^-9: subnormal
    codes[1] = 0x38; // 1.0
    codes[12345] = 0x80; // -0
    codes[(uint64_t { 1 } << 31) - 1] = 0x7F; // NaN
    codes[uint64_t { 1 } << 31] = 0x7E; // 448: saturated
    codes[numel - 1] = 0xFE; // -448: saturated

    StatsParams params;
    params.data = codes;
    params.numel = numel;
    params.dtype = schema::Dtype::E4M3;
    params.scale_kind = ScaleKind::InvValue;
    params.scale = 2.0f; // scale_inv: values are code * 2

    const StatsResult twin = tensor_stats_cpu(params);
    CHECK(twin.numel == numel);
    CHECK(twin.zeros == numel - 5);
    CHECK(twin.nans == 1);
    CHECK(twin.infs == 0);
    CHECK(twin.subnormals == 1);
    CHECK(twin.saturated == 2);
    CHECK(twin.overflows == 0);
    CHECK(twin.underflows == 0);
    CHECK(twin.scale == 0.5f);
    CHECK(twin.amax == 896.0f);
    CHECK(twin.min_nonzero_abs == 0x1p-8f);
    CHECK(twin.exponent_histogram[-8 - kHistogramMinExponent] == 1);
    CHECK(twin.exponent_histogram[1 - kHistogramMinExponent] == 1);
    CHECK(twin.exponent_histogram[9 - kHistogramMinExponent] == 2);
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0; // the planted values in element order, as the twin sums them
    for (double v : { 0x1p-8, 2.0, 896.0, -896.0 })
        s1 += v, s2 += v * v, s3 += v * v * v, s4 += (v * v) * (v * v);
    CHECK(twin.sum == s1);
    CHECK(twin.sum_squares == s2);
    CHECK(twin.sum_cubes == s3);
    CHECK(twin.sum_fourth == s4);
    CHECK(std::fabs(twin.sum - (2.0 + 0x1p-8)) < 1e-12);

    test::require_same_stats(test::emulate_kernel(params), twin, "2^31 + 5 elements");
}
