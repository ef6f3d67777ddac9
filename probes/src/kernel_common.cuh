// Device pieces shared by the statistics kernels (hp_stats_kernel.cu, tensor_stats_kernel.cu): reading the
// tensor, the lane-private shared histogram, the fixed-order block reduction and the "last block done" ending.
#pragma once

#include "kernel_launch.hpp"

namespace fp8scope::probes::detail {
namespace {

constexpr int kLanes = 32;
constexpr int kWarps = kThreadsPerBlock / kLanes;
constexpr int kUnroll = kVectorsPerGroup; // 16-byte loads in flight per thread: one group
constexpr unsigned kFullMask = 0xFFFFFFFFu;

// How a thread walks the tensor: a scalar head up to the first 16-byte boundary, 16-byte vectors over a grid
// stride, a scalar tail. 64-bit indices throughout.
struct Walk {
    const uint4* vectors;
    uint64_t vector_count;
    uint64_t first; // this thread's first vector
    uint64_t stride; // threads in the grid
};

template <int kBytes> __device__ __forceinline__ Walk make_walk(const KernelArgs& args)
{
    constexpr uint64_t kPerVector = 16 / kBytes;
    const auto* bytes = static_cast<const unsigned char*>(args.data);
    return { reinterpret_cast<const uint4*>(bytes + args.head_elements * kBytes),
        (args.numel - args.head_elements) / kPerVector, uint64_t { blockIdx.x } * blockDim.x + threadIdx.x,
        uint64_t { gridDim.x } * blockDim.x };
}

// Loads the group of vectors first, first + stride, ... (at most kUnroll), all in flight at once, and returns how
// many exist. Predicated rather than a remainder loop: a thread's last group then costs one memory latency, not one
// per vector, which is most of the time of a small tensor.
__device__ __forceinline__ int load_group(const Walk& walk, uint64_t first, uint4 (&group)[kUnroll])
{
    int count = 0;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
        if (first + k * walk.stride < walk.vector_count) {
            group[k] = __ldg(walk.vectors + first + k * walk.stride);
            count = k + 1;
        }
    return count;
}

template <int kBytes> __device__ __forceinline__ uint32_t load_element(const void* data, uint64_t index)
{
    if constexpr (kBytes == 4)
        return __ldg(static_cast<const unsigned int*>(data) + index);
    else if constexpr (kBytes == 2)
        return __ldg(static_cast<const unsigned short*>(data) + index);
    else
        return __ldg(static_cast<const unsigned char*>(data) + index);
}

// The scalar head and tail elements this thread owns (the first threads of block 0: fewer than 16 of each), loaded
// at once; returns how many (0..2).
template <int kBytes> __device__ __forceinline__ int load_edges(const KernelArgs& args, uint32_t (&raw)[2])
{
    constexpr uint64_t kPerVector = 16 / kBytes;
    const uint64_t thread = uint64_t { blockIdx.x } * blockDim.x + threadIdx.x;
    const uint64_t tail_start = args.head_elements + (args.numel - args.head_elements) / kPerVector * kPerVector;
    int count = 0;
    if (thread < args.head_elements)
        raw[count++] = load_element<kBytes>(args.data, thread);
    if (thread < args.numel - tail_start)
        raw[count++] = load_element<kBytes>(args.data, tail_start + thread);
    return count;
}

// Calls f(word) for every 32-bit word of the group's first `count` vectors, in memory order per vector. Fully
// unrolled: a register array indexed by a runtime value would live in local memory.
template <class F> __device__ __forceinline__ void for_each_word(const uint4 (&group)[kUnroll], int count, F&& f)
{
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
        if (k < count) {
            f(group[k].x);
            f(group[k].y);
            f(group[k].z);
            f(group[k].w);
        }
}

// Lane-private histograms (16-byte aligned): bin b's copy for lane l is the word at byte offset b * 128 + l * 4,
// in bank l.
__device__ void clear_lane_histogram(unsigned int* histogram)
{
    for (int i = threadIdx.x; i < 256 * kLanes / 4; i += blockDim.x)
        reinterpret_cast<uint4*>(histogram)[i] = make_uint4(0, 0, 0, 0);
}

// Adds 1 at byte offset `offset` (bin * 128 | lane * 4): written in bytes so that the bin's shift, mask and the
// lane's offset fold into one instruction before the shared atomic.
__device__ __forceinline__ void count_in_lane(unsigned int* histogram, uint32_t offset)
{
    atomicAdd(reinterpret_cast<unsigned int*>(reinterpret_cast<char*>(histogram) + offset), 1u);
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

__device__ model::StatsTotals shuffle_down(const model::StatsTotals& t, int offset)
{
    model::StatsTotals o;
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
__device__ model::StatsTotals block_reduce(model::StatsTotals t)
{
    __shared__ model::StatsTotals warp_totals[kWarps];
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
__device__ model::StatsTotals load_partial(const model::StatsTotals* p)
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

// Result fields first, visible system-wide (out may be mapped host memory); then `sequence`. The ticket's reset
// needs no fence of its own: the next launch on the stream starts after this one has ended.
__device__ void publish(const KernelArgs& args)
{
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        args.scratch->ticket = 0;
        *reinterpret_cast<volatile unsigned long long*>(&args.out->sequence) = args.sequence;
    }
}

} // namespace
} // namespace fp8scope::probes::detail
