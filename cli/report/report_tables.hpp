// The report's top-kernels and CUDA API tables (nsys stats' cuda_gpu_kern_sum and cuda_api_sum; torch.profiler's
// key_averages()), in text, Markdown and JSON. Formatting only: the rows are the analyzer's (kernel_table.hpp,
// api_table.hpp), over the whole trace, most total time first.
#pragma once

#include "fp8scope/analyzer/trace/report.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace fp8scope::cli {

// Rows per table unless `--top N` says otherwise.
inline constexpr size_t kDefaultTopRows = 10;

// A demangled kernel name for a table cell: no leading "void ", no argument list, at most `max_bytes` bytes
// ("void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> "at::native::vectorized_elementwise_...").
std::string display_kernel_name(std::string_view demangled, size_t max_bytes = 70);

void top_kernels_text(std::string& out, const analyzer::TraceModel& model, const analyzer::Report& report, size_t top,
    std::string_view heading);
void top_api_text(std::string& out, const analyzer::TraceModel& model, const analyzer::Report& report, size_t top,
    std::string_view heading);
std::string top_tables_markdown(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top);
// The same two tables in HTML, a kernel's full demangled name in its cell's title.
std::string top_tables_html(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top);
// {"names", "kernels", "total_ns", "rows": [{name (full), display_name, class, count, total_ns, mean_ns, min_ns,
// max_ns, stddev_ns, share}]}; the API's likewise, with "driver".
nlohmann::ordered_json top_kernels_json(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top);
nlohmann::ordered_json top_api_json(const analyzer::TraceModel& model, const analyzer::Report& report, size_t top);

} // namespace fp8scope::cli
