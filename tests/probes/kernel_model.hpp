// The statistics kernels' algorithm run serially on the host: the same per-element and per-group work, bins and
// finalization (probes/src/hp_group.hpp, stats_model.hpp) that the kernels run in parallel, minus the CUDA
// machinery. Comparing it with the twin checks the kernel's arithmetic without a GPU.
#pragma once

#include "fp8scope/probes/tensor_stats.hpp"

namespace fp8scope::probes::test {

// `group_words`: 32-bit words per group of the high-precision kernel (its groups hold up to 16).
StatsResult emulate_kernel(const StatsParams& params, size_t group_words = 16);

} // namespace fp8scope::probes::test
