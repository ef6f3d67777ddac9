// The boundary between the host wrapper (tensor_stats_launch.cpp, C++23) and the kernels (hp_stats_kernel.cu,
// tensor_stats_kernel.cu, C++17): plain values only, already validated.
#pragma once

#include "hp_model.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fp8scope::probes::detail {

inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kBlocksPerSm = 4;
// 16-byte vectors a thread loads at once (a group, kernel_common.cuh).
inline constexpr int kVectorsPerGroup = 4;
// The grid never has more blocks than partial slots in the scratch.
inline constexpr int kMaxBlocks = 2048;
// A block handles at most this many elements (the grid grows instead), so that its 32-bit counters (per thread
// and per shared-histogram copy) cannot wrap.
inline constexpr uint64_t kMaxElementsPerBlock = uint64_t { 1 } << 31;
// Tensors up to 2^40 elements (1 TiB of FP8) fit kMaxBlocks blocks of kMaxElementsPerBlock.
inline constexpr uint64_t kMaxNumel = uint64_t { 1 } << 40;
static_assert(kMaxNumel <= kMaxElementsPerBlock * kMaxBlocks);

// Device scratch: zeroed once by the caller; the last block of each launch leaves it zeroed again.
struct Scratch {
    unsigned int ticket; // blocks done
    unsigned int padding[3];
    unsigned long long bins[model::kScratchBins];
    model::StatsTotals partials[kMaxBlocks]; // one per block, overwritten by every launch before it is read
};

struct KernelArgs {
    const void* data;
    uint64_t numel;
    uint64_t head_elements; // elements before the first 16-byte boundary (at most numel)
    numerics::ElementType type;
    numerics::Fp8 target; // None for FP8 inputs: they carry their own format
    model::ScaleCode scale_kind;
    float scale;
    const float* scale_pointer;
    Scratch* scratch;
    StatsResult* out;
    uint64_t sequence;
    // HP input with a target and a host scale: the class bounds, computed once on the host (host_class_bounds);
    // otherwise bounds_known is false and every block searches them (a scale in device memory).
    bool bounds_known;
    model::ClassBounds bounds;
};

// Blocks for a tensor: enough to fill the device, but no more than give each thread a full group of vectors (a
// small tensor then has fewer blocks to wait for and merge, and no more memory latencies), and enough that no block
// sees more than kMaxElementsPerBlock elements.
int grid_blocks(uint64_t numel, uint64_t bytes_per_element, int sm_count);

// The class bounds of an HP `type` against `target` for a resolved host scale (hp_model.hpp's class_bounds).
model::ClassBounds host_class_bounds(numerics::ElementType type, numerics::Fp8 target, model::ResolvedScale scale);

// The high-precision kernel for an f32, bf16 or f16 input, with or without a target (hp_stats_kernel.cu).
const void* hp_stats_kernel_for(numerics::ElementType type, bool target);

// The current device's SM count; on failure the error, cleared from the runtime's last-error slot unless an error was
// pending there before (`pending_before`: cudaPeekAtLastError() at the start of the launch). Shared by both launches.
cudaError_t current_sm_count(int& sm_count, cudaError_t pending_before);
// A runtime call of ours failed: clear its error unless one was pending before, which stays for its owner.
cudaError_t forget_error(cudaError_t error, cudaError_t pending_before);

// Launches one kernel with `blocks` blocks on `stream`; returns cudaLaunchKernel's status.
cudaError_t launch_stats_kernel(const KernelArgs& args, int blocks, cudaStream_t stream);

} // namespace fp8scope::probes::detail
