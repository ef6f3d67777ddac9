// The per-block statistics kernel on the GPU against its CPU twin: 1x128, 128x128 and rowwise blocks of realistic
// per-block-scaled codes, every code and bad scales, partial edge blocks, scales in either layout, E4M3 and E5M2,
// back-to-back launches on one scratch, results polled from mapped host memory as the collector does. Label `gpu`.
#include "fp8scope/probes/block_stats.hpp"
#include "fp8scope/probes/element_numerics.hpp"

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace fp8scope;
using namespace fp8scope::probes;

#define CUDA_REQUIRE(call)                                                                                             \
    do {                                                                                                               \
        const cudaError_t cuda_status_ = (call);                                                                       \
        if (cuda_status_ != cudaSuccess)                                                                               \
            FAIL(#call << ": " << cudaGetErrorString(cuda_status_));                                                   \
    } while (0)

namespace {

uint32_t bits_of(float x)
{
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

void require_same(const BlockStatsResult& got, const BlockStatsResult& want, const std::string& context)
{
    INFO(context);
    CHECK(bits_of(got.amax) == bits_of(want.amax));
    CHECK(bits_of(got.block_amax_min) == bits_of(want.block_amax_min));
    CHECK(bits_of(got.block_amax_p50) == bits_of(want.block_amax_p50));
    CHECK(bits_of(got.block_amax_p99) == bits_of(want.block_amax_p99));
    CHECK((std::isnan(got.scale_inv_min) ? std::isnan(want.scale_inv_min) : got.scale_inv_min == want.scale_inv_min));
    CHECK((std::isnan(got.scale_inv_max) ? std::isnan(want.scale_inv_max) : got.scale_inv_max == want.scale_inv_max));
    CHECK(got.numel == want.numel);
    CHECK(got.blocks == want.blocks);
    CHECK(got.bad_scale_blocks == want.bad_scale_blocks);
    CHECK(got.saturating_blocks == want.saturating_blocks);
    CHECK(got.subnormal_blocks == want.subnormal_blocks);
    CHECK(got.zeros == want.zeros);
    CHECK(got.nans == want.nans);
    CHECK(got.infs == want.infs);
    CHECK(got.subnormals == want.subnormals);
    CHECK(got.saturated == want.saturated);
    int differing = 0;
    for (int b = 0; b < kHistogramBins; ++b)
        differing += got.exponent_histogram[b] != want.exponent_histogram[b];
    CHECK(differing == 0);
}

// A host operand: codes and its scales, quantized per block from random values as a recipe would (scale_inv =
// block amax / fp8_max), or given directly.
struct HostOperand {
    std::vector<unsigned char> codes;
    std::vector<float> scales;
    BlockStatsParams params;
};

// rows x cols of N(0, 1) * 2^(row % 9 - 4), one channel in 64 grown 100x, quantized per block_rows x block_cols with
// scales stored row-major (`transposed`: column-major, as torch's 1x128 scales are laid out).
HostOperand quantized(schema::Dtype dtype, int64_t rows, int64_t cols, int64_t block_rows, int64_t block_cols,
    bool transposed, uint32_t seed)
{
    const numerics::Fp8 format = dtype == schema::Dtype::E5M2 ? numerics::Fp8::E5M2 : numerics::Fp8::E4M3;
    const float fp8_max = numerics::fp8_spec(format).max_value;
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<float> values(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            values[r * cols + c]
                = normal(rng) * std::ldexp(1.0f, static_cast<int>(r % 9) - 4) * (c % 64 == 5 ? 100 : 1);
    const int64_t bc = std::min(block_cols, cols);
    const int64_t block_row_count = (rows + block_rows - 1) / block_rows, per_row = (cols + bc - 1) / bc;
    HostOperand op;
    op.scales.assign(static_cast<size_t>(block_row_count * per_row), 0.0f);
    const int64_t row_stride = transposed ? 1 : per_row, col_stride = transposed ? block_row_count : 1;
    op.codes.resize(values.size());
    for (int64_t i = 0; i < block_row_count; ++i)
        for (int64_t j = 0; j < per_row; ++j) {
            float amax = 0;
            for (int64_t r = i * block_rows; r < std::min(rows, (i + 1) * block_rows); ++r)
                for (int64_t c = j * bc; c < std::min(cols, (j + 1) * bc); ++c)
                    amax = std::max(amax, std::fabs(values[r * cols + c]));
            const float scale_inv = amax > 0 ? amax / fp8_max : 1.0f;
            op.scales[i * row_stride + j * col_stride] = scale_inv;
            for (int64_t r = i * block_rows; r < std::min(rows, (i + 1) * block_rows); ++r)
                for (int64_t c = j * bc; c < std::min(cols, (j + 1) * bc); ++c)
                    op.codes[r * cols + c]
                        = static_cast<unsigned char>(numerics::round_to_fp8(values[r * cols + c] / scale_inv, format));
        }
    op.params = { nullptr, dtype, rows, cols, block_rows, block_cols, nullptr, row_stride, col_stride };
    return op;
}

class Gpu {
public:
    Gpu()
    {
        cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
        cudaMalloc(&scratch_, block_stats_scratch_bytes());
        cudaMemset(scratch_, 0, block_stats_scratch_bytes());
        cudaHostAlloc(reinterpret_cast<void**>(&out_), sizeof *out_, cudaHostAllocMapped);
        std::memset(out_, 0, sizeof *out_);
    }

    BlockStatsResult run(const HostOperand& op)
    {
        reserve(op.codes.size(), op.scales.size());
        CUDA_REQUIRE(cudaMemcpyAsync(data_, op.codes.data(), op.codes.size(), cudaMemcpyHostToDevice, stream_));
        CUDA_REQUIRE(cudaMemcpyAsync(
            scales_, op.scales.data(), op.scales.size() * sizeof(float), cudaMemcpyHostToDevice, stream_));
        BlockStatsParams params = op.params;
        params.data = data_;
        params.scale_inv = scales_;
        const uint64_t sequence = ++sequence_;
        CUDA_REQUIRE(launch_block_stats(params, scratch_, out_, sequence, stream_));
        std::atomic_ref<uint64_t> published(out_->sequence);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (published.load(std::memory_order_acquire) != sequence) {
            REQUIRE(std::chrono::steady_clock::now() < deadline);
            std::this_thread::yield();
        }
        BlockStatsResult result;
        std::memcpy(&result, out_, sizeof result);
        CUDA_REQUIRE(cudaStreamSynchronize(stream_));
        return result;
    }

    void check(HostOperand op, const std::string& context)
    {
        const BlockStatsResult got = run(op);
        op.params.data = op.codes.data();
        op.params.scale_inv = op.scales.data();
        require_same(got, block_stats_cpu(op.params), context);
    }

private:
    void reserve(size_t bytes, size_t scales)
    {
        if (bytes > data_bytes_) {
            cudaFree(data_);
            CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&data_), bytes));
            data_bytes_ = bytes;
        }
        if (scales > scale_count_) {
            cudaFree(scales_);
            CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&scales_), scales * sizeof(float)));
            scale_count_ = scales;
        }
    }

    cudaStream_t stream_ = nullptr;
    void* scratch_ = nullptr;
    BlockStatsResult* out_ = nullptr;
    unsigned char* data_ = nullptr;
    float* scales_ = nullptr;
    size_t data_bytes_ = 0, scale_count_ = 0;
    uint64_t sequence_ = 0;
};

Gpu& gpu()
{
    static Gpu instance;
    return instance;
}

} // namespace

TEST_CASE("block kernel equals the twin on per-block-scaled codes", "[gpu][blocks]")
{
    struct Shape {
        int64_t rows, cols, block_rows, block_cols;
        bool transposed;
    };
    const Shape shapes[] = {
        { 512, 1024, 1, 128, true }, // 1x128 activations, scales M-major as torch lays them out
        { 1000, 4096, 1, 128, false }, { 37, 1040, 1, 128, true }, // a partial last block per row (1040 = 8 * 128 + 16)
        { 1536, 1024, 128, 128, false }, // 128x128 weights
        { 300, 1040, 128, 128, true }, // partial in both directions
        { 512, 4096, 1, 4096, false }, // one scale per row
        { 64, 8192, 1, 1 << 30, false }, // rows of 512 chunks: 16 loads per lane
        { 999, 48, 1, 48, false }, // groups of 4 lanes
        { 333, 16, 1, 16, true }, // one chunk per segment
        { 256, 256, 1, 32, false }, // MX-sized blocks along a row
    };
    uint32_t seed = 1;
    for (const auto dtype : { schema::Dtype::E4M3, schema::Dtype::E5M2 })
        for (const Shape& s : shapes) {
            const std::string context = std::string(dtype == schema::Dtype::E4M3 ? "e4m3 " : "e5m2 ")
                + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " blocks " + std::to_string(s.block_rows)
                + "x" + std::to_string(s.block_cols) + (s.transposed ? " (scales column-major)" : "");
            gpu().check(quantized(dtype, s.rows, s.cols, s.block_rows, s.block_cols, s.transposed, seed++), context);
        }
}

TEST_CASE("block kernel equals the twin on every code and on bad scales", "[gpu][blocks]")
{
    std::mt19937 rng(7);
    for (const auto dtype : { schema::Dtype::E4M3, schema::Dtype::E5M2 })
        for (const int64_t block_rows : { 1, 128 }) {
            HostOperand op = quantized(dtype, 384, 2048, block_rows, 128, false, 11);
            for (size_t i = 0; i < op.codes.size(); i += 3) // every code, scattered
                op.codes[i] = static_cast<unsigned char>(rng());
            const float specials[] = { 0.0f, -1.0f, std::nanf(""), INFINITY, 1e-40f, 1e30f, 0x1p-149f };
            for (size_t k = 0; k < std::size(specials); ++k)
                op.scales[(k * 5) % op.scales.size()] = specials[k];
            gpu().check(op, std::string("every code, bad scales, block rows ") + std::to_string(block_rows));
        }
    SECTION("every scale bad")
    {
        HostOperand op = quantized(schema::Dtype::E4M3, 16, 256, 1, 128, false, 3);
        for (float& s : op.scales)
            s = 0.0f;
        gpu().check(op, "no good block");
    }
}

TEST_CASE("block kernel: a large operand and back-to-back launches on one scratch", "[gpu][blocks]")
{
    HostOperand big = quantized(schema::Dtype::E4M3, 8192, 8192, 1, 128, true, 21); // 64 MiB, 524,288 blocks
    HostOperand tall = quantized(schema::Dtype::E4M3, 4096, 2048, 128, 128, false, 22);
    HostOperand rows = quantized(schema::Dtype::E5M2, 2048, 1024, 1, 1024, false, 23);
    for (int round = 0; round < 2; ++round) {
        gpu().check(big, "8192 x 8192, 1x128, round " + std::to_string(round));
        gpu().check(tall, "4096 x 2048, 128x128, round " + std::to_string(round));
        gpu().check(rows, "2048 x 1024 rowwise e5m2, round " + std::to_string(round));
    }
}

TEST_CASE("block kernel: invalid arguments launch nothing", "[gpu][blocks]")
{
    alignas(16) static unsigned char codes[64] = {};
    static const float scale = 1.0f;
    BlockStatsParams params { codes, schema::Dtype::E4M3, 2, 30, 1, 16, &scale, 0, 0 }; // 30 columns
    BlockStatsResult* out = nullptr;
    CUDA_REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&out), sizeof *out, cudaHostAllocMapped));
    CHECK(launch_block_stats(params, nullptr, out, 1, nullptr) == cudaErrorInvalidValue);
    CHECK(cudaPeekAtLastError() == cudaSuccess);
    cudaFreeHost(out);
}
