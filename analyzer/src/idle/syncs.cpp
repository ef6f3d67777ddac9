#include "fp8scope/analyzer/idle/syncs.hpp"
#include "fp8scope/analyzer/calls/host_blocking.hpp"

#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace fp8scope::analyzer {

namespace {

// Position of the step containing t_ns, if any. Steps are sorted and do not overlap.
std::optional<size_t> step_at(const StepSet& steps, int64_t t_ns)
{
    const auto after = std::upper_bound(steps.steps.begin(), steps.steps.end(), t_ns,
        [](int64_t t, const StepInterval& step) { return t < step.start_ns; });
    if (after == steps.steps.begin())
        return std::nullopt;
    const auto step = std::prev(after);
    if (t_ns >= step->end_ns)
        return std::nullopt;
    return static_cast<size_t>(step - steps.steps.begin());
}

// The NVTX path of every call: one sweep per thread over its push/pop ranges, sorted by start, with a stack of
// the ranges open so far. Push/pop ranges nest on their thread, so the innermost open range ends first; a range
// the file left open (NvtxTable::kNoEnd) stays open to the end of the trace.
void fill_nvtx_paths(const TraceModel& model, std::vector<SyncCallReport>& rows)
{
    const NvtxTable& nvtx = model.nvtx;
    const auto end_of = [&](size_t r) {
        return nvtx.end_ns[r] == NvtxTable::kNoEnd ? std::numeric_limits<int64_t>::max() : nvtx.end_ns[r];
    };
    std::vector<size_t> ranges;
    for (size_t r = 0; r < nvtx.size(); ++r) {
        if (nvtx.event_type[r] == static_cast<int32_t>(schema::NvtxEventType::PushPopRange))
            ranges.push_back(r);
    }
    // By thread, then start; of two ranges starting together the longer one is the outer one.
    std::sort(ranges.begin(), ranges.end(), [&](size_t a, size_t b) {
        if (nvtx.global_tid[a] != nvtx.global_tid[b])
            return nvtx.global_tid[a] < nvtx.global_tid[b];
        if (nvtx.start_ns[a] != nvtx.start_ns[b])
            return nvtx.start_ns[a] < nvtx.start_ns[b];
        return end_of(a) > end_of(b);
    });
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (rows[a].global_tid != rows[b].global_tid)
            return rows[a].global_tid < rows[b].global_tid;
        return rows[a].start_ns < rows[b].start_ns;
    });

    std::vector<size_t> open; // range rows, outermost first
    size_t next = 0;
    int64_t thread = 0;
    bool first = true;
    for (const size_t i : order) {
        SyncCallReport& row = rows[i];
        if (first || row.global_tid != thread) {
            open.clear();
            thread = row.global_tid;
            first = false;
        }
        while (next < ranges.size() && nvtx.global_tid[ranges[next]] < thread)
            ++next;
        for (; next < ranges.size() && nvtx.global_tid[ranges[next]] == thread
             && nvtx.start_ns[ranges[next]] <= row.start_ns;
             ++next) {
            while (!open.empty() && end_of(open.back()) <= nvtx.start_ns[ranges[next]])
                open.pop_back();
            open.push_back(ranges[next]);
        }
        while (!open.empty() && end_of(open.back()) <= row.start_ns)
            open.pop_back();
        for (const size_t r : open) {
            // A range that broke nesting (closed before an inner one) is skipped, not shown as open.
            if (end_of(r) <= row.start_ns)
                continue;
            if (!row.nvtx_path.empty())
                row.nvtx_path += '/';
            row.nvtx_path += model.strings[nvtx.text[r]];
        }
    }
}

void add(SyncStepCounts& to, const SyncCallReport& row)
{
    to.count += 1;
    to.duration_ns += row.duration_ns;
    to.idle_caused_ns += row.idle_caused_ns;
}

} // namespace

SyncReport build_sync_report(const TraceModel& model, const StepSet& steps, const std::vector<HostBlockingCall>& calls,
    const std::vector<Bubble>& bubbles)
{
    std::vector<int64_t> idle_ns(calls.size(), 0);
    for (const Bubble& bubble : bubbles) {
        if (bubble.cause == BubbleCause::Sync && bubble.sync_call && *bubble.sync_call < calls.size())
            idle_ns[*bubble.sync_call] += bubble.end_ns - bubble.start_ns;
    }

    SyncReport report;
    report.per_step.resize(steps.steps.size());
    for (size_t i = 0; i < calls.size(); ++i) {
        const HostBlockingCall& call = calls[i];
        // A call that is not a row of this model's API table cannot be named: it is left out.
        if (call.api_index >= model.api_calls.size())
            continue;
        report.calls.push_back({ .call = i,
            .api_index = call.api_index,
            .api_name = model.api_calls.name[call.api_index],
            .kind = call.kind,
            .global_tid = call.global_tid,
            .device_id = call.device_id,
            .stream_id = call.stream_id,
            .start_ns = call.start_ns,
            .duration_ns = call.end_ns - call.start_ns,
            .nvtx_path = {},
            .idle_caused_ns = idle_ns[i],
            .step = step_at(steps, call.start_ns) });
    }
    fill_nvtx_paths(model, report.calls);

    // One summary slot per API base name (api_base_name(): cudaMemcpy_v3020 and cudaMemcpy_ptds_v7000 are one API),
    // found through a table indexed by the raw name's StringRef, filled once per distinct raw name.
    std::vector<int32_t> slot_of_name(model.strings.size(), -1);
    std::unordered_map<std::string_view, int32_t> slot_of_base;
    for (const SyncCallReport& row : report.calls) {
        int32_t& slot = slot_of_name[row.api_name.index];
        if (slot < 0) {
            const std::string_view base = api_base_name(model.strings[row.api_name]);
            const auto [found, added] = slot_of_base.try_emplace(base, static_cast<int32_t>(report.by_api.size()));
            slot = found->second;
        }
        if (static_cast<size_t>(slot) == report.by_api.size()) {
            report.by_api.push_back({ .api_name = row.api_name,
                .name = std::string(api_base_name(model.strings[row.api_name])),
                .count = 0,
                .duration_ns = 0,
                .idle_caused_ns = 0,
                .outside_steps = 0,
                .per_step = std::vector<SyncStepCounts>(steps.steps.size()) });
        }
        SyncApiSummary& summary = report.by_api[static_cast<size_t>(slot)];
        if (!row.step) {
            summary.outside_steps += 1;
            add(report.outside_steps, row);
            continue;
        }
        summary.count += 1;
        summary.duration_ns += row.duration_ns;
        summary.idle_caused_ns += row.idle_caused_ns;
        add(summary.per_step[*row.step], row);
        add(report.per_step[*row.step], row);
        add(report.total, row);
    }
    std::sort(report.by_api.begin(), report.by_api.end(), [](const SyncApiSummary& a, const SyncApiSummary& b) {
        if (a.duration_ns != b.duration_ns)
            return a.duration_ns > b.duration_ns;
        return a.api_name.index < b.api_name.index;
    });
    return report;
}

} // namespace fp8scope::analyzer
