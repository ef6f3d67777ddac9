// Automatic steps from CUDA graph launches (docs/analysis.md "Steps", automatic detection, host evidence): a job
// that captured its step into graphs (torch.cuda.graph, torch.compile mode="reduce-overhead", JAX/XLA command
// buffers) launches the same graph, or the same few graphs, once per step. Its kernel sequence says little (a graph
// replays identically), but the launching thread's cudaGraphLaunch/cuGraphLaunch calls count the steps exactly.
#include "step_period.hpp"

#include "correlation_index.hpp"
#include "device_activity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace fp8scope::analyzer::detail {

namespace {

bool is_graph_launch(std::string_view name)
{
    return name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch");
}

// The smallest k (1..8) such that the sequence repeats with period k in at least 90% of its positions.
std::optional<size_t> sequence_period(const std::vector<int64_t>& ids)
{
    for (size_t k = 1; k <= 8 && 3 * k <= ids.size(); ++k) {
        size_t same = 0;
        for (size_t i = k; i < ids.size(); ++i)
            same += ids[i] == ids[i - k] ? 1 : 0;
        if (same * 10 >= (ids.size() - k) * 9)
            return k;
    }
    return std::nullopt;
}

} // namespace

std::optional<Period> find_graph_step_period(const TraceModel& model)
{
    const ApiTable& api = model.api_calls;
    std::vector<int8_t> named(model.strings.size(), -1);
    std::map<int64_t, std::vector<size_t>> by_thread; // graph launch calls per thread, in start order
    std::unordered_set<uint32_t> counted; // correlation ids already counted
    for (size_t row = 0; row < api.size(); ++row) {
        int8_t& is_launch = named[api.name[row].index];
        if (is_launch < 0)
            is_launch = is_graph_launch(model.strings[api.name[row]]) ? 1 : 0;
        // A runtime launch and the driver launch inside it share the correlation id (the outer call starts first).
        if (is_launch == 1 && counted.insert(api.correlation_id[row]).second)
            by_thread[api.global_tid[row]].push_back(row);
    }
    const auto thread = std::max_element(by_thread.begin(), by_thread.end(),
        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    if (thread == by_thread.end() || thread->second.size() < 3)
        return std::nullopt;
    const std::vector<size_t>& launches = thread->second;

    // Each launch's first activity and graph id, through its correlation id.
    std::unordered_map<uint32_t, size_t> launch_of; // correlation id -> position in `launches`
    for (size_t i = 0; i < launches.size(); ++i)
        launch_of.emplace(api.correlation_id[launches[i]], i);
    std::vector<int64_t> first_start(launches.size(), INT64_MAX), graph_id(launches.size(), 0);
    size_t graph_activities = 0, other_activities = 0;
    const int64_t from_ns = api.start_ns[launches.front()];
    const int64_t to_ns = api.end_ns[launches.back()];
    Activity activity;
    for (ActivityCursor cursor(model); cursor.next(activity);) {
        const auto it = activity.correlation_id != 0 ? launch_of.find(activity.correlation_id) : launch_of.end();
        if (it != launch_of.end()) {
            ++graph_activities;
            first_start[it->second] = std::min(first_start[it->second], activity.start_ns);
            if (activity.kind == ActivityKind::Kernel && graph_id[it->second] == 0)
                graph_id[it->second] = model.kernels.graph_id[activity.row];
        } else if (activity.start_ns >= from_ns && activity.start_ns <= to_ns) {
            ++other_activities;
        }
    }
    // Graphs must carry the job's work where they run: a job that launches one small graph now and then is
    // stepped by its kernel sequence instead.
    if (graph_activities < other_activities)
        return std::nullopt;
    std::vector<int64_t> ids;
    for (size_t i = 0; i < launches.size(); ++i)
        if (first_start[i] != INT64_MAX)
            ids.push_back(graph_id[i]);
    const auto per_step = sequence_period(ids);
    if (!per_step)
        return std::nullopt;
    // The thread's other launches (input copies into the graph's static buffers, an eager optimizer), by call start,
    // with the start of the first activity each launched.
    std::vector<std::pair<int64_t, int64_t>> eager; // (call start, first activity start)
    {
        CorrelationIndex calls(api.correlation_id, &api.is_driver);
        std::unordered_map<size_t, int64_t> first_of_call;
        for (ActivityCursor cursor(model); cursor.next(activity);) {
            if (activity.correlation_id == 0 || launch_of.count(activity.correlation_id))
                continue;
            const auto call = calls.find(activity.correlation_id);
            if (!call || api.global_tid[*call] != thread->first)
                continue;
            auto [it, inserted] = first_of_call.try_emplace(*call, activity.start_ns);
            if (!inserted)
                it->second = std::min(it->second, activity.start_ns);
        }
        for (const auto& [call, start_ns] : first_of_call)
            eager.emplace_back(api.start_ns[call], start_ns);
        std::sort(eager.begin(), eager.end());
    }
    // A step begins where the loop does: after the longest pause of the thread's launches since the previous step's
    // last graph launch (the top of the loop, then the copies into the graph's inputs), else at the graph itself.
    auto loop_start = [&](size_t first_launch, std::optional<size_t> previous_launch) {
        int64_t start_ns = first_start[first_launch];
        if (!previous_launch)
            return start_ns;
        const int64_t from = api.start_ns[launches[*previous_launch]], to = api.start_ns[launches[first_launch]];
        auto it = std::upper_bound(eager.begin(), eager.end(), std::pair<int64_t, int64_t>(from, INT64_MAX));
        int64_t previous = from, longest = to - from; // no launch in between: the pause is the whole interval
        std::optional<size_t> chosen;
        int64_t longest_before = -1;
        for (; it != eager.end() && it->first < to; ++it) {
            if (it->first - previous > longest_before) {
                longest_before = it->first - previous;
                chosen = size_t(it - eager.begin());
            }
            previous = it->first;
        }
        // The graph's own launch may follow the longest pause (nothing of this step was launched before it).
        if (!chosen || to - previous >= longest_before)
            return start_ns;
        (void)longest;
        for (size_t j = *chosen; j < eager.size() && eager[j].first < to; ++j)
            start_ns = std::min(start_ns, eager[j].second);
        return start_ns;
    };
    Period period;
    size_t seen = 0;
    std::optional<size_t> previous_launch;
    for (size_t i = 0; i < launches.size(); ++i) {
        if (first_start[i] == INT64_MAX)
            continue;
        // A step is a whole group of per_step launches: a trailing partial group is not a step.
        if (seen % *per_step == 0 && seen + *per_step <= ids.size()) {
            const int64_t start_ns = loop_start(i, previous_launch);
            if (period.step_starts_ns.empty() || start_ns > period.step_starts_ns.back())
                period.step_starts_ns.push_back(start_ns);
        }
        previous_launch = i;
        ++seen;
    }
    if (period.step_starts_ns.size() < 3)
        return std::nullopt;
    period.description = fmt::format("{} CUDA graph launches on thread {}, {} per step ({} of their activities "
                                     "against {} launched otherwise)",
        ids.size(), thread->first & 0xFFFFFF, *per_step, graph_activities, other_activities);
    return period;
}

} // namespace fp8scope::analyzer::detail
