// The FP8 statistics kernel, and the launch of either kernel (the high-precision one is hp_stats_kernel.cu).
//
// FP8 inputs are counted by code only: each thread reads groups of 4 16-byte vectors (kernel_common.cuh) and adds
// every byte to a shared-memory histogram with one private copy per warp lane (address code * 32 + lane is in bank
// `lane`, so a warp's 32 atomics never conflict however clustered the codes are). 256 counts determine every
// statistic (stats_model.hpp); the last block derives them, one code per thread.
//
// At the end each block adds its histogram to the scratch with global atomics and takes a ticket. The block that
// takes the last ticket ("last block done", as in the CUDA threadFenceReduction sample) reduces in a fixed order
// (so results repeat run to run), writes the result, zeroes the scratch for the next launch, and writes `sequence`
// last.
#include "kernel_common.cuh"

namespace fp8scope::probes::detail {
namespace {

using model::StatsTotals;
using numerics::ElementType;
using numerics::Fp8;

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
    __shared__ __align__(16) unsigned int histogram[256 * kLanes]; // cleared with 16-byte stores
    // The first loads go out before the histogram is cleared, which then hides under their latency.
    const Walk walk = make_walk<1>(args);
    uint64_t first = walk.first;
    uint4 group[kUnroll];
    int count = load_group(walk, first, group);
    uint32_t edges[2];
    const int edge_count = load_edges<1>(args, edges);
    clear_lane_histogram(histogram);
    __syncthreads();

    const uint32_t lane_bytes = threadIdx.x % kLanes * 4;
#pragma unroll
    for (int e = 0; e < 2; ++e) // unrolled: edges[] stays in registers
        if (e < edge_count)
            count_in_lane(histogram, edges[e] * 128 | lane_bytes);
    while (count > 0) {
        for_each_word(group, count, [&](uint32_t word) { // code * 128: byte b of the word shifted to bits 7..14
            count_in_lane(histogram, ((word << 7) & 0x7F80u) | lane_bytes);
            count_in_lane(histogram, ((word >> 1) & 0x7F80u) | lane_bytes);
            count_in_lane(histogram, ((word >> 9) & 0x7F80u) | lane_bytes);
            count_in_lane(histogram, ((word >> 17) & 0x7F80u) | lane_bytes);
        });
        first += kUnroll * walk.stride;
        count = load_group(walk, first, group);
    }
    __syncthreads();
    flush_lane_histogram(histogram, args.scratch);
    if (arrive_last(args.scratch))
        finalize_fp8(args);
}

} // namespace

cudaError_t launch_stats_kernel(const KernelArgs& args, int blocks, cudaStream_t stream)
{
    const void* kernel = numerics::is_fp8(args.type) ? reinterpret_cast<const void*>(&fp8_stats_kernel)
                                                     : hp_stats_kernel_for(args.type, args.target != Fp8::None);
    KernelArgs copy = args;
    void* params[] = { &copy };
    return cudaLaunchKernel(kernel, dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock), params, 0, stream);
}

} // namespace fp8scope::probes::detail
