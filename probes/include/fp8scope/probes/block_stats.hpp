// Per-block statistics of an FP8 operand scaled per row or per block (issue 31): a CUDA kernel and its CPU reference
// twin. Definitions of every field: docs/tensor-stats.md, "Per-block statistics".
//
// Usage mirrors tensor_stats.hpp: a scratch zeroed once (block_stats_scratch_bytes()), a result in pinned mapped
// memory, one asynchronous launch, `sequence` written last.
#pragma once

#include "fp8scope/format/schema.hpp"
#include "fp8scope/probes/stats_result.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fp8scope::probes {

// The operand as it lies in memory: `rows` rows of `cols` contiguous FP8 codes (row stride = cols). Its blocks are
// block_rows x block_cols codes (1 x 128, 128 x 128, or 1 x cols for one scale per row); block (i, j) is dequantized
// by scale_inv[i * scale_row_stride + j * scale_col_stride], a float32 in device memory (the twin: host memory).
struct BlockStatsParams {
    const void* data = nullptr; // 16-byte aligned
    schema::Dtype dtype = schema::Dtype::E4M3; // E4M3 or E5M2
    int64_t rows = 0, cols = 0; // cols a multiple of 16
    int64_t block_rows = 1;
    // A multiple of 16, or >= cols (then one block spans the row); for blocks taller than a row, one whose 16-byte
    // chunks per row are a power of two (128: 8).
    int64_t block_cols = 128;
    const float* scale_inv = nullptr;
    int64_t scale_row_stride = 0, scale_col_stride = 0; // in elements, >= 0
};

// nullptr when `params` is valid, else why not.
const char* check_block_params(const BlockStatsParams& params);

// The reference twin: one sequential pass on the host. Throws std::invalid_argument on invalid parameters.
BlockStatsResult block_stats_cpu(const BlockStatsParams& params);

// Bytes of device scratch one launch needs (under 1 MiB); zeroed once by the caller, left zeroed by every launch.
size_t block_stats_scratch_bytes();

// Enqueues ONE kernel on `stream` that computes the per-block statistics of params.data into *out, with
// out->sequence = `sequence` written last (not 0, and different from the value *out holds). The same contract as
// launch_tensor_stats: cudaErrorInvalidValue for invalid arguments (nothing launched), no synchronization, no
// allocation; a failure of ours is cleared from the runtime's last-error slot unless an error was pending there.
cudaError_t launch_block_stats(const BlockStatsParams& params, void* device_scratch, BlockStatsResult* out,
    uint64_t sequence, cudaStream_t stream);

} // namespace fp8scope::probes
