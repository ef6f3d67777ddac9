// A GEMM's host scalars (alpha, beta) as cuBLAS and cuBLASLt pass them: whether the GEMM adds beta * C
// (docs/collector.md "Tensor statistics": such a GEMM's site is named "gemm MxNxK + C"). No CUDA call.
#pragma once

#include <cstdint>

namespace fp8scope::collector {

// Whether a host scalar of `type` is nonzero (-0 counts as zero); false for a null pointer or a type this build does
// not read (complex, 8-bit). `type` is a cudaDataType, or a cublasComputeType_t (64 and up), whose scalars have that
// compute type's precision (cuBLAS's rule for cublasGemmEx).
bool host_scalar_nonzero(const void* scalar, int32_t type);

} // namespace fp8scope::collector
