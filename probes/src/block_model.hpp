// The per-block statistics' arithmetic as __host__ __device__ pieces, shared by the kernel (block_stats_kernel.cu)
// and the twin (block_stats_cpu.cpp) so that both define every figure the same way (docs/tensor-stats.md,
// "Per-block statistics"). C++17, integer and single-rounding fp32 operations only.
#pragma once

#include "fp8scope/probes/element_numerics.hpp"
#include "fp8scope/probes/stats_result.hpp"

#include <cstdint>

namespace fp8scope::probes::block_model {

using numerics::Fp8;

// Block amaxes are counted by their float bits >> 20 (exponent and 3 mantissa bits): 2048 keys cover every
// non-negative float up to +Inf (key 2040).
inline constexpr int kAmaxKeyShift = 20;
inline constexpr int kAmaxBins = 2048;

// How a launch walks the operand: one block at a time per group of `group` lanes: a warp for blocks taller than a row
// (its 32 lanes read 4 rows of 128 codes at once); 2 for rows longer than 128 codes (their 2 x 16 bytes fill a
// 32-byte sector); 1 for shorter blocks (a block's end costs no shuffle). Measured on the H100, docs/benchmarks.md.
// A block's 16-byte chunks are numbered row by row, `row_chunks` (a power of two for taller blocks) per row; each
// lane loads `items` of them.
struct Geometry {
    uint64_t rows, cols;
    uint64_t block_rows;
    uint64_t block_cols; // min(block_cols, cols)
    uint64_t blocks_per_row; // ceil(cols / block_cols)
    uint64_t block_row_count; // ceil(rows / block_rows)
    uint64_t blocks;
    uint32_t row_chunks; // block_cols / 16
    uint32_t row_chunk_shift; // log2(row_chunks) for taller blocks, else 0 (unused)
    uint32_t group;
    uint32_t items; // ceil(block_rows * row_chunks / group)
};

// The walk of a valid operand (check_block_params passed).
inline Geometry make_geometry(uint64_t rows, uint64_t cols, uint64_t block_rows, uint64_t block_cols)
{
    Geometry g {};
    g.rows = rows;
    g.cols = cols;
    g.block_rows = block_rows < rows ? block_rows : rows;
    g.block_cols = block_cols < cols ? block_cols : cols;
    g.blocks_per_row = (cols + g.block_cols - 1) / g.block_cols;
    g.block_row_count = (rows + block_rows - 1) / block_rows;
    g.blocks = g.block_row_count * g.blocks_per_row;
    g.row_chunks = static_cast<uint32_t>(g.block_cols / 16);
    while ((1u << g.row_chunk_shift) < g.row_chunks)
        ++g.row_chunk_shift;
    const uint64_t chunks = g.block_rows * g.row_chunks;
    g.group = g.block_rows > 1 ? 32 : g.row_chunks > 8 ? 2 : 1;
    g.items = static_cast<uint32_t>((chunks + g.group - 1) / g.group);
    return g;
}

FP8SCOPE_HD bool good_scale(float scale_inv)
{
    const uint32_t bits = numerics::float_bits(scale_inv);
    return (bits >> 31) == 0 && bits != 0 && bits < numerics::kF32InfBits;
}

// The block's amax: the value of its largest non-NaN code magnitude times its scale_inv, rounded once.
FP8SCOPE_HD float block_amax(uint32_t max_magnitude, Fp8 format, float scale_inv)
{
    return numerics::mul_rn(numerics::bits_float(numerics::fp8_to_f32_bits(max_magnitude, format)), scale_inv);
}

FP8SCOPE_HD uint32_t amax_key(float amax)
{
    return numerics::float_bits(amax) >> kAmaxKeyShift;
}

// The lower edge of a key's bin: the value rounded down to 4 significant bits.
FP8SCOPE_HD float amax_key_floor(uint32_t key)
{
    return numerics::bits_float(key << kAmaxKeyShift);
}

// The result histogram's bin of a block-amax key: the amax's octave, floor(log2 amax), for a normal float; the bin
// of octave -127 for a subnormal one; -1 (not counted) for key 0 (an amax of 0, or below 2^-129) and for +Inf.
FP8SCOPE_HD int octave_bin_of_key(uint32_t key)
{
    const int exponent_field = static_cast<int>(key >> 3);
    if (key == 0 || exponent_field == 255)
        return -1;
    const int octave = exponent_field == 0 ? -127 : exponent_field - 127;
    return octave - kHistogramMinExponent;
}

// The nearest rank (1-based) of the `percent` quantile of n values: ceil(percent * n / 100), at least 1.
FP8SCOPE_HD uint64_t nearest_rank(uint64_t n, uint64_t percent)
{
    const uint64_t rank = (percent * n + 99) / 100;
    return rank == 0 ? 1 : rank;
}

} // namespace fp8scope::probes::block_model
