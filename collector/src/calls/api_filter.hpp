// Which CUDA API calls become RUNTIME/DRIVER rows (docs/collector.md "What it records": launches, copies, syncs,
// events, graph launches and allocations). Tracing every API call costs about 2.9 us per launch on the H100
// (docs/benchmarks.md); enabling only these callback ids keeps the launch path cheap. Matching is by name prefix, so
// every versioned and per-thread-stream variant (cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000, cuLaunchKernelEx,
// ...) is kept.
#pragma once

#include <string_view>

namespace fp8scope::collector {

bool is_traced_runtime_api(std::string_view callback_name);
bool is_traced_driver_api(std::string_view callback_name);

} // namespace fp8scope::collector
