// What the timeline index keeps besides its tracks (timeline.hpp): the correlation joins behind launch flows, the
// bubbles each host-blocking call caused, and which track shows which device, stream or thread.
#pragma once

#include "fp8scope/analyzer/views/timeline.hpp"
#include "model/correlation_index.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace fp8scope::analyzer::detail {

// Every row of one table by correlation id: a CUDA graph's kernels all carry the graph launch's id. The first row of
// an id comes from a CorrelationIndex (direct-addressed when ids are dense); the few rows after it, from a sorted list.
class CorrelatedRows {
public:
    explicit CorrelatedRows(const std::vector<uint32_t>& ids);
    bool contains(uint32_t id) const { return first_.find(id).has_value(); }
    // Appends the rows carrying `id`, in row order, as items of `kind`.
    void append(uint32_t id, ItemKind kind, std::vector<ItemRef>& out) const;

private:
    CorrelationIndex first_;
    std::vector<std::pair<uint32_t, uint32_t>> more_; // (id, row) of each row after the first of its id, sorted
};

struct TimelineLinks {
    explicit TimelineLinks(const TraceModel& model);

    CorrelationIndex api_calls; // the runtime call when a driver call shares its id
    CorrelatedRows kernels, memcpys, memsets;
    // Bubbles caused by each host-blocking call: sync_bubbles[offsets[c], offsets[c + 1]).
    std::vector<uint32_t> sync_bubble_offsets;
    std::vector<uint32_t> sync_bubbles;
    // The track that shows each thing.
    std::optional<uint32_t> steps_track;
    std::map<uint32_t, uint32_t> bubble_tracks; // device
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> stream_tracks; // (device, stream)
    std::map<int64_t, uint32_t> api_tracks, sync_tracks, nvtx_tracks; // globalTid
};

} // namespace fp8scope::analyzer::detail
