// The CUDA API calls by name (nsys stats' cuda_api_sum; docs/analysis.md "Top kernels and CUDA API calls"): one row
// per distinct API name with its count and duration figures over the whole trace. The collector's own calls are not
// in the model (collector_work.hpp), so never here.
#pragma once

#include "fp8scope/analyzer/model/trace_model.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace fp8scope::analyzer {

struct ApiTableRow {
    StringRef name; // as recorded: "cudaLaunchKernel_v7000", "cuLaunchKernel"
    bool driver = false; // a driver API call (eventClass CUDA_DRIVER)
    int64_t count = 0;
    int64_t total_ns = 0;
    int64_t min_ns = 0, max_ns = 0;
    double mean_ns = 0; // total_ns / count
    double stddev_ns = 0; // population standard deviation of the durations
};

struct ApiTableResult {
    std::vector<ApiTableRow> rows; // most total time first (ties: more calls, then name index)
    int64_t calls = 0; // every API call of the trace
    int64_t total_ns = 0; // their summed durations: the denominator of each row's share, as in nsys stats
};

// One row per distinct recorded name, as nsys stats' cuda_api_sum groups them. O(calls + names log names).
ApiTableResult api_table(const TraceModel& model);

// The name without CUPTI's version suffix ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"), as nsys stats prints it:
// a name whose sixth- and fifth-last characters are "_v" loses its last six.
std::string_view api_display_name(std::string_view name);

} // namespace fp8scope::analyzer
