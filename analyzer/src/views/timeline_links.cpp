// Launch flows, the bubbles of each host-blocking call, and where an item is drawn (timeline.hpp).
#include "views/timeline_links.hpp"

#include <algorithm>

namespace fp8scope::analyzer {

namespace detail {

CorrelatedRows::CorrelatedRows(const std::vector<uint32_t>& ids)
    : first_(ids)
{
    for (size_t row = 0; row < ids.size(); ++row)
        if (ids[row] != 0 && first_.find(ids[row]) != row)
            more_.emplace_back(ids[row], static_cast<uint32_t>(row));
    std::ranges::sort(more_);
}

void CorrelatedRows::append(uint32_t id, ItemKind kind, std::vector<ItemRef>& out) const
{
    const auto first = first_.find(id);
    if (!first)
        return;
    out.push_back({ kind, static_cast<uint32_t>(*first) });
    const auto [from, to] = std::ranges::equal_range(more_, id, {}, &std::pair<uint32_t, uint32_t>::first);
    for (auto it = from; it != to; ++it)
        out.push_back({ kind, it->second });
}

TimelineLinks::TimelineLinks(const TraceModel& model)
    : api_calls(model.api_calls.correlation_id, &model.api_calls.is_driver)
    , kernels(model.kernels.correlation_id)
    , memcpys(model.memcpys.correlation_id)
    , memsets(model.memsets.correlation_id)
{
}

} // namespace detail

namespace {

template <class Key> std::optional<uint32_t> track_of(const std::map<Key, uint32_t>& tracks, const Key& key)
{
    const auto it = tracks.find(key);
    return it == tracks.end() ? std::nullopt : std::optional<uint32_t>(it->second);
}

// The track an item is on and its start; nullopt for a row out of range.
struct Placement {
    std::optional<uint32_t> track;
    int64_t start_ns = 0;
};

template <class Table>
std::optional<Placement> on_stream(const detail::TimelineLinks& links, const Table& t, size_t row)
{
    if (row >= t.size())
        return std::nullopt;
    return Placement { track_of(links.stream_tracks, { t.device_id[row], t.stream_id[row] }), t.start_ns[row] };
}

std::optional<Placement> placement(
    const detail::TimelineLinks& links, const TraceModel& model, const Report& report, ItemRef item)
{
    const size_t row = item.row;
    switch (item.kind) {
    case ItemKind::Kernel:
        return on_stream(links, model.kernels, row);
    case ItemKind::Memcpy:
        return on_stream(links, model.memcpys, row);
    case ItemKind::Memset:
        return on_stream(links, model.memsets, row);
    case ItemKind::ApiCall:
        if (row >= model.api_calls.size())
            return std::nullopt;
        return Placement { track_of(links.api_tracks, model.api_calls.global_tid[row]), model.api_calls.start_ns[row] };
    case ItemKind::Nvtx:
        if (row >= model.nvtx.size())
            return std::nullopt;
        return Placement { track_of(links.nvtx_tracks, model.nvtx.global_tid[row]), model.nvtx.start_ns[row] };
    case ItemKind::Step:
        if (row >= report.steps.steps.size())
            return std::nullopt;
        return Placement { links.steps_track, report.steps.steps[row].start_ns };
    case ItemKind::Bubble:
        if (row >= report.bubbles.bubbles.size())
            return std::nullopt;
        return Placement { track_of(links.bubble_tracks, report.bubbles.bubbles[row].device_id),
            report.bubbles.bubbles[row].start_ns };
    case ItemKind::Sync:
        if (row >= report.blocking_calls.size())
            return std::nullopt;
        return Placement { track_of(links.sync_tracks, report.blocking_calls[row].global_tid),
            report.blocking_calls[row].start_ns };
    }
    return std::nullopt;
}

} // namespace

std::optional<size_t> launching_call(const TimelineIndex& index, const TraceModel& model, ItemRef gpu_item)
{
    if (!index.links)
        return std::nullopt;
    const auto id = [&](const auto& table) -> uint32_t {
        return gpu_item.row < table.size() ? table.correlation_id[gpu_item.row] : 0; // 0 never matches
    };
    switch (gpu_item.kind) {
    case ItemKind::Kernel:
        return index.links->api_calls.find(id(model.kernels));
    case ItemKind::Memcpy:
        return index.links->api_calls.find(id(model.memcpys));
    case ItemKind::Memset:
        return index.links->api_calls.find(id(model.memsets));
    default:
        return std::nullopt;
    }
}

std::vector<ItemRef> launched_work(const TimelineIndex& index, const TraceModel& model, size_t api_row)
{
    std::vector<ItemRef> out;
    if (!index.links || api_row >= model.api_calls.size())
        return out;
    const uint32_t id = model.api_calls.correlation_id[api_row];
    index.links->kernels.append(id, ItemKind::Kernel, out);
    index.links->memcpys.append(id, ItemKind::Memcpy, out);
    index.links->memsets.append(id, ItemKind::Memset, out);
    return out;
}

std::span<const uint32_t> sync_bubbles(const TimelineIndex& index, size_t sync_call)
{
    if (!index.links || sync_call + 1 >= index.links->sync_bubble_offsets.size())
        return {};
    const auto& offsets = index.links->sync_bubble_offsets;
    return std::span(index.links->sync_bubbles)
        .subspan(offsets[sync_call], offsets[sync_call + 1] - offsets[sync_call]);
}

std::optional<ItemLocation> locate(
    const TimelineIndex& index, const TraceModel& model, const Report& report, ItemRef item)
{
    if (!index.links)
        return std::nullopt;
    const auto where = placement(*index.links, model, report, item);
    if (!where || !where->track)
        return std::nullopt;
    const TimelineTrack& track = index.tracks[*where->track];
    for (uint32_t l = 0; l < track.lanes.size(); ++l) {
        const TimelineLane& lane = track.lanes[l];
        // Items of a lane are sorted by start: the item is among those with its start.
        const auto [first, last] = std::ranges::equal_range(lane.start_ns, where->start_ns);
        for (auto it = first; it != last; ++it) {
            const size_t i = static_cast<size_t>(it - lane.start_ns.begin());
            if (lane.ref(i) == item)
                return ItemLocation { { *where->track, l }, i };
        }
    }
    return std::nullopt;
}

} // namespace fp8scope::analyzer
