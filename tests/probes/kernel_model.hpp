// The statistics kernel's algorithm run serially on the host: the same per-element accumulation, bins and
// finalization (probes/src/stats_model.hpp) that tensor_stats_kernel.cu runs in parallel, minus the CUDA
// machinery. Comparing it with the twin checks the kernel's arithmetic without a GPU.
#pragma once

#include "fp8scope/probes/tensor_stats.hpp"

namespace fp8scope::probes::test {

StatsResult emulate_kernel(const StatsParams& params);

} // namespace fp8scope::probes::test
