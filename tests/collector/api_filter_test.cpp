#include "calls/api_filter.hpp"

#include <catch2/catch.hpp>

using namespace fp8scope::collector;

TEST_CASE("launches, copies, syncs, events, graph launches and allocations are traced")
{
    for (const char* name : { "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "cudaLaunchKernelExC_v11060",
             "cudaGraphLaunch_v10000", "cudaMemcpy_v3020", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
             "cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020",
             "cudaStreamWaitEvent_v3020", "cudaEventRecord_v3020", "cudaMalloc_v3020", "cudaFree_v3020",
             "cudaMallocHost_v3020", "cudaLaunchHostFunc_v10000" })
        CHECK(is_traced_runtime_api(name));
    for (const char* name : { "cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", "cuMemcpyHtoD_v2", "cuMemcpyAsync",
             "cuCtxSynchronize", "cuStreamSynchronize", "cuEventRecord", "cuMemAlloc_v2" })
        CHECK(is_traced_driver_api(name));
}

TEST_CASE("queries, attribute getters and other chatter are not traced")
{
    for (const char* name : { "cudaGetDevice_v3020", "cudaStreamQuery_v3020", "cudaEventQuery_v3020",
             "cudaGetLastError_v3020", "cudaPeekAtLastError_v3020", "cudaFuncGetAttributes_v3020",
             "cudaStreamIsCapturing_v10000", "cudaGetDeviceProperties_v3020" })
        CHECK_FALSE(is_traced_runtime_api(name));
    for (const char* name : { "cuCtxGetCurrent", "cuStreamQuery", "cuEventQuery", "cuDeviceGetAttribute",
             "cuFuncGetAttribute", "cuGetProcAddress" })
        CHECK_FALSE(is_traced_driver_api(name));
}
