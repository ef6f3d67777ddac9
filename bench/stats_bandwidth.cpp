// Statistics-kernel bandwidth (not a test): for each input dtype and tensor sizes 1 MiB .. 2 GiB, the median time of
// launch_tensor_stats against a device-to-device cudaMemcpyAsync of the same bytes, as bytes-read GB/s, and the
// ratio. Goal (spec "Performance goals"): stats >= 80% of the copy for tensors >= 256 MB. The small sizes are the
// GEMM operands the collector measures in real jobs (1-64 MB), where the fixed cost of a launch shows. CUDA events
// time both; the result goes to mapped pinned host memory, as in the collector. Exit 77 without a CUDA device.
//
//   fp8scope_stats_bandwidth [--max-mb 2048] [--repeats 15] [--out mapped|device] [--no-target] [--hold-stream]
//
// --hold-stream blocks the stream with a 1 ms host function while the timed work is enqueued behind it, so that
// the events time the GPU alone, not the host's launch latency: what a launch costs a busy training stream.
//
// A .cpp, not a .cu: it launches no kernel of its own, and the probes' public header needs C++20 (schema.hpp),
// which nvcc is not asked for under CMake 3.25.
#include "fp8scope/probes/element_numerics.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;

namespace {

bool check(cudaError_t status, const char* what)
{
    if (status != cudaSuccess)
        std::fprintf(stderr, "fp8scope_stats_bandwidth: %s: %s\n", what, cudaGetErrorString(status));
    return status == cudaSuccess;
}

struct DtypeCase {
    const char* name;
    schema::Dtype dtype;
    size_t bytes;
};

// 16 MiB of training-like data (repeated to fill the tensor): N(0, 1) times a per-block magnitude, 5% zeros; FP8 inputs
// are those values cast with a scale putting amax near the top of the format, as delayed scaling does.
std::vector<unsigned char> pattern(schema::Dtype dtype, size_t element_bytes)
{
    const size_t count = (size_t { 16 } << 20) / element_bytes;
    std::vector<unsigned char> bytes(count * element_bytes);
    std::mt19937 rng(42);
    std::normal_distribution<float> normal;
    for (size_t i = 0; i < count; ++i) {
        float x = (rng() % 20 == 0) ? 0.0f : normal(rng) * std::ldexp(1.0f, static_cast<int>(i / 4096 % 8) - 4);
        uint32_t bits = numerics::float_bits(x);
        switch (dtype) {
        case schema::Dtype::BFloat16:
            bits >>= 16;
            break;
        case schema::Dtype::Float16: {
            const _Float16 h = static_cast<_Float16>(x);
            uint16_t raw;
            std::memcpy(&raw, &h, sizeof raw);
            bits = raw;
            break;
        }
        case schema::Dtype::E4M3:
            bits = numerics::round_to_fp8(x * 50.0f, numerics::Fp8::E4M3);
            break;
        case schema::Dtype::E5M2:
            bits = numerics::round_to_fp8(x * 5000.0f, numerics::Fp8::E5M2);
            break;
        default:
            break;
        }
        std::memcpy(bytes.data() + i * element_bytes, &bits, element_bytes);
    }
    return bytes;
}

void CUDART_CB hold_stream(void*)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

float median(std::vector<float> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Tensor-statistics kernel bandwidth against a device-to-device copy" };
    size_t max_mb = 2048;
    int repeats = 15;
    std::string out_kind = "mapped";
    bool no_target = false;
    bool hold = false;
    app.add_option("--max-mb", max_mb, "largest tensor in MiB (sizes 1, 4, 16, 64, 256, 1024, 2048 up to it)");
    app.add_option("--repeats", repeats, "timed runs per size (median reported)")->check(CLI::Range(1, 1000));
    app.add_option("--out", out_kind, "where the result goes")->check(CLI::IsMember({ "mapped", "device" }));
    app.add_flag("--no-target", no_target, "measure f32/bf16/f16 without a target format (default: E4M3)");
    app.add_flag("--hold-stream", hold, "enqueue each timed launch behind a 1 ms host function (GPU time only)");
    CLI11_PARSE(app, argc, argv);

    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "fp8scope_stats_bandwidth: no CUDA device\n");
        return 77;
    }
    cudaDeviceProp prop {};
    if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
        return 1;
    const size_t max_bytes = max_mb << 20;
    unsigned char* source = nullptr;
    unsigned char* copy_target = nullptr;
    void* scratch = nullptr;
    StatsResult* out = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (!check(cudaMalloc(reinterpret_cast<void**>(&source), max_bytes), "cudaMalloc source")
        || !check(cudaMalloc(reinterpret_cast<void**>(&copy_target), max_bytes), "cudaMalloc copy target")
        || !check(cudaMalloc(&scratch, stats_scratch_bytes()), "cudaMalloc scratch")
        || !check(cudaMemset(scratch, 0, stats_scratch_bytes()), "cudaMemset scratch")
        || !check(out_kind == "mapped"
                ? cudaHostAlloc(reinterpret_cast<void**>(&out), sizeof(StatsResult), cudaHostAllocMapped)
                : cudaMalloc(reinterpret_cast<void**>(&out), sizeof(StatsResult)),
            "result allocation")
        || !check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")
        || !check(cudaEventCreate(&start), "cudaEventCreate") || !check(cudaEventCreate(&stop), "cudaEventCreate"))
        return 1;

    std::printf("device: %s, %d SMs, CUDA %d.%d; result in %s memory; HP inputs measured %s; %s\n", prop.name,
        prop.multiProcessorCount, prop.major, prop.minor, out_kind.c_str(),
        no_target ? "without a target" : "against E4M3",
        hold ? "stream held while enqueuing (GPU time)" : "launched one at a time (host launch latency included)");
    auto start_timing = [&]() {
        return (!hold || check(cudaLaunchHostFunc(stream, hold_stream, nullptr), "cudaLaunchHostFunc"))
            && check(cudaEventRecord(start, stream), "cudaEventRecord");
    };
    std::printf("%-5s %9s | %10s %9s | %10s %9s | %6s %s\n", "dtype", "MiB", "stats us", "GB/s", "copy us", "GB/s",
        "ratio", "goal");
    const DtypeCase dtypes[] = { { "f32", schema::Dtype::Float32, 4 }, { "bf16", schema::Dtype::BFloat16, 2 },
        { "f16", schema::Dtype::Float16, 2 }, { "e4m3", schema::Dtype::E4M3, 1 }, { "e5m2", schema::Dtype::E5M2, 1 } };
    uint64_t sequence = 0;
    bool all_good = true;
    for (const DtypeCase& d : dtypes) {
        const std::vector<unsigned char> block = pattern(d.dtype, d.bytes);
        for (size_t offset = 0; offset < max_bytes; offset += block.size())
            if (!check(cudaMemcpy(source + offset, block.data(), std::min(block.size(), max_bytes - offset),
                           cudaMemcpyHostToDevice),
                    "cudaMemcpy pattern"))
                return 1;
        // The copies are pageable: wait for their last DMA before the kernel's stream reads the data.
        if (!check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
            return 1;
        for (size_t mb : { 1, 4, 16, 64, 256, 1024, 2048 }) {
            if (mb > max_mb)
                continue;
            const size_t bytes = mb << 20;
            StatsParams params;
            params.data = source;
            params.numel = bytes / d.bytes;
            params.dtype = d.dtype;
            params.target = no_target ? schema::Fp8Format::None : schema::Fp8Format::E4M3;
            params.scale_kind = ScaleKind::Value;
            params.scale = 50.0f;
            std::vector<float> stats_ms, copy_ms;
            for (int run = -3; run < repeats; ++run) { // 3 warm-up runs; stats and copy alternate
                float ms = 0;
                if (!start_timing()
                    || !check(launch_tensor_stats(params, scratch, out, ++sequence, stream), "launch_tensor_stats")
                    || !check(cudaEventRecord(stop, stream), "cudaEventRecord")
                    || !check(cudaEventSynchronize(stop), "cudaEventSynchronize")
                    || !check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
                    return 1;
                if (run >= 0)
                    stats_ms.push_back(ms);
                if (!start_timing()
                    || !check(cudaMemcpyAsync(copy_target, source, bytes, cudaMemcpyDeviceToDevice, stream), "copy")
                    || !check(cudaEventRecord(stop, stream), "cudaEventRecord")
                    || !check(cudaEventSynchronize(stop), "cudaEventSynchronize")
                    || !check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
                    return 1;
                if (run >= 0)
                    copy_ms.push_back(ms);
            }
            StatsResult result;
            if (!check(cudaMemcpy(&result, out, sizeof result, cudaMemcpyDefault), "reading the result"))
                return 1;
            uint64_t counted = result.zeros + result.nans + result.infs;
            for (uint64_t bin : result.exponent_histogram)
                counted += bin;
            if (result.sequence != sequence || counted != params.numel) {
                std::fprintf(stderr,
                    "fp8scope_stats_bandwidth: %s %zu MiB: wrong result (sequence %llu of %llu, %llu "
                    "of %llu elements counted)\n",
                    d.name, mb, static_cast<unsigned long long>(result.sequence),
                    static_cast<unsigned long long>(sequence), static_cast<unsigned long long>(counted),
                    static_cast<unsigned long long>(params.numel));
                return 1;
            }
            const double stats_s = median(stats_ms) * 1e-3, copy_s = median(copy_ms) * 1e-3;
            const double ratio = copy_s / stats_s; // = stats GB/s over copy GB/s (same bytes read)
            const bool goal_applies = mb >= 256;
            all_good = all_good && (!goal_applies || ratio >= 0.8);
            std::printf("%-5s %9zu | %10.1f %9.1f | %10.1f %9.1f | %6.2f %s\n", d.name, mb, stats_s * 1e6,
                bytes / stats_s * 1e-9, copy_s * 1e6, bytes / copy_s * 1e-9, ratio,
                goal_applies ? (ratio >= 0.8 ? "ok" : "BELOW 0.8") : "-");
        }
    }
    std::printf("goal (stats >= 0.8 x copy for >= 256 MiB): %s\n", all_good ? "met" : "NOT met");
    return 0;
}
