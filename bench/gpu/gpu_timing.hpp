// Shared by the GPU kernel benchmarks (stats_bandwidth.cpp, block_stats_bandwidth.cpp): error reporting, the 1 ms
// host function that holds a stream so that events time the GPU alone, and the median of timed runs.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace fp8scope::bench {

// False (and one line on stderr, prefixed with the program's name) when `status` is an error.
inline bool cuda_ok(cudaError_t status, const char* program, const char* what)
{
    if (status != cudaSuccess)
        std::fprintf(stderr, "%s: %s: %s\n", program, what, cudaGetErrorString(status));
    return status == cudaSuccess;
}

// Enqueued before a timed launch (cudaLaunchHostFunc): the launch then waits on the GPU, not on the host.
inline void CUDART_CB hold_stream(void*)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

inline float median(std::vector<float> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace fp8scope::bench
