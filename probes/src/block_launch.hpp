// The boundary between the per-block statistics' host wrapper (block_stats_launch.cpp, C++23) and its kernel
// (block_stats_kernel.cu, C++17): the scratch layout and the kernel's arguments, plain values already validated.
#pragma once

#include "block_model.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fp8scope::probes::detail {

namespace block_kernel {

constexpr int kThreads = 256;
// The grid never has more blocks than this; a block reads at most 2^31 codes, so that its 32-bit counts cannot wrap.
constexpr int kMaxGrid = 2048;
constexpr uint64_t kMaxCodesPerBlock = uint64_t { 1 } << 31;

enum Count { kZeros, kNans, kInfs, kSubnormals, kSaturated, kBadBlocks, kSaturatingBlocks, kSubnormalBlocks, kCounts };

struct Scratch {
    unsigned int ticket;
    unsigned int amax_max_bits; // extrema as atomicMax keys: a min is kept as ~bits (0: none yet)
    unsigned int amax_min_key;
    unsigned int scale_min_key;
    unsigned int scale_max_bits;
    unsigned int padding[3];
    unsigned long long counts[kCounts]; // codes, and blocks
    unsigned long long amax_bins[block_model::kAmaxBins];
};

struct Args {
    const unsigned char* data;
    const float* scale_inv;
    uint64_t scale_row_stride, scale_col_stride;
    block_model::Geometry g;
    uint64_t step_rows, step_cols; // a grid stride of blocks, as block rows and block columns
    Scratch* scratch;
    BlockStatsResult* out;
    uint64_t sequence;
};

} // namespace block_kernel

// Launches the kernel for E5M2 or E4M3 codes with `blocks` blocks on `stream`; returns cudaLaunchKernel's status.
cudaError_t launch_block_kernel(const block_kernel::Args& args, bool e5m2, int blocks, cudaStream_t stream);

} // namespace fp8scope::probes::detail
