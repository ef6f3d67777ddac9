// The per-block statistics' CPU twin and argument checks (block_stats.hpp): one sequential pass, block by block,
// with the kernel's definitions (block_model.hpp).
#include "fp8scope/probes/block_stats.hpp"

#include "block_model.hpp"
#include "fp8scope/probes/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8scope::probes {

namespace {

using numerics::Fp8;

struct Block {
    uint32_t max_magnitude = 0; // over non-NaN codes
    uint64_t at_max = 0;
    bool subnormal = false;
};

} // namespace

const char* check_block_params(const BlockStatsParams& params)
{
    if (params.dtype != schema::Dtype::E4M3 && params.dtype != schema::Dtype::E5M2)
        return "not an FP8 dtype";
    if (params.rows <= 0 || params.cols <= 0)
        return "no rows or columns";
    if (params.cols % 16 != 0 || params.cols > (int64_t { 1 } << 26))
        return "columns not a multiple of 16 (or over 2^26)";
    if (static_cast<uint64_t>(params.rows) > kMaxStatsNumel / static_cast<uint64_t>(params.cols))
        return "more than 2^40 elements";
    if (params.block_rows <= 0)
        return "no block rows";
    if (params.block_cols <= 0 || (params.block_cols < params.cols && params.block_cols % 16 != 0))
        return "block columns neither a multiple of 16 nor the whole row";
    if (params.data == nullptr || reinterpret_cast<uintptr_t>(params.data) % 16 != 0)
        return "data missing or not 16-byte aligned";
    if (params.scale_inv == nullptr || reinterpret_cast<uintptr_t>(params.scale_inv) % 4 != 0)
        return "scale_inv missing or not aligned";
    if (params.scale_row_stride < 0 || params.scale_col_stride < 0)
        return "negative scale strides";
    const block_model::Geometry g
        = block_model::make_geometry(params.rows, params.cols, params.block_rows, params.block_cols);
    if (params.rows > 1 && params.block_rows > 1 && (g.row_chunks & (g.row_chunks - 1)) != 0)
        return "blocks taller than a row whose width is not a power of two times 16";
    return nullptr;
}

BlockStatsResult block_stats_cpu(const BlockStatsParams& params)
{
    if (const char* why = check_block_params(params))
        throw std::invalid_argument(std::string("block_stats_cpu: ") + why);
    const Fp8 format = params.dtype == schema::Dtype::E5M2 ? Fp8::E5M2 : Fp8::E4M3;
    const numerics::Fp8Spec spec = numerics::fp8_spec(format);
    const block_model::Geometry g
        = block_model::make_geometry(params.rows, params.cols, params.block_rows, params.block_cols);
    const auto* codes = static_cast<const unsigned char*>(params.data);

    BlockStatsResult r {};
    r.numel = g.rows * g.cols;
    r.blocks = g.blocks;
    std::vector<Block> blocks(g.blocks);
    for (uint64_t row = 0; row < g.rows; ++row) {
        const uint64_t block_row = row / static_cast<uint64_t>(params.block_rows);
        for (uint64_t j = 0; j < g.blocks_per_row; ++j) {
            Block& block = blocks[block_row * g.blocks_per_row + j];
            const uint64_t end = std::min(g.cols, (j + 1) * g.block_cols);
            for (uint64_t col = j * g.block_cols; col < end; ++col) {
                const uint32_t code = codes[row * g.cols + col];
                const uint32_t magnitude = code & 0x7Fu;
                const bool nan = numerics::fp8_is_nan(code, format);
                const bool inf = numerics::fp8_is_inf(code, format);
                r.zeros += magnitude == 0;
                r.nans += nan;
                r.infs += inf;
                r.saturated += magnitude == spec.max_code;
                if (numerics::fp8_is_subnormal(code, format)) {
                    ++r.subnormals;
                    block.subnormal = true;
                }
                block.at_max += magnitude == spec.max_code;
                if (!nan)
                    block.max_magnitude = std::max(block.max_magnitude, magnitude);
            }
        }
    }

    std::vector<float> amaxes;
    amaxes.reserve(g.blocks);
    float scale_min = std::numeric_limits<float>::infinity(), scale_max = 0;
    for (uint64_t b = 0; b < g.blocks; ++b) {
        const float scale_inv = params.scale_inv[b / g.blocks_per_row * params.scale_row_stride
            + b % g.blocks_per_row * params.scale_col_stride];
        if (!block_model::good_scale(scale_inv)) {
            ++r.bad_scale_blocks;
            continue;
        }
        r.saturating_blocks += blocks[b].at_max >= 2;
        r.subnormal_blocks += blocks[b].subnormal;
        const float amax = block_model::block_amax(blocks[b].max_magnitude, format, scale_inv);
        amaxes.push_back(amax);
        if (const int bin = block_model::octave_bin_of_key(block_model::amax_key(amax)); bin >= 0)
            ++r.exponent_histogram[bin];
        scale_min = std::min(scale_min, scale_inv);
        scale_max = std::max(scale_max, scale_inv);
    }
    if (amaxes.empty()) {
        r.scale_inv_min = r.scale_inv_max = std::numeric_limits<float>::quiet_NaN();
    } else {
        std::sort(amaxes.begin(), amaxes.end());
        const auto at_rank = [&](uint64_t percent) {
            const float value = amaxes[block_model::nearest_rank(amaxes.size(), percent) - 1];
            return block_model::amax_key_floor(block_model::amax_key(value));
        };
        r.amax = amaxes.back();
        r.block_amax_min = amaxes.front();
        r.block_amax_p50 = at_rank(50);
        r.block_amax_p99 = at_rank(99);
        r.scale_inv_min = scale_min;
        r.scale_inv_max = scale_max;
    }
    return r;
}

} // namespace fp8scope::probes
