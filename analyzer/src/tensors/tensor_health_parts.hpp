// The parts of tensor health (tensor_health.cpp) in files of their own: where a zero-code GEMM site sits in the step
// (gemm_places.cpp; docs/analysis.md "Tensor health", Where a GEMM site sits): its place in launch order among one
// sampled step's GEMMs, and forward or backward by the thread that launched it; and the per-block figures of sites
// scaled per row or block (block_health.cpp).
#pragma once

#include "fp8scope/analyzer/tensors/tensor_health.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer::detail {

// `analysed`: per row of model.tensor_stats, the analysed step holding it (nullopt: none, or left out). The place of
// every GEMM-interception site sampled in the chosen step, by site id. O(samples log samples + API calls in the step).
std::unordered_map<int64_t, GemmSitePlace> gemm_site_places(
    const TraceModel& model, const std::vector<std::optional<int64_t>>& analysed);

// BlockSiteHealth for every site of `health` with per-block statistics in the analysed steps, the totals' count of
// them and the ranking by spread (at most top_n).
void add_block_health(
    TensorHealth& health, const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device, size_t top_n);

} // namespace fp8scope::analyzer::detail
