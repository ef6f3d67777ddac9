// Ground-truth sample "host_stall": each step launches some work, then the host busy-waits for a fixed time making
// no CUDA call at all, then launches more work and synchronizes. The GPU idles during the stall, and nothing in
// the CUDA API explains the gap: only the host's silence does. Fields: samples/README.md.

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {
constexpr const char* kSample = "host_stall";
}

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_host_stall",
        "per step: kernels, a host busy-wait with no CUDA calls, more kernels, cudaStreamSynchronize");
    const std::int64_t steps = args.integer("steps", 10, 1, 1'000'000, "steps");
    const std::int64_t stall_ms = args.integer("stall-ms", 20, 0, 60'000, "host busy-wait per step, ms");
    const std::int64_t kernels_before = args.integer("kernels-before", 4, 0, 100'000, "kernels before the stall");
    const std::int64_t kernels_after = args.integer("kernels-after", 4, 0, 100'000, "kernels after the stall");
    const std::int64_t kernel_us = args.integer("kernel-us", 100, 0, 10'000'000, "duration of each kernel, us");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    cudaStream_t stream = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* counter = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    cuda.memset(counter, 0, sizeof *counter);
    const unsigned long long kernel_ns = static_cast<unsigned long long>(kernel_us) * 1000;

    std::vector<HostInterval> stalls;
    for (std::int64_t step = 0; step < steps; ++step) {
        cuda.begin_step();
        for (std::int64_t k = 0; k < kernels_before; ++k) {
            FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        }
        stalls.push_back(busy_wait(stall_ms * 1'000'000));
        for (std::int64_t k = 0; k < kernels_after; ++k) {
            FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, kernel_ns);
        }
        cuda.stream_synchronize(stream);
        cuda.end_step();
        const HostInterval& stall = stalls.back();
        std::printf("step %" PRId64 " stall start_ns %" PRId64 " end_ns %" PRId64 " duration_ns %" PRId64 "\n", step,
            stall.start_ns, stall.end_ns, stall.duration_ns());
    }

    unsigned long long executed = 0;
    cuda.memcpy_dtoh_blocking(&executed, counter, sizeof executed);
    const bool verified = executed == cuda.kernels();
    if (!verified) {
        std::fprintf(stderr, "%s: the device counted %llu kernels, the host launched %" PRIu64 "\n", kSample, executed,
            cuda.kernels());
    }
    FP8SCOPE_CUDA_CHECK(cudaFree(counter));
    FP8SCOPE_CUDA_CHECK(cudaStreamDestroy(stream));

    cuda.print_summary();
    JsonLine json;
    cuda.write_common(json);
    json.field("stall_ns_requested", stall_ms * 1'000'000);
    json.field("kernel_ns", static_cast<std::uint64_t>(kernel_ns));
    json.key("stalls").begin_array();
    for (std::size_t i = 0; i < stalls.size(); ++i) {
        json.begin_object()
            .field("step", static_cast<std::uint64_t>(i))
            .field("start_ns", stalls[i].start_ns)
            .field("end_ns", stalls[i].end_ns)
            .field("duration_ns", stalls[i].duration_ns())
            .end_object();
    }
    json.end_array();
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
