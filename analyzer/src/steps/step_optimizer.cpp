#include "steps/step_optimizer.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/format/schema.hpp"
#include "model/correlation_index.hpp"
#include "model/median.hpp"
#include "steps/step_clocks.hpp"
#include "steps/step_markers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace fp8scope::analyzer::detail {
namespace {

// What a launch call started on the device, by correlation id: nothing, work, or a GEMM.
enum class Launched : uint8_t { Nothing, Work, Gemm };

// The loop thread's CUDA calls in start order, each with the silence before it (its start minus the latest end of
// the thread's earlier calls; the thread's first call, the longest) and what it launched.
struct ThreadCalls {
    std::vector<int64_t> start_ns, silence_ns;
    std::vector<Launched> launched;
};

ThreadCalls thread_calls(const TraceModel& model, int64_t tid)
{
    std::vector<uint32_t> launched_by(1, 0); // correlation id -> Launched, grown on demand
    auto mark = [&](uint32_t id, Launched what) {
        if (id == 0)
            return;
        if (id >= launched_by.size())
            launched_by.resize(size_t(id) + 1, 0);
        launched_by[id] = std::max<uint32_t>(launched_by[id], uint32_t(what));
    };
    KernelClassCache classes(model);
    for (size_t k = 0; k < model.kernels.size(); ++k) {
        const KernelClass cls = classes.of(k).cls;
        mark(model.kernels.correlation_id[k],
            cls == KernelClass::Fp8Gemm || cls == KernelClass::OtherGemm ? Launched::Gemm : Launched::Work);
    }
    for (uint32_t id : model.memcpys.correlation_id)
        mark(id, Launched::Work);
    for (uint32_t id : model.memsets.correlation_id)
        mark(id, Launched::Work);
    const ApiTable& api = model.api_calls;
    std::vector<size_t> rows;
    for (size_t i = 0; i < api.size(); ++i)
        if (api.global_tid[i] == tid)
            rows.push_back(i);
    std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return api.start_ns[a] < api.start_ns[b]; });
    ThreadCalls calls;
    int64_t busy_until = INT64_MIN;
    for (size_t i : rows) {
        const uint32_t id = api.correlation_id[i];
        calls.start_ns.push_back(api.start_ns[i]);
        // The thread's first call ends the longest silence of all: the thread's whole life before it.
        calls.silence_ns.push_back(
            busy_until == INT64_MIN ? INT64_MAX : std::max<int64_t>(0, api.start_ns[i] - busy_until));
        calls.launched.push_back(id < launched_by.size() ? Launched(launched_by[id]) : Launched::Nothing);
        busy_until = std::max(busy_until, api.end_ns[i]);
    }
    return calls;
}

// The loop's top in [from_ns, until_ns): the launch call after the longest silence (since the launch call before it),
// among the calls up to the first that launched a GEMM (at most kMaxCalls launches); nullopt when nothing was
// launched there.
std::optional<int64_t> loop_top(const ThreadCalls& calls, int64_t from_ns, int64_t until_ns)
{
    constexpr size_t kMaxCalls = 256; // a forward pass reaches its first GEMM long before
    size_t i = size_t(std::lower_bound(calls.start_ns.begin(), calls.start_ns.end(), from_ns) - calls.start_ns.begin());
    std::optional<size_t> best;
    int64_t best_pause = -1, pause = 0; // the longest silence since the previous launch call, calls without work too
    for (size_t launches = 0; i < calls.start_ns.size() && calls.start_ns[i] < until_ns && launches < kMaxCalls; ++i) {
        // A silence before a call that launches nothing (DDP's event syncs after a rank's sleep) still comes before
        // the next launch: it counts for that launch.
        pause = std::max(pause, calls.silence_ns[i]);
        if (calls.launched[i] == Launched::Nothing)
            continue;
        ++launches;
        if (pause > best_pause) {
            best = i;
            best_pause = pause;
        }
        pause = 0;
        if (calls.launched[i] == Launched::Gemm)
            break;
    }
    if (!best)
        return std::nullopt;
    return calls.start_ns[*best];
}

} // namespace

std::optional<StepSet> steps_from_optimizer(const TraceModel& model)
{
    const ThreadMarkers hook = busiest_marker_thread(model, [](const StepMarker& marker) {
        return marker.source == StepMarkerSource::Optimizer || marker.source == StepMarkerSource::OptimizerSkipped;
    });
    if (hook.markers.empty())
        return std::nullopt;
    const int64_t tid = hook.global_tid;
    // Each step's end, the last marker of each step number (several optimizers in one iteration mark one step).
    std::map<int64_t, const StepMarker*> ends;
    for (const StepMarker& marker : hook.markers)
        ends[marker.step] = &marker; // in time order: the last one stays
    std::vector<const StepMarker*> order;
    for (const auto& [step, marker] : ends)
        if (order.empty() || marker->timestamp_ns > order.back()->timestamp_ns) // numbers and times agree
            order.push_back(marker);
    std::vector<int64_t> spacing;
    for (size_t i = 1; i < order.size(); ++i)
        spacing.push_back(order[i]->timestamp_ns - order[i - 1]->timestamp_ns);
    const int64_t typical_ns = spacing.empty() ? 0 : median_of(spacing);

    const ThreadCalls calls = thread_calls(model, tid);
    // Host starts: step 0 at the loop's top in the typical step length before its end (the trace's start for a
    // single step), step k+1 at the loop's top after step k's update.
    std::vector<int64_t> host_starts;
    const int64_t first_end = order.front()->timestamp_ns;
    const int64_t window_ns = typical_ns > 0 ? typical_ns : first_end - model.time_span_ns()->first;
    host_starts.push_back(loop_top(calls, first_end - window_ns, first_end).value_or(first_end - window_ns));
    for (size_t k = 0; k + 1 < order.size(); ++k) {
        const int64_t end_ns = order[k]->timestamp_ns;
        host_starts.push_back(loop_top(calls, end_ns, order[k + 1]->timestamp_ns).value_or(end_ns));
    }
    StepSet set;
    set.source = StepSource::Optimizer;
    std::vector<int64_t> host_ns = host_starts;
    host_ns.push_back(order.back()->timestamp_ns); // the last step ends with its update
    const std::vector<int64_t> device_ns = device_times(model, host_ns);
    std::vector<int64_t> skipped;
    for (size_t k = 0; k < order.size(); ++k) {
        const int64_t start_ns = device_ns[k];
        const int64_t end_ns = device_ns[k + 1];
        if (order[k]->source == StepMarkerSource::OptimizerSkipped)
            skipped.push_back(order[k]->step);
        if (end_ns > start_ns && (set.steps.empty() || start_ns >= set.steps.back().end_ns))
            set.steps.push_back({ order[k]->step, start_ns, end_ns, host_starts[k] });
    }
    if (set.steps.empty())
        return std::nullopt;
    set.detail = fmt::format("{} optimizer steps on thread {} (fp8scope record's PyTorch hook); each step begins at "
                             "the loop thread's first launch after its longest pause since the previous update",
        order.size(), schema::tid_of(tid));
    if (!skipped.empty())
        set.detail += fmt::format(
            "; GradScaler skipped the update of step{} {}", skipped.size() > 1 ? "s" : "", fmt::join(skipped, ", "));
    return set;
}

} // namespace fp8scope::analyzer::detail
