// The reference kernels of fp8scope_stats_bandwidth (stats_bandwidth.cpp): a plain read-only reduction over a
// buffer, the practical limit for any kernel that reads every byte once, and an empty kernel, the fixed cost of a
// launch. Plain values only: the .cu side is C++17, the bench C++20.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fp8scope::bench {

// Blocks for the read-only reduction of `bytes`: enough to fill the device (as many resident blocks per SM as fit),
// but no more than give each thread a full group of 16-byte loads, the statistics kernel's rule.
cudaError_t readonly_reduction_blocks(size_t bytes, int& blocks);

// The unsigned maximum of the 32-bit words of `data` (16-byte aligned, `bytes` a multiple of 16) folded into
// *device_max with one atomicMax per block: one launch, one pass, every byte read once.
cudaError_t launch_readonly_reduction(
    const void* data, size_t bytes, unsigned int* device_max, int blocks, cudaStream_t stream);

// One block of 32 threads that does nothing.
cudaError_t launch_empty_kernel(cudaStream_t stream);

} // namespace fp8scope::bench
