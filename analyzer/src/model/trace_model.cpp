#include "fp8scope/analyzer/model/trace_model.hpp"

#include <algorithm>
#include <limits>

namespace fp8scope::analyzer {

void ThreadColumn::push_back(int64_t global_tid)
{
    // Rows come in runs from one thread: the map is searched only when the thread changes.
    if (!index.empty() && global_tids_[index.back()] == global_tid) {
        index.push_back(index.back());
        return;
    }
    const auto [it, added] = position_.try_emplace(global_tid, static_cast<uint32_t>(global_tids_.size()));
    if (added)
        global_tids_.push_back(global_tid);
    index.push_back(it->second);
}

int64_t TraceModel::dropped_records() const
{
    // Saturating: counts come from the file, and a hostile one could make the sum overflow.
    int64_t total = 0;
    for (const Dropped& d : dropped) {
        if (__builtin_add_overflow(total, d.count, &total))
            return std::numeric_limits<int64_t>::max();
    }
    return total;
}

std::optional<std::pair<int64_t, int64_t>> TraceModel::time_span_ns() const
{
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    bool any = false;
    const auto cover = [&](const std::vector<int64_t>& start_ns, const std::vector<int64_t>& end_ns) {
        if (start_ns.empty())
            return;
        any = true;
        // Tables are sorted by start, so the first row holds the earliest start.
        first = std::min(first, start_ns.front());
        for (const int64_t end : end_ns)
            last = std::max(last, end);
    };
    cover(kernels.start_ns, kernels.end_ns);
    cover(api_calls.start_ns, api_calls.end_ns);
    cover(syncs.start_ns, syncs.end_ns);
    cover(memcpys.start_ns, memcpys.end_ns);
    cover(memsets.start_ns, memsets.end_ns);
    if (!nvtx.start_ns.empty()) {
        any = true;
        first = std::min(first, nvtx.start_ns.front());
        // Marks and unclosed ranges have no end (kNoEnd, the smallest int64): their start bounds the span.
        for (size_t i = 0; i < nvtx.size(); ++i)
            last = std::max(last, nvtx.end_ns[i] == NvtxTable::kNoEnd ? nvtx.start_ns[i] : nvtx.end_ns[i]);
    }
    if (!any)
        return std::nullopt;
    return std::pair { first, last };
}

} // namespace fp8scope::analyzer
