#include "fp8scope/analyzer/idle/launch_stats.hpp"

#include "idle/launch_call_index.hpp"
#include "model/median.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace fp8scope::analyzer {

namespace {

// Nearest-rank percentiles; reorders `values`. Each nth_element works on the part above the previous rank.
template <typename Value> DelayDistribution distribution(std::vector<Value>& values)
{
    DelayDistribution d;
    d.count = static_cast<int64_t>(values.size());
    if (values.empty())
        return d;
    const auto rank = [&](int64_t percent) {
        return static_cast<size_t>((uint64_t(values.size()) * uint64_t(percent) + 99) / 100 - 1);
    };
    d.min_ns = *std::min_element(values.begin(), values.end());
    size_t from = 0;
    int64_t* quantiles[] = { &d.median_ns, &d.p90_ns, &d.p99_ns };
    const int64_t percents[] = { 50, 90, 99 };
    for (size_t q = 0; q < 3; ++q) {
        const size_t at = rank(percents[q]);
        std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(from),
            values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
        *quantiles[q] = values[at];
        from = at;
    }
    d.max_ns = *std::max_element(values.begin() + static_cast<std::ptrdiff_t>(from), values.end());
    return d;
}

// Time-weighted depth of one stream inside the steps. `rise_ns(i)` for i < count; falls are the kernel starts, read in
// order through `order` (kernels sorted by start). Zero-length stretches are skipped, so a kernel queued and started
// at the same instant never shows as depth. Returns false, with `out` half filled, when the rises are not ascending:
// each rise is at most its kernel's start, so all of them are read before the last fall and none goes unchecked.
template <typename Rise>
bool sweep_stream(const StepSet& steps, Rise rise_ns, const KernelTable& kernels, const uint32_t* order, size_t count,
    StreamQueueDepth& out, std::vector<double>& integral)
{
    std::fill(integral.begin(), integral.end(), 0.0);
    const auto& list = steps.steps;
    size_t first_step = 0;
    const auto account = [&](int64_t a, int64_t b, int64_t depth) {
        if (a >= b || depth <= 0)
            return;
        while (first_step < list.size() && list[first_step].end_ns <= a)
            ++first_step;
        for (size_t s = first_step; s < list.size() && list[s].start_ns < b; ++s) {
            const int64_t lo = std::max(a, list[s].start_ns), hi = std::min(b, list[s].end_ns);
            if (lo >= hi)
                continue;
            integral[s] += static_cast<double>(depth) * static_cast<double>(hi - lo);
            out.max_per_step[s] = std::max(out.max_per_step[s], depth);
        }
    };
    size_t r = 0, f = 0;
    int64_t depth = 0;
    int64_t now = std::numeric_limits<int64_t>::min();
    int64_t last_rise = std::numeric_limits<int64_t>::min();
    while (f < count) {
        const int64_t fall = kernels.start_ns[order[f]];
        const int64_t rise = r < count ? rise_ns(r) : std::numeric_limits<int64_t>::max();
        const bool rise_next = r < count && rise <= fall;
        const int64_t t = rise_next ? rise : fall;
        if (rise_next) {
            if (t < last_rise)
                return false;
            last_rise = t;
        }
        account(now, t, depth);
        now = t;
        if (rise_next) {
            ++depth;
            ++r;
        } else {
            --depth;
            ++f;
        }
    }
    return true;
}

} // namespace

LaunchStats compute_launch_stats(const TraceModel& model, const StepSet& steps)
{
    return detail::compute_launch_stats(model, steps, detail::launch_call_index(model.api_calls));
}

// A kernel's launch call is looked up in `launch_calls` each time it is needed rather than kept per kernel: the
// lookup is one read of a direct table, and the per-kernel copy was 40 MB on 10 M kernels.
LaunchStats detail::compute_launch_stats(
    const TraceModel& model, const StepSet& steps, const CorrelationIndex& launch_calls)
{
    const KernelTable& kernels = model.kernels;
    const ApiTable& api = model.api_calls;
    const auto& list = steps.steps;
    LaunchStats stats;
    stats.steps.reserve(list.size());
    for (const StepInterval& step : list) {
        stats.steps.push_back({ .step_index = step.index, .step_ns = step.end_ns - step.start_ns });
        stats.step_ns += step.end_ns - step.start_ns;
    }

    const auto call_of = [&](size_t k) { return launch_calls.find(kernels.correlation_id[k]); };
    std::vector<uint8_t> launched(api.size(), 0);
    detail::SampleValues delays_ns;
    delays_ns.reserve(kernels.size()); // grown by doubling, a 10 M kernel trace would copy it over and over
    size_t step = 0;
    for (size_t k = 0; k < kernels.size(); ++k) {
        const auto call = call_of(k);
        if (call)
            launched[*call] = 1;
        const int64_t start_ns = kernels.start_ns[k];
        while (step < list.size() && list[step].end_ns <= start_ns)
            ++step;
        if (step == list.size() || start_ns < list[step].start_ns)
            continue;
        LaunchStepStats& row = stats.steps[step];
        row.kernels += 1;
        if (!call) {
            stats.unmatched_kernels += 1;
            continue;
        }
        if (kernels.graph_id[k] != 0) {
            stats.graph_kernels += 1;
            continue;
        }
        const size_t c = *call;
        row.timed_kernels += 1;
        delays_ns.push_back(start_ns - api.end_ns[c]);
        if (kernels.end_ns[k] - start_ns < api.end_ns[c] - api.start_ns[c])
            row.short_kernels += 1;
    }
    stats.launch_delay = delays_ns.visit([](auto& values) { return distribution(values); });
    // Each temporary goes as soon as it is used up: analyze() runs this beside the bubble analysis, and on 10 M
    // kernels these vectors are tens of MB each (docs/benchmarks.md, "The analyzer's load and analysis, faster").
    delays_ns.release();

    step = 0;
    for (size_t i = 0; i < api.size(); ++i) {
        if (!launched[i])
            continue;
        while (step < list.size() && list[step].end_ns <= api.start_ns[i])
            ++step;
        if (step < list.size() && api.start_ns[i] >= list[step].start_ns)
            stats.steps[step].launches += 1;
    }
    std::vector<uint8_t>().swap(launched);
    for (LaunchStepStats& row : stats.steps) {
        row.launches_per_s = row.step_ns > 0 ? static_cast<double>(row.launches) * 1e9 / double(row.step_ns) : 0.0;
        stats.kernels += row.kernels;
        stats.timed_kernels += row.timed_kernels;
        stats.short_kernels += row.short_kernels;
        stats.launches += row.launches;
    }
    stats.short_share = stats.timed_kernels > 0 ? double(stats.short_kernels) / double(stats.timed_kernels) : 0.0;
    stats.launches_per_s = stats.step_ns > 0 ? double(stats.launches) * 1e9 / double(stats.step_ns) : 0.0;

    // Queue depth: group the launched kernels by (device, stream) with a counting sort that keeps start order. Each
    // kernel's group is looked up twice (counting, then placing) rather than kept: 40 MB less on 10 M kernels.
    std::unordered_map<uint64_t, uint32_t> slot_of;
    std::vector<uint64_t> keys;
    uint64_t last_key = UINT64_MAX;
    uint32_t last_slot = 0;
    const auto slot = [&](size_t k) {
        const uint64_t key = (uint64_t(kernels.device_id[k]) << 32) | kernels.stream_id[k];
        if (key != last_key) {
            const auto [it, added] = slot_of.try_emplace(key, static_cast<uint32_t>(keys.size()));
            if (added)
                keys.push_back(key);
            last_key = key;
            last_slot = it->second;
        }
        return last_slot;
    };
    // Kernels never queued by a call we saw are left out: they would only pull the depth below zero.
    std::vector<size_t> offset(1, 0);
    for (size_t k = 0; k < kernels.size(); ++k) {
        if (!call_of(k))
            continue;
        const uint32_t s = slot(k);
        if (offset.size() <= keys.size())
            offset.resize(keys.size() + 1, 0);
        offset[s + 1] += 1;
    }
    offset.resize(keys.size() + 1, 0);
    for (size_t s = 0; s < keys.size(); ++s)
        offset[s + 1] += offset[s];
    std::vector<uint32_t> order(offset.back());
    {
        std::vector<size_t> fill(offset.begin(), offset.end() - 1);
        for (size_t k = 0; k < kernels.size(); ++k) {
            if (call_of(k))
                order[fill[slot(k)]++] = static_cast<uint32_t>(k);
        }
    }
    std::vector<double> integral(list.size());
    for (size_t s = 0; s < keys.size(); ++s) {
        const uint32_t* members = order.data() + offset[s];
        const size_t count = offset[s + 1] - offset[s];
        // A kernel joins the queue when its launch call returns (or when it starts, if that is earlier).
        const auto rise_of = [&](size_t i) {
            const uint32_t k = members[i];
            return std::min(api.end_ns[*call_of(k)], kernels.start_ns[k]);
        };
        StreamQueueDepth depth { .device_id = uint32_t(keys[s] >> 32),
            .stream_id = uint32_t(keys[s]),
            .max_depth = 0,
            .mean_depth = 0,
            .max_per_step = std::vector<int64_t>(list.size(), 0),
            .mean_per_step = std::vector<double>(list.size(), 0.0) };
        // Launches from one thread are already in order and are read in place; only interleaved threads need the
        // rises copied and sorted (10 M of them, grown by doubling, were 100 MB at once; docs/benchmarks.md).
        if (!sweep_stream(steps, rise_of, kernels, members, count, depth, integral)) {
            std::fill(depth.max_per_step.begin(), depth.max_per_step.end(), 0);
            std::vector<int64_t> rise_ns(count);
            for (size_t i = 0; i < count; ++i)
                rise_ns[i] = rise_of(i);
            std::sort(rise_ns.begin(), rise_ns.end());
            sweep_stream(
                steps, [&](size_t i) { return rise_ns[i]; }, kernels, members, count, depth, integral);
        }
        double total = 0;
        for (size_t i = 0; i < list.size(); ++i) {
            depth.max_depth = std::max(depth.max_depth, depth.max_per_step[i]);
            total += integral[i];
            if (stats.steps[i].step_ns > 0)
                depth.mean_per_step[i] = integral[i] / double(stats.steps[i].step_ns);
        }
        depth.mean_depth = stats.step_ns > 0 ? total / double(stats.step_ns) : 0.0;
        stats.streams.push_back(std::move(depth));
    }
    std::sort(stats.streams.begin(), stats.streams.end(), [](const StreamQueueDepth& a, const StreamQueueDepth& b) {
        return a.device_id != b.device_id ? a.device_id < b.device_id : a.stream_id < b.stream_id;
    });
    return stats;
}

} // namespace fp8scope::analyzer
