// Error handling shared by the ground-truth samples: every CUDA call is checked, and a machine without a usable
// CUDA device ends the program with the automake/CTest "skipped" code instead of an error.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace fp8scope::samples {

// Exit codes, documented in samples/README.md. 77 is the automake convention for "skipped", which CTest honours
// through SKIP_RETURN_CODE.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoDevice = 77;

[[noreturn]] inline void fail_cuda(cudaError_t error, const char* call, const char* file, int line)
{
    std::fprintf(
        stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorString(error), cudaGetErrorName(error));
    std::exit(kExitFailure);
}

// Selects device 0, or exits with kExitNoDevice and one line on stderr when there is no driver or no device.
// Without libcuda.so the runtime answers cudaErrorInsufficientDriver (seen with CUDA 13.0 on a machine with no
// driver), so that code counts as "no device" too.
inline void require_cuda_device(const char* sample)
{
    int device_count = 0;
    const cudaError_t error = cudaGetDeviceCount(&device_count);
    if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver
        || (error == cudaSuccess && device_count == 0)) {
        std::fprintf(stderr, "%s: no CUDA device (%s: %s); exiting with code %d\n", sample, cudaGetErrorName(error),
            error == cudaSuccess ? "no devices found" : cudaGetErrorString(error), kExitNoDevice);
        std::exit(kExitNoDevice);
    }
    if (error != cudaSuccess) {
        fail_cuda(error, "cudaGetDeviceCount", __FILE__, __LINE__);
    }
    const cudaError_t set_error = cudaSetDevice(0);
    if (set_error != cudaSuccess) {
        fail_cuda(set_error, "cudaSetDevice(0)", __FILE__, __LINE__);
    }
}

} // namespace fp8scope::samples

#define FP8SCOPE_CUDA_CHECK(call)                                                                                      \
    do {                                                                                                               \
        const cudaError_t fp8scope_cuda_check_error = (call);                                                          \
        if (fp8scope_cuda_check_error != cudaSuccess) {                                                                \
            ::fp8scope::samples::fail_cuda(fp8scope_cuda_check_error, #call, __FILE__, __LINE__);                      \
        }                                                                                                              \
    } while (false)
