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

// Adds the block's 256 bins (summed over the lane copies) to the scratch. A bin's 32 copies are 128 contiguous
// bytes, read as 8 16-byte vectors; thread t starts at vector t % 8, so the 8 threads of a quarter warp (one
// shared-memory wavefront) read 8 different 16-byte bank groups. A block counts at most 2^31 elements, so the sum
// fits 32 bits.
__device__ void flush_lane_histogram(const unsigned int* histogram, Scratch* scratch)
{
    for (int bin = threadIdx.x; bin < 256; bin += blockDim.x) {
        const uint4* copies = reinterpret_cast<const uint4*>(histogram + bin * kLanes);
        unsigned int total = 0;
#pragma unroll
        for (int k = 0; k < kLanes / 4; ++k) {
            const uint4 v = copies[(k + bin) & (kLanes / 4 - 1)];
            total += v.x + v.y + v.z + v.w;
        }
        if (total != 0)
            atomicAdd(&scratch->bins[bin], static_cast<unsigned long long>(total));
    }
}

// A count summed over the warp, exact below 2^42 (a launch sees at most 2^40 elements): two 21-bit halves, one
// `redux.sync` each, whose sums cannot wrap 32 bits. Valid in every lane.
__device__ __forceinline__ uint64_t warp_sum_count(uint64_t v)
{
    const unsigned low = __reduce_add_sync(kFullMask, static_cast<unsigned>(v & 0x1FFFFFu));
    const unsigned high = __reduce_add_sync(kFullMask, static_cast<unsigned>(v >> 21));
    return (uint64_t { high } << 21) + low;
}

// The warp's totals, valid in lane 0: counts and extrema by `redux.sync` (exact in any order), the four double
// sums by a fixed shuffle tree (offsets first_offset, ..., 2, 1), so that they repeat bit for bit.
__device__ model::StatsTotals warp_reduce(model::StatsTotals t, int first_offset)
{
    using Count = uint64_t model::StatsTotals::*;
    constexpr Count kCounts[] = { &model::StatsTotals::zeros, &model::StatsTotals::nans, &model::StatsTotals::infs,
        &model::StatsTotals::overflows, &model::StatsTotals::underflows, &model::StatsTotals::subnormals,
        &model::StatsTotals::saturated };
#pragma unroll
    for (const Count count : kCounts)
        t.*count = warp_sum_count(t.*count);
    t.amax_bits = __reduce_max_sync(kFullMask, t.amax_bits);
    t.min_key = __reduce_min_sync(kFullMask, t.min_key);
    for (int offset = first_offset; offset > 0; offset /= 2) {
        t.sum += __shfl_down_sync(kFullMask, t.sum, offset);
        t.sum_squares += __shfl_down_sync(kFullMask, t.sum_squares, offset);
        t.sum_cubes += __shfl_down_sync(kFullMask, t.sum_cubes, offset);
        t.sum_fourth += __shfl_down_sync(kFullMask, t.sum_fourth, offset);
    }
    return t;
}

// Fixed-order tree over the block; the result is valid in thread 0. Every thread must call it.
__device__ model::StatsTotals block_reduce(model::StatsTotals t)
{
    static_assert(kWarps <= kLanes && (kWarps & (kWarps - 1)) == 0);
    __shared__ model::StatsTotals warp_totals[kWarps];
    t = warp_reduce(t, kLanes / 2);
    __syncthreads(); // warp_totals may still be read by an earlier call
    if (threadIdx.x % kLanes == 0)
        warp_totals[threadIdx.x / kLanes] = t;
    __syncthreads();
    if (threadIdx.x < kLanes) // lanes past the warps add nothing: the tree starts at kWarps / 2
        t = warp_reduce(threadIdx.x < kWarps ? warp_totals[threadIdx.x] : model::empty_totals(), kWarps / 2);
    return t;
}

// Another block's partial: read from L2 (ld.cg), never from a possibly stale L1 line; 6 16-byte loads (the partials
// start 16-byte aligned in the scratch).
__device__ model::StatsTotals load_partial(const model::StatsTotals* p)
{
    static_assert(sizeof(model::StatsTotals) % 16 == 0 && offsetof(Scratch, partials) % 16 == 0);
    union {
        uint4 words[sizeof(model::StatsTotals) / 16];
        model::StatsTotals totals;
    } u;
#pragma unroll
    for (int k = 0; k < static_cast<int>(sizeof(model::StatsTotals) / 16); ++k)
        u.words[k] = __ldcg(reinterpret_cast<const uint4*>(p) + k);
    return u.totals;
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
