// Tensor health's per-block figures (block_health.cpp), filled after the per-tensor ones (tensor_health.cpp).
#pragma once

#include "fp8scope/analyzer/trace/tensor_health.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace fp8scope::analyzer::detail {

// BlockSiteHealth for every site of `health` with per-block statistics in the analysed steps, the totals' count of
// them and the ranking by spread (at most top_n).
void add_block_health(
    TensorHealth& health, const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device, size_t top_n);

} // namespace fp8scope::analyzer::detail
