// Busy time, bubbles and their causes (docs/analysis.md "Busy time and bubbles", "Causes of bubbles"). One walk
// over each device's activities in start order builds the busy union and its gaps; each gap is classified once
// (into one cause, or under rule 1 into `sync` and `host` pieces) and then cut at step boundaries. Lookups are
// binary searches over per-thread arrays built once: O(n log n).
#include "fp8scope/analyzer/idle/bubbles.hpp"

#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "idle/host_intervals.hpp"
#include "idle/launch_call_index.hpp"
#include "model/device_activity.hpp"
#include "model/median.hpp"

#include <algorithm>
#include <unordered_map>

namespace fp8scope::analyzer {
namespace {

using namespace bubbles_detail;

// One cause's share of a gap: [start_ns, end_ns) with its cause (and, for `sync`, the call it is charged to).
struct CausePiece {
    int64_t start_ns = 0, end_ns = 0;
    BubbleCause cause = BubbleCause::Host;
    std::optional<size_t> sync_call;
};

class Classifier {
public:
    Classifier(const TraceModel& model, const std::vector<HostBlockingCall>& blocking,
        const detail::CorrelationIndex& launch_calls)
        : model_(model)
        , blocking_(blocking)
        , api_rows_(launch_calls)
    {
        const ApiTable& api = model.api_calls;
        // Each thread's union is sized to its rows first: grown by doubling, the unions of 10 M calls held up to
        // twice their size, and copied themselves at each step
        // (docs/benchmarks.md "The analyzer at the speed of its storage").
        const auto for_each_run = [&](auto&& on_run) {
            size_t first = 0;
            for (size_t row = 1; row <= api.size(); ++row)
                if (row == api.size() || api.global_tid[row] != api.global_tid[first]) {
                    on_run(thread_of(api.global_tid[first]), first, row);
                    first = row;
                }
        };
        std::unordered_map<int64_t, size_t> rows_of;
        for_each_run([&](ThreadActivity&, size_t first, size_t end) { rows_of[api.global_tid[first]] += end - first; });
        for (const auto& [tid, rows] : rows_of)
            thread_of(tid).api.reserve(rows);
        // Rows come in start order, so per thread too.
        for_each_run([&](ThreadActivity& thread, size_t first, size_t end) {
            for (size_t row = first; row < end; ++row)
                thread.api.add(row);
        });
        for (auto& [tid, activity] : threads_) {
            activity.median_silence_ns = activity.api.median_hole();
            activity.stall_threshold_ns
                = std::max(kHostStallMinNs, kHostStallMedianMultiple * activity.median_silence_ns);
        }
        for (size_t i = 0; i < blocking.size(); ++i) {
            thread_of(blocking[i].global_tid).blocking_by_end.emplace_back(blocking[i].end_ns, i);
            all_blocking_by_end_.emplace_back(blocking[i].end_ns, i);
        }
        for (auto& [tid, activity] : threads_)
            std::sort(activity.blocking_by_end.begin(), activity.blocking_by_end.end());
        std::sort(all_blocking_by_end_.begin(), all_blocking_by_end_.end());
    }

    std::optional<size_t> launching_call(uint32_t correlation_id) const { return api_rows_.find(correlation_id); }

    void set_epsilon(int64_t epsilon_ns) { epsilon_ns_ = epsilon_ns; }

    // Spec "Cause of a bubble" for the gap [a, b) of `device`, ended by an activity launched by `call` (none
    // when the activity has no API row, or when nothing ends the gap inside the analysed steps).
    // `comm` is the time communication kernels cover on this device (empty unless the run is multi-rank).
    // `pieces` receives the gap's pieces in time order. A gap that communication kernels cover for more than
    // kCommShare is `comm` whole (rule 4); one they cover less of is split at their cover
    // (docs/analysis.md "Causes of bubbles"): the covered stretches are `comm`, each other stretch is a gap of its own
    // for rules 1-3 (with the same launching call). Under rule 1 the launching thread's silences longer than its stall
    // threshold are `host` pieces and the rest is `sync`.
    void classify(std::vector<CausePiece>& pieces, int64_t a, int64_t b, uint32_t device, bool ended_by_activity,
        std::optional<size_t> call, const IntervalUnion& comm) const
    {
        pieces.clear();
        const int64_t covered = comm.covered(a, b);
        if (covered > 0 && double(covered) <= kCommShare * double(b - a)) {
            int64_t from = a;
            comm.for_each_within(a, b, [&](int64_t start, int64_t end) {
                if (start > from) // ended by the collective's start: an activity
                    classify_uncovered(pieces, from, start, device, true, call);
                pieces.push_back({ start, end, BubbleCause::Comm, std::nullopt });
                from = end;
            });
            if (b > from)
                classify_uncovered(pieces, from, b, device, ended_by_activity, call);
            return;
        }
        Bubble bubble;
        classify_whole(bubble, a, b, device, ended_by_activity, call, comm);
        if (bubble.cause == BubbleCause::Comm) {
            pieces.push_back({ a, b, bubble.cause, std::nullopt });
            return;
        }
        split_sync(pieces, bubble, a, b, call);
    }

private:
    // Rules 1-3 for [a, b), appended to `pieces`.
    void classify_uncovered(std::vector<CausePiece>& pieces, int64_t a, int64_t b, uint32_t device,
        bool ended_by_activity, std::optional<size_t> call) const
    {
        static const IntervalUnion kNoComm;
        Bubble bubble;
        classify_whole(bubble, a, b, device, ended_by_activity, call, kNoComm);
        split_sync(pieces, bubble, a, b, call);
    }

    // Appends the gap [a, b) of one cause, split under rule 1 into `sync` and `host` pieces.
    void split_sync(
        std::vector<CausePiece>& pieces, const Bubble& bubble, int64_t a, int64_t b, std::optional<size_t> call) const
    {
        if (bubble.cause != BubbleCause::Sync || !call) {
            pieces.push_back({ a, b, bubble.cause, bubble.sync_call });
            return;
        }
        // Rule 1 owns the idle time only while the thread waited in the sync and issued the next launch: a stretch
        // in which the launching thread made no CUDA call for longer than its stall threshold (a data loader after
        // the step's `.item()`, Python work before it) was not the sync's doing, and graphs or removing the sync
        // would not give it back.
        const ThreadActivity& thread = threads_.find(model_.api_calls.global_tid[*call])->second;
        int64_t from = a;
        thread.api.for_each_hole(a, b, thread.stall_threshold_ns, [&](int64_t hole_start, int64_t hole_end) {
            if (hole_start > from)
                pieces.push_back({ from, hole_start, BubbleCause::Sync, bubble.sync_call });
            pieces.push_back({ hole_start, hole_end, BubbleCause::Host, std::nullopt });
            from = hole_end;
        });
        if (b > from)
            pieces.push_back({ from, b, BubbleCause::Sync, bubble.sync_call });
    }

    void classify_whole(Bubble& bubble, int64_t a, int64_t b, uint32_t device, bool ended_by_activity,
        std::optional<size_t> call, const IntervalUnion& comm) const
    {
        // Rule 4 is tried first: a gap that a collective fills is not explained by what the host did around it.
        if (double(comm.covered(a, b)) > kCommShare * double(b - a)) {
            bubble.cause = BubbleCause::Comm;
            return;
        }
        if (!call) {
            // No launching call, so no thread to look at: a sync on any thread that waited on this device
            // (or on an unknown one) still explains the gap; otherwise the work was submitted by something the
            // trace does not show (dependency), or never came (host).
            bubble.sync_call = blocking_ended_in(all_blocking_by_end_, a, b,
                [&](size_t i) { return !blocking_[i].device_id || *blocking_[i].device_id == device; });
            bubble.cause = bubble.sync_call ? BubbleCause::Sync
                : ended_by_activity         ? BubbleCause::Dependency
                                            : BubbleCause::Host;
            return;
        }
        const ApiTable& api = model_.api_calls;
        const auto thread = threads_.find(api.global_tid[*call]);
        bubble.sync_call = blocking_ended_in(thread->second.blocking_by_end, a, b, [](size_t) { return true; });
        if (bubble.sync_call)
            bubble.cause = BubbleCause::Sync;
        else if (api.end_ns[*call] < a - epsilon_ns_)
            bubble.cause = BubbleCause::Dependency;
        else if (thread->second.api.longest_hole(a, b) > thread->second.stall_threshold_ns)
            bubble.cause = BubbleCause::Host;
        else
            bubble.cause = BubbleCause::Launch;
    }

public:
    const ThreadActivity* thread(int64_t global_tid) const
    {
        const auto it = threads_.find(global_tid);
        return it == threads_.end() ? nullptr : &it->second;
    }

private:
    ThreadActivity& thread_of(int64_t global_tid)
    {
        return threads_.try_emplace(global_tid, model_.api_calls).first->second;
    }

    const TraceModel& model_;
    const std::vector<HostBlockingCall>& blocking_;
    const detail::CorrelationIndex& api_rows_;
    std::unordered_map<int64_t, ThreadActivity> threads_;
    std::vector<std::pair<int64_t, size_t>> all_blocking_by_end_;
    int64_t epsilon_ns_ = 0;
};

size_t gap_bucket(int64_t length_ns)
{
    size_t bucket = 0;
    while (bucket < kGapBucketBoundsNs.size() && length_ns >= kGapBucketBoundsNs[bucket])
        ++bucket;
    return bucket;
}

void add(BubbleTotals& into, const BubbleTotals& from)
{
    into.step_ns += from.step_ns;
    into.busy_ns += from.busy_ns;
    into.idle_ns += from.idle_ns;
    into.bubble_count += from.bubble_count;
    into.graph_removable_ns += from.graph_removable_ns;
    into.host_in_launches_ns += from.host_in_launches_ns;
    into.sync_after_return_ns += from.sync_after_return_ns;
    for (size_t i = 0; i < kBubbleCauseCount; ++i)
        into.cause_ns[i] += from.cause_ns[i];
    for (size_t i = 0; i < kGapBucketCount; ++i)
        into.gap_counts[i] += from.gap_counts[i];
}

void finish(BubbleTotals& totals)
{
    totals.busy_ns = totals.step_ns - totals.idle_ns;
    totals.bubble_ratio = totals.step_ns > 0 ? double(totals.idle_ns) / double(totals.step_ns) : 0.0;
}

// The median gap between consecutive kernels of one graph launch (same correlation id) on one stream.
void graph_kernel_gap(const TraceModel& model, BubbleAnalysis& result)
{
    const KernelTable& k = model.kernels;
    std::unordered_map<uint64_t, int64_t> last_end; // (correlation id, stream) -> end of its previous kernel
    detail::SampleValues gaps;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.graph_id[i] == 0)
            continue;
        const uint64_t key = (uint64_t(k.correlation_id[i]) << 32) | k.stream_id[i];
        const auto [it, inserted] = last_end.try_emplace(key, k.end_ns[i]);
        if (!inserted) {
            if (k.start_ns[i] >= it->second)
                gaps.push_back(k.start_ns[i] - it->second);
            it->second = std::max(it->second, k.end_ns[i]);
        }
    }
    if (int64_t(gaps.size()) >= kMinGraphGapSamples) {
        result.graph_gap_samples = int64_t(gaps.size());
        result.graph_gap_ns = gaps.median();
    }
}

} // namespace

const char* bubble_cause_name(BubbleCause cause)
{
    switch (cause) {
    case BubbleCause::Sync:
        return "sync";
    case BubbleCause::Dependency:
        return "dependency";
    case BubbleCause::Launch:
        return "launch";
    case BubbleCause::Host:
        return "host";
    case BubbleCause::Comm:
        return "comm";
    }
    return "unknown";
}

BubbleAnalysis analyze_bubbles(
    const TraceModel& model, const StepSet& step_set, const std::vector<HostBlockingCall>& blocking)
{
    return detail::analyze_bubbles(model, step_set, blocking, detail::launch_call_index(model.api_calls));
}

BubbleAnalysis detail::analyze_bubbles(const TraceModel& model, const StepSet& step_set,
    const std::vector<HostBlockingCall>& blocking, const CorrelationIndex& launch_calls)
{
    BubbleAnalysis result;
    const std::vector<StepInterval>& steps = step_set.steps;

    // Epsilon, and the devices with work of non-zero length inside the steps. Found before the threads' API unions
    // are built, so that the latencies (40 MB on 10 M kernels) are gone by then.
    const int64_t steps_start_ns = steps.empty() ? 0 : steps.front().start_ns;
    const int64_t steps_end_ns = steps.empty() ? 0 : steps.back().end_ns;
    detail::SampleValues latencies_ns;
    const size_t activities = model.kernels.size() + model.memcpys.size() + model.memsets.size();
    latencies_ns.reserve(activities);
    // Per latency: was the activity launched onto an idle device? 1 bit a sample (1.25 MB on 10 M kernels); the
    // median over those is then taken in place (SampleValues::keep()).
    std::vector<bool> onto_idle;
    onto_idle.reserve(activities);
    // Per device, the latest end of the activities started so far. Activities come in start order, so an activity
    // whose launch call ended at or after that time found the device idle: nothing ahead of it, on any stream. The
    // device, not the stream: a kernel of another stream that holds the SMs delays the start as well, and the gaps
    // rule 2 judges are gaps of the whole device, so ε is measured in the same state. Devices are few.
    std::vector<std::pair<uint32_t, int64_t>> device_busy_until_ns;
    size_t device_slot = 0; // the last device's: activities come in runs of one device
    const auto busy_until_of = [&](uint32_t device) -> int64_t& {
        if (device_slot < device_busy_until_ns.size() && device_busy_until_ns[device_slot].first == device)
            return device_busy_until_ns[device_slot].second;
        for (device_slot = 0; device_slot < device_busy_until_ns.size(); ++device_slot)
            if (device_busy_until_ns[device_slot].first == device)
                return device_busy_until_ns[device_slot].second;
        device_busy_until_ns.emplace_back(device, INT64_MIN);
        return device_busy_until_ns.back().second;
    };
    // The main launching thread (most launched activities), for the threshold the report prints, counted in the same
    // walk. Launches come in runs from one thread, so the thread's counter is looked up only when the thread changes
    // (map elements never move).
    std::unordered_map<int64_t, int64_t> launched;
    int64_t best = 0;
    int64_t counted_tid = 0;
    int64_t* count = nullptr;
    detail::Activity activity;
    for (detail::ActivityCursor cursor(model); cursor.next(activity);) {
        int64_t& busy_until = busy_until_of(activity.device_id);
        if (const auto call = launch_calls.find(activity.correlation_id)) {
            const int64_t call_end_ns = model.api_calls.end_ns[*call];
            latencies_ns.push_back(activity.start_ns - call_end_ns);
            onto_idle.push_back(call_end_ns >= busy_until);
            result.idle_launches += call_end_ns >= busy_until;
            const int64_t tid = model.api_calls.global_tid[*call];
            if (!count || tid != counted_tid) {
                count = &launched[tid];
                counted_tid = tid;
            }
            if (++*count > best) {
                best = *count;
                result.launching_thread_tid = tid;
            }
        }
        busy_until = std::max(busy_until, activity.end_ns);
        if (activity.end_ns > activity.start_ns && activity.end_ns > steps_start_ns && activity.start_ns < steps_end_ns
            && std::find(result.devices.begin(), result.devices.end(), activity.device_id) == result.devices.end())
            result.devices.push_back(activity.device_id);
    }
    std::sort(result.devices.begin(), result.devices.end());
    result.epsilon_from_idle_launches = result.idle_launches >= kMinIdleLaunchSamples;
    if (result.epsilon_from_idle_launches)
        latencies_ns.keep(onto_idle);
    std::vector<bool>().swap(onto_idle);
    result.epsilon_samples = int64_t(latencies_ns.size());
    result.epsilon_ns = std::max<int64_t>(0, latencies_ns.median());
    latencies_ns.release();
    Classifier classifier(model, blocking, launch_calls);
    if (const ThreadActivity* t = classifier.thread(result.launching_thread_tid)) {
        result.host_stall_threshold_ns = t->stall_threshold_ns;
        result.host_stall_median_silence_ns = t->median_silence_ns;
    }
    graph_kernel_gap(model, result);
    classifier.set_epsilon(result.epsilon_ns);

    // Multi-rank runs (rule 4): communication kernels wait for the other ranks, so they are not busy time; the
    // gaps they fill are charged to `comm`.
    KernelClassCache classes(model);
    std::vector<bool> is_comm(model.kernels.size(), false);
    bool any_comm = false;
    for (size_t k = 0; k < model.kernels.size(); ++k) {
        is_comm[k] = classes.of(k).cls == KernelClass::Communication;
        any_comm = any_comm || is_comm[k];
    }
    result.multi_rank = model.meta.world_size > 1 || any_comm;
    if (!result.multi_rank)
        is_comm.assign(is_comm.size(), false);

    for (uint32_t device : result.devices) {
        IntervalUnion comm;
        for (size_t k = 0; k < model.kernels.size(); ++k)
            if (is_comm[k] && model.kernels.device_id[k] == device)
                comm.add(model.kernels.start_ns[k], model.kernels.end_ns[k]);
        comm.finish();
        const size_t first_row = result.per_device_step.size();
        for (const StepInterval& step : steps) {
            DeviceStepBubbles row { device, step.index, step.start_ns, step.end_ns, {}, 0 };
            row.totals.step_ns = step.end_ns - step.start_ns;
            result.per_device_step.push_back(row);
        }
        // Each step's host interval on this device (two clocks, issue 42): from the first to the last launch call
        // (by call start) of the activities that start in the step's device interval. Host idle inside it is
        // framework work a graph removes; before or after it (data loading, logging, a rank's sleep at the loop's
        // top) it is between steps. By the activities, not the calls' own times: a loop that runs ahead of the GPU
        // launches the next step's work during this one.
        std::vector<std::pair<int64_t, int64_t>> launch_span(steps.size(), { INT64_MAX, INT64_MIN });
        for (detail::ActivityCursor cursor(model, device); cursor.next(activity);) {
            const auto call = classifier.launching_call(activity.correlation_id);
            if (!call || activity.end_ns <= activity.start_ns)
                continue;
            const int64_t call_ns = model.api_calls.start_ns[*call];
            const auto step = std::upper_bound(steps.begin(), steps.end(), activity.start_ns,
                [](int64_t t, const StepInterval& s) { return t < s.start_ns; });
            if (step == steps.begin() || activity.start_ns >= (step - 1)->end_ns)
                continue;
            auto& span = launch_span[size_t(step - steps.begin()) - 1];
            span.first = std::min(span.first, call_ns);
            span.second = std::max(span.second, call_ns);
        }
        size_t step_cursor = 0;
        // Cuts one cause's piece of a gap at step boundaries.
        auto emit_piece = [&](const CausePiece& part, std::optional<size_t> call) {
            Bubble gap;
            gap.device_id = device;
            gap.cause = part.cause;
            gap.sync_call = part.sync_call;
            gap.next_api_index = call;
            const int64_t a = part.start_ns, b = part.end_ns;
            while (step_cursor < steps.size() && steps[step_cursor].end_ns <= a)
                ++step_cursor;
            for (size_t s = step_cursor; s < steps.size() && steps[s].start_ns < b; ++s) {
                Bubble piece = gap;
                piece.step_index = steps[s].index;
                piece.start_ns = std::max(a, steps[s].start_ns);
                piece.end_ns = std::min(b, steps[s].end_ns);
                if (piece.end_ns <= piece.start_ns)
                    continue;
                DeviceStepBubbles& row = result.per_device_step[first_row + s];
                if (row.totals.bubble_count == 0)
                    row.first_bubble = result.bubbles.size();
                const int64_t length_ns = piece.end_ns - piece.start_ns;
                row.totals.idle_ns += length_ns;
                row.totals.cause_ns[size_t(piece.cause)] += length_ns;
                if (piece.cause == BubbleCause::Launch)
                    row.totals.graph_removable_ns += std::max<int64_t>(0, length_ns - result.graph_gap_ns);
                if (piece.cause == BubbleCause::Sync && piece.sync_call)
                    row.totals.sync_after_return_ns += std::max<int64_t>(
                        0, piece.end_ns - std::max(piece.start_ns, blocking[*piece.sync_call].end_ns));
                // A step with no launch of its own has an empty span (first > last): nothing is inside it.
                if (piece.cause == BubbleCause::Host && launch_span[s].first <= launch_span[s].second)
                    row.totals.host_in_launches_ns += std::max<int64_t>(0,
                        std::min(piece.end_ns, launch_span[s].second) - std::max(piece.start_ns, launch_span[s].first));
                ++row.totals.gap_counts[gap_bucket(length_ns)];
                ++row.totals.bubble_count;
                result.bubbles.push_back(piece);
            }
        };
        std::vector<CausePiece> pieces;
        auto emit = [&](int64_t a, int64_t b, bool ended_by_activity, std::optional<size_t> call) {
            classifier.classify(pieces, a, b, device, ended_by_activity, call, comm);
            for (const CausePiece& part : pieces)
                emit_piece(part, call);
        };

        // Zero-length activities carry no busy time and do not split a gap (CUPTI reports them for empty work).
        // A gap is classified whole, from the end of the device's previous work (or the first step's start) to
        // the next activity (which may lie after the steps), then cut to the steps.
        int64_t busy_until_ns = INT64_MIN;
        bool ended_after_steps = false;
        for (detail::ActivityCursor cursor(model, device); cursor.next(activity);) {
            if (activity.end_ns <= activity.start_ns || activity.end_ns <= busy_until_ns
                || (activity.kind == detail::ActivityKind::Kernel && is_comm[activity.row]))
                continue;
            const int64_t gap_start_ns = busy_until_ns == INT64_MIN ? steps_start_ns : busy_until_ns;
            if (activity.start_ns > gap_start_ns && activity.start_ns > steps_start_ns)
                emit(gap_start_ns, activity.start_ns, true, classifier.launching_call(activity.correlation_id));
            busy_until_ns = activity.end_ns;
            if (activity.start_ns >= steps_end_ns) {
                ended_after_steps = true;
                break;
            }
        }
        if (!ended_after_steps && busy_until_ns < steps_end_ns)
            emit(busy_until_ns == INT64_MIN ? steps_start_ns : busy_until_ns, steps_end_ns, false, std::nullopt);

        DeviceBubbles per_device { device, {} };
        for (size_t s = 0; s < steps.size(); ++s) {
            BubbleTotals& totals = result.per_device_step[first_row + s].totals;
            if (totals.bubble_count == 0)
                result.per_device_step[first_row + s].first_bubble = result.bubbles.size();
            finish(totals);
            add(per_device.totals, totals);
        }
        finish(per_device.totals);
        add(result.total, per_device.totals);
        result.per_device.push_back(per_device);
    }
    finish(result.total);
    return result;
}

} // namespace fp8scope::analyzer
