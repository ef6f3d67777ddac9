// The high-precision statistics kernel (f32, bf16, f16): one pass, one launch, no allocation, no host-device sync.
//
// Each thread reads groups of 4 16-byte vectors (kernel_common.cuh) and runs hp_group.hpp's process_group() on
// each: for every element one shared-memory atomic into a histogram with one private copy per warp lane (bin b of
// lane l at byte b * 128 + l * 4, in bank l, so a warp's atomics never conflict however clustered the values are),
// the double moments, and a max and min pattern, two 16-bit elements at a time; no test per element. The group's
// max and min then say whether it needs exact value statistics (Inf, NaN, fp32 subnormals) or target-class
// counting (elements below the target's normal range or at its top), both rare in training data (hp_model.hpp).
//
// Then each block adds its histogram to the scratch, stores its totals in its own partial slot and takes a ticket;
// the last block ("last block done", kernel_common.cuh) reduces the partials in a fixed order, writes the result
// and `sequence` last.
#include "hp_group.hpp"
#include "kernel_common.cuh"

namespace fp8scope::probes::detail {
namespace {

using model::StatsTotals;
using numerics::ElementType;
using numerics::Fp8;

constexpr int kExtraBins = model::kScratchBins - model::kSubnormalBin0;

template <ElementType kType> constexpr int kElementBytes = kType == ElementType::F32 ? 4 : 2;

__device__ void finalize_hp(const KernelArgs& args, model::ResolvedScale scale)
{
    __shared__ unsigned long long bins[model::kScratchBins];
    Scratch* scratch = args.scratch;
    for (int b = threadIdx.x; b < model::kScratchBins; b += blockDim.x) {
        bins[b] = __ldcg(&scratch->bins[b]);
        scratch->bins[b] = 0;
    }
    StatsTotals t = model::empty_totals();
#pragma unroll 2 // two partials' loads in flight at once
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
        model::merge(t, load_partial(&scratch->partials[k]));
    __syncthreads();
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

// Class bound `which` (hp_model.hpp's class_bound), found by one whole warp: each round the 32 lanes test 32
// evenly spaced patterns and the interval shrinks to the gap before the first one beyond, 32 times smaller.
// 4 rounds for 16-bit types and 7 for f32, instead of 16 and 32 dependent steps: every block waits for it. Used
// only for a scale in device memory; for a host scale the launch passes the bounds in (KernelArgs::bounds).
template <ElementType kType> __device__ uint32_t class_bound_by_warp(int which, const model::TargetThresholds& t)
{
    const uint32_t lane = threadIdx.x % kLanes;
    uint32_t low = 0;
    uint32_t high = model::HpFormat<kType>::kInfPattern + 1u; // the answer lies in [low, high]
    while (low < high) {
        const uint32_t step = (high - low + kLanes - 1) / kLanes;
        const uint32_t sample = low + lane * step;
        const unsigned beyond
            = __ballot_sync(kFullMask, sample >= high || model::beyond_bound<kType>(which, sample, t));
        if (beyond == 0) { // every sample is below: the answer is past the last one
            low += (kLanes - 1) * step + 1;
        } else {
            const uint32_t first = __ffs(beyond) - 1;
            const uint32_t end = low + first * step;
            if (first != 0)
                low += (first - 1) * step + 1; // just past the last sample below
            high = end < high ? end : high;
        }
    }
    return model::bound_value(which, low);
}

template <ElementType kType, bool kTarget>
__global__ void __launch_bounds__(kThreadsPerBlock, kBlocksPerSm) hp_stats_kernel(const KernelArgs args)
{
    __shared__ __align__(16) unsigned int histogram[256 * kLanes]; // cleared with 16-byte stores
    __shared__ unsigned int extra[kExtraBins];
    __shared__ uint32_t shared_bounds[4];

    // The first loads go out before the shared-memory setup, which then hides under their latency.
    const Walk walk = make_walk<kElementBytes<kType>>(args);
    uint64_t first = walk.first;
    uint4 group[kUnroll];
    int count = load_group(walk, first, group);
    uint32_t edges[2];
    const int edge_count = load_edges<kElementBytes<kType>>(args, edges);

    clear_lane_histogram(histogram);
    if (threadIdx.x < kExtraBins)
        extra[threadIdx.x] = 0;
    const model::ResolvedScale scale = model::resolve_scale(args.scale_kind, args.scale, args.scale_pointer);
    if constexpr (kTarget)
        if (!args.bounds_known && threadIdx.x < 4 * kLanes) { // a device scale: warps 0..3, one bound each
            const int which = threadIdx.x / kLanes;
            const uint32_t bound = class_bound_by_warp<kType>(which, model::target_thresholds(args.target, scale));
            if (threadIdx.x % kLanes == 0)
                shared_bounds[which] = bound;
        }
    __syncthreads();
    model::ClassBounds bounds { 0, 0, model::kNoKey, model::kNoKey };
    if constexpr (kTarget)
        bounds = args.bounds_known
            ? args.bounds
            : model::ClassBounds { shared_bounds[0], shared_bounds[1], shared_bounds[2], shared_bounds[3] };

    const uint32_t lane_bytes = threadIdx.x % kLanes * 4;
    static_assert(model::kBinStrideBytes == kLanes * 4);
    auto count_bin = [&](uint32_t bin_offset) { count_in_lane(histogram, bin_offset | lane_bytes); };
    auto count_extra = [&](int bin) { atomicAdd(&extra[bin - model::kSubnormalBin0], 1u); };
    model::HpThreadAcc acc;
#pragma unroll
    for (int e = 0; e < 2; ++e) // unrolled: edges[] stays in registers
        if (e < edge_count)
            model::process_element<kType, kTarget>(edges[e], bounds, acc, count_bin, count_extra);
    while (count > 0) {
        auto each_word = [&](auto&& f) { for_each_word(group, count, f); };
        model::process_group<kType, kTarget>(each_word, bounds, acc, count_bin, count_extra);
        first += kUnroll * walk.stride;
        count = load_group(walk, first, group);
    }
    __syncthreads();

    flush_lane_histogram(histogram, args.scratch);
    if (threadIdx.x < kExtraBins && extra[threadIdx.x] != 0)
        atomicAdd(&args.scratch->bins[model::kSubnormalBin0 + threadIdx.x], extra[threadIdx.x]);
    const StatsTotals block = block_reduce(model::totals_of<kType>(acc));
    if (threadIdx.x == 0)
        args.scratch->partials[blockIdx.x] = block;
    if (arrive_last(args.scratch))
        finalize_hp(args, scale);
}

template <ElementType kType> const void* hp_kernel(bool target)
{
    return target ? reinterpret_cast<const void*>(&hp_stats_kernel<kType, true>)
                  : reinterpret_cast<const void*>(&hp_stats_kernel<kType, false>);
}

} // namespace

const void* hp_stats_kernel_for(ElementType type, bool target)
{
    switch (type) {
    case ElementType::F32:
        return hp_kernel<ElementType::F32>(target);
    case ElementType::BF16:
        return hp_kernel<ElementType::BF16>(target);
    default:
        return hp_kernel<ElementType::F16>(target);
    }
}

} // namespace fp8scope::probes::detail
