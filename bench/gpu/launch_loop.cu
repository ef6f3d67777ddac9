// The tiny-kernel launch loop of the collector overhead benchmark (docs/benchmarks.md "Collector overhead"; goals: at
// most 1 us added per launch, and less than torch.profiler with the same activities in the same run). A shared library,
// so that Python (bench/launch_overhead.py, through ctypes, inside or outside torch.profiler) and C++
// (bench/gpu/launch_overhead_main.cu) time exactly the same machine code.
//
// What is timed is the host's launch path only: the loop of `launches` launches on one stream, from before the
// first launch to after the last one returns. The GPU runs an empty kernel in about a microsecond, faster than the
// host launches it, so the queue never fills and never throttles the loop. The final synchronization is outside
// the timed part, and every call first runs a warm-up (module load, lazy stream and context state).
#include <chrono>

#include <cuda_runtime.h>

// extern "C": the name in a trace is exactly `fp8scope_bench_empty`, mangled or demangled.
extern "C" __global__ void fp8scope_bench_empty() { }

namespace {

constexpr int kWarmupLaunches = 1000;

cudaStream_t bench_stream = nullptr; // created once; the library is not meant for concurrent callers

double failure(cudaError_t error)
{
    return -static_cast<double>(error);
}

cudaError_t launch_many(int launches)
{
    for (int i = 0; i < launches; ++i) {
        fp8scope_bench_empty<<<1, 1, 0, bench_stream>>>();
    }
    return cudaGetLastError();
}

} // namespace

extern "C" {

// Kernels each fp8scope_launch_loop_us call launches before its timed loop (to compare with a trace's count).
__attribute__((visibility("default"))) int fp8scope_launch_loop_warmup_launches()
{
    return kWarmupLaunches;
}

// Host microseconds per launch over `launches` launches. On failure a negative number: minus the cudaError_t
// (fp8scope_launch_loop_error_string names it); launches < 1 gives -cudaErrorInvalidValue.
__attribute__((visibility("default"))) double fp8scope_launch_loop_us(int launches)
{
    if (launches < 1) {
        return failure(cudaErrorInvalidValue);
    }
    if (bench_stream == nullptr) {
        if (const cudaError_t error = cudaStreamCreateWithFlags(&bench_stream, cudaStreamNonBlocking);
            error != cudaSuccess) {
            bench_stream = nullptr;
            return failure(error);
        }
    }
    if (const cudaError_t error = launch_many(kWarmupLaunches); error != cudaSuccess) {
        return failure(error);
    }
    if (const cudaError_t error = cudaStreamSynchronize(bench_stream); error != cudaSuccess) {
        return failure(error);
    }
    const auto start = std::chrono::steady_clock::now();
    const cudaError_t launch_error = launch_many(launches);
    const auto end = std::chrono::steady_clock::now();
    const cudaError_t sync_error = cudaStreamSynchronize(bench_stream);
    if (launch_error != cudaSuccess || sync_error != cudaSuccess) {
        return failure(launch_error != cudaSuccess ? launch_error : sync_error);
    }
    return std::chrono::duration<double, std::micro>(end - start).count() / launches;
}

__attribute__((visibility("default"))) const char* fp8scope_launch_loop_error_string(int error)
{
    return cudaGetErrorString(static_cast<cudaError_t>(error));
}

} // extern "C"
