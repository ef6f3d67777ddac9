// Automatic steps from CUDA graph launches (docs/analysis.md "Steps", automatic detection, host evidence): a job
// that captured its step into graphs (torch.cuda.graph, torch.compile mode="reduce-overhead", JAX/XLA command
// buffers) launches the same graph, or the same few graphs, once per step. Its kernel sequence says little (a graph
// replays identically), but the launching thread's cudaGraphLaunch/cuGraphLaunch calls count the steps exactly.
#include "steps/step_period.hpp"

#include "model/correlation_index.hpp"
#include "model/device_activity.hpp"

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
    // Every thread's graph launches, in start order: torch.compile(mode="reduce-overhead") launches the forward's
    // graph from the loop's thread and the backward's from autograd's (zoo compile_reduce_overhead); alone, neither
    // carries the step's work. The loop's thread is the one with the most launches.
    std::vector<size_t> launches;
    for (const auto& [tid, rows] : by_thread)
        launches.insert(launches.end(), rows.begin(), rows.end());
    std::sort(launches.begin(), launches.end(), [&](size_t a, size_t b) { return api.start_ns[a] < api.start_ns[b]; });

    // Each launch's first activity and graph id, through its correlation id.
    std::unordered_map<uint32_t, size_t> launch_of; // correlation id -> position in `launches`
    for (size_t i = 0; i < launches.size(); ++i)
        launch_of.emplace(api.correlation_id[launches[i]], i);
    std::vector<int64_t> first_start(launches.size(), INT64_MAX), graph_id(launches.size(), 0);
    size_t graph_activities = 0, other_activities = 0;
    int64_t first_graph_kernel_ns = INT64_MAX;
    uint32_t graph_stream = 0; // the stream the first graph kernel ran on: the loop's (a graph replays on it)
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
            if (activity.kind == ActivityKind::Kernel && activity.start_ns < first_graph_kernel_ns) {
                first_graph_kernel_ns = activity.start_ns;
                graph_stream = model.kernels.stream_id[activity.row];
            }
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
    struct Eager {
        int64_t call_ns = 0, first_activity_ns = 0;
        bool optimizer = false; // launched an optimizer kernel (step_period.cpp's optimizer_name)
        bool on_graph_stream = false; // that optimizer kernel ran on the graphs' stream
        bool operator<(const Eager& o) const { return call_ns < o.call_ns; }
    };
    std::vector<Eager> eager;
    {
        CorrelationIndex calls(api.correlation_id, &api.is_driver);
        std::unordered_map<size_t, Eager> of_call;
        for (ActivityCursor cursor(model); cursor.next(activity);) {
            if (activity.correlation_id == 0 || launch_of.count(activity.correlation_id))
                continue;
            const auto call = calls.find(activity.correlation_id);
            if (!call || api.global_tid[*call] != thread->first)
                continue;
            const bool optimizer = activity.kind == ActivityKind::Kernel
                && optimizer_name(model.strings[model.kernels.name[activity.row]]);
            const bool on_graph_stream = optimizer && model.kernels.stream_id[activity.row] == graph_stream;
            auto [it, inserted] = of_call.try_emplace(
                *call, Eager { api.start_ns[*call], activity.start_ns, optimizer, on_graph_stream });
            if (!inserted) {
                it->second.first_activity_ns = std::min(it->second.first_activity_ns, activity.start_ns);
                it->second.optimizer = it->second.optimizer || optimizer;
                it->second.on_graph_stream = it->second.on_graph_stream || on_graph_stream;
            }
        }
        for (const auto& [call, e] : of_call)
            eager.push_back(e);
        std::sort(eager.begin(), eager.end());
    }
    // A step begins where the loop does: after the longest pause of the thread's launches since the previous step's
    // last graph launch (the top of the loop, then the copies into the graph's inputs), else at the graph itself.
    // An eager optimizer launched in between ends the previous step: only the pauses after its last kernel count
    // (the one before it is the backward's and the optimizer's own Python), when other work follows it.
    auto loop_start = [&](size_t first_launch, std::optional<int64_t> since_ns) {
        int64_t start_ns = first_start[first_launch];
        if (!since_ns)
            return start_ns;
        const int64_t from = *since_ns, to = api.start_ns[launches[first_launch]];
        const auto begin = std::upper_bound(eager.begin(), eager.end(), Eager { from, INT64_MAX, false, false });
        const auto end = std::lower_bound(begin, eager.end(), Eager { to, 0, false, false });
        // The candidates follow the last update that other work follows (an optimizer-named foreach kernel right
        // before the graph, copying its inputs, is the step's first launch, not an update).
        auto cut = begin;
        bool other_after = false;
        for (auto j = end; j != begin; --j) {
            if (!std::prev(j)->optimizer)
                other_after = true;
            else if (other_after) {
                cut = j;
                break;
            }
        }
        int64_t previous = cut == begin ? from : std::prev(cut)->call_ns;
        std::optional<size_t> chosen;
        int64_t longest_before = -1;
        for (auto it = cut; it != end; ++it) {
            if (it->call_ns - previous > longest_before) {
                longest_before = it->call_ns - previous;
                chosen = size_t(it - eager.begin());
            }
            previous = it->call_ns;
        }
        // The graph's own launch may follow the longest pause (nothing of this step was launched before it).
        if (!chosen || to - previous >= longest_before)
            return start_ns;
        for (size_t j = *chosen; j < eager.size() && eager[j].call_ns < to; ++j)
            start_ns = std::min(start_ns, eager[j].first_activity_ns);
        return start_ns;
    };
    Period period;
    // Eager steps before the first graph launch: torch.compile(mode="reduce-overhead") runs its first step eagerly
    // (compiling), with the eager optimizer on the loop's stream. Each update there ends a step (as in the kernel
    // sequence's phase rule); the first begins at the thread's first activity. Warm-up iterations on a side stream
    // before a torch.cuda.graph capture (PyTorch's recipe) run their update elsewhere and are no steps.
    std::optional<int64_t> previous_ns; // the previous step's last graph launch, or the last eager update's call
    size_t eager_steps = 0;
    {
        size_t first_graph = 0;
        while (first_graph < launches.size() && first_start[first_graph] == INT64_MAX)
            ++first_graph;
        const int64_t first_graph_call_ns = first_graph < launches.size() ? api.start_ns[launches[first_graph]] : 0;
        // Optimizer-named launches after the last other eager launch are the first graph step's own (a foreach copy
        // into the graph's inputs), as in loop_start.
        size_t limit = 0;
        for (size_t j = 0; j < eager.size() && eager[j].call_ns < first_graph_call_ns; ++j)
            if (!eager[j].optimizer)
                limit = j;
        std::vector<size_t> update_ends; // positions in `eager` of each group's last update launch
        for (size_t j = 0, since_update = 0; j < limit; ++j) {
            if (!eager[j].on_graph_stream) {
                ++since_update;
                continue;
            }
            if (!update_ends.empty() && since_update <= 8)
                update_ends.back() = j; // the same group: update launches up to 8 launches apart
            else
                update_ends.push_back(j);
            since_update = 0;
        }
        if (!update_ends.empty()) {
            period.step_starts_ns.push_back(eager.front().first_activity_ns);
            for (size_t g = 0; g + 1 < update_ends.size(); ++g)
                if (eager[update_ends[g] + 1].first_activity_ns > period.step_starts_ns.back())
                    period.step_starts_ns.push_back(eager[update_ends[g] + 1].first_activity_ns);
            previous_ns = eager[update_ends.back()].call_ns;
            eager_steps = period.step_starts_ns.size();
        }
    }
    size_t seen = 0;
    for (size_t i = 0; i < launches.size(); ++i) {
        if (first_start[i] == INT64_MAX)
            continue;
        // A step is a whole group of per_step launches: a trailing partial group is not a step.
        if (seen % *per_step == 0 && seen + *per_step <= ids.size()) {
            const int64_t start_ns = loop_start(i, previous_ns);
            if (period.step_starts_ns.empty() || start_ns > period.step_starts_ns.back())
                period.step_starts_ns.push_back(start_ns);
        }
        previous_ns = api.start_ns[launches[i]];
        ++seen;
    }
    if (period.step_starts_ns.size() < 3)
        return std::nullopt;
    period.description = by_thread.size() == 1
        ? fmt::format("{} CUDA graph launches on thread {}, {} per step ({} of their activities against {} launched "
                      "otherwise)",
            ids.size(), thread->first & 0xFFFFFF, *per_step, graph_activities, other_activities)
        : fmt::format("{} CUDA graph launches on {} threads (the loop's: thread {}), {} per step ({} of their "
                      "activities against {} launched otherwise)",
            ids.size(), by_thread.size(), thread->first & 0xFFFFFF, *per_step, graph_activities, other_activities);
    if (eager_steps > 0)
        period.description += fmt::format(", after {} eager step{} (each closed by its optimizer update on the "
                                          "graphs' stream)",
            eager_steps, eager_steps == 1 ? "" : "s");
    return period;
}

} // namespace fp8scope::analyzer::detail
