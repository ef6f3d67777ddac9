// The FP8 tensors of a trace from its sites' per-step samples (numerics.hpp's find_fp8_tensors), for the verdict and
// for compare, which has the samples already.
#pragma once

#include "fp8scope/analyzer/numerics/numerics.hpp"
#include "tensors/logical_roles.hpp"
#include "tensors/site_samples.hpp"

#include <vector>

namespace fp8scope::analyzer::detail {

// FP8 code sites in the same place (the last two parts of the NVTX path, backward suffixes dropped) with the same
// dtype, element count, amax, scale_inv, codes at max, histogram and per-block statistics in every step they were
// sampled are one tensor; its probe is the twin of its first code site (LogicalRoles::twin), and tensors with one
// probe are merged. Probes with a target format and no codes are tensors of their own. By name site.
std::vector<Fp8Tensor> group_fp8_tensors(const TraceModel& model, const SiteSamples& samples);

} // namespace fp8scope::analyzer::detail
