// Where a zero-code GEMM site sits in the step (docs/analysis.md "Tensor health", Where a GEMM site sits): its place in
// launch order among one sampled step's GEMMs, and forward or backward by the thread that launched it. Used by tensor
// health.
#pragma once

#include "fp8scope/analyzer/trace/tensor_health.hpp"

#include <optional>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer::detail {

// `analysed`: per row of model.tensor_stats, the analysed step holding it (nullopt: none, or left out). The place of
// every GEMM-interception site sampled in the chosen step, by site id. O(samples log samples + API calls in the step).
std::unordered_map<int64_t, GemmSitePlace> gemm_site_places(
    const TraceModel& model, const std::vector<std::optional<int64_t>>& analysed);

} // namespace fp8scope::analyzer::detail
