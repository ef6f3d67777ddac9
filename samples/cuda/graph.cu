// Ground-truth sample "graph": one step's work (a chain of small kernels on one stream) is captured once into a
// CUDA Graph by stream capture, then replayed with cudaGraphLaunch once per step. Optional eager steps run the same
// work with ordinary launches first, for contrast. Fields: samples/README.md.

#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "args.hpp"
#include "counted_cuda.cuh"
#include "kernels.cuh"

using namespace fp8scope::samples;

namespace {

constexpr const char* kSample = "graph";

// One step's work: kernels alternate between fp8scope_tiny and fp8scope_spin, so the graph holds two kernel names.
void enqueue_step_work(CountedCuda& cuda, cudaStream_t stream, unsigned long long* counter, std::int64_t kernels,
    unsigned long long spin_ns)
{
    for (std::int64_t k = 0; k < kernels; ++k) {
        if (k % 2 == 0) {
            FP8SCOPE_LAUNCH(cuda, fp8scope_tiny, stream, counter);
        } else {
            FP8SCOPE_LAUNCH(cuda, fp8scope_spin, stream, counter, spin_ns);
        }
    }
}

} // namespace

int main(int argc, char** argv)
{
    Args args(argc, argv, "fp8scope_sample_graph",
        "one step's kernels captured once in a CUDA Graph, replayed with cudaGraphLaunch each step");
    const std::int64_t steps = args.integer("steps", 20, 1, 1'000'000, "graph-replay steps");
    const std::int64_t eager_steps = args.integer("eager-steps", 0, 0, 1'000'000, "eager steps before capture");
    const std::int64_t kernels_per_step = args.integer("kernels-per-step", 10, 1, 10'000, "kernels in one step");
    const std::int64_t spin_us = args.integer("kernel-us", 5, 0, 10'000'000, "duration of each fp8scope_spin, us");
    args.finish();

    require_cuda_device(kSample);
    CountedCuda cuda(kSample);
    // Capture needs a stream other than the legacy default stream.
    cudaStream_t stream = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* counter = nullptr;
    FP8SCOPE_CUDA_CHECK(cudaMalloc(&counter, sizeof *counter));
    cuda.memset(counter, 0, sizeof *counter);
    const unsigned long long spin_ns = static_cast<unsigned long long>(spin_us) * 1000;

    for (std::int64_t step = 0; step < eager_steps; ++step) {
        cuda.begin_step();
        enqueue_step_work(cuda, stream, counter, kernels_per_step, spin_ns);
        cuda.stream_synchronize(stream);
        cuda.end_step();
    }
    const std::uint64_t eager_kernels = cuda.kernels();

    cuda.begin_capture(stream);
    enqueue_step_work(cuda, stream, counter, kernels_per_step, spin_ns);
    CapturedGraph captured = cuda.end_capture(stream);
    std::size_t graph_nodes = 0;
    FP8SCOPE_CUDA_CHECK(cudaGraphGetNodes(captured.graph, nullptr, &graph_nodes));
    std::printf("captured graph: %zu nodes, %" PRIu64 " kernel nodes\n", graph_nodes, captured.kernel_nodes);

    for (std::int64_t step = 0; step < steps; ++step) {
        cuda.begin_step();
        cuda.graph_launch(captured, stream);
        cuda.stream_synchronize(stream);
        cuda.end_step();
    }
    const std::uint64_t graph_kernels = cuda.kernels() - eager_kernels;

    unsigned long long executed = 0;
    cuda.memcpy_dtoh_blocking(&executed, counter, sizeof executed);
    const bool verified = executed == cuda.kernels();
    if (!verified) {
        std::fprintf(stderr, "%s: the device counted %llu kernels, the host expected %" PRIu64 "\n", kSample, executed,
            cuda.kernels());
    }
    FP8SCOPE_CUDA_CHECK(cudaGraphExecDestroy(captured.exec));
    FP8SCOPE_CUDA_CHECK(cudaGraphDestroy(captured.graph));
    FP8SCOPE_CUDA_CHECK(cudaFree(counter));
    FP8SCOPE_CUDA_CHECK(cudaStreamDestroy(stream));

    cuda.print_summary();
    std::printf("eager kernels %" PRIu64 ", graph-launched kernels %" PRIu64 "\n", eager_kernels, graph_kernels);
    JsonLine json;
    cuda.write_common(json);
    json.field("eager_steps", eager_steps);
    json.field("graph_steps", steps);
    json.field("graph_nodes", static_cast<std::uint64_t>(graph_nodes));
    json.field("kernels_per_graph", captured.kernel_nodes);
    json.field("eager_kernels", eager_kernels);
    json.field("graph_kernels", graph_kernels);
    json.field("spin_kernel_ns", static_cast<std::uint64_t>(spin_ns));
    json.field("verified", verified);
    json.print_ground_truth();
    return verified ? kExitOk : kExitFailure;
}
