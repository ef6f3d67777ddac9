#include "fp8scope/analyzer/load/collector_work.hpp"
#include "fp8scope/format/schema.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace fp8scope::analyzer {

namespace {

using schema::meta::kCollectorKernelNamespace;

// Keeps the rows of a struct-of-arrays table where keep[i], in order.
template <class... Columns> void compact(const std::vector<uint8_t>& keep, Columns&... columns)
{
    auto one = [&keep](auto& column) {
        size_t out = 0;
        for (size_t i = 0; i < column.size(); ++i)
            if (keep[i])
                column[out++] = std::move(column[i]);
        column.resize(out);
    };
    (one(columns), ...);
}

struct OwnIds {
    std::unordered_set<uint32_t> ids;
    bool contains(uint32_t id) const { return id != 0 && ids.contains(id); }
};

void add_activity(CollectorWorkTable& out, CollectorWorkTable::Kind kind, int64_t start, int64_t end, uint32_t device,
    uint32_t stream)
{
    out.start_ns.push_back(start);
    out.end_ns.push_back(end);
    out.device_id.push_back(device);
    out.stream_id.push_back(stream);
    out.kind.push_back(kind);
}

// Moves the rows `own` selects from one activity table (kernels, copies or memsets) to the collector's table.
template <class Table, class IsOwn, class... Columns>
void move_own(Table& t, CollectorWorkTable& out, CollectorWorkTable::Kind kind, IsOwn is_own, Columns&... columns)
{
    std::vector<uint8_t> keep(t.size(), 1);
    bool any = false;
    for (size_t i = 0; i < t.size(); ++i) {
        if (!is_own(i))
            continue;
        keep[i] = 0;
        any = true;
        add_activity(out, kind, t.start_ns[i], t.end_ns[i], t.device_id[i], t.stream_id[i]);
    }
    if (any)
        compact(keep, t.start_ns, t.end_ns, t.device_id, t.stream_id, t.correlation_id, columns...);
}

} // namespace

void separate_collector_work(TraceModel& model)
{
    OwnIds own;
    own.ids.insert(model.collector_correlation_ids.begin(), model.collector_correlation_ids.end());
    // Kernel names are few: decide each once.
    std::vector<int8_t> named_own(model.strings.size(), -1);
    auto kernel_named_own = [&](StringRef name) {
        int8_t& decided = named_own[name.index];
        if (decided < 0)
            decided = model.strings[name].find(kCollectorKernelNamespace) != std::string_view::npos ? 1 : 0;
        return decided == 1;
    };
    CollectorWorkTable& out = model.collector_work;
    auto& k = model.kernels;
    move_own(
        k, out, CollectorWorkTable::Kind::Kernel,
        [&](size_t i) { return own.contains(k.correlation_id[i]) || kernel_named_own(k.name[i]); }, k.name,
        k.short_name, k.graph_id);
    if (own.ids.empty())
        return;
    auto& c = model.memcpys;
    move_own(
        c, out, CollectorWorkTable::Kind::Memcpy, [&](size_t i) { return own.contains(c.correlation_id[i]); }, c.bytes,
        c.copy_kind, c.src_kind, c.dst_kind);
    auto& m = model.memsets;
    move_own(
        m, out, CollectorWorkTable::Kind::Memset, [&](size_t i) { return own.contains(m.correlation_id[i]); }, m.bytes,
        m.mem_kind);
    auto& a = model.api_calls;
    std::vector<uint8_t> keep(a.size(), 1);
    for (size_t i = 0; i < a.size(); ++i) {
        if (own.contains(a.correlation_id[i])) {
            keep[i] = 0;
            ++model.collector_api_calls;
        }
    }
    if (model.collector_api_calls > 0)
        compact(keep, a.start_ns, a.end_ns, a.global_tid.index, a.correlation_id, a.name, a.is_driver, a.return_value);
    // The collector's activities came from tables sorted by start; keep its own table so too.
    std::vector<size_t> order(out.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::ranges::stable_sort(order, [&](size_t x, size_t y) { return out.start_ns[x] < out.start_ns[y]; });
    CollectorWorkTable sorted;
    for (size_t i : order)
        add_activity(sorted, out.kind[i], out.start_ns[i], out.end_ns[i], out.device_id[i], out.stream_id[i]);
    out = std::move(sorted);
}

CollectorWorkSummary summarize_collector_work(
    const TraceModel& model, const StepSet& steps, std::optional<uint32_t> device)
{
    CollectorWorkSummary summary;
    const CollectorWorkTable& w = model.collector_work;
    for (size_t i = 0; i < w.size(); ++i) {
        switch (w.kind[i]) {
        case CollectorWorkTable::Kind::Kernel:
            ++summary.kernels;
            break;
        case CollectorWorkTable::Kind::Memcpy:
            ++summary.memcpys;
            break;
        case CollectorWorkTable::Kind::Memset:
            ++summary.memsets;
            break;
        }
    }
    summary.api_calls = model.collector_api_calls;
    summary.steps = int64_t(steps.steps.size());
    if (steps.steps.empty())
        return summary;
    // Per device, the union of the collector's intervals (sorted by start) clipped to each step.
    std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> intervals;
    for (size_t i = 0; i < w.size(); ++i)
        if (!device || w.device_id[i] == *device)
            intervals[w.device_id[i]].emplace_back(w.start_ns[i], w.end_ns[i]);
    int64_t total_step_ns = 0;
    for (const StepInterval& s : steps.steps)
        total_step_ns += s.end_ns - s.start_ns;
    for (const auto& [id, spans] : intervals) {
        // Merge into disjoint intervals first, then clip each to the steps (both sorted: one forward walk).
        std::vector<std::pair<int64_t, int64_t>> merged;
        for (const auto& [start, end] : spans) {
            if (!merged.empty() && start <= merged.back().second)
                merged.back().second = std::max(merged.back().second, end);
            else
                merged.emplace_back(start, end);
        }
        int64_t in_steps = 0;
        size_t first = 0;
        for (const StepInterval& s : steps.steps) {
            while (first < merged.size() && merged[first].second <= s.start_ns)
                ++first;
            for (size_t j = first; j < merged.size() && merged[j].first < s.end_ns; ++j)
                in_steps += std::min(merged[j].second, s.end_ns) - std::max(merged[j].first, s.start_ns);
        }
        summary.time_in_steps_ns += in_steps;
        summary.step_time_ns += total_step_ns;
    }
    return summary;
}

} // namespace fp8scope::analyzer
