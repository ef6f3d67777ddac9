#include "steps/step_clocks.hpp"

#include "model/correlation_index.hpp"
#include "model/device_activity.hpp"

#include <algorithm>

namespace fp8scope::analyzer::detail {

std::vector<int64_t> device_times(const TraceModel& model, const std::vector<int64_t>& host_ns)
{
    const size_t m = host_ns.size();
    if (m == 0)
        return {};
    std::vector<int64_t> sorted = host_ns;
    std::sort(sorted.begin(), sorted.end());
    // Per gap between consecutive sorted host times (m + 1 buckets: before the first, ..., after the last), the
    // latest end and the earliest start of the activities launched in it.
    std::vector<int64_t> latest_end(m + 1, INT64_MIN), earliest_start(m + 1, INT64_MAX);
    CorrelationIndex calls(model.api_calls.correlation_id, &model.api_calls.is_driver);
    Activity activity;
    for (ActivityCursor cursor(model); cursor.next(activity);) {
        const auto call = calls.find(activity.correlation_id);
        const int64_t launch_ns = call ? model.api_calls.start_ns[*call] : activity.start_ns;
        // Bucket b holds launches in [sorted[b - 1], sorted[b]): launched before sorted[b], at or after sorted[b - 1].
        const size_t b = size_t(std::upper_bound(sorted.begin(), sorted.end(), launch_ns) - sorted.begin());
        latest_end[b] = std::max(latest_end[b], activity.end_ns);
        earliest_start[b] = std::min(earliest_start[b], activity.start_ns);
    }
    // Host time j (sorted): launched before it are buckets 0..j, at or after it buckets j + 1..m.
    std::vector<int64_t> before(m), after(m);
    int64_t running = INT64_MIN;
    for (size_t j = 0; j < m; ++j)
        before[j] = running = std::max(running, latest_end[j]);
    running = INT64_MAX;
    for (size_t j = m; j-- > 0;)
        after[j] = running = std::min(running, earliest_start[j + 1]);
    std::vector<int64_t> out(m);
    for (size_t i = 0; i < m; ++i) {
        const size_t j = size_t(std::lower_bound(sorted.begin(), sorted.end(), host_ns[i]) - sorted.begin());
        const int64_t device_ns = std::min(before[j], after[j]);
        out[i] = device_ns == INT64_MAX ? host_ns[i] : std::max(host_ns[i], device_ns);
    }
    return out;
}

} // namespace fp8scope::analyzer::detail
