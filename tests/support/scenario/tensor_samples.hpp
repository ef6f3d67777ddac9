// Tensor statistics rows for scenarios (header-only), shared by the analyzer's and the CLI's tests.
#pragma once

#include "fp8scope/format/rows.hpp"

#include <cstdint>
#include <optional>

namespace fp8scope::testing {

// A BF16 tensor of 1000 elements cast to E4M3 with scale_inv 1/64 (covers amax 7) and amax 1.75: headroom 2 bits,
// nothing saturated, underflowed or non-finite.
inline TensorStatsRow healthy_sample(int64_t site_id, std::optional<int64_t> step, int64_t timestamp_ns)
{
    TensorStatsRow row;
    row.site_id = site_id;
    row.step = step;
    row.timestamp_ns = timestamp_ns;
    row.dtype = schema::Dtype::BFloat16;
    row.target_format = schema::Fp8Format::E4M3;
    row.numel = 1000;
    row.scale = 64.0;
    row.scale_inv = 1.0 / 64.0;
    row.amax = 1.75;
    row.min_nonzero_abs = 0.01;
    return row;
}

} // namespace fp8scope::testing
