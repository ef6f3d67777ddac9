// Ground-truth sample "multistream": a fork-join per step over several streams. Stream 0 runs a producer kernel and
// records an event; every other stream waits for it (cudaStreamWaitEvent), runs a kernel and records its own event;
// stream 0 waits for all of them, runs a join kernel, enqueues a host function (cudaLaunchHostFunc), and the host
// synchronizes stream 0. Fields: samples/README.md.

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {

constexpr const char* kSample = "multistream";

std::atomic<std::uint64_t> host_funcs_executed { 0 };

// Runs on a CUDA-owned thread; it must not call CUDA.
void CUDART_CB count_host_func(void*)
{
    host_funcs_executed.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_multistream",
        "fork-join over several streams with event dependencies and a host function per step");
    const std::int64_t steps = args.integer("steps", 10, 1, 1'000'000, "steps");
    const std::int64_t stream_count = args.integer("streams", 3, 2, 64, "streams (stream 0 forks and joins)");
    const std::int64_t kernel_us = args.integer("kernel-us", 200, 0, 10'000'000, "duration of each spin kernel, us");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    const std::size_t n = static_cast<std::size_t>(stream_count);
    // Non-blocking streams: no implicit ordering with the legacy default stream, only the events order them.
    std::vector<cudaStream_t> streams(n);
    std::vector<cudaEvent_t> done(n); // done[0] is the producer's event, done[i] stream i's
    for (std::size_t i = 0; i < n; ++i) {
        FP8SCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        FP8SCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    }
    unsigned long long* counters = nullptr; // one per stream
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counters, n * sizeof *counters));
    cuda.memset(counters, 0, n * sizeof *counters);
    const unsigned long long kernel_ns = static_cast<unsigned long long>(kernel_us) * 1000;

    for (std::int64_t step = 0; step < steps; ++step) {
        cuda.begin_step();
        FP8SCOPE_LAUNCH(cuda, fp8scope_spin, streams[0], &counters[0], kernel_ns);
        cuda.event_record(done[0], streams[0]);
        for (std::size_t i = 1; i < n; ++i) {
            cuda.stream_wait_event(streams[i], done[0]);
            FP8SCOPE_LAUNCH(cuda, fp8scope_spin, streams[i], &counters[i], kernel_ns);
            cuda.event_record(done[i], streams[i]);
        }
        for (std::size_t i = 1; i < n; ++i) {
            cuda.stream_wait_event(streams[0], done[i]);
        }
        FP8SCOPE_LAUNCH(cuda, fp8scope_tiny, streams[0], &counters[0]);
        cuda.launch_host_func(streams[0], count_host_func, nullptr);
        cuda.stream_synchronize(streams[0]);
        cuda.end_step();
    }

    // Stream 0 waited for every other stream before its last synchronize, so all work is done.
    std::vector<unsigned long long> executed(n);
    cuda.memcpy_dtoh_blocking(executed.data(), counters, n * sizeof *counters);
    bool verified = host_funcs_executed.load() == cuda.host_funcs();
    if (!verified) {
        std::fprintf(stderr, "%s: %" PRIu64 " host functions ran, %" PRIu64 " were enqueued\n", kSample,
            host_funcs_executed.load(), cuda.host_funcs());
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::printf("stream %zu kernels %" PRIu64 "\n", i, cuda.kernels_on(streams[i]));
        if (executed[i] != cuda.kernels_on(streams[i])) {
            verified = false;
            std::fprintf(stderr, "%s: stream %zu: the device counted %llu kernels, the host launched %" PRIu64 "\n",
                kSample, i, executed[i], cuda.kernels_on(streams[i]));
        }
    }
    std::vector<std::uint64_t> kernels_per_stream(n);
    for (std::size_t i = 0; i < n; ++i) {
        kernels_per_stream[i] = cuda.kernels_on(streams[i]);
    }
    FP8SCOPE_CUDA_CHECK(cudaFree(counters));
    for (std::size_t i = 0; i < n; ++i) {
        FP8SCOPE_CUDA_CHECK(cudaEventDestroy(done[i]));
        FP8SCOPE_CUDA_CHECK(cudaStreamDestroy(streams[i]));
    }

    cuda.print_summary();
    JsonLine json;
    cuda.write_common(json);
    json.field("streams", static_cast<std::uint64_t>(n));
    json.key("kernels_per_stream").begin_array();
    for (const std::uint64_t count : kernels_per_stream) {
        json.value(count);
    }
    json.end_array();
    json.field("host_funcs_executed", host_funcs_executed.load());
    json.field("kernel_ns", static_cast<std::uint64_t>(kernel_ns));
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
