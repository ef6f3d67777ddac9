// The per-block statistics kernel (block_stats.hpp; definitions in docs/tensor-stats.md, "Per-block statistics").
//
// A group of lanes reads one block (block_model::Geometry: a warp for blocks taller than a row, else 1 or 2 lanes);
// its lanes keep up to kUnroll 16-byte loads in flight, walking blocks a grid stride apart. Per 32-bit word,
// byte-wise integer tests (zero_bytes and carries into bit 7) count zeros and codes at +-max; NaN, Inf and subnormal
// codes are rare and counted one by one where an item has one. Integer instructions issue at half the fp32 rate on
// the H100 and are what limits the kernel, so a word costs about ten of them and nothing per code.
//
// At a block's end the group reduces by shuffles and its first lane accounts the block: its amax (from the max code
// when a code is at it, else by reading the block again: the slow path), its key in a shared histogram of block
// amaxes, extrema and shares. The last block to finish ("last block done") takes the nearest-rank quantiles from
// the keys, counts them by octave, writes the result, zeroes the scratch, and writes `sequence` last. Everything is
// integer arithmetic or one rounding, so the result repeats run to run and equals the twin's.
#include "block_launch.hpp"

namespace fp8scope::probes::detail {

namespace block_kernel {

using numerics::Fp8;

constexpr int kLanes = 32;
constexpr int kWarps = kThreads / kLanes;
constexpr int kUnroll = 4;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

// A thread's counts and extrema. A thread reads fewer than 2^23 codes (a block at most 2^31), so its counts fit 32
// bits; a block's sums are taken in 64.
struct Totals {
    unsigned int counts[kCounts];
    unsigned int amax_max_bits, amax_min_key, scale_min_key, scale_max_bits;
};

__device__ Totals empty_totals()
{
    Totals t;
#pragma unroll
    for (int c = 0; c < kCounts; ++c)
        t.counts[c] = 0;
    t.amax_max_bits = t.amax_min_key = t.scale_min_key = t.scale_max_bits = 0;
    return t;
}

template <Fp8 F> struct Codes {
    static constexpr uint32_t kMaxCode = F == Fp8::E5M2 ? 0x7Bu : 0x7Eu;
    // Added to magnitudes (bytes <= 0x7F, so no carry crosses a byte), each sets bit 7 of a byte exactly when the
    // byte is at least: the first NaN or Inf code (E4M3 0x7F; E5M2 0x7C), the max code, the smallest normal code.
    static constexpr uint32_t kSpecialCarry4 = (F == Fp8::E5M2 ? 0x04u : 0x01u) * 0x01010101u;
    static constexpr uint32_t kMaxCarry4 = (0x80u - kMaxCode) * 0x01010101u;
    static constexpr uint32_t kNormalCarry4 = (F == Fp8::E5M2 ? 0x7Cu : 0x78u) * 0x01010101u;
    static constexpr int kMantissaBits = F == Fp8::E5M2 ? 2 : 3;
    static constexpr uint32_t kFieldMask = F == Fp8::E5M2 ? 0x1Fu : 0xFu;
    static constexpr uint32_t kTopField = kFieldMask; // NaN (and E5M2's Inf) codes have this exponent field
};

// Byte-wise test on magnitudes (every byte <= 0x7F, so no carry crosses a byte): bit 7 of each byte of the result is
// set where the byte is zero. Two integer instructions (the __vcmp*4 intrinsics are emulated on sm_90, and integer
// instructions issue at half the rate of fp32 ones: they are what limits this kernel).
__device__ __forceinline__ uint32_t zero_bytes(uint32_t magnitudes)
{
    return ~((magnitudes + 0x7F7F7F7Fu) | magnitudes) & 0x80808080u;
}

// Accounts one block of good or bad scale: into the thread's totals, and its amax into `amax_bins` (shared or
// global).
template <class Bins>
__device__ void account_block(
    Totals& t, Bins* amax_bins, uint32_t max_magnitude, uint32_t saturated, bool subnormal, float scale_inv, Fp8 format)
{
    if (!block_model::good_scale(scale_inv)) {
        ++t.counts[kBadBlocks];
        return;
    }
    t.counts[kSaturatingBlocks] += saturated >= 2;
    t.counts[kSubnormalBlocks] += subnormal;
    const float amax = block_model::block_amax(max_magnitude, format, scale_inv);
    const uint32_t bits = __float_as_uint(amax);
    t.amax_max_bits = max(t.amax_max_bits, bits);
    t.amax_min_key = max(t.amax_min_key, ~bits);
    const uint32_t scale_bits = __float_as_uint(scale_inv);
    t.scale_max_bits = max(t.scale_max_bits, scale_bits);
    t.scale_min_key = max(t.scale_min_key, ~scale_bits);
    atomicAdd(&amax_bins[bits >> block_model::kAmaxKeyShift], Bins { 1 });
}

// The block's totals in thread 0 (every thread must call it): counts by `redux.sync` on halves (a thread counts
// fewer than 2^35 bits), extrema by max.
struct BlockTotals {
    unsigned long long counts[kCounts];
    unsigned int amax_max_bits, amax_min_key, scale_min_key, scale_max_bits;
};

__device__ BlockTotals block_reduce(const Totals& t)
{
    __shared__ BlockTotals warp_totals[kWarps];
    BlockTotals r;
#pragma unroll
    for (int c = 0; c < kCounts; ++c) { // a thread's count is below 2^27: halves of 22 and 5 bits cannot wrap
        const unsigned low = __reduce_add_sync(kFullMask, t.counts[c] & 0x3FFFFFu);
        const unsigned high = __reduce_add_sync(kFullMask, t.counts[c] >> 22);
        r.counts[c] = (static_cast<unsigned long long>(high) << 22) + low;
    }
    r.amax_max_bits = __reduce_max_sync(kFullMask, t.amax_max_bits);
    r.amax_min_key = __reduce_max_sync(kFullMask, t.amax_min_key);
    r.scale_min_key = __reduce_max_sync(kFullMask, t.scale_min_key);
    r.scale_max_bits = __reduce_max_sync(kFullMask, t.scale_max_bits);
    __syncthreads();
    if (threadIdx.x % kLanes == 0)
        warp_totals[threadIdx.x / kLanes] = r;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < kWarps; ++w) {
            const BlockTotals& o = warp_totals[w];
#pragma unroll
            for (int c = 0; c < kCounts; ++c)
                r.counts[c] += o.counts[c];
            r.amax_max_bits = max(r.amax_max_bits, o.amax_max_bits);
            r.amax_min_key = max(r.amax_min_key, o.amax_min_key);
            r.scale_min_key = max(r.scale_min_key, o.scale_min_key);
            r.scale_max_bits = max(r.scale_max_bits, o.scale_max_bits);
        }
    return r;
}

__device__ void add_to_scratch(Scratch* s, const BlockTotals& t)
{
#pragma unroll
    for (int c = 0; c < kCounts; ++c)
        if (t.counts[c] != 0)
            atomicAdd(&s->counts[c], t.counts[c]);
    atomicMax(&s->amax_max_bits, t.amax_max_bits);
    atomicMax(&s->amax_min_key, t.amax_min_key);
    atomicMax(&s->scale_min_key, t.scale_min_key);
    atomicMax(&s->scale_max_bits, t.scale_max_bits);
}

__device__ bool arrive_last(Scratch* scratch)
{
    __shared__ bool is_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        is_last = atomicAdd(&scratch->ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (is_last)
        __threadfence();
    return is_last;
}

// The lower edge of the bin holding the rank-th smallest block amax (1-based), found by warp 0: each lane sums 64
// bins, an inclusive scan finds the lane, which walks its bins. Valid in every lane of warp 0.
__device__ float amax_at_rank(const Scratch* s, uint64_t rank)
{
    constexpr int kPerLane = block_model::kAmaxBins / kLanes;
    const int lane = threadIdx.x % kLanes;
    unsigned long long sum = 0;
    for (int b = 0; b < kPerLane; ++b)
        sum += __ldcg(&s->amax_bins[lane * kPerLane + b]);
    unsigned long long inclusive = sum;
    for (int offset = 1; offset < kLanes; offset *= 2) {
        const unsigned long long before = __shfl_up_sync(kFullMask, inclusive, offset);
        if (lane >= offset)
            inclusive += before;
    }
    const unsigned long long exclusive = inclusive - sum;
    uint32_t key = 0;
    if (exclusive < rank && rank <= inclusive) {
        unsigned long long seen = exclusive;
        for (int b = 0; b < kPerLane; ++b) {
            seen += __ldcg(&s->amax_bins[lane * kPerLane + b]);
            if (seen >= rank) {
                key = static_cast<uint32_t>(lane * kPerLane + b);
                break;
            }
        }
    }
    key = __reduce_max_sync(kFullMask, key);
    return block_model::amax_key_floor(key);
}

// `args` by value: a reference would take the kernel parameter's address, which copies it to local memory for the
// whole kernel.
__device__ __noinline__ void finalize(const Args args, Fp8 format)
{
    __shared__ unsigned long long histogram[kHistogramBins];
    Scratch* s = args.scratch;
    const block_model::Geometry& g = args.g;
    __shared__ float quantiles[2];
    for (int h = threadIdx.x; h < kHistogramBins; h += blockDim.x)
        histogram[h] = 0;
    const Totals t = empty_totals(); // the last block's own totals are already in the scratch
    const BlockTotals sums = block_reduce(t); // its barriers also complete the histogram's zeroing
    if (threadIdx.x == 0) {
        add_to_scratch(s, sums);
        __threadfence();
    }
    __syncthreads();
    for (int key = threadIdx.x; key < block_model::kAmaxBins; key += blockDim.x) {
        const unsigned long long count = __ldcg(&s->amax_bins[key]);
        const int bin = block_model::octave_bin_of_key(static_cast<uint32_t>(key));
        if (count != 0 && bin >= 0)
            atomicAdd(&histogram[bin], count);
    }
    const uint64_t bad = __ldcg(&s->counts[kBadBlocks]);
    const uint64_t good = g.blocks - bad;
    if (threadIdx.x < kLanes && good > 0) {
        const float p50 = amax_at_rank(s, block_model::nearest_rank(good, 50));
        const float p99 = amax_at_rank(s, block_model::nearest_rank(good, 99));
        if (threadIdx.x == 0) {
            quantiles[0] = p50;
            quantiles[1] = p99;
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < block_model::kAmaxBins; b += blockDim.x)
        s->amax_bins[b] = 0;
    for (int h = threadIdx.x; h < kHistogramBins; h += blockDim.x)
        args.out->exponent_histogram[h] = histogram[h];
    if (threadIdx.x == 0) {
        BlockStatsResult* out = args.out;
        out->numel = g.rows * g.cols;
        out->blocks = g.blocks;
        out->zeros = __ldcg(&s->counts[kZeros]);
        out->nans = __ldcg(&s->counts[kNans]);
        out->infs = __ldcg(&s->counts[kInfs]);
        out->subnormals = __ldcg(&s->counts[kSubnormals]);
        out->saturated = __ldcg(&s->counts[kSaturated]);
        out->bad_scale_blocks = bad;
        out->saturating_blocks = __ldcg(&s->counts[kSaturatingBlocks]);
        out->subnormal_blocks = __ldcg(&s->counts[kSubnormalBlocks]);
        const bool any = good > 0;
        out->amax = any ? __uint_as_float(__ldcg(&s->amax_max_bits)) : 0.0f;
        out->block_amax_min = any ? __uint_as_float(~__ldcg(&s->amax_min_key)) : 0.0f;
        out->block_amax_p50 = any ? quantiles[0] : 0.0f;
        out->block_amax_p99 = any ? quantiles[1] : 0.0f;
        out->scale_inv_min = any ? __uint_as_float(~__ldcg(&s->scale_min_key)) : __uint_as_float(0x7FC00000u);
        out->scale_inv_max = any ? __uint_as_float(__ldcg(&s->scale_max_bits)) : __uint_as_float(0x7FC00000u);
        for (int c = 0; c < kCounts; ++c)
            s->counts[c] = 0;
        s->amax_max_bits = s->amax_min_key = s->scale_min_key = s->scale_max_bits = 0;
    }
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        s->ticket = 0;
        *reinterpret_cast<volatile unsigned long long*>(&args.out->sequence) = args.sequence;
    }
}

// The block a group reads now: where it starts, its rows and 16-byte chunks per row (fewer at the operand's edges),
// and its scale_inv.
struct Cursor {
    uint64_t block_row, column_block;
    uint32_t item;
    const unsigned char* start;
    uint32_t rows, row_chunks;
    float scale_inv;
};

// What an item keeps of its block until it has been counted.
struct Slot {
    const unsigned char* start;
    uint32_t rows, row_chunks;
    float scale_inv;
    bool in_range;
};

__device__ __forceinline__ void enter_block(Cursor& c, const Args& args)
{
    const block_model::Geometry& g = args.g;
    c.item = 0;
    if (c.block_row >= g.block_row_count)
        return;
    const uint64_t first_row = c.block_row * g.block_rows, first_column = c.column_block * g.block_cols;
    c.start = args.data + first_row * g.cols + first_column;
    c.rows = static_cast<uint32_t>(min(g.block_rows, g.rows - first_row));
    c.row_chunks = static_cast<uint32_t>(min(uint64_t { g.row_chunks }, (g.cols - first_column) / 16));
    c.scale_inv = __ldg(args.scale_inv + c.block_row * args.scale_row_stride + c.column_block * args.scale_col_stride);
}

// The address of chunk `chunk` of the block, or null past its edge. kTall: blocks taller than one row.
template <bool kTall>
__device__ __forceinline__ const uint4* chunk_address(
    const block_model::Geometry& g, const unsigned char* start, uint32_t rows, uint32_t row_chunks, uint32_t chunk)
{
    if constexpr (kTall) {
        const uint32_t row = chunk >> g.row_chunk_shift, column = chunk & (g.row_chunks - 1);
        if (row >= rows || column >= row_chunks)
            return nullptr;
        return reinterpret_cast<const uint4*>(start + row * g.cols) + column;
    } else {
        return chunk < row_chunks ? reinterpret_cast<const uint4*>(start) + chunk : nullptr;
    }
}

// The largest non-NaN magnitude among this lane's chunks of a block, re-read (the slow path: a block with no code at
// +-max, whose largest code the fast path does not know).
template <Fp8 F, bool kTall>
__device__ uint32_t rescan_max(const block_model::Geometry& g, const Slot& slot, uint32_t lane_in_group)
{
    uint32_t m = 0;
    for (uint32_t item = 0; item < g.items; ++item) {
        const uint4* address
            = chunk_address<kTall>(g, slot.start, slot.rows, slot.row_chunks, item * g.group + lane_in_group);
        if (address == nullptr)
            continue;
        const uint4 v = __ldg(address);
        const uint32_t words[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
        for (int w = 0; w < 4; ++w)
#pragma unroll
            for (int byte = 0; byte < 4; ++byte) {
                const uint32_t code = (words[w] >> (8 * byte)) & 0xFFu;
                if (!numerics::fp8_is_nan(code, F))
                    m = max(m, code & 0x7Fu);
            }
    }
    return m;
}

template <Fp8 F, bool kTall> __global__ void __launch_bounds__(kThreads, 2) block_stats_kernel(const Args args)
{
    using C = Codes<F>;
    __shared__ unsigned int amax_bins[block_model::kAmaxBins];
    const block_model::Geometry& g = args.g;
    for (int i = threadIdx.x; i < block_model::kAmaxBins; i += blockDim.x)
        amax_bins[i] = 0;

    const uint32_t lane = threadIdx.x % kLanes;
    const uint32_t lane_in_group = lane & (g.group - 1);
    const uint64_t group_id
        = (uint64_t { blockIdx.x } * kWarps + threadIdx.x / kLanes) * (kLanes / g.group) + lane / g.group;
    Cursor cursor;
    cursor.block_row = group_id / g.blocks_per_row;
    cursor.column_block = group_id % g.blocks_per_row;
    enter_block(cursor, args);
    __syncthreads();

    Totals t = empty_totals();
    uint32_t seg_saturated = 0, seg_flags = 0; // flags: 1 a subnormal code, 2 an Inf code
    while (__any_sync(kFullMask, cursor.block_row < g.block_row_count)) {
        uint4 data[kUnroll];
        bool valid[kUnroll], ends[kUnroll];
        Slot at[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) { // the items' loads, all in flight at once
            const bool in_range = cursor.block_row < g.block_row_count;
            at[k] = { cursor.start, cursor.rows, cursor.row_chunks, cursor.scale_inv, in_range };
            const uint4* address = in_range ? chunk_address<kTall>(g, cursor.start, cursor.rows, cursor.row_chunks,
                                       cursor.item * g.group + lane_in_group)
                                            : nullptr;
            valid[k] = address != nullptr;
            if (valid[k])
                data[k] = __ldg(address);
            ends[k] = cursor.item + 1 == g.items;
            if (ends[k]) { // the next block, a grid stride on
                cursor.block_row += args.step_rows;
                cursor.column_block += args.step_cols;
                if (cursor.column_block >= g.blocks_per_row) {
                    cursor.column_block -= g.blocks_per_row;
                    ++cursor.block_row;
                }
                enter_block(cursor, args);
            } else {
                ++cursor.item;
            }
        }
        // Called with constant k (an array indexed by a loop the compiler does not unroll would live in local memory).
        const auto count_item = [&](const uint4& item_data, bool item_valid, bool item_ends, const Slot& slot) {
            if (item_valid) {
                const uint32_t words[4] = { item_data.x, item_data.y, item_data.z, item_data.w };
                // Per word: byte masks (bit 7 of a byte set where it holds), zeros and codes at max summed per byte
                // (at most 4 per byte per item), NaN/Inf and subnormal codes only noticed (rare: counted below).
                uint32_t zero_sum = 0, saturated_sum = 0, rare = 0;
#pragma unroll
                for (int w = 0; w < 4; ++w) {
                    const uint32_t magnitude = words[w] & 0x7F7F7F7Fu;
                    const uint32_t zero = zero_bytes(magnitude);
                    const uint32_t special = (magnitude + C::kSpecialCarry4) & 0x80808080u; // NaN, and E5M2's Inf
                    const uint32_t saturated = (magnitude + C::kMaxCarry4) & ~special & 0x80808080u;
                    const uint32_t subnormal = ~(magnitude + C::kNormalCarry4) & ~zero & 0x80808080u;
                    zero_sum += zero >> 7;
                    saturated_sum += saturated >> 7;
                    rare |= special | subnormal;
                }
                t.counts[kZeros] += (zero_sum * 0x01010101u) >> 24;
                seg_saturated += (saturated_sum * 0x01010101u) >> 24;
                if (rare != 0) { // NaN, Inf or subnormal codes: counted one by one
#pragma unroll
                    for (int w = 0; w < 4; ++w)
#pragma unroll
                        for (int byte = 0; byte < 4; ++byte) {
                            const uint32_t code = (words[w] >> (8 * byte)) & 0xFFu;
                            const bool inf = numerics::fp8_is_inf(code, F);
                            const bool subnormal = numerics::fp8_is_subnormal(code, F);
                            t.counts[kNans] += numerics::fp8_is_nan(code, F);
                            t.counts[kInfs] += inf;
                            t.counts[kSubnormals] += subnormal;
                            seg_flags |= (subnormal ? 1u : 0u) | (inf ? 2u : 0u);
                        }
                }
            }
            if (item_ends) { // warp-uniform: every group ends its blocks at the same items
                uint32_t saturated = seg_saturated, flags = seg_flags;
                for (uint32_t offset = g.group / 2; offset > 0; offset /= 2) {
                    saturated += __shfl_xor_sync(kFullMask, saturated, offset);
                    flags |= __shfl_xor_sync(kFullMask, flags, offset);
                }
                t.counts[kSaturated] += seg_saturated;
                seg_saturated = seg_flags = 0;
                const bool in_range = slot.in_range;
                // The largest magnitude: +Inf if there is one, else max if a code is at it, else read again.
                const bool rescan = in_range && saturated == 0 && (flags & 2u) == 0;
                uint32_t m = (flags & 2u) != 0 ? 0x7Cu : C::kMaxCode;
                if (__any_sync(kFullMask, rescan)) {
                    uint32_t found = rescan ? rescan_max<F, kTall>(g, slot, lane_in_group) : 0u;
                    for (uint32_t offset = g.group / 2; offset > 0; offset /= 2)
                        found = max(found, __shfl_xor_sync(kFullMask, found, offset));
                    if (rescan)
                        m = found;
                }
                if (lane_in_group == 0 && in_range)
                    account_block(t, amax_bins, m, saturated, (flags & 1u) != 0, slot.scale_inv, F);
            }
        };
        count_item(data[0], valid[0], ends[0], at[0]);
        count_item(data[1], valid[1], ends[1], at[1]);
        count_item(data[2], valid[2], ends[2], at[2]);
        count_item(data[3], valid[3], ends[3], at[3]);
        static_assert(kUnroll == 4);
    }

    __syncthreads();
    for (int b = threadIdx.x; b < block_model::kAmaxBins; b += blockDim.x)
        if (amax_bins[b] != 0)
            atomicAdd(&args.scratch->amax_bins[b], static_cast<unsigned long long>(amax_bins[b]));
    const BlockTotals sums = block_reduce(t);
    if (threadIdx.x == 0)
        add_to_scratch(args.scratch, sums);
    if (arrive_last(args.scratch))
        finalize(args, F);
}

} // namespace block_kernel

cudaError_t launch_block_kernel(const block_kernel::Args& args, bool e5m2, int blocks, cudaStream_t stream)
{
    using block_kernel::block_stats_kernel;
    const bool tall = args.g.block_rows > 1;
    const void* kernel = e5m2 ? (tall ? reinterpret_cast<const void*>(&block_stats_kernel<numerics::Fp8::E5M2, true>)
                                      : reinterpret_cast<const void*>(&block_stats_kernel<numerics::Fp8::E5M2, false>))
                              : (tall ? reinterpret_cast<const void*>(&block_stats_kernel<numerics::Fp8::E4M3, true>)
                                      : reinterpret_cast<const void*>(&block_stats_kernel<numerics::Fp8::E4M3, false>));
    block_kernel::Args copy = args;
    void* params[] = { &copy };
    return cudaLaunchKernel(
        kernel, dim3(static_cast<unsigned>(blocks)), dim3(block_kernel::kThreads), params, 0, stream);
}

} // namespace fp8scope::probes::detail
