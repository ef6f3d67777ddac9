// fp8scope_block_stats_dumps DIR: the per-block statistics kernel against its CPU twin on operands dumped from real
// jobs (tests/gpu/zoo/dump_block_operands.py writes them; the `recipes` GPU stage runs this). Each DIR/*.block file
// is a header of 8 little-endian int64 (magic 0x6B636F6C62387066, dtype as schema::Dtype, rows, cols, block_rows,
// block_cols, block rows, blocks per row), the rows x cols codes row-major, then the blocks' scale_inv as float32,
// row-major. Prints one line per operand and a summary; exits 0 when every one is equal, 1 otherwise or when DIR holds
// none, 77 without a GPU.
#include "fp8scope/probes/block_stats.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;

namespace {

constexpr int64_t kMagic = 0x6B636F6C62387066;

bool same(const BlockStatsResult& a, const BlockStatsResult& b)
{
    // Every field but `sequence`, bit for bit (NaN scale extrema compare equal as bits too).
    return std::memcmp(&a, &b, offsetof(BlockStatsResult, sequence)) == 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fp8scope_block_stats_dumps DIR\n");
        return 2;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "fp8scope_block_stats_dumps: no CUDA device\n");
        return 77;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1]))
        if (entry.path().extension() == ".block")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    void* scratch = nullptr;
    BlockStatsResult* out = nullptr;
    cudaStream_t stream = nullptr;
    if (cudaMalloc(&scratch, block_stats_scratch_bytes()) != cudaSuccess
        || cudaMemset(scratch, 0, block_stats_scratch_bytes()) != cudaSuccess
        || cudaHostAlloc(reinterpret_cast<void**>(&out), sizeof *out, cudaHostAllocMapped) != cudaSuccess
        || cudaStreamCreate(&stream) != cudaSuccess) {
        std::fprintf(stderr, "fp8scope_block_stats_dumps: CUDA set-up failed\n");
        return 1;
    }
    int equal = 0, differing = 0;
    uint64_t sequence = 0;
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        int64_t h[8] = {};
        in.read(reinterpret_cast<char*>(h), sizeof h);
        const uint64_t codes = in ? uint64_t(h[2]) * uint64_t(h[3]) : 0,
                       scales = in ? uint64_t(h[6]) * uint64_t(h[7]) : 0;
        std::vector<unsigned char> host_codes(codes);
        std::vector<float> host_scales(scales);
        in.read(reinterpret_cast<char*>(host_codes.data()), std::streamsize(codes));
        in.read(reinterpret_cast<char*>(host_scales.data()), std::streamsize(scales * sizeof(float)));
        BlockStatsParams params { host_codes.data(), static_cast<schema::Dtype>(h[1]), h[2], h[3], h[4], h[5],
            host_scales.data(), h[7], 1 };
        if (!in || h[0] != kMagic || check_block_params(params) != nullptr) {
            std::printf("%s: unreadable or invalid (%s)\n", file.filename().c_str(),
                h[0] != kMagic                   ? "bad magic"
                    : check_block_params(params) ? check_block_params(params)
                                                 : "short file");
            ++differing;
            continue;
        }
        const BlockStatsResult want = block_stats_cpu(params);
        unsigned char* device_codes = nullptr;
        float* device_scales = nullptr;
        cudaMalloc(reinterpret_cast<void**>(&device_codes), codes);
        cudaMalloc(reinterpret_cast<void**>(&device_scales), scales * sizeof(float));
        cudaMemcpy(device_codes, host_codes.data(), codes, cudaMemcpyHostToDevice);
        cudaMemcpy(device_scales, host_scales.data(), scales * sizeof(float), cudaMemcpyHostToDevice);
        params.data = device_codes;
        params.scale_inv = device_scales;
        const cudaError_t launched = launch_block_stats(params, scratch, out, ++sequence, stream);
        cudaStreamSynchronize(stream);
        const bool ok
            = launched == cudaSuccess && std::atomic_ref(out->sequence).load() == sequence && same(*out, want);
        (ok ? equal : differing) += 1;
        std::printf("%s: %lld x %lld, blocks %lld x %lld: %s (blocks %llu, p50 %g, p99 %g, max %g, saturating %llu, "
                    "subnormal %llu, scale_inv %g..%g)\n",
            file.filename().c_str(), static_cast<long long>(h[2]), static_cast<long long>(h[3]),
            static_cast<long long>(h[4]), static_cast<long long>(h[5]), ok ? "equal" : "DIFFERENT",
            static_cast<unsigned long long>(want.blocks), want.block_amax_p50, want.block_amax_p99, want.amax,
            static_cast<unsigned long long>(want.saturating_blocks),
            static_cast<unsigned long long>(want.subnormal_blocks), want.scale_inv_min, want.scale_inv_max);
        cudaFree(device_codes);
        cudaFree(device_scales);
    }
    std::printf("dumped operands: %d equal to the twin, %d not\n", equal, differing);
    return equal > 0 && differing == 0 ? 0 : 1;
}
