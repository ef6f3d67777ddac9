// The statistics kernels: one pass over the tensor, one launch, no allocation and no host-device sync.
//
// Each thread streams 16-byte vectors (a scalar head and tail handle unaligned starts and sizes) and counts every
// element into a shared-memory histogram with one private copy per warp lane: address bin * 32 + lane is in bank
// `lane`, so a warp's 32 atomics never conflict however clustered the values are. High-precision inputs are
// counted by fp32 exponent field and accumulate amax, min, the target classes and double moments in registers;
// FP8 inputs are counted by code only, because a code determines everything else (stats_model.hpp).
//
// At the end each block adds its histogram to the scratch with global atomics, stores its totals in its own
// partial slot, and takes a ticket. The block that takes the last ticket ("last block done", as in the CUDA
// threadFenceReduction sample) reduces the partials in a fixed order (so results repeat run to run), writes the
// result, zeroes the scratch for the next launch, and writes `sequence` last.
#include "kernel_launch.hpp"

namespace fp8scope::probes::detail {
namespace {

using model::StatsTotals;
using numerics::ElementType;
using numerics::Fp8;

constexpr int kLanes = 32;
constexpr int kWarps = kThreadsPerBlock / kLanes;
constexpr int kUnroll = 4; // 16-byte loads in flight per thread
constexpr int kExtraBins = model::kScratchBins - model::kSubnormalBin0;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

template <ElementType kType>
constexpr int kElementBytes = kType == ElementType::F32 ? 4 : (numerics::is_fp8(kType) ? 1 : 2);

template <int kBytes> __device__ __forceinline__ uint32_t load_element(const unsigned char* bytes, uint64_t index)
{
    if constexpr (kBytes == 4)
        return __ldg(reinterpret_cast<const unsigned int*>(bytes) + index);
    else if constexpr (kBytes == 2)
        return __ldg(reinterpret_cast<const unsigned short*>(bytes) + index);
    else
        return __ldg(bytes + index);
}

template <int kBytes, class Visit> __device__ __forceinline__ void visit_vector(const uint4& vector, Visit& visit)
{
    constexpr uint32_t kMask = kBytes == 4 ? 0xFFFFFFFFu : (1u << (8 * kBytes)) - 1u;
    const uint32_t words[4] = { vector.x, vector.y, vector.z, vector.w };
#pragma unroll
    for (int w = 0; w < 4; ++w)
#pragma unroll
        for (int k = 0; k < 4 / kBytes; ++k) // little-endian: the lowest bytes hold the first element
            visit((words[w] >> (8 * kBytes * k)) & kMask);
}

// Calls visit(raw bits) once for every element of the tensor, spread over the grid, 64-bit indices throughout.
template <int kBytes, class Visit>
__device__ __forceinline__ void for_each_element(const KernelArgs& args, Visit& visit)
{
    constexpr uint64_t kPerVector = 16 / kBytes;
    const auto* bytes = static_cast<const unsigned char*>(args.data);
    const uint64_t head = args.head_elements;
    const uint64_t vectors = (args.numel - head) / kPerVector;
    const uint64_t tail_start = head + vectors * kPerVector;
    const uint64_t thread = uint64_t { blockIdx.x } * blockDim.x + threadIdx.x;
    const uint64_t stride = uint64_t { gridDim.x } * blockDim.x;
    if (thread < head) // fewer than 16 elements each: the first threads of block 0
        visit(load_element<kBytes>(bytes, thread));
    if (thread < args.numel - tail_start)
        visit(load_element<kBytes>(bytes, tail_start + thread));
    const uint4* vector = reinterpret_cast<const uint4*>(bytes + head * kBytes);
    uint64_t i = thread;
    for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
        uint4 loaded[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            loaded[k] = __ldg(vector + i + k * stride);
#pragma unroll
        for (int k = 0; k < kUnroll; ++k)
            visit_vector<kBytes>(loaded[k], visit);
    }
    for (; i < vectors; i += stride)
        visit_vector<kBytes>(__ldg(vector + i), visit);
}

__device__ void clear_lane_histogram(unsigned int* histogram)
{
    for (int i = threadIdx.x; i < 256 * kLanes; i += blockDim.x)
        histogram[i] = 0;
}

// Adds the block's 256 bins (summed over the lane copies) to the scratch. Thread t starts at copy t % 32, so a
// warp's reads fall in 32 different banks.
__device__ void flush_lane_histogram(const unsigned int* histogram, Scratch* scratch)
{
    for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
        unsigned long long total = 0;
#pragma unroll 8
        for (int k = 0; k < kLanes; ++k)
            total += histogram[bin * kLanes + ((k + bin) & (kLanes - 1))];
        if (total != 0)
            atomicAdd(&scratch->bins[bin], total);
    }
}

__device__ StatsTotals shuffle_down(const StatsTotals& t, int offset)
{
    StatsTotals o;
    o.zeros = __shfl_down_sync(kFullMask, t.zeros, offset);
    o.nans = __shfl_down_sync(kFullMask, t.nans, offset);
    o.infs = __shfl_down_sync(kFullMask, t.infs, offset);
    o.overflows = __shfl_down_sync(kFullMask, t.overflows, offset);
    o.underflows = __shfl_down_sync(kFullMask, t.underflows, offset);
    o.subnormals = __shfl_down_sync(kFullMask, t.subnormals, offset);
    o.saturated = __shfl_down_sync(kFullMask, t.saturated, offset);
    o.amax_bits = __shfl_down_sync(kFullMask, t.amax_bits, offset);
    o.min_key = __shfl_down_sync(kFullMask, t.min_key, offset);
    o.sum = __shfl_down_sync(kFullMask, t.sum, offset);
    o.sum_squares = __shfl_down_sync(kFullMask, t.sum_squares, offset);
    o.sum_cubes = __shfl_down_sync(kFullMask, t.sum_cubes, offset);
    o.sum_fourth = __shfl_down_sync(kFullMask, t.sum_fourth, offset);
    return o;
}

// Fixed-order tree over the block; the result is valid in thread 0. Every thread must call it.
__device__ StatsTotals block_reduce(StatsTotals t)
{
    __shared__ StatsTotals warp_totals[kWarps];
    for (int offset = kLanes / 2; offset > 0; offset /= 2)
        model::merge(t, shuffle_down(t, offset));
    __syncthreads(); // warp_totals may still be read by an earlier call
    if (threadIdx.x % kLanes == 0)
        warp_totals[threadIdx.x / kLanes] = t;
    __syncthreads();
    if (threadIdx.x < kLanes) {
        t = threadIdx.x < kWarps ? warp_totals[threadIdx.x] : model::empty_totals();
        for (int offset = kLanes / 2; offset > 0; offset /= 2)
            model::merge(t, shuffle_down(t, offset));
    }
    return t;
}

// Another block's partial: read from L2 (ld.cg), never from a possibly stale L1 line.
__device__ StatsTotals load_partial(const StatsTotals* p)
{
    return { __ldcg(&p->zeros), __ldcg(&p->nans), __ldcg(&p->infs), __ldcg(&p->overflows), __ldcg(&p->underflows),
        __ldcg(&p->subnormals), __ldcg(&p->saturated), __ldcg(&p->amax_bits), __ldcg(&p->min_key), __ldcg(&p->sum),
        __ldcg(&p->sum_squares), __ldcg(&p->sum_cubes), __ldcg(&p->sum_fourth) };
}

// Every thread fences its own scratch writes before thread 0 takes the ticket; true in the last block only.
__device__ bool arrive_last(Scratch* scratch)
{
    __shared__ bool is_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        is_last = atomicAdd(&scratch->ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (is_last)
        __threadfence(); // the other blocks' writes, fenced before their tickets, are visible from here
    return is_last;
}

// Result fields first, visible system-wide (out may be mapped host memory); then `sequence`.
__device__ void publish(const KernelArgs& args)
{
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        args.scratch->ticket = 0;
        __threadfence_system();
        *reinterpret_cast<volatile unsigned long long*>(&args.out->sequence) = args.sequence;
    }
}

__device__ void finalize_hp(const KernelArgs& args, model::ResolvedScale scale)
{
    __shared__ unsigned long long bins[model::kScratchBins];
    Scratch* scratch = args.scratch;
    for (int b = threadIdx.x; b < model::kScratchBins; b += blockDim.x) {
        bins[b] = __ldcg(&scratch->bins[b]);
        scratch->bins[b] = 0;
    }
    __syncthreads();
    StatsTotals t = model::empty_totals();
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
        model::merge(t, load_partial(&scratch->partials[k]));
    if (args.target == Fp8::None) // the input type's own subnormals: the histogram bins below its normal range
        for (int h = threadIdx.x; h < model::own_min_normal_bin(args.type); h += blockDim.x)
            t.subnormals += model::hp_histogram_count(bins, h);
    for (int h = threadIdx.x; h < kHistogramBins; h += blockDim.x)
        args.out->exponent_histogram[h] = model::hp_histogram_count(bins, h);
    t = block_reduce(t);
    if (threadIdx.x == 0) {
        model::hp_special_counts(bins, t);
        model::write_scalars(args.out, t, scale, args.numel);
    }
    publish(args);
}

template <ElementType kType, bool kTarget>
__global__ void __launch_bounds__(kThreadsPerBlock, kBlocksPerSm) hp_stats_kernel(const KernelArgs args)
{
    __shared__ unsigned int histogram[256 * kLanes];
    __shared__ unsigned int extra[kExtraBins];
    clear_lane_histogram(histogram);
    if (threadIdx.x < kExtraBins)
        extra[threadIdx.x] = 0;
    const model::ResolvedScale scale = model::resolve_scale(args.scale_kind, args.scale, args.scale_pointer);
    model::TargetThresholds thresholds {};
    if constexpr (kTarget)
        thresholds = model::target_thresholds(args.target, scale);
    __syncthreads();

    unsigned int* lane_histogram = histogram + threadIdx.x % kLanes;
    model::HpThreadAcc acc;
    auto count_extra = [&](int bin) { atomicAdd(&extra[bin - model::kSubnormalBin0], 1u); };
    auto visit = [&](uint32_t raw) {
        uint32_t bits = raw;
        if constexpr (kType == ElementType::BF16)
            bits = numerics::bf16_to_f32_bits(raw);
        else if constexpr (kType == ElementType::F16)
            bits = numerics::f16_to_f32_bits(raw);
        const uint32_t bin = model::hp_accumulate<kTarget>(bits, thresholds, acc, count_extra);
        atomicAdd(&lane_histogram[bin * kLanes], 1u);
    };
    for_each_element<kElementBytes<kType>>(args, visit);
    __syncthreads();

    flush_lane_histogram(histogram, args.scratch);
    if (threadIdx.x < kExtraBins && extra[threadIdx.x] != 0)
        atomicAdd(&args.scratch->bins[model::kSubnormalBin0 + threadIdx.x], extra[threadIdx.x]);
    const StatsTotals block = block_reduce(model::totals_of(acc));
    if (threadIdx.x == 0)
        args.scratch->partials[blockIdx.x] = block;
    if (arrive_last(args.scratch))
        finalize_hp(args, scale);
}

__device__ void finalize_fp8(const KernelArgs& args)
{
    __shared__ unsigned long long histogram[kHistogramBins];
    Scratch* scratch = args.scratch;
    const Fp8 format = numerics::fp8_format_of(args.type);
    const model::ResolvedScale scale = model::resolve_scale(args.scale_kind, args.scale, args.scale_pointer);
    for (int h = threadIdx.x; h < kHistogramBins; h += blockDim.x)
        histogram[h] = 0;
    __syncthreads();
    StatsTotals t = model::empty_totals();
    for (int code = threadIdx.x; code < 256; code += blockDim.x) {
        const unsigned long long count = __ldcg(&scratch->bins[code]);
        scratch->bins[code] = 0;
        int bin;
        model::merge(t, model::fp8_code_totals(code, count, format, scale.scale_inv, bin));
        if (bin >= 0)
            atomicAdd(&histogram[bin], count);
    }
    t = block_reduce(t); // its barriers also complete the histogram
    for (int h = threadIdx.x; h < kHistogramBins; h += blockDim.x)
        args.out->exponent_histogram[h] = histogram[h];
    if (threadIdx.x == 0)
        model::write_scalars(args.out, t, scale, args.numel);
    publish(args);
}

__global__ void __launch_bounds__(kThreadsPerBlock, kBlocksPerSm) fp8_stats_kernel(const KernelArgs args)
{
    __shared__ unsigned int histogram[256 * kLanes];
    clear_lane_histogram(histogram);
    __syncthreads();
    unsigned int* lane_histogram = histogram + threadIdx.x % kLanes;
    auto visit = [&](uint32_t code) { atomicAdd(&lane_histogram[code * kLanes], 1u); };
    for_each_element<1>(args, visit);
    __syncthreads();
    flush_lane_histogram(histogram, args.scratch);
    if (arrive_last(args.scratch))
        finalize_fp8(args);
}

template <ElementType kType> const void* hp_kernel(bool target)
{
    return target ? reinterpret_cast<const void*>(&hp_stats_kernel<kType, true>)
                  : reinterpret_cast<const void*>(&hp_stats_kernel<kType, false>);
}

} // namespace

cudaError_t launch_stats_kernel(const KernelArgs& args, int blocks, cudaStream_t stream)
{
    const bool target = args.target != Fp8::None;
    const void* kernel = reinterpret_cast<const void*>(&fp8_stats_kernel);
    switch (args.type) {
    case ElementType::F32:
        kernel = hp_kernel<ElementType::F32>(target);
        break;
    case ElementType::BF16:
        kernel = hp_kernel<ElementType::BF16>(target);
        break;
    case ElementType::F16:
        kernel = hp_kernel<ElementType::F16>(target);
        break;
    default:
        break;
    }
    KernelArgs copy = args;
    void* params[] = { &copy };
    return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock), params, 0, stream);
}

} // namespace fp8scope::probes::detail
