#include "hta_idle.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace fp8scope::cli_test {

namespace {

// One row of HTA's dataframe.
struct Row {
    size_t index = 0; // position in traceEvents (trace_parser.py: reset_index before anything is dropped)
    std::string cat, name;
    double ts = 0, end = 0; // microseconds, rounded as round_down_time_stamps does
    int64_t stream = -1, correlation = -1; // args defaults (event_args_1.0.0.yaml)
    std::optional<size_t> index_correlation; // the linked CPU/GPU row's index, when there is one
};

int64_t arg_or(const nlohmann::json& e, const char* key)
{
    if (!e.contains("args") || !e["args"].is_object() || !e["args"].contains(key) || !e["args"][key].is_number())
        return -1;
    return e["args"][key].get<int64_t>();
}

// trace_filter.py, _filter_gpu_kernels_with_cuda_sync: GPU rows are those with a stream and a correlation, and
// the device-level syncs; every other row is a "CPU operator".
bool on_gpu(const Row& r)
{
    return (r.stream >= 0 && r.correlation >= 0) || r.name == "Event Sync" || r.name == "Context Sync";
}

} // namespace

std::map<int64_t, HtaStreamIdle> hta_idle_time_breakdown(const nlohmann::json& doc)
{
    // trace_parser.py, _parse_trace_dataframe_json and _compress_df: rows without "dur" or "cat" (metadata, flows,
    // counters, instants) and "Trace" spans are dropped; ns-resolution times become whole microseconds by
    // ts = ceil(ts), end = floor(ts + dur).
    std::vector<Row> rows;
    const auto& events = doc["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        if (!e.contains("dur") || !e.contains("cat") || e["cat"] == "Trace")
            continue;
        Row r;
        r.index = i;
        r.cat = e["cat"];
        r.name = e.value("name", "");
        const double ts = e["ts"], dur = e["dur"];
        r.ts = std::ceil(ts);
        r.end = std::floor(ts + dur);
        r.stream = arg_or(e, "stream");
        r.correlation = arg_or(e, "correlation");
        rows.push_back(std::move(r));
    }
    // trace.py, transform_correlation_to_index: CPU and GPU rows with the same correlation are linked both ways.
    std::unordered_map<int64_t, std::vector<size_t>> cpu_by_correlation;
    for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].correlation != -1 && !on_gpu(rows[i]))
            cpu_by_correlation[rows[i].correlation].push_back(i);
    for (Row& r : rows)
        if (r.correlation != -1 && on_gpu(r))
            if (const auto cpu = cpu_by_correlation.find(r.correlation); cpu != cpu_by_correlation.end()) {
                r.index_correlation = rows[cpu->second.back()].index;
                for (size_t c : cpu->second)
                    rows[c].index_correlation = r.index;
            }
    // trace.py, _filter_irrelevant_gpu_kernels (include_last_profiler_step = False): with two or more distinct
    // ProfilerStep#N names, only CPU rows that start before the last step starts are kept, and only the GPU rows
    // whose correlation one of them carries.
    const std::regex step_pattern("^ProfilerStep#(\\d+)");
    std::set<std::string> step_names;
    std::optional<double> last_step_start;
    for (const Row& r : rows)
        if (!on_gpu(r) && std::regex_search(r.name, step_pattern)) {
            step_names.insert(r.name);
            last_step_start = std::max(last_step_start.value_or(r.ts), r.ts);
        }
    if (step_names.size() >= 2) {
        std::set<int64_t> kept_correlations;
        for (const Row& r : rows)
            if (!on_gpu(r) && r.ts < *last_step_start)
                kept_correlations.insert(r.correlation);
        std::erase_if(rows, [&](const Row& r) {
            return on_gpu(r) ? !kept_correlations.contains(r.correlation) : r.ts >= *last_step_start;
        });
    }
    std::unordered_map<size_t, double> ts_by_index;
    for (const Row& r : rows)
        ts_by_index.emplace(r.index, r.ts);

    // breakdown_analysis.py, get_idle_time_breakdown and _analyze_idle_time_for_stream.
    static const std::set<std::string> kKernelCats { "kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy",
        "mtia_ccp_events" };
    constexpr double kConsecutiveKernelDelay = 30;
    std::map<int64_t, std::vector<const Row*>> by_stream;
    for (const Row& r : rows)
        if (r.stream != -1 && kKernelCats.contains(r.cat))
            by_stream[r.stream].push_back(&r);
    std::map<int64_t, HtaStreamIdle> result;
    for (auto& [stream, kernels] : by_stream) {
        std::ranges::stable_sort(kernels, {}, &Row::ts);
        HtaStreamIdle& idle = result[stream];
        for (size_t i = 1; i < kernels.size(); ++i) {
            const double prev_end = kernels[i - 1]->end;
            const double interval = kernels[i]->ts - prev_end;
            const auto runtime
                = kernels[i]->index_correlation ? ts_by_index.find(*kernels[i]->index_correlation) : ts_by_index.end();
            const bool host_wait = runtime != ts_by_index.end() && runtime->second > prev_end;
            if (host_wait)
                idle.host_wait_us += interval;
            else if (interval < kConsecutiveKernelDelay)
                idle.kernel_wait_us += interval;
            else
                idle.other_us += interval;
        }
    }
    return result;
}

} // namespace fp8scope::cli_test
