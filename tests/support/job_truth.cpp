#include "job_truth.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace fp8scope::testing {

JobActivities job_activities(const analyzer::TraceModel& model)
{
    std::unordered_map<uint32_t, int64_t> launch; // correlation id -> call start (the runtime call over the driver's)
    const analyzer::ApiTable& api = model.api_calls;
    for (size_t i = 0; i < api.size(); ++i) {
        auto [it, inserted] = launch.try_emplace(api.correlation_id[i], api.start_ns[i]);
        if (!inserted && !api.is_driver[i])
            it->second = api.start_ns[i];
    }
    std::vector<std::pair<int64_t, int64_t>> rows;
    auto add = [&](const std::vector<int64_t>& starts, const std::vector<uint32_t>& ids) {
        for (size_t i = 0; i < starts.size(); ++i) {
            const auto it = launch.find(ids[i]);
            rows.emplace_back(starts[i], it == launch.end() ? starts[i] : it->second);
        }
    };
    add(model.kernels.start_ns, model.kernels.correlation_id);
    add(model.memcpys.start_ns, model.memcpys.correlation_id);
    add(model.memsets.start_ns, model.memsets.correlation_id);
    std::sort(rows.begin(), rows.end());
    JobActivities a;
    for (auto [start, launched] : rows) {
        a.start_ns.push_back(start);
        a.launch_ns.push_back(launched);
    }
    return a;
}

std::vector<size_t> true_boundaries(const JobActivities& a, const std::vector<int64_t>& step_starts_ns)
{
    std::vector<size_t> bounds;
    for (int64_t step_start : step_starts_ns) {
        size_t best = a.start_ns.size();
        for (size_t i = 0; i < a.start_ns.size(); ++i)
            if (a.launch_ns[i] >= step_start) {
                best = i;
                break;
            }
        bounds.push_back(best);
    }
    return bounds;
}

size_t position_of(const JobActivities& a, int64_t start_ns)
{
    return size_t(std::lower_bound(a.start_ns.begin(), a.start_ns.end(), start_ns) - a.start_ns.begin());
}

} // namespace fp8scope::testing
