// Ground-truth sample "launch_bound": a phase of thousands of tiny kernels on one stream (the GPU mostly waits for
// the host to launch the next one), then a phase of a few long kernels (the GPU is busy) for contrast.
// Each step is an NVTX "train_step" range that ends with cudaStreamSynchronize. Fields: samples/README.md.

#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {

constexpr const char* kSample = "launch_bound";

struct Phase {
    const char* name;
    std::uint64_t steps = 0;
    std::uint64_t kernels = 0;
    HostInterval bounds; // CLOCK_REALTIME: just before the first step begins, just after the last one ends
};

} // namespace

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_launch_bound",
        "a phase of many tiny kernels (launch-bound), then a phase of a few long kernels (GPU-bound)");
    const std::int64_t steps = args.integer("steps", 4, 1, 1'000'000, "steps in each phase");
    const std::int64_t tiny_per_step = args.integer("tiny-per-step", 5000, 1, 10'000'000, "tiny kernels per step");
    const std::int64_t long_per_step = args.integer("long-per-step", 1, 1, 1000, "long kernels per step");
    const std::int64_t long_us = args.integer("long-us", 10'000, 1, 10'000'000, "duration of a long kernel, us");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    cudaStream_t stream = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* counter = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    cuda.memset(counter, 0, sizeof *counter);

    Phase phases[2] = { { "tiny", 0, 0, {} }, { "long", 0, 0, {} } };
    for (Phase& phase : phases) {
        const bool tiny = &phase == &phases[0];
        const std::uint64_t kernels_before = cuda.kernels();
        phase.bounds.start_ns = realtime_ns();
        for (std::int64_t step = 0; step < steps; ++step) {
            cuda.begin_step();
            if (tiny) {
                for (std::int64_t k = 0; k < tiny_per_step; ++k) {
                    FP8SCOPE_LAUNCH(cuda, fp8scope_tiny, stream, counter);
                }
            } else {
                const unsigned long long duration_ns = static_cast<unsigned long long>(long_us) * 1000;
                for (std::int64_t k = 0; k < long_per_step; ++k) {
                    FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, duration_ns);
                }
            }
            cuda.stream_synchronize(stream);
            cuda.end_step();
            ++phase.steps;
        }
        phase.bounds.end_ns = realtime_ns();
        phase.kernels = cuda.kernels() - kernels_before;
        std::printf("phase %-4s start_ns %" PRId64 " end_ns %" PRId64 " duration_ns %" PRId64 " steps %" PRIu64
                    " kernels %" PRIu64 "\n",
            phase.name, phase.bounds.start_ns, phase.bounds.end_ns, phase.bounds.duration_ns(), phase.steps,
            phase.kernels);
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
    json.key("phases").begin_array();
    for (const Phase& phase : phases) {
        json.begin_object()
            .field("name", phase.name)
            .field("steps", phase.steps)
            .field("kernels", phase.kernels)
            .field("start_ns", phase.bounds.start_ns)
            .field("end_ns", phase.bounds.end_ns)
            .end_object();
    }
    json.end_array();
    json.field("long_kernel_ns", static_cast<std::int64_t>(long_us) * 1000);
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
