// A GEMM's beta as the hooks read it (collector/src/stats/gemm_scalars.hpp): a nonzero host beta names the site
// "gemm MxNxK + C". Inductor's BF16 addmm that adds a residual passes beta 1 in the compute type's precision.
#include "stats/gemm_scalars.hpp"

#include <catch2/catch.hpp>

#include <cublas_api.h>
#include <library_types.h>

#include <cstdint>

using fp8scope::collector::host_scalar_nonzero;

TEST_CASE("a GEMM's host beta is read in its type's precision", "[gemm_hooks]")
{
    const float one_f = 1.0f, zero_f = 0.0f, minus_zero_f = -0.0f, tiny_f = 1e-30f;
    CHECK(host_scalar_nonzero(&one_f, CUDA_R_32F));
    CHECK(host_scalar_nonzero(&one_f, CUBLAS_COMPUTE_32F));
    CHECK(host_scalar_nonzero(&one_f, CUBLAS_COMPUTE_32F_FAST_TF32));
    CHECK(host_scalar_nonzero(&tiny_f, CUDA_R_32F));
    CHECK_FALSE(host_scalar_nonzero(&zero_f, CUDA_R_32F));
    CHECK_FALSE(host_scalar_nonzero(&minus_zero_f, CUBLAS_COMPUTE_32F));

    const double one_d = 1.0, zero_d = 0.0;
    CHECK(host_scalar_nonzero(&one_d, CUDA_R_64F));
    CHECK(host_scalar_nonzero(&one_d, CUBLAS_COMPUTE_64F));
    CHECK_FALSE(host_scalar_nonzero(&zero_d, CUBLAS_COMPUTE_64F_PEDANTIC));

    const uint16_t half_one = 0x3c00, half_minus_zero = 0x8000, bf16_one = 0x3f80;
    CHECK(host_scalar_nonzero(&half_one, CUBLAS_COMPUTE_16F));
    CHECK(host_scalar_nonzero(&bf16_one, CUDA_R_16BF));
    CHECK_FALSE(host_scalar_nonzero(&half_minus_zero, CUDA_R_16F));

    const int32_t int_one = 1, int_zero = 0, int_min = INT32_MIN;
    CHECK(host_scalar_nonzero(&int_one, CUBLAS_COMPUTE_32I));
    CHECK(host_scalar_nonzero(&int_min, CUDA_R_32I)); // an integer's top bit is not a sign of zero
    CHECK_FALSE(host_scalar_nonzero(&int_zero, CUDA_R_32I));

    // No pointer, or a type not read: adds nothing.
    CHECK_FALSE(host_scalar_nonzero(nullptr, CUDA_R_32F));
    CHECK_FALSE(host_scalar_nonzero(&one_d, CUDA_C_64F));
}
