// fp8scope_block_stats_bandwidth: the per-block statistics kernel (launch_block_stats) against a plain read-only
// reduction over the same bytes (readonly_reduction.cu), per recipe and size; docs/benchmarks.md "Per-block
// statistics bandwidth". Each timed launch is enqueued behind a 1 ms host function, so the events time the GPU only.
// Goal: >= 0.85 of the read-only reduction at >= 256 MiB. Exits 77 without a GPU.
#include "fp8scope/probes/block_stats.hpp"
#include "fp8scope/probes/element_numerics.hpp"
#include "gpu_timing.hpp"
#include "readonly_reduction.hpp"

#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;
using fp8scope::bench::hold_stream;
using fp8scope::bench::median;

namespace {

bool check(cudaError_t status, const char* what)
{
    return fp8scope::bench::cuda_ok(status, "fp8scope_block_stats_bandwidth", what);
}

struct Recipe {
    const char* name;
    int64_t block_rows, block_cols; // block_cols 0: the whole row
};

} // namespace

int main(int argc, char** argv)
{
    CLI::App app { "Per-block statistics kernel bandwidth against a read-only reduction of the same bytes" };
    size_t max_mb = 1024;
    int repeats = 15;
    int64_t cols = 4096;
    app.add_option("--max-mb", max_mb, "largest operand in MiB (sizes 16, 64, 256, 1024, 2048 up to it)");
    app.add_option("--repeats", repeats, "timed runs per size (median reported)")->check(CLI::Range(1, 1000));
    app.add_option("--cols", cols, "contiguous codes per row (a multiple of 128)")->check(CLI::Range(128, 1 << 20));
    bool unscaled = false;
    app.add_flag("--unscaled", unscaled, "codes not scaled per block: most blocks have no code at fp8_max");
    CLI11_PARSE(app, argc, argv);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "fp8scope_block_stats_bandwidth: no CUDA device\n");
        return 77;
    }
    const size_t max_bytes = max_mb << 20;
    const int64_t max_rows = static_cast<int64_t>(max_bytes) / cols;
    // Codes of N(0, 1) quantized per 1x128 block as the recipes do (each block's largest value on fp8_max), repeated;
    // `--unscaled`: the same values cast without block scales, so that most blocks have no code at fp8_max and the
    // kernel reads them twice for their largest code (its slow path). The scales are reused by every recipe.
    std::vector<unsigned char> row_codes(static_cast<size_t>(cols) * 64);
    std::mt19937 rng(5);
    std::normal_distribution<float> normal;
    for (size_t block = 0; block < row_codes.size(); block += 128) {
        float values[128], amax = 0;
        for (float& v : values) {
            v = normal(rng);
            amax = std::max(amax, std::fabs(v));
        }
        for (int i = 0; i < 128; ++i)
            row_codes[block + i] = static_cast<unsigned char>(numerics::round_to_fp8(
                unscaled ? values[i] * 100.0f : values[i] * (448.0f / amax), numerics::Fp8::E4M3));
    }
    std::vector<float> scales(static_cast<size_t>(max_rows * (cols / 128)));
    for (size_t i = 0; i < scales.size(); ++i)
        scales[i] = std::ldexp(1.0f, static_cast<int>(i % 23) - 11);

    cudaStream_t stream = nullptr;
    unsigned char* data = nullptr;
    float* device_scales = nullptr;
    void* scratch = nullptr;
    unsigned int* device_max = nullptr;
    BlockStatsResult* out = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate")
        || !check(cudaMalloc(reinterpret_cast<void**>(&data), max_bytes), "cudaMalloc data")
        || !check(cudaMalloc(reinterpret_cast<void**>(&device_scales), scales.size() * sizeof(float)), "cudaMalloc")
        || !check(cudaMalloc(&scratch, block_stats_scratch_bytes()), "cudaMalloc scratch")
        || !check(cudaMemset(scratch, 0, block_stats_scratch_bytes()), "cudaMemset scratch")
        || !check(cudaMalloc(reinterpret_cast<void**>(&device_max), sizeof(unsigned int)), "cudaMalloc max")
        || !check(cudaHostAlloc(reinterpret_cast<void**>(&out), sizeof *out, cudaHostAllocMapped), "cudaHostAlloc")
        || !check(cudaEventCreate(&start), "cudaEventCreate") || !check(cudaEventCreate(&stop), "cudaEventCreate"))
        return 1;
    for (size_t offset = 0; offset < max_bytes; offset += row_codes.size())
        if (!check(cudaMemcpy(data + offset, row_codes.data(), std::min(row_codes.size(), max_bytes - offset),
                       cudaMemcpyHostToDevice),
                "cudaMemcpy codes"))
            return 1;
    if (!check(cudaMemcpy(device_scales, scales.data(), scales.size() * sizeof(float), cudaMemcpyHostToDevice),
            "cudaMemcpy scales")
        || !check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
        return 1;

    auto time_ms = [&](auto launch, const char* what, std::vector<float>& ms_out) {
        float ms = 0;
        if (!check(cudaLaunchHostFunc(stream, hold_stream, nullptr), "cudaLaunchHostFunc")
            || !check(cudaEventRecord(start, stream), "cudaEventRecord") || !check(launch(), what)
            || !check(cudaEventRecord(stop, stream), "cudaEventRecord")
            || !check(cudaEventSynchronize(stop), "cudaEventSynchronize")
            || !check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime"))
            return false;
        ms_out.push_back(ms);
        return true;
    };
    const Recipe recipes[] = { { "1x128", 1, 128 }, { "128x128", 128, 128 }, { "rowwise", 1, 0 } };
    uint64_t sequence = 0;
    bool met = true;
    std::printf("%-8s %6s | %9s %7s | %9s %7s | %6s | %s\n", "recipe", "MiB", "block us", "GB/s", "read us", "GB/s",
        "ratio", "goal");
    for (const Recipe& recipe : recipes)
        for (size_t mb : { 16, 64, 256, 1024, 2048 }) {
            if (mb > max_mb)
                continue;
            const size_t bytes = mb << 20;
            BlockStatsParams params { data, schema::Dtype::E4M3, static_cast<int64_t>(bytes) / cols, cols,
                recipe.block_rows, recipe.block_cols == 0 ? cols : recipe.block_cols, device_scales, cols / 128, 1 };
            if (recipe.block_cols == 0)
                params.scale_row_stride = 1;
            int read_blocks = 0;
            if (!check(fp8scope::bench::readonly_reduction_blocks(bytes, read_blocks), "readonly_reduction_blocks"))
                return 1;
            std::vector<float> block_ms, read_ms;
            for (int run = -3; run < repeats; ++run)
                if (!time_ms([&] { return launch_block_stats(params, scratch, out, ++sequence, stream); },
                        "launch_block_stats", block_ms)
                    || !time_ms(
                        [&] {
                            return fp8scope::bench::launch_readonly_reduction(
                                data, bytes, device_max, read_blocks, stream);
                        },
                        "read-only reduction", read_ms))
                    return 1;
            block_ms.erase(block_ms.begin(), block_ms.begin() + 3);
            read_ms.erase(read_ms.begin(), read_ms.begin() + 3);
            if (!check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
                return 1;
            uint64_t counted = 0; // blocks by amax octave: every block has a good scale and a nonzero amax here
            for (const uint64_t bin : out->exponent_histogram)
                counted += bin;
            const uint64_t blocks = static_cast<uint64_t>(params.rows + recipe.block_rows - 1) / recipe.block_rows
                * static_cast<uint64_t>((cols + params.block_cols - 1) / params.block_cols);
            if (out->sequence != sequence || out->blocks != blocks || counted != blocks) {
                std::fprintf(stderr, "fp8scope_block_stats_bandwidth: %s %zu MiB: wrong result (%llu of %llu blocks)\n",
                    recipe.name, mb, static_cast<unsigned long long>(counted), static_cast<unsigned long long>(blocks));
                return 1;
            }
            const double block_s = median(block_ms) * 1e-3, read_s = median(read_ms) * 1e-3;
            const double ratio = read_s / block_s;
            std::string goal = "-";
            if (mb >= 256) {
                met = met && ratio >= 0.85;
                goal = ratio >= 0.85 ? "ok" : "BELOW 0.85";
            }
            std::printf("%-8s %6zu | %9.1f %7.0f | %9.1f %7.0f | %6.2f | %s\n", recipe.name, mb, block_s * 1e6,
                bytes / block_s * 1e-9, read_s * 1e6, bytes / read_s * 1e-9, ratio, goal.c_str());
        }
    std::printf("goal (block statistics >= 0.85 x read-only reduction for >= 256 MiB): %s\n", met ? "met" : "NOT met");
    return 0;
}
