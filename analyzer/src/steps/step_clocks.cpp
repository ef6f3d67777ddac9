#include "steps/step_clocks.hpp"

#include "model/correlation_index.hpp"
#include "model/device_activity.hpp"

#include <algorithm>
#include <tuple>

namespace fp8scope::analyzer::detail {

HostToDevice::HostToDevice(const TraceModel& model)
{
    CorrelationIndex calls(model.api_calls.correlation_id, &model.api_calls.is_driver);
    std::vector<std::tuple<int64_t, int64_t, int64_t>> rows; // launch, start, end
    Activity activity;
    for (ActivityCursor cursor(model); cursor.next(activity);) {
        const auto call = calls.find(activity.correlation_id);
        rows.emplace_back(
            call ? model.api_calls.start_ns[*call] : activity.start_ns, activity.start_ns, activity.end_ns);
    }
    std::sort(rows.begin(), rows.end());
    const size_t n = rows.size();
    launch_ns_.resize(n);
    end_before_.resize(n);
    start_after_.resize(n);
    for (size_t i = 0; i < n; ++i) {
        launch_ns_[i] = std::get<0>(rows[i]);
        end_before_[i] = std::max(i ? end_before_[i - 1] : INT64_MIN, std::get<2>(rows[i]));
    }
    for (size_t i = n; i-- > 0;)
        start_after_[i] = std::min(i + 1 < n ? start_after_[i + 1] : INT64_MAX, std::get<1>(rows[i]));
}

int64_t HostToDevice::device_time(int64_t host_ns) const
{
    const size_t at = size_t(std::lower_bound(launch_ns_.begin(), launch_ns_.end(), host_ns) - launch_ns_.begin());
    const int64_t busy_until = at > 0 ? end_before_[at - 1] : INT64_MIN;
    const int64_t next_start = at < start_after_.size() ? start_after_[at] : INT64_MAX;
    const int64_t device_ns = std::min(busy_until, next_start);
    return device_ns == INT64_MAX ? host_ns : std::max(host_ns, device_ns);
}

} // namespace fp8scope::analyzer::detail
