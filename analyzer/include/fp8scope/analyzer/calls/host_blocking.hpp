// Host-blocking CUDA calls in a trace (docs/analysis.md "Causes of bubbles", rule 1; docs/analysis.md "Syncs").
#pragma once

#include "fp8scope/analyzer/model/analysis_types.hpp"
#include "fp8scope/analyzer/model/trace_model.hpp"

#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

// An API name without its version suffix (_v3020, _v2) and per-thread default-stream suffix (_ptds, _ptsz): the
// name the program called (cudaMemcpyAsync_ptsz_v7000 -> cudaMemcpyAsync, cuMemcpyDtoH_v2 -> cuMemcpyDtoH). The
// host-blocking classification reads it, and reports show it.
std::string_view api_base_name(std::string_view name);

// "stream sync", "device sync", "event sync", "blocking memcpy", "pageable async memcpy", "blocking memset", "other"
// (the kinds of docs/analysis.md "Causes of bubbles").
const char* host_blocking_kind_name(HostBlockingKind kind);

// Every host-blocking call of the trace, in order of start time.
std::vector<HostBlockingCall> find_host_blocking_calls(const TraceModel& model);

} // namespace fp8scope::analyzer
