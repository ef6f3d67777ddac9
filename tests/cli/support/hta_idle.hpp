// Holistic Trace Analysis' idle time breakdown, re-implemented from its source (facebookresearch/
// HolisticTraceAnalysis @ f4d0062: hta/common/trace_parser.py, hta/common/trace.py, hta/common/trace_filter.py,
// hta/analyzers/breakdown_analysis.py) to run on an exported trace without Python packages, so that a test can hold
// `fp8scope export` to what HTA would compute from it (docs/export.md "Holistic Trace Analysis").
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>

namespace fp8scope::cli_test {

// Idle time per category on one stream, in HTA's units: whole microseconds.
struct HtaStreamIdle {
    double host_wait_us = 0, kernel_wait_us = 0, other_us = 0;
    double total() const { return host_wait_us + kernel_wait_us + other_us; }
};

// TraceAnalysis(...).get_idle_time_breakdown() with its defaults (consecutive_kernel_delay = 30, which is compared
// with microseconds although HTA's docstring says ns; include_last_profiler_step = False), per stream.
std::map<int64_t, HtaStreamIdle> hta_idle_time_breakdown(const nlohmann::json& doc);

} // namespace fp8scope::cli_test
