// Statistics-kernel bandwidth (not a test): for each input dtype and tensor sizes 1 MiB .. 2 GiB, the median time of
// launch_tensor_stats against a plain read-only reduction over the same bytes (readonly_reduction.cu: the practical
// limit for a kernel that reads every byte once) and, for reference, a device-to-device cudaMemcpyAsync; all as
// bytes-read GB/s. Goals (docs/benchmarks.md "Statistics kernel against a read-only reduction"): stats >= 85% of the
// read-only reduction for tensors >= 256 MiB, and <= 5 us of GPU time at 1 MiB (--hold-stream). The small sizes are the
// GEMM operands the collector measures in real jobs (1-64 MB), where the fixed cost of a launch shows. CUDA events time
// every operation; the result goes to mapped pinned host memory, as in the collector. Exit 77 without a CUDA device.
//
//   fp8scope_stats_bandwidth [--max-mb 2048] [--repeats 15] [--out mapped|device] [--no-target] [--hold-stream]
//                            [--csv FILE]
//
// --hold-stream blocks the stream with a 1 ms host function while the timed work is enqueued behind it, so that
// the events time the GPU alone, not the host's launch latency: what a launch costs a busy training stream.
//
// Before the table, the fixed cost in the same timing mode: an empty kernel, and the statistics of an empty tensor
// (one block that reads nothing but still merges, fences and publishes).
//
#include "fp8scope/probes/element_numerics.hpp"
#include "fp8scope/probes/tensor_stats.hpp"
#include "gpu_timing.hpp"
#include "readonly_reduction.hpp"

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;
using fp8scope::bench::hold_stream;
using fp8scope::bench::median;

namespace {

bool check(cudaError_t status, const char* what)
{
    return fp8scope::bench::cuda_ok(status, "fp8scope_stats_bandwidth", what);
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

// The unsigned maximum of the 32-bit words of the first `bytes` of the tensor, which repeats `block`.
unsigned int host_word_max(const std::vector<unsigned char>& block, size_t bytes)
{
    unsigned int m = 0;
    for (size_t i = 0; i + 4 <= std::min(bytes, block.size()); i += 4) {
        unsigned int word;
        std::memcpy(&word, block.data() + i, 4);
        m = std::max(m, word);
    }
    return m;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Tensor-statistics kernel bandwidth against a read-only reduction and a device-to-device copy" };
    size_t max_mb = 2048;
    int repeats = 15;
    std::string out_kind = "mapped";
    std::string csv_path;
    bool no_target = false;
    bool hold = false;
    app.add_option("--max-mb", max_mb, "largest tensor in MiB (sizes 1, 4, 16, 64, 256, 1024, 2048 up to it)");
    app.add_option("--repeats", repeats, "timed runs per size (median reported)")->check(CLI::Range(1, 1000));
    app.add_option("--out", out_kind, "where the result goes")->check(CLI::IsMember({ "mapped", "device" }));
    app.add_option("--csv", csv_path, "also write the table as CSV to this file");
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
    std::ofstream csv;
    if (!csv_path.empty()) {
        csv.open(csv_path);
        if (!csv) {
            std::fprintf(stderr, "fp8scope_stats_bandwidth: cannot write %s\n", csv_path.c_str());
            return 1;
        }
        csv << "dtype,mib,stats_us,stats_gbps,readonly_us,readonly_gbps,ratio_readonly,copy_us,copy_gbps,ratio_copy\n";
    }
    const size_t max_bytes = max_mb << 20;
    unsigned char* source = nullptr;
    unsigned char* copy_target = nullptr;
    unsigned int* device_max = nullptr;
    void* scratch = nullptr;
    StatsResult* out = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (!check(cudaMalloc(reinterpret_cast<void**>(&source), max_bytes), "cudaMalloc source")
        || !check(cudaMalloc(reinterpret_cast<void**>(&copy_target), max_bytes), "cudaMalloc copy target")
        || !check(cudaMalloc(reinterpret_cast<void**>(&device_max), sizeof(unsigned int)), "cudaMalloc max")
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
    // Median time in ms of `enqueue` (3 warm-ups), alone between two events; false on a CUDA error.
    auto time_ms = [&](const std::function<cudaError_t()>& enqueue, const char* what, std::vector<float>& ms_out) {
        float ms = 0;
        if ((hold && !check(cudaLaunchHostFunc(stream, hold_stream, nullptr), "cudaLaunchHostFunc"))
            || !check(cudaEventRecord(start, stream), "cudaEventRecord") || !check(enqueue(), what)
            || !check(cudaEventRecord(stop, stream), "cudaEventRecord")
            || !check(cudaEventSynchronize(stop), "cudaEventSynchronize")
            || !check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
            return false;
        ms_out.push_back(ms);
        return true;
    };
    uint64_t sequence = 0;

    { // The fixed cost: an empty kernel, and an empty bf16 tensor against E4M3 (a launch that reads nothing).
        StatsParams empty;
        empty.dtype = schema::Dtype::BFloat16;
        empty.target = schema::Fp8Format::E4M3;
        empty.scale_kind = ScaleKind::Value;
        empty.scale = 50.0f;
        std::vector<float> empty_ms, stats_ms;
        for (int run = -3; run < repeats; ++run)
            if (!time_ms([&] { return fp8scope::bench::launch_empty_kernel(stream); }, "empty kernel", empty_ms)
                || !time_ms([&] { return launch_tensor_stats(empty, scratch, out, ++sequence, stream); },
                    "launch_tensor_stats", stats_ms))
                return 1;
        empty_ms.erase(empty_ms.begin(), empty_ms.begin() + 3);
        stats_ms.erase(stats_ms.begin(), stats_ms.begin() + 3);
        std::printf("fixed cost: empty kernel %.1f us, statistics of an empty tensor %.1f us\n", median(empty_ms) * 1e3,
            median(stats_ms) * 1e3);
    }

    std::printf("%-5s %6s | %9s %7s | %9s %7s %6s | %9s %7s %6s | %s\n", "dtype", "MiB", "stats us", "GB/s", "read us",
        "GB/s", "ratio", "copy us", "GB/s", "ratio", "goal");
    const DtypeCase dtypes[] = { { "f32", schema::Dtype::Float32, 4 }, { "bf16", schema::Dtype::BFloat16, 2 },
        { "f16", schema::Dtype::Float16, 2 }, { "e4m3", schema::Dtype::E4M3, 1 }, { "e5m2", schema::Dtype::E5M2, 1 } };
    bool bandwidth_met = true;
    bool small_met = true;
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
            int read_blocks = 0;
            if (!check(fp8scope::bench::readonly_reduction_blocks(bytes, read_blocks), "readonly_reduction_blocks")
                || !check(cudaMemset(device_max, 0, sizeof(unsigned int)), "cudaMemset max"))
                return 1;
            std::vector<float> stats_ms, read_ms, copy_ms;
            for (int run = -3; run < repeats; ++run) // 3 warm-up runs; the three operations alternate
                if (!time_ms([&] { return launch_tensor_stats(params, scratch, out, ++sequence, stream); },
                        "launch_tensor_stats", stats_ms)
                    || !time_ms(
                        [&] {
                            return fp8scope::bench::launch_readonly_reduction(
                                source, bytes, device_max, read_blocks, stream);
                        },
                        "read-only reduction", read_ms)
                    || !time_ms(
                        [&] { return cudaMemcpyAsync(copy_target, source, bytes, cudaMemcpyDeviceToDevice, stream); },
                        "copy", copy_ms))
                    return 1;
            for (auto* ms : { &stats_ms, &read_ms, &copy_ms })
                ms->erase(ms->begin(), ms->begin() + 3);
            StatsResult result;
            unsigned int read_max = 0;
            if (!check(cudaMemcpy(&result, out, sizeof result, cudaMemcpyDefault), "reading the result")
                || !check(cudaMemcpy(&read_max, device_max, sizeof read_max, cudaMemcpyDeviceToHost), "reading max"))
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
            if (read_max != host_word_max(block, bytes)) {
                std::fprintf(stderr, "fp8scope_stats_bandwidth: %s %zu MiB: read-only reduction gave %08x, not %08x\n",
                    d.name, mb, read_max, host_word_max(block, bytes));
                return 1;
            }
            const double stats_s = median(stats_ms) * 1e-3, read_s = median(read_ms) * 1e-3,
                         copy_s = median(copy_ms) * 1e-3;
            const double ratio_read = read_s / stats_s; // = stats GB/s over read-only GB/s (same bytes read)
            const double ratio_copy = copy_s / stats_s;
            std::string goal = "-";
            if (mb >= 256) {
                bandwidth_met = bandwidth_met && ratio_read >= 0.85;
                goal = ratio_read >= 0.85 ? "ok" : "BELOW 0.85";
            } else if (mb == 1 && hold) {
                small_met = small_met && stats_s <= 5e-6;
                goal = stats_s <= 5e-6 ? "ok" : "ABOVE 5 us";
            }
            std::printf("%-5s %6zu | %9.1f %7.0f | %9.1f %7.0f %6.2f | %9.1f %7.0f %6.2f | %s\n", d.name, mb,
                stats_s * 1e6, bytes / stats_s * 1e-9, read_s * 1e6, bytes / read_s * 1e-9, ratio_read, copy_s * 1e6,
                bytes / copy_s * 1e-9, ratio_copy, goal.c_str());
            if (csv)
                csv << d.name << ',' << mb << ',' << stats_s * 1e6 << ',' << bytes / stats_s * 1e-9 << ','
                    << read_s * 1e6 << ',' << bytes / read_s * 1e-9 << ',' << ratio_read << ',' << copy_s * 1e6 << ','
                    << bytes / copy_s * 1e-9 << ',' << ratio_copy << '\n';
        }
    }
    std::printf("goal (stats >= 0.85 x read-only reduction for >= 256 MiB): %s\n", bandwidth_met ? "met" : "NOT met");
    if (hold)
        std::printf("goal (stats <= 5 us of GPU time at 1 MiB): %s\n", small_met ? "met" : "NOT met");
    return 0;
}
