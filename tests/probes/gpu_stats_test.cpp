// The statistics kernel on the GPU against the CPU twin: adversarial inputs, every dtype, target and scale kind,
// unaligned data, sizes 1..67 and past 2^31 elements, back-to-back launches on one scratch, mapped host output.
// Label `gpu`; gpu_main.cpp skips the whole binary (exit 77) without a device.
#include "stats_test_support.hpp"

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

using namespace fp8scope;
using namespace fp8scope::probes;
using namespace fp8scope::probes::test;

#define CUDA_REQUIRE(call)                                                                                             \
    do {                                                                                                               \
        const cudaError_t cuda_status_ = (call);                                                                       \
        if (cuda_status_ != cudaSuccess)                                                                               \
            FAIL(#call << ": " << cudaGetErrorString(cuda_status_));                                                   \
    } while (0)

namespace {

template <class T> cudaError_t device_alloc(T** pointer, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void**>(pointer), bytes);
}

// One scratch, outputs and a data buffer for the whole binary, as the collector would hold them.
class Gpu {
public:
    static Gpu& get()
    {
        static Gpu gpu;
        return gpu;
    }

    // The kernel on a device copy of params.data placed `offset_bytes` past a 256-byte boundary; a pointer scale
    // is copied to the device first. `mapped`: the result goes to mapped pinned host memory and is polled.
    StatsResult run(const StatsParams& host, size_t offset_bytes, bool mapped = false)
    {
        const size_t bytes = host.numel * element_bytes(host.dtype);
        reserve(offset_bytes + bytes + 16);
        StatsParams params = host;
        params.data = buffer_ + offset_bytes;
        // Copies on the kernel's stream. A plain cudaMemcpy from pageable memory may return before its last DMA
        // has landed, and a non-blocking stream does not wait for the legacy stream: the kernel then read a few
        // stale elements (the first GPU run's one-off mismatches at 2^20 + 7 elements).
        if (bytes != 0)
            CUDA_REQUIRE(cudaMemcpyAsync(buffer_ + offset_bytes, host.data, bytes, cudaMemcpyHostToDevice, stream_));
        if (host.scale_ptr != nullptr) {
            CUDA_REQUIRE(
                cudaMemcpyAsync(device_scale_, host.scale_ptr, sizeof(float), cudaMemcpyHostToDevice, stream_));
            params.scale_ptr = device_scale_;
        }
        const uint64_t sequence = ++sequence_;
        StatsResult* out = mapped ? mapped_out_ : device_out_;
        CUDA_REQUIRE(launch_tensor_stats(params, scratch_, out, sequence, stream_));
        StatsResult result;
        if (mapped) {
            // What the collector's writer thread does: no stream sync, an acquire load of `sequence`.
            std::atomic_ref<uint64_t> published(mapped_out_->sequence);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (published.load(std::memory_order_acquire) != sequence) {
                REQUIRE(std::chrono::steady_clock::now() < deadline);
                std::this_thread::yield();
            }
            std::memcpy(&result, mapped_out_, sizeof result);
            CUDA_REQUIRE(cudaStreamSynchronize(stream_));
        } else {
            CUDA_REQUIRE(cudaStreamSynchronize(stream_));
            CUDA_REQUIRE(cudaMemcpy(&result, device_out_, sizeof result, cudaMemcpyDeviceToHost));
        }
        REQUIRE(result.sequence == sequence);
        return result;
    }

    void* scratch() const { return scratch_; }
    cudaStream_t stream() const { return stream_; }
    float* device_scale() const { return device_scale_; }
    uint64_t next_sequence() { return ++sequence_; }

private:
    Gpu()
    {
        CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CUDA_REQUIRE(device_alloc(&scratch_, stats_scratch_bytes()));
        CUDA_REQUIRE(cudaMemset(scratch_, 0, stats_scratch_bytes())); // once; every launch leaves it zeroed
        CUDA_REQUIRE(device_alloc(&device_out_, sizeof(StatsResult)));
        CUDA_REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&mapped_out_), sizeof(StatsResult), cudaHostAllocMapped));
        std::memset(static_cast<void*>(mapped_out_), 0, sizeof(StatsResult));
        CUDA_REQUIRE(device_alloc(&device_scale_, sizeof(float)));
    }

    void reserve(size_t bytes)
    {
        if (bytes <= buffer_bytes_)
            return;
        if (buffer_ != nullptr)
            CUDA_REQUIRE(cudaFree(buffer_));
        buffer_bytes_ = std::max(bytes, size_t { 1 } << 20);
        CUDA_REQUIRE(device_alloc(&buffer_, buffer_bytes_));
    }

    cudaStream_t stream_ = nullptr;
    void* scratch_ = nullptr;
    StatsResult* device_out_ = nullptr;
    StatsResult* mapped_out_ = nullptr;
    float* device_scale_ = nullptr;
    unsigned char* buffer_ = nullptr;
    size_t buffer_bytes_ = 0;
    uint64_t sequence_ = 0;
};

struct ScaleCase {
    ScaleKind kind;
    float scale;
    float effective;
};

const schema::Dtype kAllDtypes[] = { schema::Dtype::Float32, schema::Dtype::BFloat16, schema::Dtype::Float16,
    schema::Dtype::E4M3, schema::Dtype::E5M2 };
const schema::Fp8Format kTargets[] = { schema::Fp8Format::None, schema::Fp8Format::E4M3, schema::Fp8Format::E5M2 };

void check_against_twin(const HostTensor& tensor, schema::Fp8Format target, ScaleKind kind, float scale,
    size_t offset_bytes, bool mapped = false)
{
    const float pointed = scale;
    const bool pointer = kind == ScaleKind::DevicePointer || kind == ScaleKind::InvDevicePointer;
    const StatsParams params = params_for(tensor, target, kind, scale, pointer ? &pointed : nullptr);
    const StatsResult twin = tensor_stats_cpu(params);
    const StatsResult gpu = Gpu::get().run(params, offset_bytes, mapped);
    require_same_stats(gpu, twin, describe(params) + ", device offset " + std::to_string(offset_bytes));
}

} // namespace

TEST_CASE("GPU equals twin: adversarial inputs, every dtype, target and scale kind", "[probes][gpu]")
{
    const ScaleCase scales[] = { { ScaleKind::None, 1.0f, 1.0f }, { ScaleKind::Value, 0.37f, 0.37f },
        { ScaleKind::InvValue, 3.0e-3f, 1.0f / 3.0e-3f }, { ScaleKind::Value, 1024.0f, 1024.0f },
        { ScaleKind::DevicePointer, 0x1p-10f, 0x1p-10f }, { ScaleKind::InvDevicePointer, 0.3f, 1.0f / 0.3f } };
    uint32_t seed = 11;
    for (schema::Dtype dtype : kAllDtypes)
        for (schema::Fp8Format target : kTargets)
            for (const ScaleCase& s : scales) {
                const HostTensor tensor(dtype, adversarial_raw(dtype, target, s.effective, seed++, 100000));
                check_against_twin(tensor, target, s.kind, s.scale, 0, seed % 2 == 0);
            }
}

TEST_CASE("GPU equals twin: sizes 1..67 at every element-aligned offset, and multi-block sizes", "[probes][gpu]")
{
    std::mt19937 rng(5);
    for (schema::Dtype dtype : kAllDtypes) {
        std::vector<uint32_t> pool = adversarial_raw(dtype, schema::Fp8Format::E4M3, 0.37f, 3, 2000);
        const size_t step = element_bytes(dtype);
        for (size_t numel = 1; numel <= 67; ++numel) {
            std::shuffle(pool.begin(), pool.end(), rng);
            const HostTensor tensor(dtype, std::vector<uint32_t>(pool.begin(), pool.begin() + numel));
            for (size_t offset = 0; offset < 16; offset += step)
                check_against_twin(tensor, kTargets[(numel + offset) % 3], ScaleKind::Value, 0.37f, offset);
        }
        for (size_t numel : { size_t { 16 * 256 * 4 + 3 }, (size_t { 1 } << 20) + 7, 3 * (size_t { 1 } << 22) + 1 }) {
            std::vector<uint32_t> raw(numel);
            for (size_t i = 0; i < numel; ++i)
                raw[i] = pool[rng() % pool.size()];
            const HostTensor tensor(dtype, raw);
            for (size_t offset : { size_t { 0 }, step })
                check_against_twin(tensor, schema::Fp8Format::E5M2, ScaleKind::InvValue, 0.01f, offset);
        }
    }
}

// Inputs with few Inf, NaN or subnormals, so that most of the kernel's groups take its fast path and, near the
// class boundaries, its class counting: every bf16 and f16 pattern in order, and f32 runs around each boundary.
TEST_CASE("GPU equals twin: every bf16 and f16 value, f32 around every class boundary", "[probes][gpu]")
{
    const ScaleCase scales[] = { { ScaleKind::None, 1.0f, 1.0f }, { ScaleKind::Value, 0.37f, 0.37f },
        { ScaleKind::InvValue, 3.0e-3f, 1.0f / 3.0e-3f }, { ScaleKind::DevicePointer, 0x1p-10f, 0x1p-10f } };
    std::vector<uint32_t> every;
    for (uint32_t raw = 0; raw < 0x10000u; ++raw)
        every.push_back(raw);
    uint32_t seed = 31;
    for (const ScaleCase& s : scales)
        for (schema::Fp8Format target : kTargets) {
            for (schema::Dtype dtype : { schema::Dtype::BFloat16, schema::Dtype::Float16 })
                check_against_twin(HostTensor(dtype, every), target, s.kind, s.scale, 0);
            if (target != schema::Fp8Format::None)
                check_against_twin(
                    HostTensor(schema::Dtype::Float32, f32_around_class_bounds(target, s.effective, seed++)), target,
                    s.kind, s.scale, 4);
        }
}

TEST_CASE("GPU equals twin: an empty tensor still publishes its result", "[probes][gpu]")
{
    StatsParams empty;
    empty.dtype = schema::Dtype::BFloat16;
    empty.target = schema::Fp8Format::E4M3;
    const StatsResult gpu = Gpu::get().run(empty, 0, true);
    require_same_stats(gpu, tensor_stats_cpu(empty), "numel 0");
}

TEST_CASE("GPU: back-to-back launches on one scratch are independent and repeat bit for bit", "[probes][gpu]")
{
    Gpu& gpu = Gpu::get();
    const HostTensor a(
        schema::Dtype::E5M2, adversarial_raw(schema::Dtype::E5M2, schema::Fp8Format::None, 1, 21, 300000));
    const HostTensor b(
        schema::Dtype::BFloat16, adversarial_raw(schema::Dtype::BFloat16, schema::Fp8Format::E4M3, 2.0f, 22, 300000));
    const StatsParams pa = params_for(a, schema::Fp8Format::None, ScaleKind::InvValue, 0.125f);
    const StatsParams pb = params_for(b, schema::Fp8Format::E4M3, ScaleKind::Value, 2.0f);
    void* data_a = nullptr;
    void* data_b = nullptr;
    StatsResult* outs = nullptr;
    CUDA_REQUIRE(device_alloc(&data_a, a.bytes()));
    CUDA_REQUIRE(device_alloc(&data_b, b.bytes()));
    CUDA_REQUIRE(device_alloc(&outs, 3 * sizeof(StatsResult)));
    CUDA_REQUIRE(cudaMemcpyAsync(data_a, a.data(), a.bytes(), cudaMemcpyHostToDevice, gpu.stream()));
    CUDA_REQUIRE(cudaMemcpyAsync(data_b, b.data(), b.bytes(), cudaMemcpyHostToDevice, gpu.stream()));
    StatsParams da = pa, db = pb;
    da.data = data_a;
    db.data = data_b;
    const uint64_t s0 = gpu.next_sequence(), s1 = gpu.next_sequence(), s2 = gpu.next_sequence();
    // No sync between the launches: each must find the scratch zeroed by the one before.
    CUDA_REQUIRE(launch_tensor_stats(da, gpu.scratch(), outs + 0, s0, gpu.stream()));
    CUDA_REQUIRE(launch_tensor_stats(db, gpu.scratch(), outs + 1, s1, gpu.stream()));
    CUDA_REQUIRE(launch_tensor_stats(da, gpu.scratch(), outs + 2, s2, gpu.stream()));
    CUDA_REQUIRE(cudaStreamSynchronize(gpu.stream()));
    StatsResult results[3];
    CUDA_REQUIRE(cudaMemcpy(results, outs, sizeof results, cudaMemcpyDeviceToHost));
    CHECK(results[0].sequence == s0);
    CHECK(results[1].sequence == s1);
    CHECK(results[2].sequence == s2);
    require_same_stats(results[0], tensor_stats_cpu(pa), "first launch");
    require_same_stats(results[1], tensor_stats_cpu(pb), "second launch");
    results[2].sequence = results[0].sequence;
    CHECK(std::memcmp(&results[0], &results[2], sizeof(StatsResult)) == 0); // fixed-order reduction
    CUDA_REQUIRE(cudaFree(data_a));
    CUDA_REQUIRE(cudaFree(data_b));
    CUDA_REQUIRE(cudaFree(outs));
}

TEST_CASE("GPU: a device scale is read when the stream reaches the kernel", "[probes][gpu]")
{
    Gpu& gpu = Gpu::get();
    const HostTensor tensor(schema::Dtype::Float32, { f32_raw(100.0f), f32_raw(300.0f) });
    void* data = nullptr;
    StatsResult* out = nullptr;
    CUDA_REQUIRE(device_alloc(&data, tensor.bytes()));
    CUDA_REQUIRE(device_alloc(&out, sizeof(StatsResult)));
    CUDA_REQUIRE(cudaMemcpyAsync(data, tensor.data(), tensor.bytes(), cudaMemcpyHostToDevice, gpu.stream()));
    static const float two = 2.0f, one = 1.0f;
    StatsParams params = params_for(tensor, schema::Fp8Format::E4M3, ScaleKind::DevicePointer, 0, gpu.device_scale());
    params.data = data;
    CUDA_REQUIRE(cudaMemcpyAsync(gpu.device_scale(), &two, sizeof two, cudaMemcpyHostToDevice, gpu.stream()));
    CUDA_REQUIRE(launch_tensor_stats(params, gpu.scratch(), out, gpu.next_sequence(), gpu.stream()));
    CUDA_REQUIRE(cudaMemcpyAsync(gpu.device_scale(), &one, sizeof one, cudaMemcpyHostToDevice, gpu.stream()));
    CUDA_REQUIRE(cudaStreamSynchronize(gpu.stream()));
    StatsResult result;
    CUDA_REQUIRE(cudaMemcpy(&result, out, sizeof result, cudaMemcpyDeviceToHost));
    CHECK(result.scale == 2.0f);
    CHECK(result.saturated == 1); // 300 * 2 = 600 saturates; 100 * 2 = 200 does not
    CHECK(result.overflows == 1); // |x| > 448 * 0.5
    CUDA_REQUIRE(cudaFree(data));
    CUDA_REQUIRE(cudaFree(out));
}

TEST_CASE(
    "big: GPU equals twin on 2^31 + 5 elements (E4M3 and bf16), data one element off alignment", "[probes][gpu][big]")
{
    const uint64_t numel = (uint64_t { 1 } << 31) + 5;
    for (schema::Dtype dtype : { schema::Dtype::E4M3, schema::Dtype::BFloat16 }) {
        const size_t bytes_per_element = element_bytes(dtype);
        std::vector<uint8_t> bytes(numel * bytes_per_element, 0);
        // Codes/patterns planted around the 2^31 boundary and at both ends.
        const std::pair<uint64_t, uint32_t> planted[]
            = { { 0, 0x01 }, { 1, 0x38 }, { (uint64_t { 1 } << 31) - 1, 0x7F }, { uint64_t { 1 } << 31, 0x7E },
                  { (uint64_t { 1 } << 32) / 3, 0xB5 }, { numel - 1, 0xFE } };
        for (const auto& [index, low] : planted) {
            const uint32_t value = bytes_per_element == 1 ? low : (low << 8) | 0x11u; // bf16: some exponent
            std::memcpy(bytes.data() + index * bytes_per_element, &value, bytes_per_element);
        }
        StatsParams params;
        params.data = bytes.data();
        params.numel = numel;
        params.dtype = dtype;
        params.target = schema::Fp8Format::E4M3;
        params.scale_kind = ScaleKind::InvValue;
        params.scale = 2.0f;
        const StatsResult twin = tensor_stats_cpu(params);
        const StatsResult gpu = Gpu::get().run(params, bytes_per_element);
        require_same_stats(gpu, twin, describe(params));
        CHECK(gpu.zeros == numel - 6);
    }
}
