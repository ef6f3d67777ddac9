// The reference kernels of fp8scope_stats_bandwidth: readonly_reduction.hpp says what they are for.
//
// The reduction reads like the statistics kernel (kernel_common.cuh): groups of 4 16-byte vectors per thread, a
// grid stride apart, all in flight at once, the last group predicated; then a warp reduction and one atomic per
// block. It does the least work a reader can do per byte (one integer max per word), so its time is the memory's.
#include "readonly_reduction.hpp"

#include <cstdint>

namespace fp8scope::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

__device__ __forceinline__ unsigned int max_words(unsigned int m, const uint4& v)
{
    return max(max(m, max(v.x, v.y)), max(v.z, v.w));
}

__global__ void __launch_bounds__(kThreads) readonly_max_kernel(const uint4* data, uint64_t vectors, unsigned int* out)
{
    const uint64_t stride = uint64_t { gridDim.x } * blockDim.x;
    unsigned int m = 0;
    for (uint64_t first = uint64_t { blockIdx.x } * blockDim.x + threadIdx.x; first < vectors;
         first += kUnroll * stride) {
        uint4 group[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            group[k] = first + k * stride < vectors ? __ldg(data + first + k * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            m = max_words(m, group[k]);
    }
    for (int offset = 16; offset > 0; offset /= 2)
        m = max(m, __shfl_down_sync(0xFFFFFFFFu, m, offset));
    __shared__ unsigned int warp_max[kThreads / 32];
    if (threadIdx.x % 32 == 0)
        warp_max[threadIdx.x / 32] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < kThreads / 32; ++w)
            m = max(m, warp_max[w]);
        atomicMax(out, m);
    }
}

__global__ void empty_kernel() { }

} // namespace

cudaError_t readonly_reduction_blocks(size_t bytes, int& blocks)
{
    int device = 0, sm_count = 0, per_sm = 0;
    if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
        return e;
    if (cudaError_t e = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
        return e;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, readonly_max_kernel, kThreads, 0);
        e != cudaSuccess)
        return e;
    const size_t per_block = size_t { 16 } * kThreads * kUnroll;
    const size_t wanted = (bytes + per_block - 1) / per_block;
    const size_t resident = static_cast<size_t>(sm_count) * static_cast<size_t>(per_sm);
    blocks = static_cast<int>(wanted < resident ? (wanted > 0 ? wanted : 1) : resident);
    return cudaSuccess;
}

cudaError_t launch_readonly_reduction(
    const void* data, size_t bytes, unsigned int* device_max, int blocks, cudaStream_t stream)
{
    readonly_max_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(data), bytes / 16, device_max);
    return cudaGetLastError();
}

cudaError_t launch_empty_kernel(cudaStream_t stream)
{
    empty_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

} // namespace fp8scope::bench
