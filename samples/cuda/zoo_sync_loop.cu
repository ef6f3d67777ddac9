// Ground-truth sample "zoo_sync_loop" (zoo workload cuda_sync_loop, docs/accuracy.md "Scoreboard"): a CUDA C++
// training-loop shape with no optimizer kernels. Each step (one NVTX "train_step" range): half of --tiny-per-step tiny
// kernels, cudaStreamSynchronize, a host stall of --stall-ms in which the program sleeps (usleep) and makes no CUDA
// call, the other half of the tiny kernels, cudaDeviceSynchronize. The stall sits between the step's first and last
// launch, right after a sync has returned. Prints the common sample fields plus the zoo's truth fields. Fields:
// samples/README.md, tests/gpu/README.md ("The zoo").

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <unistd.h>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {

constexpr const char* kSample = "zoo_sync_loop";

std::int64_t median(std::vector<std::int64_t> values)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

} // namespace

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_zoo_sync_loop",
        "per step: tiny kernels, a stream sync, a host sleep with no CUDA calls, tiny kernels, a device sync");
    const std::int64_t steps = args.integer("steps", 12, 1, 1'000'000, "steps");
    const std::int64_t tiny_per_step = args.integer("tiny-per-step", 400, 2, 1'000'000, "tiny kernels per step");
    const std::int64_t stall_ms = args.integer("stall-ms", 3, 0, 60'000, "host sleep per step, ms");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    cudaStream_t stream = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* counter = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    cuda.memset(counter, 0, sizeof *counter);
    const std::int64_t first_half = tiny_per_step / 2;
    const std::int64_t second_half = tiny_per_step - first_half;

    std::vector<HostInterval> stalls;
    for (std::int64_t step = 0; step < steps; ++step) {
        cuda.begin_step();
        for (std::int64_t k = 0; k < first_half; ++k) {
            FP8SCOPE_LAUNCH(cuda, fp8scope_tiny, stream, counter);
        }
        cuda.stream_synchronize(stream);
        HostInterval stall;
        stall.start_ns = realtime_ns();
        usleep(static_cast<useconds_t>(stall_ms * 1000)); // the host stall: no CUDA call
        stall.end_ns = realtime_ns();
        stalls.push_back(stall);
        for (std::int64_t k = 0; k < second_half; ++k) {
            FP8SCOPE_LAUNCH(cuda, fp8scope_tiny, stream, counter);
        }
        cuda.device_synchronize();
        cuda.end_step();
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

    std::vector<std::int64_t> step_durations_ns;
    std::vector<std::int64_t> stall_durations_ns;
    const std::vector<HostInterval>& step_bounds = cuda.steps();
    for (std::size_t i = 0; i < step_bounds.size(); ++i) {
        // Start to start, as the Python workloads measure; the last step, which has no successor, start to end.
        const std::int64_t end_ns = i + 1 < step_bounds.size() ? step_bounds[i + 1].start_ns : step_bounds[i].end_ns;
        step_durations_ns.push_back(end_ns - step_bounds[i].start_ns);
    }
    for (const HostInterval& stall : stalls) {
        stall_durations_ns.push_back(stall.duration_ns());
    }
    // The analyzer leaves two steps out as warm-up; so do the medians, when there are enough steps.
    const std::size_t warmup = step_durations_ns.size() > 4 ? 2 : 0;
    const std::vector<std::int64_t> steady(
        step_durations_ns.begin() + static_cast<std::ptrdiff_t>(warmup), step_durations_ns.end());

    cuda.print_summary();
    JsonLine json;
    cuda.write_common(json);
    json.field("workload", "cuda_sync_loop");
    json.field("pattern",
        "CUDA C++: per step tiny kernels, cudaStreamSynchronize, a host sleep with no CUDA call, tiny kernels, "
        "cudaDeviceSynchronize; no optimizer kernels, NVTX train_step ranges");
    json.field("recipe", "none");
    json.key("planted").begin_object();
    json.field("host_stall_ms", stall_ms);
    json.field("host_stall_where", "in_step");
    json.field("host_stall_steps", "all");
    json.field("syncs_per_step", static_cast<std::int64_t>(2));
    json.field("tiny_kernels_per_step", tiny_per_step);
    json.end_object();
    // Integers only (the samples' JSON writer has no floating point); the zoo's driver adds the _ms forms.
    json.key("measured").begin_object();
    json.field("median_step_ns", median(steady));
    json.field("median_from_step", static_cast<std::uint64_t>(warmup));
    json.field("stall_ns_median", median(stall_durations_ns));
    json.end_object();
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
