// Host side of the per-block statistics kernel (block_stats_kernel.cu): checks, geometry, grid, launch.
#include "fp8scope/probes/block_stats.hpp"

#include "block_launch.hpp"
#include "kernel_launch.hpp"

#include <algorithm>

namespace fp8scope::probes {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

// Enough blocks to fill the device (4 per SM), no more than give each lane kUnroll chunk loads, and enough that no
// block reads more than 2^31 codes.
int grid_for(const block_model::Geometry& g, int sm_count)
{
    using namespace detail::block_kernel;
    const uint64_t groups_per_block = uint64_t { kThreads } / g.group;
    const uint64_t wanted = ceil_div(g.blocks * g.items, groups_per_block * 4);
    uint64_t blocks = std::min<uint64_t>(wanted, static_cast<uint64_t>(std::max(sm_count, 1)) * 4);
    blocks = std::max(blocks, ceil_div(g.rows * g.cols, kMaxCodesPerBlock));
    return static_cast<int>(std::clamp<uint64_t>(blocks, 1, kMaxGrid));
}

} // namespace

size_t block_stats_scratch_bytes()
{
    return sizeof(detail::block_kernel::Scratch);
}

cudaError_t launch_block_stats(
    const BlockStatsParams& params, void* device_scratch, BlockStatsResult* out, uint64_t sequence, cudaStream_t stream)
{
    if (check_block_params(params) != nullptr || device_scratch == nullptr || out == nullptr || sequence == 0
        || reinterpret_cast<uintptr_t>(device_scratch) % 16 != 0)
        return cudaErrorInvalidValue;
    const cudaError_t pending_before = cudaPeekAtLastError();
    int sm_count = 0;
    if (const cudaError_t error = detail::current_sm_count(sm_count, pending_before); error != cudaSuccess)
        return error;

    detail::block_kernel::Args args {};
    args.data = static_cast<const unsigned char*>(params.data);
    args.scale_inv = params.scale_inv;
    args.scale_row_stride = static_cast<uint64_t>(params.scale_row_stride);
    args.scale_col_stride = static_cast<uint64_t>(params.scale_col_stride);
    args.g = block_model::make_geometry(params.rows, params.cols, params.block_rows, params.block_cols);
    const int blocks = grid_for(args.g, sm_count);
    const uint64_t stride = static_cast<uint64_t>(blocks) * (detail::block_kernel::kThreads / args.g.group);
    args.step_rows = stride / args.g.blocks_per_row;
    args.step_cols = stride % args.g.blocks_per_row;
    args.scratch = static_cast<detail::block_kernel::Scratch*>(device_scratch);
    args.out = out;
    args.sequence = sequence;
    return detail::forget_error(
        detail::launch_block_kernel(args, params.dtype == schema::Dtype::E5M2, blocks, stream), pending_before);
}

} // namespace fp8scope::probes
