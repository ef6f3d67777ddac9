#include "calls/api_filter.hpp"

#include <array>

namespace fp8scope::collector {
namespace {

template <size_t N> bool has_prefix(std::string_view name, const std::array<std::string_view, N>& prefixes)
{
    for (std::string_view prefix : prefixes)
        if (name.starts_with(prefix))
            return true;
    return false;
}

// Queries (cudaStreamQuery, cudaEventQuery) are left out: PyTorch's caching allocator polls events constantly,
// and a query never blocks the host.
constexpr std::array<std::string_view, 18> kRuntime {
    "cudaLaunch", // cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cudaLaunchHostFunc
    "cudaGraphLaunch",
    "cudaMemcpy",
    "cudaMemset",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "cudaEventRecord",
    "cudaMalloc",
    "cudaFree",
    "cudaHostAlloc",
    "cudaStreamAddCallback",
    "cudaDeviceReset",
    "cudaStreamBeginCapture",
    "cudaStreamEndCapture",
    "cudaGraphInstantiate",
    "cudaGraphUpload",
};
constexpr std::array<std::string_view, 15> kDriver {
    "cuLaunch", // cuLaunchKernel(Ex), cuLaunchCooperativeKernel, cuLaunchHostFunc: Triton, cuBLASLt, JIT paths
    "cuGraphLaunch",
    "cuMemcpy",
    "cuMemset",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuStreamWaitEvent",
    "cuEventRecord",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemHostAlloc",
    "cuStreamBeginCapture",
    "cuStreamEndCapture",
    "cuGraphUpload",
};

} // namespace

bool is_traced_runtime_api(std::string_view callback_name)
{
    return has_prefix(callback_name, kRuntime);
}

bool is_traced_driver_api(std::string_view callback_name)
{
    return has_prefix(callback_name, kDriver);
}

} // namespace fp8scope::collector
