// One rank's part of the multi-rank analysis (docs/analysis.md "Across ranks"): its steps with communication time,
// exposed communication and idle causes, its collectives and its FP8 scales, all from its own trace and clock.
#include "fp8scope/analyzer/advice/budgets.hpp"
#include "fp8scope/analyzer/kernels/kernel_classes.hpp"
#include "fp8scope/analyzer/ranks/ranks.hpp"
#include "fp8scope/analyzer/tensors/tensor_health.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace fp8scope::analyzer {

namespace {

struct Span {
    int64_t start_ns = 0, end_ns = 0;
};

// Appends [start, end) to a union built from spans in start order; empty spans add nothing.
void add_to_union(std::vector<Span>& merged, int64_t start_ns, int64_t end_ns)
{
    if (end_ns <= start_ns)
        return;
    if (!merged.empty() && start_ns <= merged.back().end_ns)
        merged.back().end_ns = std::max(merged.back().end_ns, end_ns);
    else
        merged.push_back({ start_ns, end_ns });
}

// The intersection of two unions (each sorted, not overlapping): sorted, not overlapping.
std::vector<Span> intersect(const std::vector<Span>& a, const std::vector<Span>& b)
{
    std::vector<Span> both;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const int64_t start = std::max(a[i].start_ns, b[j].start_ns);
        const int64_t end = std::min(a[i].end_ns, b[j].end_ns);
        if (start < end)
            both.push_back({ start, end });
        (a[i].end_ns < b[j].end_ns) ? ++i : ++j;
    }
    return both;
}

// |union ∩ [start, end)|.
int64_t length_within(const std::vector<Span>& merged, int64_t start_ns, int64_t end_ns)
{
    auto it = std::partition_point(merged.begin(), merged.end(), [&](const Span& s) { return s.end_ns <= start_ns; });
    int64_t length = 0;
    for (; it != merged.end() && it->start_ns < end_ns; ++it)
        length += std::min(end_ns, it->end_ns) - std::max(start_ns, it->start_ns);
    return length;
}

struct DeviceUnions {
    std::vector<Span> comm, compute;
};

// Communication time and its exposed part per step, and the collectives inside the steps. Returns each device's
// unions of communication and of other kernels.
std::map<uint32_t, DeviceUnions> add_communication(const TraceModel& model, RankSummary& summary)
{
    KernelClassCache classes(model);
    std::map<uint32_t, DeviceUnions> devices;
    std::vector<uint8_t> kind_of(model.strings.size(), 0xFF); // CollectiveKind per name, 0xFF: not classed yet
    std::vector<RankStep>& steps = summary.steps;
    std::array<int32_t, kCollectiveKindCount> ordinals {};
    size_t ordinal_step = SIZE_MAX; // the step `ordinals` counts in
    const KernelTable& kernels = model.kernels;
    for (size_t k = 0; k < kernels.size(); ++k) {
        const KernelClassCache::Entry entry = classes.of(k);
        const bool comm = entry.cls == KernelClass::Communication;
        DeviceUnions& unions = devices[kernels.device_id[k]];
        add_to_union(comm ? unions.comm : unions.compute, kernels.start_ns[k], kernels.end_ns[k]);
        if (!comm)
            continue;
        // The step that contains the kernel's start (steps are in time order, not overlapping).
        const auto after = std::upper_bound(steps.begin(), steps.end(), kernels.start_ns[k],
            [](int64_t t, const RankStep& step) { return t < step.start_ns; });
        if (after == steps.begin() || kernels.start_ns[k] >= std::prev(after)->end_ns)
            continue;
        const size_t step = static_cast<size_t>(std::prev(after) - steps.begin());
        if (step != ordinal_step) {
            ordinals = {};
            ordinal_step = step;
        }
        uint8_t& kind = kind_of[entry.name.index];
        if (kind == 0xFF)
            kind = static_cast<uint8_t>(classify_collective(model.strings[entry.name]));
        summary.collectives.push_back({ static_cast<CollectiveKind>(kind), steps[step].index, ordinals[kind]++,
            kernels.device_id[k], kernels.stream_id[k], kernels.start_ns[k], kernels.end_ns[k] });
    }
    for (const auto& [device, unions] : devices) {
        const std::vector<Span> hidden = intersect(unions.comm, unions.compute);
        for (RankStep& step : steps) {
            const int64_t comm_ns = length_within(unions.comm, step.start_ns, step.end_ns);
            step.comm_ns += comm_ns;
            step.exposed_comm_ns += comm_ns - length_within(hidden, step.start_ns, step.end_ns);
        }
    }
    return devices;
}

// What the rank did between the last moment the ranks were together and its arrival at each step's first
// collective (its whole step without one): the time its other kernels ran and its idle time by cause; and until when
// its own kernels ran during each collective. The ranks were together when the previous step's last collective ended
// (every rank leaves a collective together, to within the link latency); with no collective in the previous step,
// the window opens at the step's own start. Across ranks the straggler's excess over the others here is why it
// arrived late (docs/analysis.md "Across ranks"); after the arrival the others' waits would blur it (gloo's waits are
// idle time). Counted from the step's own start instead, a rank that sleeps at the loop's top lost its sleep
// whenever the step began after it (automatic steps begin after the loop's longest pause).
void add_before_arrival(const Report& report, const std::map<uint32_t, DeviceUnions>& devices, RankSummary& summary)
{
    std::unordered_map<int64_t, size_t> step_at;
    std::vector<int64_t> together_ns(summary.steps.size()), last_end_ns(summary.steps.size(), INT64_MIN);
    for (size_t i = 0; i < summary.steps.size(); ++i) {
        RankStep& step = summary.steps[i];
        step.arrival_ns = step.end_ns;
        step_at.emplace(step.index, i);
    }
    for (const RankCollective& c : summary.collectives) { // in start order: the first of each step wins
        const size_t i = step_at.at(c.step_index);
        RankStep& step = summary.steps[i];
        if (step.arrival_ns == step.end_ns)
            step.arrival_ns = std::clamp(c.start_ns, step.start_ns, step.end_ns);
        last_end_ns[i] = std::max(last_end_ns[i], c.end_ns);
    }
    for (size_t i = 0; i < summary.steps.size(); ++i) {
        const RankStep& step = summary.steps[i];
        const bool previous = i > 0 && last_end_ns[i - 1] != INT64_MIN;
        together_ns[i]
            = previous ? std::clamp(last_end_ns[i - 1], summary.steps[i - 1].start_ns, step.arrival_ns) : step.start_ns;
    }
    for (size_t i = 0; i < summary.steps.size(); ++i)
        for (const auto& [device, unions] : devices)
            summary.steps[i].compute_before_ns
                += length_within(unions.compute, together_ns[i], summary.steps[i].arrival_ns);
    for (RankCollective& c : summary.collectives) {
        c.compute_until_ns = c.start_ns;
        const auto unions = devices.find(c.device_id);
        if (unions == devices.end())
            continue;
        const std::vector<Span>& compute = unions->second.compute;
        const auto after = std::partition_point(
            compute.begin(), compute.end(), [&](const Span& span) { return span.start_ns < c.end_ns; });
        if (after != compute.begin())
            c.compute_until_ns = std::clamp(std::prev(after)->end_ns, c.start_ns, c.end_ns);
    }
    // A bubble of the previous step that lies after the moment the ranks were together counts too: windows are
    // disjoint (each ends at its step's arrival, the next opens after it), so each stretch counts once.
    for (const Bubble& bubble : report.bubbles.bubbles) {
        const auto at = step_at.find(bubble.step_index);
        if (at == step_at.end())
            continue;
        for (size_t i = at->second; i <= at->second + 1 && i < summary.steps.size(); ++i) {
            const int64_t from = std::max(bubble.start_ns, together_ns[i]);
            const int64_t to = std::min(bubble.end_ns, summary.steps[i].arrival_ns);
            if (to > from)
                summary.steps[i].idle_before_ns[static_cast<size_t>(bubble.cause)] += to - from;
        }
    }
}

// Collectives staged through the host (docs/analysis.md "Across ranks"): on a rank with no communication kernel,
// each device-to-host copy into pinned memory of at least 64 KiB paired with the next host-to-device copy from
// pinned memory of the same size on the same stream, both in one step. gloo reduces CUDA tensors this way (DDP's
// buckets: device -> host, all-reduce on the CPU, host -> device); the pair spans from the first copy's end (the
// rank's arrival) to the second's start (the release, when every rank's data was reduced).
void add_host_staged(const TraceModel& model, RankSummary& summary)
{
    constexpr uint64_t kMinBytes = 64 * 1024; // smaller copies are scalars (.item(), a loss), not buckets
    const MemcpyTable& copies = model.memcpys;
    std::vector<size_t> order(copies.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return copies.start_ns[a] < copies.start_ns[b]; });
    const std::vector<RankStep>& steps = summary.steps;
    auto step_of = [&](int64_t t) -> std::optional<size_t> {
        const auto after = std::upper_bound(
            steps.begin(), steps.end(), t, [](int64_t v, const RankStep& step) { return v < step.start_ns; });
        if (after == steps.begin() || t >= std::prev(after)->end_ns)
            return std::nullopt;
        return static_cast<size_t>(std::prev(after) - steps.begin());
    };
    const auto pinned = static_cast<int32_t>(schema::MemoryKind::Pinned);
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::vector<size_t>> pending; // (device, stream, bytes) -> D2H
    std::vector<RankCollective> staged;
    for (size_t i : order) {
        if (copies.bytes[i] < kMinBytes)
            continue;
        const auto key = std::make_tuple(copies.device_id[i], copies.stream_id[i], copies.bytes[i]);
        if (copies.copy_kind[i] == static_cast<int32_t>(schema::MemcpyKind::DtoH) && copies.dst_kind[i] == pinned) {
            pending[key].push_back(i);
            continue;
        }
        if (copies.copy_kind[i] != static_cast<int32_t>(schema::MemcpyKind::HtoD) || copies.src_kind[i] != pinned)
            continue;
        const auto it = pending.find(key);
        if (it == pending.end() || it->second.empty())
            continue;
        const size_t out = it->second.front();
        it->second.erase(it->second.begin());
        const auto step = step_of(copies.start_ns[out]);
        if (!step || step_of(copies.start_ns[i]) != step)
            continue;
        staged.push_back({ CollectiveKind::HostStaged, steps[*step].index, 0, copies.device_id[i], copies.stream_id[i],
            copies.end_ns[out], std::max(copies.end_ns[out], copies.start_ns[i]) });
    }
    // Numbered by arrival within their step (the copies back may come in another order).
    std::sort(staged.begin(), staged.end(), [](const RankCollective& a, const RankCollective& b) {
        return std::tie(a.step_index, a.start_ns) < std::tie(b.step_index, b.start_ns);
    });
    for (size_t i = 0; i < staged.size(); ++i)
        staged[i].ordinal = i > 0 && staged[i - 1].step_index == staged[i].step_index ? staged[i - 1].ordinal + 1 : 0;
    summary.collectives.insert(summary.collectives.end(), staged.begin(), staged.end());
    std::stable_sort(summary.collectives.begin(), summary.collectives.end(),
        [](const RankCollective& a, const RankCollective& b) { return a.start_ns < b.start_ns; });
}

// Every tensor statistics sample with a step and a scale, labelled by site, numbered within its (site, step).
void add_scales(const TraceModel& model, RankSummary& summary)
{
    std::unordered_map<int64_t, std::string> label_of;
    for (const TensorSite& site : model.tensor_sites)
        label_of.emplace(site.id, tensor_site_label(model, site));
    struct Row {
        const std::string* site;
        int64_t step, timestamp_ns;
        RankScaleSample sample;
    };
    std::vector<Row> rows;
    for (const TensorStats& stats : model.tensor_stats) {
        const auto label = label_of.find(stats.site_id);
        if (!stats.step || label == label_of.end() || (!stats.scale_inv && !stats.scale))
            continue;
        const bool inv = stats.scale_inv.has_value();
        rows.push_back({ &label->second, *stats.step, stats.timestamp_ns,
            { {}, *stats.step, 0, inv, inv ? *stats.scale_inv : *stats.scale } });
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
        return std::tie(*a.site, a.step, a.timestamp_ns) < std::tie(*b.site, b.step, b.timestamp_ns);
    });
    summary.scales.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        RankScaleSample sample = rows[i].sample;
        sample.site = *rows[i].site;
        const bool same_group = i > 0 && *rows[i - 1].site == *rows[i].site && rows[i - 1].step == rows[i].step;
        sample.sample = same_group ? summary.scales.back().sample + 1 : 0;
        summary.scales.push_back(std::move(sample));
    }
}

} // namespace

RankSummary summarize_rank(const TraceModel& model, const Report& report)
{
    RankSummary summary;
    summary.path = model.path;
    summary.rank = model.meta.rank;
    summary.world_size = model.meta.world_size;
    summary.host = model.meta.host;
    summary.command_line = model.meta.command_line;
    summary.session_start_utc_ns = model.meta.session_start_utc_ns;
    summary.step_source = report.steps.source;
    summary.totals = report.totals;
    summary.recording = report.recording;
    std::unordered_map<int64_t, size_t> step_at;
    for (const StepInterval& step : report.steps.steps) {
        step_at.emplace(step.index, summary.steps.size());
        summary.steps.push_back({ .index = step.index, .start_ns = step.start_ns, .end_ns = step.end_ns });
    }
    for (const StepBubbleTotals& step : bubbles_per_step(report))
        if (const auto at = step_at.find(step.step_index); at != step_at.end())
            summary.steps[at->second].bubble_ratio = step.totals.bubble_ratio;
    for (const DeviceStepBubbles& device_step : report.bubbles.per_device_step) {
        const auto at = step_at.find(device_step.step_index);
        if (at == step_at.end())
            continue;
        auto& cause_ns = summary.steps[at->second].cause_ns;
        for (size_t c = 0; c < kBubbleCauseCount; ++c)
            cause_ns[c] += device_step.totals.cause_ns[c];
    }
    const auto devices = add_communication(model, summary);
    if (summary.collectives.empty())
        add_host_staged(model, summary);
    add_before_arrival(report, devices, summary);
    add_scales(model, summary);
    return summary;
}

} // namespace fp8scope::analyzer
