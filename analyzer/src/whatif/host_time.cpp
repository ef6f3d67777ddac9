// The host's time per kernel from the API calls (host_time.hpp).
#include "host_time.hpp"
#include "step_kernels.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <vector>

namespace fp8scope::analyzer::detail {

double host_ns_per_kernel(const TraceModel& model, const StepSet& steps, int64_t stall_threshold_ns)
{
    if (steps.steps.empty())
        return 0;
    const ApiTable& api = model.api_calls;
    std::unordered_map<uint32_t, size_t> call_of; // correlation id -> API call
    call_of.reserve(api.size());
    for (size_t i = 0; i < api.size(); ++i)
        call_of.emplace(api.correlation_id[i], i);
    // The analysed steps' kernels, and the first and last host time at which one of them was launched.
    const KernelTable& k = model.kernels;
    int64_t kernels = 0, first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < k.size(); ++i) {
        if (!starts_in_analysed_step(steps, k.start_ns[i]))
            continue;
        ++kernels;
        if (const auto call = call_of.find(k.correlation_id[i]); call != call_of.end()) {
            first = std::min(first, api.start_ns[call->second]);
            last = std::max(last, api.end_ns[call->second]);
        }
    }
    if (kernels == 0 || first > last)
        return 0;
    std::vector<size_t> calls;
    int64_t next_call = INT64_MAX; // the first call after the window: the silence before it is the last kernel's
    for (size_t i = 0; i < api.size(); ++i) {
        if (api.start_ns[i] >= first && api.end_ns[i] <= last && api.end_ns[i] >= api.start_ns[i])
            calls.push_back(i);
        else if (api.start_ns[i] >= last)
            next_call = std::min(next_call, api.start_ns[i]);
    }
    if (calls.empty())
        return 0;
    std::vector<int64_t> durations;
    durations.reserve(calls.size());
    for (const size_t i : calls)
        durations.push_back(api.end_ns[i] - api.start_ns[i]);
    const auto middle = durations.begin() + static_cast<std::ptrdiff_t>(durations.size() / 2);
    std::ranges::nth_element(durations, middle);
    const int64_t typical = *middle;
    std::ranges::sort(calls, {}, [&](size_t i) { return api.start_ns[i]; });
    double host = 0;
    int64_t covered = api.start_ns[calls.front()]; // the host timeline is accounted for up to here
    for (const size_t i : calls) {
        const int64_t start = api.start_ns[i], end = api.end_ns[i];
        if (start > covered && start - covered <= stall_threshold_ns)
            host += static_cast<double>(start - covered);
        const int64_t from = std::max(start, covered);
        if (end > from)
            host += static_cast<double>(std::min(end - from, typical));
        covered = std::max(covered, end);
    }
    if (next_call != INT64_MAX && next_call - covered <= stall_threshold_ns)
        host += static_cast<double>(next_call - covered);
    return host / static_cast<double>(kernels);
}

} // namespace fp8scope::analyzer::detail
