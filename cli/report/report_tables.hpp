// The report's top-kernels and CUDA API tables (nsys stats' cuda_gpu_kern_sum and cuda_api_sum; torch.profiler's
// key_averages()), in text, Markdown and JSON. Formatting only: the rows are the analyzer's (kernel_table.hpp,
// api_table.hpp), over the whole trace, most total time first.
#pragma once

#include "fp8scope/analyzer/report/report.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fp8scope::cli {

// Rows per table unless `--top N` says otherwise.
inline constexpr size_t kDefaultTopRows = 10;

// The bytes of a kernel name in a table cell unless `--wide` or COLUMNS say otherwise.
inline constexpr size_t kKernelNameBytes = 70;

// A demangled kernel name for a table cell: no leading "void ", no argument list, at most `max_bytes` bytes (0: the
// whole name) ("void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)" -> "at::native::vectorized_...").
std::string display_kernel_name(std::string_view demangled, size_t max_bytes = kKernelNameBytes);
// The same for the rows of one table, distinct wherever the names are: two names that would be cut to the same
// text are cut in the middle instead, their head, "…", and the part from just before where they differ.
std::vector<std::string> distinct_kernel_names(std::span<const std::string_view> names, size_t max_bytes);
// The top-kernels table's shown rows, so: what every format of the report shows.
std::vector<std::string> top_kernel_display_names(
    const analyzer::TraceModel& model, const analyzer::Report& report, size_t top, size_t max_bytes = kKernelNameBytes);

// `name_bytes`: the name column's width (0: whole names, `--wide`).
void top_kernels_text(std::string& out, const analyzer::TraceModel& model, const analyzer::Report& report, size_t top,
    std::string_view heading, size_t name_bytes = kKernelNameBytes);
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
